"""scripts/device-session.sh, the named steps of a device session, runs on the CPU profile too (FK_HARDWARE=cpu):
a step that breaks here would otherwise first break on the lent GPU, in the session's scarce device time."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def device_session(out: Path, *steps: str, **variables: str) -> subprocess.CompletedProcess:
    """scripts/device-session.sh STEPS on the CPU profile, with this venv's python3 and no carried wheels, $OUT at
    `out` and `variables` (FK_TASKS, FK_OVERRIDES ...) set."""
    environment = {**os.environ, "FK_HARDWARE": "cpu", "FK_WHEELS": "none", "OUT": str(out),
                   "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", **variables}
    return subprocess.run(["bash", "scripts/device-session.sh", *steps], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=600)


def test_the_calls_step_keeps_every_call_in_both_variants_and_reads_them(tmp_path):
    done = device_session(tmp_path, "calls", FK_TASKS="tasks.include=[silu_and_mul]",
                          FK_OVERRIDES="harness.max_iterations=24")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "step calls:" in done.stdout
    report = (tmp_path / "calls.txt").read_text()
    assert "== default" in report and "== harness.rechecks=0" in report
    assert report.count("row(s) kept their calls") + report.count("speedup") >= 2
    with tarfile.open(tmp_path / "calls.tgz") as archive:
        names = archive.getnames()
    assert {"calls-default/results.jsonl", "calls-0/results.jsonl"} <= set(names)


def test_the_warm_step_discards_its_rows_but_first_says_how_they_ended(tmp_path):
    done = device_session(tmp_path, "warm", FK_TASKS="tasks.include=[silu_and_mul]")
    assert done.returncode == 0, done.stdout + done.stderr
    summary = (tmp_path / "warm-rows.txt").read_text()
    assert "rows: PASSED" in summary and "REWARD_HACK" not in summary
    assert not (tmp_path / "warm-run").exists()


def test_the_gpu_tests_step_logs_each_test_by_name_and_runs_only_those_fk_gpu_tests_selects(tmp_path):
    # without CUDA every GPU test is skipped, which is enough to see what the step collects and how it logs:
    # a call cut short must still say which tests ran, and the next call must be able to run only the rest
    done = device_session(tmp_path, "gpu-tests", FK_GPU_TESTS="side_stream_is or uncapturable")
    assert done.returncode == 0, done.stdout + done.stderr
    log = (tmp_path / "gpu-tests.log").read_text()
    assert "test_work_on_a_side_stream_is_a_reward_hack SKIPPED" in log
    assert "test_an_uncapturable_candidate_passes_with_a_graph_note SKIPPED" in log
    assert "2 skipped" in log and "deselected" in log and "test_noop_is_one" not in log


def test_the_inductor_step_runs_noop_over_the_inductor_tasks_and_lists_candidates_that_compiled(tmp_path):
    # on the CPU the tasks' torch_compile implementations are cuda-only: baseline=inductor compiles the eager module,
    # and all Inductor tasks but silu_and_mul are left out to keep it short (read from the registry, as the step
    # selects them: a hand-kept list went stale when eight L2 tasks gained Inductor, and the test grew to 92 s)
    from fastkernels.registry import Registry

    registry = Registry()
    compiled = [name for name in registry.names
                if any(way.name.startswith("torch_compile") for way in registry.get(name).implementations.production)]
    others = ",".join(name for name in compiled if name != "silu_and_mul")
    done = device_session(tmp_path, "inductor",
                          FK_OVERRIDES=f"baseline=inductor tasks.exclude=[{others}] harness.max_iterations=24")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "step inductor:" in done.stdout
    with tarfile.open(tmp_path / "inductor.tgz") as archive:
        names = archive.getnames()
    assert "inductor/results.jsonl" in names and "inductor/workers/silu_and_mul.log" in names
    assert (tmp_path / "inductor-candidates-compiled.txt").read_text() == ""  # the noop candidate compiled nothing


def test_the_reference_step_runs_only_the_tasks_a_reference_candidate_exists_for(tmp_path):
    # a task without a candidate is NOT_ATTEMPTED but still times its baseline (3-10 s a case on the H200, 86 wasted
    # cases on 2026-12-01); all of the candidates' tasks but hardswish are left out here to keep it short
    candidates = sorted(path.stem for path in (ROOT / "agents" / "reference").glob("L*/*.py"))
    done = device_session(tmp_path, "reference",
                          FK_OVERRIDES=f"tasks.exclude=[{','.join(c for c in candidates if c != 'hardswish')}]"
                                       " harness.max_iterations=24")
    assert done.returncode == 0, done.stdout + done.stderr
    with tarfile.open(tmp_path / "reference.tgz") as archive:
        rows = [json.loads(line) for line in archive.extractfile("reference/results.jsonl").read().splitlines()]
    assert rows and {row["task"] for row in rows} == {"hardswish"}
    assert {row["status"] for row in rows} == {"PASSED"}


def test_the_caches_step_runs_the_same_noop_in_shared_and_in_per_case_compile_caches(tmp_path):
    # what per-case compile caches cost on the GPU is measured by this step (docs/progress.md, gap 6)
    done = device_session(tmp_path, "caches", FK_CACHE=str(tmp_path / "cache"), FK_PICKS="none",
                          FK_TASKS="tasks=all tasks.include=[silu_and_mul]", FK_OVERRIDES="harness.max_iterations=24")
    assert done.returncode == 0, done.stdout + done.stderr
    report = (tmp_path / "caches.txt").read_text()
    assert report.index("== harness.compile_caches=shared") < report.index("== harness.compile_caches=per_case")
    assert report.count("rows: PASSED") == 2 and report.count("noop: ") == 2 and report.count("worker time:") == 2
    with tarfile.open(tmp_path / "caches.tgz") as archive:
        names = archive.getnames()
    assert {"caches-shared/results.jsonl", "caches-per_case/results.jsonl"} <= set(names)
    assert not (tmp_path / "cache" / "caches-per_case").exists()


def test_a_call_budget_cuts_a_step_short_in_time_to_pack_its_rows_and_skips_steps_that_no_longer_fit(tmp_path):
    # the device tool ends a call at its timeout and returns only what lies under $OUT: a run cut by the call itself
    # lost its worker logs (2026-12-01), one cut by the budget is interrupted, packed and summarised
    started = time.monotonic()
    done = device_session(tmp_path, "noop", "ceilings", FK_TASKS="tasks=all tasks.levels=[1]", FK_CALL_BUDGET="90",
                          FK_PACK_MARGIN="55",
                          FK_OVERRIDES="harness.warmup=1 harness.max_iterations=8")  # rows finish on a loaded machine
    assert done.returncode == 0, done.stdout + done.stderr
    assert time.monotonic() - started < 90
    with tarfile.open(tmp_path / "noop.tgz") as archive:
        names = archive.getnames()
    assert "noop/results.jsonl" in names and any(name.endswith(".log") for name in names)
    assert "rows: PASSED" in (tmp_path / "noop-rows.txt").read_text()
    assert "step ceilings: skipped, FK_CALL_BUDGET=90 s is spent" in done.stdout


def test_carried_tuning_picks_are_restored_recorded_in_the_run_and_handed_back(tmp_path):
    # the lent machines start bare: an earlier session's autotuning picks go in before the first step, the run's
    # env.json names the archive, and $OUT/picks.tgz holds them (with whatever this machine tuned) for the next one
    earlier = tmp_path / "earlier.tgz"
    with tarfile.open(earlier, "w:gz") as tar:
        data = b'{"configs_timings": []}'
        info = tarfile.TarInfo("triton/ab12/chunk_fwd_kernel.autotune.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    out, cache = tmp_path / "out", tmp_path / "cache"
    done = device_session(out, "noop", FK_CACHE=str(cache), FK_PICKS=str(earlier),
                          FK_TASKS="tasks.include=[silu_and_mul]", FK_OVERRIDES="harness.max_iterations=24")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tuning picks: 1 restored" in done.stdout
    assert (cache / "triton" / "ab12" / "chunk_fwd_kernel.autotune.json").read_bytes() == data
    with tarfile.open(out / "noop.tgz") as archive:
        env = json.load(archive.extractfile("noop/env.json"))  # type: ignore[arg-type]
    assert env["env"]["FASTKERNELS_TUNING_PICKS"].endswith(str(earlier))
    with tarfile.open(out / "picks.tgz") as archive:
        assert archive.getnames() == ["triton/ab12/chunk_fwd_kernel.autotune.json"]


def _run_lanes(tmp_path: Path, lines: str) -> tuple[subprocess.CompletedProcess, Path]:
    """device-lanes.sh over `lines` on the CPU profile, the call's budget 600 s: (the finished process, its $OUT)."""
    lanes, out = tmp_path / "lanes.txt", tmp_path / "out"
    lanes.write_text(lines)
    environment = {**os.environ, "FK_HARDWARE": "cpu", "FK_WHEELS": "none", "OUT": str(out),
                   "FK_CALL_BUDGET": "600", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "scripts/device-lanes.sh", str(lanes)], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=600)
    return done, out


def test_lanes_run_side_by_side_and_come_back_as_one_archive(tmp_path):
    # the device tool returns at most 8 files from $OUT: two lanes of device-session steps left 16 there on
    # 2026-12-01 and half were lost, so device-lanes.sh packs every run of every lane into lanes.tgz
    done, out = _run_lanes(tmp_path, "# LANE STEP [VAR=VALUE ...]\n"
                           "0 noop FK_TASKS='tasks.include=[silu_and_mul]' FK_OVERRIDES=harness.max_iterations=24\n"
                           "1 noop FK_TASKS=\"tasks.include=[hardswish]\" FK_OVERRIDES=harness.max_iterations=24\n"
                           "\n"
                           "1 ceilings FK_CALL_BUDGET=0\n")  # skipped: its budget is spent
    assert done.returncode == 0, done.stdout + done.stderr
    assert "== lane-0.log" in done.stdout and "== lane-1.log" in done.stdout
    came_back = {path.name for path in out.iterdir()}
    assert "lanes.tgz" in came_back and came_back <= {"lanes.tgz", "picks.tgz"}
    with tarfile.open(out / "lanes.tgz") as archive:
        names = set(archive.getnames())
        logs = {name: archive.extractfile(name).read().decode() for name in ("./lane-0.log", "./lane-1.log")}
        rows = {}
        for lane, name in (("0", "./lane-0-1/noop.tgz"), ("1", "./lane-1-1/noop.tgz")):
            with tarfile.open(fileobj=io.BytesIO(archive.extractfile(name).read())) as run:
                rows[lane] = [json.loads(line) for line in run.extractfile("noop/results.jsonl").read().splitlines()]
    assert {row["task"] for row in rows["0"]} == {"silu_and_mul"}
    assert {row["task"] for row in rows["1"]} == {"hardswish"}
    assert all(row["status"] == "PASSED" for lane in rows.values() for row in lane)
    assert "./lane-1-2" in names and "step ceilings: skipped" in logs["./lane-1.log"]
    assert "== lane 1 run 2: ceilings FK_CALL_BUDGET=0" in logs["./lane-1.log"]


def test_lanes_sharing_a_gpu_warm_side_by_side_in_run_directories_of_their_own(tmp_path):
    # compiling and autotuning are CPU-bound: a 16-core GPU machine warms its caches several tasks at a time, in the
    # GPU's one cache (timed steps stay one lane a GPU: lanes on one GPU disturb each other's timing)
    done, out = _run_lanes(tmp_path, "0:a warm FK_TASKS='tasks.include=[silu_and_mul]'\n"
                                     "0:b warm FK_TASKS='tasks.include=[hardswish]'\n")
    assert done.returncode == 0, done.stdout + done.stderr
    with tarfile.open(out / "lanes.tgz") as archive:
        logs = {lane: archive.extractfile(f"./lane-0-{lane}.log").read().decode() for lane in "ab"}
        summaries = {lane: archive.extractfile(f"./lane-0-{lane}-1/warm-rows.txt").read().decode() for lane in "ab"}
    assert all("warm: 1 tasks compiled" in log for log in logs.values()), logs
    assert all("\n2 rows: PASSED 2\n" in summary for summary in summaries.values()), summaries  # 2 CPU cases each


@pytest.mark.parametrize(("lines", "error"), [
    ("# comment\n0 noop\nx noop\n", "line 3 (x noop): the first word must be a lane: a GPU index, or GPU:NAME"),
    ("0:a:b warm\n", "line 1 (0:a:b warm): the first word must be a lane"),
    ("0:a warm\n0:b warm\n1 noop\n0 noop\n", "line 4 (0 noop): noop on GPU 0, which several lanes share: lanes side by"),
    ("0:a warm\n0:b gpu-tests\n", "line 2 (0:b gpu-tests): gpu-tests on GPU 0, which several lanes share"),
    ("0 nope\n", "line 1 (0 nope): unknown step 'nope' (one of: gpu-tests exploits noop reference"),
    ('1 noop FK_TASKS="a b" oops\n', "line 1 (1 noop FK_TASKS=\"a b\" oops): 'oops' is not VAR=VALUE"),
    ('0 noop FK_TASKS="unclosed\n', "line 1 (0 noop FK_TASKS=\"unclosed): not a shell word list"),
    ("# nothing to run\n\n", "holds no runs"),
])
def test_a_bad_lanes_file_is_refused_before_anything_runs_with_the_line_named(tmp_path, lines, error):
    lanes = tmp_path / "lanes.txt"
    lanes.write_text(lines)
    environment = {**os.environ, "FK_WHEELS": "none", "OUT": str(tmp_path / "out")}
    done = subprocess.run(["bash", "scripts/device-lanes.sh", str(lanes)], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"device-lanes.sh: {lanes}") and error in done.stderr
    assert done.stderr.count("\n") == 1  # one line
    assert not (tmp_path / "out").exists()  # nothing ran, nothing was made


def test_a_chain_of_lanes_files_runs_them_in_turn_within_one_budget_and_carries_the_picks_forward(tmp_path):
    # the warm lanes and the first timed call go in one device call: a released machine loses its warm caches
    warm, call, out = tmp_path / "warm.txt", tmp_path / "call-1.txt", tmp_path / "out"
    warm.write_text("0:a warm FK_TASKS='tasks.include=[silu_and_mul]'\n")
    call.write_text("0 noop FK_TASKS='tasks.include=[silu_and_mul]' FK_OVERRIDES=harness.max_iterations=24\n")
    environment = {**os.environ, "FK_HARDWARE": "cpu", "FK_WHEELS": "none", "OUT": str(out), "FK_CALL_BUDGET": "600",
                   "FK_PICKS": str(tmp_path / "no-picks-yet.tgz"),
                   "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "scripts/device-chain.sh", str(warm), str(call), str(tmp_path / "late.txt")],
                          cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2 and "device-chain.sh: no lanes file" in done.stderr  # checked before anything runs
    assert not out.exists()
    (tmp_path / "late.txt").write_text("0 ceilings\n")
    done = subprocess.run(["bash", "scripts/device-chain.sh", str(warm), str(call), str(tmp_path / "late.txt")],
                          cwd=ROOT, env={**environment, "FK_CALL_BUDGET": "20", "FK_HARDWARE": "auto"},
                          capture_output=True, text=True, timeout=60)
    # a file that would start with under FK_CHAIN_MIN_S (30 s) left is skipped, not cut short at once
    assert done.returncode == 0 and done.stdout.count(": skipped, ") == 3, done.stdout + done.stderr
    # FK_HARDWARE=auto names the profile of the card at hand once, before any file (a CPU here)
    assert done.stdout.startswith("=== hardware=auto resolves to cpu\n"), done.stdout
    done = subprocess.run(["bash", "scripts/device-chain.sh", str(warm), str(call)],
                          cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "=== warm: 600 s left" in done.stdout
    assert {path.name for path in (out / "warm").iterdir()} == {"lanes.tgz"}  # its picks went to the next file
    with tarfile.open(out / "call-1" / "lanes.tgz") as archive:
        # a run's own picks stay out of the archive (the merged picks.tgz beside it holds them): 150 KB a run, kept
        assert not any(name.endswith("/picks.tgz") for name in archive.getnames())
        log = archive.extractfile("./lane-0.log").read().decode()
        with tarfile.open(fileobj=io.BytesIO(archive.extractfile("./lane-0-1/noop.tgz").read())) as run:
            rows = [json.loads(line) for line in run.extractfile("noop/results.jsonl").read().splitlines()]
            env = json.load(run.extractfile("noop/env.json"))  # type: ignore[arg-type]
    assert rows and all(row["status"] == "PASSED" for row in rows), log
    # the timed call restored what the warm lanes left, not the first picks
    assert env["env"]["FASTKERNELS_TUNING_PICKS"].endswith("warm/picks.tgz"), log
    assert (out / "picks.tgz").is_file() and not list(out.glob("*/picks.tgz"))  # the last file's, merged, alone
