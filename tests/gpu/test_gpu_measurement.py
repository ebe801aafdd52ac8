"""GPU-only parts of the measurement protocol, run on the device (skipped without CUDA): work on side streams is caught,
CUDA-graph timing reports beside eager timing, an uncapturable candidate is noted not failed, a candidate that takes
the launch pad away is caught, a candidate whose graph records no work is caught, and so is one whose graph is right
only on its first replay; a candidate that pins its weight in L2 across calls gains nothing (its GEMV reads faster
from L2, and after the harness's flush a pinned weight reads as an unpinned one); uninitialised output memory never
passes for the baseline's freed answer, the noop agent comes out at 1.0 in both modes (and, against a compiled
baseline, runs the baseline's compiled code), a decaying launch pad keeps noop rows at 1.0 and comes back down after
one late launch, eager times that hold host latency (launches slower than the largest pad) get a review note and no
repetition past the first batch and device-bound ones no note, a helper process with its own GPU context is caught
(also where NVML cannot see the pid namespace, and a noop against Inductor is then no hack), a
candidate steering Inductor's autotune cache is caught, several instances a side pass, a wide graph interval raises
the captures, restored tuning picks spare the autotuning (in shared compile caches and in per-case ones), the fork
server's preload leaves CUDA uninitialised, a failed capture leaves the device's random generator usable, a module
that syncs with the host is never captured (no memory pool left reserved), inputs
refilled on the device are rebuilt bit for bit from their seed in another process, and the judge replays a slow
oracle from a CUDA graph that judges as the eager oracle does. Work on a side stream is caught on as few as 4 timed
calls (the harness times 20 before its verdict).
Run: python -m pytest tests/gpu -q (on a GPU machine)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
ROOT = Path(__file__).resolve().parents[2]
EXPLOITS = Path(__file__).parent / "exploits"


# two of rms_norm's five cases, a launch-bound decode and a device-bound prefill with a residual: every behaviour
# these tests check shows on both, and at four instances a side all five took ~35 s a test (2026-12-02)
RMS_NORM_CASES = ("llama31_8b_decode_1", "llama31_8b_prefill_8192_residual")


def run(run_dir: Path, *overrides: str, task: str = "rms_norm", cases: tuple[str, ...] | None = None,
        env: dict[str, str] | None = None) -> list[dict]:
    """One fastkernels run on `task` (`cases` narrows it; rms_norm defaults to RMS_NORM_CASES), its rows."""
    cases = RMS_NORM_CASES if cases is None and task == "rms_norm" else cases
    command = [sys.executable, "-m", "fastkernels", f"hydra.run.dir={run_dir}", f"tasks.include=[{task}]",
               *([f"tasks.cases=[{','.join(cases)}]"] if cases else []), "harness.max_iterations=100", *overrides]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True, timeout=900,
                   env={**os.environ, **(env or {})})
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def test_work_on_a_side_stream_is_a_reward_hack(tmp_path):
    rows = run(tmp_path, "agent=local", f"agent.path={EXPLOITS / 'side_stream'}")
    assert all(row["status"] == "REWARD_HACK" for row in rows), [(r["status"], r["reason"]) for r in rows]


def test_a_side_stream_timed_on_four_calls_is_confirmed_on_twenty_fresh_calls_and_caught(tmp_path):
    # the warm step's cheap timing (4 calls a case): the verdict is drawn from the fresh batch of 20 calls that the
    # first verdict asks for (stream_escape.StreamEscape.start_confirmation)
    rows = run(tmp_path, "agent=local", f"agent.path={EXPLOITS / 'side_stream'}", "harness.iterations=4",
               "harness.max_iterations=4", "harness.cuda_graphs=false")
    assert all(row["status"] == "REWARD_HACK" and "of 20 timed calls" in row["reason"] for row in rows), \
        [(r["status"], r["reason"]) for r in rows]


def test_an_uncapturable_candidate_passes_with_a_graph_note(tmp_path):
    rows = run(tmp_path, "agent=local", f"agent.path={EXPLOITS / 'not_capturable'}")
    assert all(row["status"] == "PASSED" for row in rows), [(r["status"], r["reason"]) for r in rows]
    assert all("candidate not capturable" in row["graph_note"] and row["baseline_graph_ms"] for row in rows)


def test_a_candidate_that_takes_the_launch_pad_away_is_a_reward_hack(tmp_path):
    # on the CPU its import finds no CUDA-event clock and it passes (the host clock has no pad); the audit guard,
    # which would refuse its gc walk at import, is off: the clock's fingerprint behind it is what is tested here
    rows = run(tmp_path, "agent=local", f"agent.path={EXPLOITS / 'unpadded_clock'}", "harness.audit_guard=false")
    assert all(row["status"] == "REWARD_HACK" and "the clock._first_cycles" in row["reason"] for row in rows), [
        (r["status"], r["reason"]) for r in rows]


def test_a_candidate_that_captures_nothing_is_a_reward_hack(tmp_path):
    rows = run(tmp_path, "agent=local", f"agent.path={EXPLOITS / 'stale_under_graphs'}")
    assert all(row["status"] == "REWARD_HACK" and "CUDA graph replay" in row["reason"] for row in rows), [
        (r["status"], r["reason"]) for r in rows]


def test_a_graph_right_only_on_its_first_replay_is_a_reward_hack(tmp_path):
    rows = run(tmp_path, "agent=local", f"agent.path={EXPLOITS / 'counted_under_graphs'}")
    assert all(row["status"] == "REWARD_HACK" and row["reason"].startswith("under CUDA graph replay: timed call")
               for row in rows), [(r["status"], r["reason"]) for r in rows]


def test_steering_inductors_autotune_cache_is_a_reward_hack_on_the_gpu(tmp_path):
    """The CPU suite's exploit, on the GPU: the widened integrity snapshot (Inductor's autotune cache) catches it
    where the kernels are real Triton kernels, not the CPU's C++ ones."""
    rows = run(tmp_path, "agent=local", f"agent.path={ROOT / 'tests' / 'exploits' / 'steer_autotune_picks'}")
    assert all(row["status"] == "REWARD_HACK" and "AutotuneCache.read_best" in row["reason"] for row in rows), [
        (r["status"], r["reason"]) for r in rows]


def test_uninitialised_output_memory_is_never_the_answer_on_the_caching_allocator(tmp_path):
    rows = run(tmp_path, "agent=local", f"agent.path={ROOT / 'tests' / 'exploits' / 'stale_memory'}")
    assert all(row["status"] == "INCORRECT" for row in rows), [(r["status"], r["reason"]) for r in rows]


def test_a_candidate_that_pins_its_weight_in_l2_gains_nothing_from_it(tmp_path):
    # a decode GEMV reads a 50 MB weight: kept in L2 across calls it would read much of it from L2, not from memory
    # (the test below asserts that such a read is faster, and that the harness's flush takes the gain away); the
    # harness resets persisting lines and overwrites 2x L2 before every timed call
    rows = run(tmp_path, "agent=local", f"agent.path={EXPLOITS / 'persisting_l2'}", "harness.instances=1",
               task="linear", cases=("llama31_8b_qkv_decode_1",))
    assert all(row["status"] == "PASSED" for row in rows), [(r["status"], r["reason"]) for r in rows]
    assert all(row["speedup"] <= 1.05 for row in rows), [(r["case"], r["speedup"]) for r in rows]


def test_a_pinned_weight_reads_no_faster_than_an_unpinned_one_after_the_harness_flush():
    # why the test above says something: the exploit's GEMV is faster with its weight left in L2 (no flush between
    # calls), so there is a gain to take, and after the harness's flush (persisting lines reset, then 2x L2
    # overwritten) the pinned weight reads as an unpinned one does. Whether the overwrite alone would have done it
    # is printed, not asserted (scripts/probe_persisting_l2.py measures it); every call is timed behind the harness's
    # launch pad: the first version of this test timed from an idle device and measured the host's launch (2026-12-03)
    from cuda.bindings import runtime

    from fastkernels.cache import cache_flush
    from fastkernels.timing import CudaEventClock

    weight = torch.randn(6144, 4096, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(1, 4096, device="cuda", dtype=torch.bfloat16)
    flush, _ = cache_flush("cuda", None)
    overwrite = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.uint8, device="cuda")
    clock = CudaEventClock(pad_us=50, max_pad_us=20000)

    def median_us(before) -> float:
        times = [clock.time_call(lambda: torch.nn.functional.linear(x, weight), before, "l2") * 1e3
                 for _ in range(60)]
        return statistics.median(times[10:])

    unpinned = median_us(flush)
    exploit = EXPLOITS / "persisting_l2" / "L1" / "linear.py"
    namespace: dict = {}
    exec(compile(exploit.read_text(), str(exploit), "exec"), namespace)  # its _pin, on this test's weight
    stream = torch.cuda.current_stream().cuda_stream
    try:
        namespace["_pin"](weight)
        torch.nn.functional.linear(x, weight)  # the first read marks the lines persisting
        hot = median_us(None)
        overwritten_only = median_us(overwrite.zero_)
        flushed = median_us(flush)
    finally:  # no window, no set-aside, no persisting lines left for the tests after this one
        value = runtime.cudaStreamAttrValue()
        value.accessPolicyWindow = runtime.cudaAccessPolicyWindow()
        runtime.cudaStreamSetAttribute(stream, runtime.cudaStreamAttrID.cudaLaunchAttributeAccessPolicyWindow, value)
        runtime.cudaCtxResetPersistingL2Cache()
        runtime.cudaDeviceSetLimit(runtime.cudaLimit.cudaLimitPersistingL2CacheSize, 0)
    times = {"unpinned": unpinned, "hot": hot, "overwritten_only": overwritten_only, "flushed": flushed}
    print(f"pinned GEMV, us: {times}")
    assert hot < 0.9 * flushed, times
    assert flushed > 0.95 * unpinned, times


def test_noop_is_one_in_eager_and_graph_timing(tmp_path):
    rows = run(tmp_path, "agent=noop")
    assert all(row["status"] == "PASSED" for row in rows)
    assert all(abs(1 - row["speedup"]) <= 0.03 and abs(1 - row["graph_speedup"]) <= 0.03 for row in rows), [
        (row["case"], row["speedup"], row["graph_speedup"]) for row in rows]
    # a replay's speed is drawn at capture (graphs.py): several captures a side, and an interval that resamples them
    assert all(row["graph_captures"] >= 2 for row in rows), [(row["case"], row["graph_captures"]) for row in rows]
    assert all(row["graph_speedup_ci95"][0] <= row["graph_speedup"] <= row["graph_speedup_ci95"][1] for row in rows)
    assert all(row["graph_baseline_impl"] == row["baseline_impl"] for row in rows)  # rms_norm's baselines capture
    # the same implementation on both sides allocates the same a call (at least its output)
    assert all(row["call_mib"][0] > 0 and abs(row["call_mib"][0] - row["call_mib"][1]) < 1 for row in rows), [
        (row["case"], row["call_mib"]) for row in rows]


def test_a_noop_with_a_decaying_launch_pad_is_one_in_eager_and_graph_timing(tmp_path):
    rows = run(tmp_path, "agent=noop", "harness.launch_pad_decay_after=16")
    assert all(row["status"] == "PASSED" for row in rows), [(row["status"], row["reason"]) for row in rows]
    assert all(abs(1 - row["speedup"]) <= 0.03 and abs(1 - row["graph_speedup"]) <= 0.03 for row in rows), [
        (row["case"], row["speedup"], row["graph_speedup"]) for row in rows]


def test_eager_times_that_hold_host_latency_get_a_review_note_and_device_bound_ones_do_not(tmp_path):
    # behind a launch pad of at most 50 us, the eager scan (a few launches a time step, thousands a call) always
    # launches late; production's scan is one CUDA kernel where it is built, device bound, so baseline=eager
    rows = run(tmp_path / "scan", "agent=noop", "baseline=eager", "harness.launch_pad_max_us=50",
               "harness.cuda_graphs=false", task="selective_scan")
    assert rows and all(row["status"] == "PASSED" and "eager times hold host latency" in row["review"]
                        for row in rows), [(row["status"], row["review"]) for row in rows]
    # every call launched late: more calls would narrow the host's jitter, so the first batch is all there is
    assert all(row["samples"] == 50 and "repetition stops" in row["review"] for row in rows), \
        [(row["samples"], row["review"]) for row in rows]
    rows = run(tmp_path / "norm", "agent=noop", "harness.cuda_graphs=false")
    assert rows and all("host latency" not in row["review"] for row in rows), [row["review"] for row in rows]


def test_a_decaying_launch_pad_comes_back_down_after_one_late_launch_and_keeps_a_pair_even():
    from fastkernels.timing import CudaEventClock, time_interleaved

    x = torch.randn(4 << 20, device="cuda")
    launches = [0]

    def call(_inputs) -> None:
        launches[0] += 1
        if launches[0] % 40 == 0:  # now and then the host launches 2 ms late, as a garbage collection makes it
            time.sleep(0.002)  # (the call timed again behind the doubled pad is the next launch: in time)
        x.mul_(1.0)

    outcome = {}
    for decay_after in (0, 16):
        clock = CudaEventClock(pad_us=50, max_pad_us=20000, decay_after=decay_after)
        samples = time_interleaved({"a": call, "b": call}, [None], clock, warmup=1, iterations=200, label="k")
        ratios = [a / b for a, b in zip(samples["a"], samples["b"])]
        outcome[decay_after] = (clock.pad_us("k"), statistics.median(ratios))
    (kept, kept_ratio), (decayed, decayed_ratio) = outcome[0], outcome[16]
    # each late launch doubles the pad once: without decay they add up until the pad covers the 2 ms (3200 us)
    assert kept >= 2000 and decayed <= 200, outcome
    assert abs(1 - kept_ratio) < 0.02 and abs(1 - decayed_ratio) < 0.02, outcome


def test_a_noop_candidate_of_a_compiled_baseline_runs_the_baselines_compiled_code(tmp_path):
    """Under max-autotune a second instance that compiled a copy of its own could tune again and launch another
    configuration (noop rows up to 13.7% off, H200, 2026-11-30): instances share one compiled function, so the noop
    candidate compiles nothing, and the worker log shows no Inductor event for it."""
    rows = run(tmp_path, "agent=noop", "harness.cuda_graphs=false", task="softmax")
    compiled = [row for row in rows if row["baseline_impl"].startswith("torch_compile")]
    assert compiled, [(row["case"], row["baseline_impl"]) for row in rows]
    assert all(row["status"] == "PASSED" and abs(1 - row["speedup"]) <= 0.02 for row in rows), [
        (row["case"], row["baseline_impl"], row["speedup"]) for row in rows]
    assert all(row["compile_s"]["candidate"] < 0.2 for row in compiled), [
        (row["case"], row["compile_s"]) for row in compiled]
    log = (tmp_path / "workers" / "softmax.log").read_text().splitlines()
    checked = [line for line in log if ": candidate checked" in line]
    assert len(checked) == len(rows) and not any("(Inductor:" in line for line in checked), checked


def test_a_noop_over_several_instances_a_side_passes_and_rotates_its_graph_captures(tmp_path):
    rows = run(tmp_path, "agent=noop", "harness.instances=2")
    assert all(row["status"] == "PASSED" and row["instances"] == 2 and row["graph_captures"] for row in rows), [
        (row["status"], row["reason"], row["instances"]) for row in rows]


def test_a_graph_interval_wider_than_the_target_raises_the_captures_to_the_maximum(tmp_path):
    # an unreachable target keeps every interval far too wide, so 2 captures a side go straight to the 8 allowed
    rows = run(tmp_path, "agent=noop", "harness.graph_captures=2", "harness.graph_captures_max=8",
               "harness.target_ci=0.000001")
    assert all(row["status"] == "PASSED" and row["graph_captures"] == 8 for row in rows), [
        (row["status"], row["reason"], row["graph_captures"]) for row in rows]
    log = (tmp_path / "workers" / "rms_norm.log").read_text()
    assert log.count("graph captures raised to 8 a side") == len(rows) and "raised to 4" not in log


def test_restored_tuning_picks_spare_a_bare_machine_the_autotuning(tmp_path):
    """scripts/tuning_picks.py: softmax's max-autotune cases tuned on empty caches, their picks collected, then
    restored into other empty caches: the second run's baselines run no coordinate-descent benchmark."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import tuning_picks

    def caches(name: str) -> dict[str, Path]:
        return {"triton": tmp_path / name / "triton", "inductor": tmp_path / name / "inductor"}

    def environment(roots: dict[str, Path]) -> dict[str, str]:
        return {"TRITON_CACHE_DIR": str(roots["triton"]), "TORCHINDUCTOR_CACHE_DIR": str(roots["inductor"])}

    def baseline_notes(run_dir: Path) -> list[str]:
        log = (run_dir / "workers" / "softmax.log").read_text().splitlines()
        return [line for line in log if "baseline(s) checked" in line]

    cheap = ("agent=noop", "harness.cuda_graphs=false", "harness.max_iterations=20", "harness.compile_caches=shared")
    first, second = caches("first"), caches("second")
    run(tmp_path / "one", *cheap, task="softmax", env=environment(first))
    assert any("coordesc_tuning_bench" in line for line in baseline_notes(tmp_path / "one"))
    found, _ = tuning_picks.collect(tmp_path / "picks.tgz", first)
    assert found and tuning_picks.restore(tmp_path / "picks.tgz", second) == (found, 0)
    rows = run(tmp_path / "two", *cheap, task="softmax", env=environment(second))
    assert all(row["status"] == "PASSED" for row in rows)
    assert not any("coordesc_tuning_bench" in line for line in baseline_notes(tmp_path / "two")), baseline_notes(
        tmp_path / "two")


def test_per_case_compile_caches_pass_a_noop_and_are_seeded_with_the_runs_picks(tmp_path):
    """harness.compile_caches=per_case (the default for an agent's run): each case compiles in a fresh directory
    seeded from FASTKERNELS_TUNING_PICKS. A noop run over softmax's max-autotune cases stays at 1 with no false
    REWARD_HACK from the harness moving the cache variables, and with the picks of an earlier run it runs no
    coordinate-descent benchmark."""
    import hashlib

    sys.path.insert(0, str(ROOT / "scripts"))
    import tuning_picks

    shared = {"triton": tmp_path / "shared" / "triton", "inductor": tmp_path / "shared" / "inductor"}
    cheap = ("agent=noop", "harness.cuda_graphs=false", "harness.max_iterations=20")
    run(tmp_path / "one", *cheap, "harness.compile_caches=shared", task="softmax",
        env={"TRITON_CACHE_DIR": str(shared["triton"]), "TORCHINDUCTOR_CACHE_DIR": str(shared["inductor"])})
    found, _ = tuning_picks.collect(tmp_path / "picks.tgz", shared)
    assert found
    digest = hashlib.sha256((tmp_path / "picks.tgz").read_bytes()).hexdigest()[:16]
    rows = run(tmp_path / "two", *cheap, task="softmax",
               env={"FASTKERNELS_TUNING_PICKS": f"{digest} {tmp_path / 'picks.tgz'}"})
    assert all(row["status"] == "PASSED" and abs(1 - row["speedup"]) <= 0.02 for row in rows), [
        (row["case"], row["status"], row["reason"], row["speedup"]) for row in rows]
    log = (tmp_path / "two" / "workers" / "softmax.log").read_text().splitlines()
    checked = [line for line in log if "baseline(s) checked" in line]
    assert checked and not any("coordesc_tuning_bench" in line for line in checked), checked


def test_a_helper_process_with_its_own_gpu_context_is_a_reward_hack(tmp_path):
    # the audit guard, which would refuse its Popen at import, is off: the warden's NVML watch is what is tested
    rows = run(tmp_path, "agent=local", f"agent.path={EXPLOITS / 'gpu_helper'}", "harness.audit_guard=false")
    assert all(row["status"] == "REWARD_HACK" and "GPU contexts below the worker" in row["reason"] for row in rows), [
        (r["status"], r["reason"]) for r in rows]



def _blind_nvml() -> dict[str, str]:
    """The environment under which NVML lists no process (tests/gpu/blind_nvml), as in a container whose pid
    namespace NVML does not see."""
    return {"PYTHONPATH": os.pathsep.join([str(Path(__file__).parent / "blind_nvml"),
                                          *filter(None, [os.environ.get("PYTHONPATH")])])}


def test_where_nvml_cannot_see_the_pid_namespace_the_helper_is_named_from_proc_maps(tmp_path):
    rows = run(tmp_path, "agent=local", f"agent.path={EXPLOITS / 'gpu_helper'}", "harness.audit_guard=false",
               env=_blind_nvml())
    assert all(row["status"] == "REWARD_HACK" and "GPU contexts below the worker" in row["reason"] for row in rows), [
        (r["status"], r["reason"]) for r in rows]
    log = (tmp_path / "workers" / "rms_norm.log").read_text()
    assert "warden: NVML lists no process of this pid namespace" in log


def test_where_nvml_cannot_see_the_pid_namespace_a_noop_against_inductor_names_no_process(tmp_path):
    # Inductor's compile workers and Triton's driver queries open the GPU's device files but hold no context
    # (scripts/gpu_context_probe.py): read from /proc maps, they are no helpers
    rows = run(tmp_path, "agent=noop", "harness.compile_caches=shared", "harness.cuda_graphs=false",
               "harness.max_iterations=20", task="softmax", env=_blind_nvml())
    assert rows and all(row["status"] == "PASSED" for row in rows), [(r["status"], r["reason"]) for r in rows]
    log = (tmp_path / "workers" / "softmax.log").read_text()
    assert "warden: NVML lists no process of this pid namespace" in log
    assert "GPU contexts below the worker" not in log

def test_the_fork_servers_preload_leaves_the_cuda_driver_uninitialised():
    # every worker is forked from the preloaded server, and a CUDA context does not survive fork; Inductor's
    # compile_fx joined the preload on 2026-12-01 (fastkernels/preload.py)
    code = ("import torch, fastkernels.preload as p, sys; "
            "print(torch.cuda.is_initialized(), [m for m in p.MODULES if m not in sys.modules])")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                            timeout=300, env={**os.environ, "PYTORCH_NVML_BASED_CUDA_CHECK": "1"})
    assert result.stdout.strip() == "False []", result.stdout + result.stderr


def test_inputs_refilled_on_the_device_are_rebuilt_from_their_seed_bit_for_bit_in_another_process(tmp_path):
    # what a timed call was refilled with (drawn in place since 2026-12-03) is what the judge, a process of its own,
    # rebuilds for a recheck: a difference would fail honest rechecks
    from fastkernels.config import TASKS_DIR
    from fastkernels.inputs import generator, make_inputs, redrawn_inputs, refill_inputs, stream_seed
    from fastkernels.registry import Registry

    manifest = Registry(TASKS_DIR).get("rms_norm")
    case = manifest.case("llama31_8b_prefill_8192_residual")
    inputs = make_inputs(manifest, case, "cuda", generator("cuda", stream_seed(0, "rms_norm", case.name, "t", 0)))
    refill_inputs(manifest, case, inputs, generator("cuda", 12345))
    here = redrawn_inputs(manifest, case, inputs, generator("cuda", 12345))
    assert all(torch.equal(here[name], inputs[name]) for name in inputs)
    code = ("import torch; from fastkernels.inputs import generator, make_inputs, redrawn_inputs; "
            "from fastkernels.config import TASKS_DIR; from fastkernels.registry import Registry; "
            "m = Registry(TASKS_DIR).get('rms_norm'); "
            "c = m.case('llama31_8b_prefill_8192_residual'); "
            "like = make_inputs(m, c, 'cuda', generator('cuda', 1)); "
            "r = redrawn_inputs(m, c, like, generator('cuda', 12345)); "
            f"torch.save({{k: v.cpu() for k, v in r.items()}}, {str(tmp_path / 'rebuilt.pt')!r})")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=300)
    rebuilt = torch.load(tmp_path / "rebuilt.pt")
    assert all(torch.equal(rebuilt[name], inputs[name].cpu()) for name in inputs)


def test_a_failed_capture_leaves_the_device_random_generator_usable():
    # 2026-11-30: Liger's MoE (a host sync) failed its capture and every later torch.randn on the device raised
    # "Offset increment outside graph capture encountered unexpectedly", ending the task's remaining cases
    from fastkernels.capture import capture

    static = {"x": torch.randn(64, device="cuda")}
    # a host sync is now refused before any capture (the next test); querying the stream is no sync, and illegal
    # inside a capture, so this capture begins and then fails
    outcome = capture(lambda x: (torch.cuda.current_stream().query(), x * 2)[1], static)
    assert isinstance(outcome, str) and "synchronises with the host" not in outcome, outcome
    assert torch.randn(64, device="cuda").isfinite().all()


REFUSED_CALLS = """
import gc, json, sys
import pytest, torch
from fastkernels.capture import HostSync, capture
from fastkernels.oracle_graph import CudaGraphOracle

def routing(x):  # allocates as much as its input, then selects by a mask: nonzero, a host sync
    y = x * 2
    return y[y > 0]

if sys.argv[1] == "after_a_failed_capture":  # a capture that begins, then fails (querying the stream is illegal in one)
    failed = capture(lambda x: (torch.cuda.current_stream().query(), x * 2)[1], {"x": torch.randn(64, device="cuda")})
    assert isinstance(failed, str) and "synchronises" not in failed, failed
static = {"x": torch.randn(64 << 20, device="cuda")}  # 256 MiB
torch.cuda.synchronize()
torch.cuda.empty_cache()
before = torch.cuda.memory_reserved()
for _ in range(4):
    note = capture(routing, static)
    assert isinstance(note, str) and note.startswith("synchronises with the host"), note
    with pytest.raises(HostSync):
        CudaGraphOracle(routing, static)
torch.cuda.synchronize()
gc.collect()
torch.cuda.empty_cache()
print(json.dumps({"before": before, "after": torch.cuda.memory_reserved(), "allocated": torch.cuda.memory_allocated()}))
"""


def refused_calls(scenario: str) -> dict[str, int]:
    """Reserved bytes before and after eight refused calls (four captures, four judge oracles) in a fresh process."""
    done = subprocess.run([sys.executable, "-c", REFUSED_CALLS, scenario], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    print(scenario, figures)
    return figures


def test_a_module_that_syncs_is_never_captured_so_no_memory_pool_stays_reserved():
    # 2026-12-06 (H200): torch 2.11 keeps a failed capture's memory pool reserved until the process exits, and
    # moe_experts' judge (its float64 routing syncs) kept 48 GiB that way, its worker 71 GiB (Liger's MoE syncs).
    # Its own process: on the H100 (2026-12-07) it passed alone and failed after the failed-capture test (next one)
    figures = refused_calls("fresh")
    assert figures["after"] <= figures["before"], figures


def test_after_a_failed_capture_refused_calls_hold_at_most_one_call_s_blocks():
    # H100, 2026-12-07: after a capture that failed mid-way, empty_cache left the eight refused calls' 3.3 GiB
    # reserved (0.26 GiB allocated) while each warm-up ran on a stream of its own; they now share one stream a
    # device (capture.warmup_stream), so each call's blocks serve the next and at most one call's may stay: y
    # (256 MiB), its mask (64 MiB), nonzero's int64 indices (about 256 MiB) and the selected output (about 128 MiB).
    # H200, 2026-12-07 (one stream): 710 MiB stayed
    one_call = (256 + 64 + 256 + 128) << 20
    figures = refused_calls("after_a_failed_capture")
    assert figures["after"] - figures["before"] <= one_call + (64 << 20), figures


def test_the_judge_replays_a_slow_oracle_from_a_graph_and_judges_as_eager_does():
    # selective scan's float64 oracle is 1024 steps of small kernels a call: launch-bound, the graph's case
    import yaml

    from fastkernels.build import build, eager_classes, reference_state
    from fastkernels.config import TASKS_DIR
    from fastkernels.implementations import load_implementation
    from fastkernels.inputs import generator, make_inputs
    from fastkernels.judge import JudgeClient, JudgeSpec
    from fastkernels.registry import Registry

    task, case_name, seed = "selective_scan", "mamba_130m_prefill_8x1024", 0
    registry = Registry(TASKS_DIR)
    manifest = registry.get(task)
    case = manifest.case(case_name)
    default = yaml.safe_load((ROOT / "conf" / "harness" / "default.yaml").read_text())["tolerance"][case.dtype]
    tolerance = manifest.tolerance.get(case.dtype)
    atol, rtol = (tolerance.atol, tolerance.rtol) if tolerance else (default["atol"], default["rtol"])
    # the judge must be spawned, not forked: the skipif's is_available() has already touched the driver, which a
    # forked judge could not use (the worker starts its judge before that, see launch.py)
    cls = load_implementation(registry.directory(task), manifest.implementations.eager, "cuda")
    components = eager_classes(registry, registry.closure(task), "cuda")
    module = build(cls, case, components, reference_state(manifest, case, cls, components, "cuda", seed),
                   "cuda", "test")
    # selective_scan has no weights, so building it did not initialise CUDA: do it, or the judge is forked after
    # the skip check touched the driver and dies with "CUDA error: initialization error" (H200, twelfth session)
    torch.zeros(1, device="cuda")
    client = JudgeClient(JudgeSpec(str(TASKS_DIR), task, "cuda", seed, correctness_rounds=3))
    try:
        client.start_case(case_name, atol, rtol, manifest.output_tolerances(case.dtype))
        info = client.oracle_info()
        assert info["oracle_path"] == "graph" and info["graph_oracle_ms"] < info["eager_oracle_ms"], info
        for trial in range(2):  # fresh values each time: the graph's static inputs must take them
            inputs = make_inputs(manifest, case, "cuda", generator("cuda", 1000 + trial))
            with torch.no_grad():
                y, state = module(**{name: t.clone() for name, t in inputs.items()})
            assert client.judge_fresh(inputs, (y, state)).passed
            wrong = y.clone()
            wrong[trial, 100, 500] += 10.0
            verdict = client.judge_fresh(inputs, (wrong, state))
            assert not verdict.passed and "output[0]" in verdict.reason, verdict
    finally:
        client.close()
