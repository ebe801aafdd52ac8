"""fastkernels.inductor_fixes: a coordinate-descent pick Inductor saved is used again, whichever path loads the kernel.

The `.best_config` files are Inductor's own (torch._inductor.runtime.autotune_cache, real, on disk here); only the
CachingAutotuner the FX-graph-cache path rechecks is a stand-in, since building a real one needs a GPU kernel.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

triton = pytest.importorskip("triton")
autotune_cache = pytest.importorskip("torch._inductor.runtime.autotune_cache")
heuristics = pytest.importorskip("torch._inductor.runtime.triton_heuristics")

from fastkernels import inductor_fixes  # noqa: E402

COORDESC = {"coordinate_descent_tuning": True}
FULL = [triton.Config({"XBLOCK": 64}, num_warps=4), triton.Config({"XBLOCK": 128}, num_warps=8)]


def winner() -> list:
    """What a kernel loaded from the FX graph cache lists: the one configuration compiled."""
    return [triton.Config({"XBLOCK": 128}, num_warps=8)]


def saved_pick(tmp_path, pick, *, found_by_coordesc: bool = True, meta=COORDESC) -> str:
    """A kernel file name whose `.best_config` a fresh compile (candidate list FULL) saved with `pick`."""
    filename = os.path.join(tmp_path, "cexamplekernel.py")
    cache = autotune_cache.AutotuneCache.create(meta, filename, heuristics.hash_configs(FULL))
    cache.save(pick, 10**9, found_by_coordesc=found_by_coordesc)
    return filename


@pytest.fixture(autouse=True)
def installed(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)  # Inductor reads no saved pick under the interpreter
    assert inductor_fixes.install()  # this torch (2.13 here, 2.11 on the H200) needs at least the first fix


def test_a_coordinate_descent_pick_saved_under_one_candidate_list_is_read_under_another(tmp_path):
    filename = saved_pick(tmp_path, triton.Config({"XBLOCK": 256}, num_warps=8))
    reader = autotune_cache.AutotuneCache.create(COORDESC, filename, heuristics.hash_configs(winner()))
    best = reader.read_best(COORDESC, winner())
    assert best is not None and best.kwargs == {"XBLOCK": 256} and best.num_warps == 8
    assert best.found_by_coordesc  # so the kernel's first call does not tune again


def test_a_pick_that_coordinate_descent_did_not_find_still_needs_the_callers_candidate_list(tmp_path):
    filename = saved_pick(tmp_path, FULL[1], found_by_coordesc=False)
    reader = autotune_cache.AutotuneCache.create(COORDESC, filename, heuristics.hash_configs(winner()))
    assert reader.read_best(COORDESC, winner()) is None


def test_a_caller_that_does_not_tune_by_coordinate_descent_keeps_the_hash_check(tmp_path):
    filename = saved_pick(tmp_path, triton.Config({"XBLOCK": 256}, num_warps=8))
    reader = autotune_cache.AutotuneCache.create({}, filename, heuristics.hash_configs(winner()))
    assert reader.read_best({}, winner()) is None


def autotuner(filename: str, configs: list) -> SimpleNamespace:
    """The parts of a CachingAutotuner that recheck_autotune_cache touches, its compile results given."""
    compiled = []

    def precompile(config):
        compiled.append(config)
        return SimpleNamespace(config=config)

    return SimpleNamespace(filename=filename, inductor_meta=dict(COORDESC), autotune_cache_info=None,
                           compile_results=[SimpleNamespace(config=config) for config in configs],
                           is_statically_launchable=lambda: True, fn=SimpleNamespace(fn=object()),
                           _precompile_config=precompile, compiled=compiled)


RECHECKS = {"fastkernels (torch 2.9-2.11)": inductor_fixes._recheck_autotune_cache,
            "torch 2.13's own": heuristics.CachingAutotuner.recheck_autotune_cache}


@pytest.mark.parametrize("recheck", RECHECKS.values(), ids=RECHECKS.keys())
def test_a_kernel_loaded_from_the_fx_graph_cache_keeps_the_pick_and_its_coordinate_descent_mark(tmp_path, recheck):
    # torch 2.11 skipped the cache when one configuration was compiled and dropped the mark: the first call tuned again
    filename = saved_pick(tmp_path, winner()[0])
    loaded = autotuner(filename, winner())
    recheck(loaded, lambda: pytest.fail("the kernel needs no reload"))
    assert len(loaded.compile_results) == 1 and loaded.compile_results[0].config.found_by_coordesc
    assert loaded.autotune_cache_info["autotune_cache_state"] == "hit" and not loaded.compiled


@pytest.mark.parametrize("recheck", RECHECKS.values(), ids=RECHECKS.keys())
def test_a_pick_tuned_after_the_fx_graph_cache_saved_is_compiled_on_load(tmp_path, recheck):
    filename = saved_pick(tmp_path, triton.Config({"XBLOCK": 512}, num_warps=16))
    loaded = autotuner(filename, winner())
    recheck(loaded, lambda: pytest.fail("the kernel's function is loaded"))
    assert [config.kwargs for config in loaded.compiled] == [{"XBLOCK": 512}]
    assert loaded.compile_results[0].config.found_by_coordesc


def test_without_a_saved_pick_the_compiled_configuration_stays_unmarked_so_its_first_call_tunes(tmp_path):
    loaded = autotuner(os.path.join(tmp_path, "cnothingsaved.py"), winner())
    inductor_fixes._recheck_autotune_cache(loaded, lambda: pytest.fail("nothing to reload"))
    assert loaded.autotune_cache_info["autotune_cache_state"] == "miss" and not loaded.compiled
    assert [result.config.kwargs for result in loaded.compile_results] == [{"XBLOCK": 128}]
    assert not getattr(loaded.compile_results[0].config, "found_by_coordesc", False)


FIXED = {  # each method and the fix that replaces it
    (autotune_cache.AutotuneCache, "read_best"): inductor_fixes._read_best,
    (heuristics.CachingAutotuner, "coordinate_descent_tuning"): inductor_fixes._coordinate_descent_tuning,
    (heuristics.CachingAutotuner, "recheck_autotune_cache"): inductor_fixes._recheck_autotune_cache,
}


@pytest.mark.parametrize(("release", "fixed"), [
    ("2.11", ["read_best", "coordinate_descent_tuning", "recheck_autotune_cache"]),
    ("2.13", ["read_best", "coordinate_descent_tuning"]),
    ("2.14", []),  # a release nobody checked these internals against: left as torch ships it
])
def test_each_torch_release_gets_the_fixes_its_internals_were_checked_for(monkeypatch, release, fixed):
    for owner, name in FIXED:
        original = getattr(inductor_fixes, f"_upstream_{name}") or owner.__dict__[name]
        monkeypatch.setattr(owner, name, original)  # torch's own, restored after the test
        monkeypatch.setattr(inductor_fixes, f"_upstream_{name}", None)
    monkeypatch.setattr(inductor_fixes, "_installed", None)
    monkeypatch.setattr(inductor_fixes, "torch_release", lambda: release)
    applied = inductor_fixes.install()
    assert [name for (owner, name), fix in FIXED.items() if owner.__dict__[name] is fix] == fixed
    assert len(applied) == len(fixed) and inductor_fixes.install() is applied  # once a process


class Launcher(SimpleNamespace):
    """A launcher: its configuration."""


def tuner(filename: str, monkeypatch) -> SimpleNamespace:
    """The parts of a CachingAutotuner that coordinate_descent_tuning touches; torch's own tuning recorded."""
    import threading

    tuned = []
    monkeypatch.setattr(inductor_fixes, "_upstream_coordinate_descent_tuning",
                        lambda self, launcher, *args: tuned.append(launcher) or Launcher(config=FULL[0]))

    def precompile(config):
        return SimpleNamespace(make_launcher=lambda: Launcher(config=config))

    return SimpleNamespace(filename=filename, inductor_meta=dict(COORDESC), lock=threading.Lock(),
                           fn=SimpleNamespace(fn=object()), _precompile_config=precompile, tuned=tuned)


def test_a_kernel_whose_pick_lost_its_mark_in_the_compile_pool_is_not_tuned_again(tmp_path, monkeypatch):
    # the launcher holds the pick, unmarked (a pickled Triton Config keeps only its own fields)
    filename = saved_pick(tmp_path, winner()[0])
    autotuner, launcher = tuner(filename, monkeypatch), Launcher(config=winner()[0])
    assert inductor_fixes._coordinate_descent_tuning(autotuner, launcher) is launcher
    assert launcher.config.found_by_coordesc and not autotuner.tuned


def test_a_launcher_on_another_configuration_is_replaced_by_the_saved_pick(tmp_path, monkeypatch):
    filename = saved_pick(tmp_path, triton.Config({"XBLOCK": 512}, num_warps=16))
    autotuner = tuner(filename, monkeypatch)
    chosen = inductor_fixes._coordinate_descent_tuning(autotuner, Launcher(config=FULL[0]))
    assert chosen.config.kwargs == {"XBLOCK": 512} and chosen.config.num_warps == 16
    assert chosen.config.found_by_coordesc and not autotuner.tuned


@pytest.mark.parametrize("saved", ["nothing", "a pick coordinate descent did not find"])
def test_without_a_coordinate_descent_pick_torch_tunes_as_it_would(tmp_path, monkeypatch, saved):
    filename = (os.path.join(tmp_path, "cnothingsaved.py") if saved == "nothing"
                else saved_pick(tmp_path, winner()[0], found_by_coordesc=False))
    autotuner, launcher = tuner(filename, monkeypatch), Launcher(config=winner()[0])
    assert inductor_fixes._coordinate_descent_tuning(autotuner, launcher).config is FULL[0]
    assert autotuner.tuned == [launcher]


def test_the_gpu_probe_lists_each_saved_pick_with_its_coordinate_descent_mark(tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "scripts"))
    import probe_autotune_cache

    saved_pick(tmp_path, winner()[0])
    other = tmp_path / "other"
    other.mkdir()
    saved_pick(other, FULL[0], found_by_coordesc=False)
    lines = probe_autotune_cache.best_configs(tmp_path)
    assert len(lines) == 2 and sorted(line.split()[1] for line in lines) == ["coordesc=False", "coordesc=True"]
