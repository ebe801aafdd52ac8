"""Python's garbage collector kept out of what is timed (fastkernels/garbage_collector.py): no automatic collection
inside a timed phase, the harness's objects frozen before any candidate code, candidate objects never frozen."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from pathlib import Path

from fastkernels.garbage_collector import collector_paused
from fastkernels.records import Status
from fastkernels.timing import HostClock, time_interleaved
from scoring import score

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                            timeout=300, check=True)
    return result.stdout.strip()


def test_the_collector_is_off_inside_the_block_and_back_on_after_it():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_collector_comes_back_on_after_an_error_inside_the_block():
    try:
        with collector_paused():
            raise RuntimeError("a candidate raised")
    except RuntimeError:
        pass
    assert gc.isenabled()


def test_a_collector_that_was_off_before_the_block_stays_off_after_it():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_every_warm_up_and_timed_call_runs_with_the_collector_off():
    seen: list[bool] = []

    def call(inputs):
        seen.append(gc.isenabled())
        return inputs

    samples = time_interleaved({"baseline": call, "candidate": call}, [1, 2], HostClock(), warmup=2, iterations=4)
    assert len(seen) == 2 * 2 + 2 * 4 and not any(seen)
    assert all(len(times) == 4 for times in samples.values())
    assert gc.isenabled()


def test_the_fork_servers_imports_are_frozen_so_a_full_collection_skips_them():
    # what a collection walks is what is tracked and not frozen (its cost: scripts/gc_pauses.py, not a timed test)
    out = _run("""
        import gc
        import fastkernels.preload
        print(gc.get_freeze_count(), len(gc.get_objects()))
    """)
    frozen, tracked = (int(word) for word in out.split())
    assert frozen > 100_000 and tracked < frozen // 10, out


def test_the_frozen_imports_are_unfrozen_at_exit_so_nothing_is_reported_leaked():
    # frozen objects are never finalised: nanobind then reported Triton's IR bindings as leaked at every run's end
    result = subprocess.run([sys.executable, "-c", "import gc, fastkernels.preload; print(gc.get_freeze_count())"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
    assert int(result.stdout) > 100_000
    assert "leaked" not in result.stderr, result.stderr[-2000:]


def test_objects_made_after_the_freeze_in_reference_cycles_are_still_collected():
    # the worker freezes just before the first candidate import: the collection at each case's start
    # (case_caches.py) must still end candidate objects that sit in reference cycles
    out = _run("""
        import gc
        from fastkernels.garbage_collector import freeze_harness_objects
        freeze_harness_objects()
        ended = []
        class Candidate:
            def __del__(self): ended.append(1)
        a, b = Candidate(), Candidate()
        a.other, b.other = b, a
        del a, b
        gc.collect()
        print(len(ended))
    """)
    assert out == "2"


def test_the_worker_freezes_the_harness_before_the_candidate_module_is_imported(tmp_path):
    # a candidate that records at import how many objects are frozen (reaching gc past the static check, as the
    # exploits do): the harness's objects already are, so the freeze came before any candidate code
    record = tmp_path / "frozen.txt"
    (tmp_path / "agent" / "L1").mkdir(parents=True)
    honest = (ROOT / "tests" / "exploits" / "honest" / "L1" / "rms_norm.py").read_text()
    (tmp_path / "agent" / "L1" / "rms_norm.py").write_text(
        f"open({str(record)!r}, 'w').write(str(__import__('g' + 'c').get_freeze_count()))\n" + honest)
    rows = score(tmp_path / "agent", tmp_path)
    assert all(row.status is Status.PASSED for row in rows), [row.reason for row in rows]
    assert int(record.read_text()) > 100_000
