"""Workers are forked from a pre-imported server by default (launch.py) or executed fresh: either way each task is a
warden process leading its own session, over a worker in a process group of its own (warden.py), whose crash, hang
or exit status the runner sees."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fastkernels import launch
from fastkernels.launch import start_worker
from fastkernels.records import Status
from fastkernels.runner import _end_task
from fastkernels.processes import children, live_processes, process_stat
from fastkernels.warden import SIGNAL_EXIT_BASE
from scoring import cpu_job
from scoring import score as score_dir

CANDIDATES = Path(__file__).parent / "candidates"


@pytest.mark.parametrize("how", ["forkserver", "exec"])
@pytest.mark.parametrize("name, status, words", [("segfault", Status.RUNTIME_ERROR, "SIGSEGV"),
                                                 ("hang", Status.TIMEOUT, "15 s")])
def test_both_start_methods_report_a_dying_or_hanging_worker_alike(how, name, status, words, tmp_path):
    rows = score_dir(CANDIDATES / name, tmp_path, "rms_norm", "harness.timeout_s=15", f"harness.worker_start={how}")
    assert all(row.status is status and words in row.reason for row in rows), [row.reason for row in rows]


@pytest.mark.parametrize("how", ["forkserver", "exec"])
def test_both_start_methods_score_an_honest_task(how, tmp_path):
    rows = score_dir(None, tmp_path, "silu_and_mul", f"harness.worker_start={how}")
    assert rows and all(row.status is Status.PASSED for row in rows)


def _start_hanging_worker(tmp_path):
    """A forked task whose candidate hangs, once its worker and judge are both up: (warden, worker)."""
    job, _ = cpu_job(CANDIDATES / "hang", tmp_path)
    job_path, log_path = tmp_path / "job.json", tmp_path / "worker.log"
    job_path.write_text(job.model_dump_json())
    launch.stop_fork_server()  # an earlier test's server may have imported under another environment
    process = start_worker(str(job_path), str(log_path), {**os.environ, "TRITON_INTERPRET": "1"}, "forkserver",
                           bytes(32))
    assert not isinstance(process, subprocess.Popen)  # forked

    def up() -> bool:  # the worker and its judge running, and the worker past starting them (the judge is forked
        # before the line is written: on a loaded machine the line came later, 2026-12-02)
        found = children(process.pid)
        return bool(found) and len(_living_members(next(iter(found)))) == 2 and \
            "judge, clock and cache flush started" in log_path.read_text()

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not up():
        time.sleep(0.1)
    try:
        (worker,) = children(process.pid)
        assert len(_living_members(worker)) == 2  # the worker and its judge
        assert "judge, clock and cache flush started" in log_path.read_text()  # the log is the worker's own
    except BaseException:  # a hanging worker left behind would keep the fork server, and the next test, waiting
        for group in (*children(process.pid), process.pid):  # the worker's group (its judge too), then the warden
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        raise
    return process, worker


def test_a_forked_task_is_a_warden_leading_its_own_session_over_a_worker_group_with_its_judge(tmp_path):
    process, worker = _start_hanging_worker(tmp_path)
    assert os.getpgid(process.pid) == process.pid != os.getpgid(0)  # the warden: a session of its own
    assert os.getpgid(worker) == worker  # the worker and its judge: a group of their own below it
    ending: set[str] = set()
    _end_task(process, ending)
    assert ending == {"asked"}  # asked (SIGTERM), the warden ended the worker's group and exited in time
    assert process.poll() == SIGNAL_EXIT_BASE + signal.SIGKILL  # its worker died of SIGKILL
    assert _living_members(worker) == []


def _state(pid: int) -> str | None:
    stat = process_stat(pid)
    return stat.state if stat is not None else None


def _living_members(group: int) -> list[int]:
    """Processes of a process group that are still running (zombies waiting to be reaped do not count)."""
    return [pid for pid, stat in live_processes().items() if stat.group == group]


def test_the_judge_does_not_outlive_a_worker_that_dies_alone(tmp_path):
    """A worker killed by itself (a segfault, not the runner's request): its group, judge included, ends with it and
    the warden reports the worker's signal."""
    process, worker = _start_hanging_worker(tmp_path)
    os.kill(worker, signal.SIGKILL)  # the worker alone
    assert process.wait() == SIGNAL_EXIT_BASE + signal.SIGKILL
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _living_members(worker):
        time.sleep(0.1)
    assert _living_members(worker) == []


def test_a_cpu_run_forks_workers_whose_triton_runs_interpreted(tmp_path):
    """The fork server imports Triton, which decorates its standard library (tl.sum, ...) as interpreted or compiled
    on import: a CPU run started without TRITON_INTERPRET must still fork workers that interpret (the reference
    rms_norm kernel calls tl.sum)."""
    environment = {key: value for key, value in os.environ.items() if key != "TRITON_INTERPRET"}
    subprocess.run([sys.executable, "-m", "fastkernels", "agent=reference", "tasks.include=[rms_norm]",
                    "harness.warmup=1", "harness.max_iterations=8", f"hydra.run.dir={tmp_path}"],
                   env=environment, check=True, capture_output=True, timeout=600)
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert rows and all(row["status"] == "PASSED" for row in rows), [row["reason"] for row in rows]
    log = (tmp_path / "workers" / "rms_norm.log").read_text()
    assert "torch imported" in log
    # and its Triton autotuners were built knowing the run caches their picks (harness.cache_autotuning)
    assert "forked from the preloaded server, imported under TRITON_INTERPRET=1 TRITON_CACHE_AUTOTUNING=1" in log


def test_a_forked_worker_whose_server_imported_under_other_values_executes_itself_fresh(tmp_path, monkeypatch):
    """The worker's own check, behind the runner's (_fork_server_matches): its log then has no preloaded server."""
    launch.stop_fork_server()
    job, _ = cpu_job(None, tmp_path, "rms_norm")
    job_path, log_path = tmp_path / "job.json", tmp_path / "worker.log"
    job_path.write_text(job.model_dump_json())
    server_environment = {**os.environ, "TRITON_INTERPRET": "1"}
    server_environment.pop("TRITON_CACHE_AUTOTUNING", None)
    assert launch._fork_server_matches(server_environment)  # the server starts, importing without the variable
    worker_environment = {**server_environment, "TRITON_CACHE_AUTOTUNING": "1"}
    monkeypatch.setattr(launch, "_server_env", launch.import_time_environment(worker_environment))  # a wrong match
    try:
        process = start_worker(str(job_path), str(log_path), worker_environment, "forkserver", bytes(32))
        assert not isinstance(process, subprocess.Popen)  # forked...
        process.wait()
        log = log_path.read_text()
        assert "torch imported" in log and "forked from the preloaded server" not in log  # ...then executed fresh
    finally:
        monkeypatch.undo()
        launch.stop_fork_server()  # and forgets its environment: the next worker starts a server of its own


def test_a_worker_needing_another_import_time_environment_than_the_server_is_executed_fresh(tmp_path, monkeypatch):
    job, _ = cpu_job(CANDIDATES / "hang", tmp_path)
    job_path = tmp_path / "job.json"
    job_path.write_text(job.model_dump_json())
    monkeypatch.setattr(launch, "_server_env", {"TRITON_INTERPRET": "1"})
    environment = {key: value for key, value in os.environ.items() if key != "TRITON_INTERPRET"}
    process = start_worker(str(job_path), str(tmp_path / "worker.log"), environment, "forkserver", bytes(32))
    try:
        assert isinstance(process, subprocess.Popen)
    finally:
        _end_task(process, set())


@pytest.mark.parametrize("cache, expected", [(True, "1"), (False, None)])
def test_the_worker_environment_keeps_autotuning_picks_unless_told_not_to(cache, expected, tmp_path, monkeypatch):
    from fastkernels import runner

    seen: dict[str, str] = {}

    def start(job_path, log_path, environment, how, row_key):  # a stand-in worker that exits at once, writing nothing
        seen.update(environment)
        Path(log_path).write_text("")
        return subprocess.Popen(["true"], start_new_session=True)

    monkeypatch.setattr(runner, "start_worker", start)
    job, manifest = cpu_job(None, tmp_path, "rms_norm", f"harness.cache_autotuning={cache}")
    rows = runner.run_task(job, manifest, tmp_path, lambda row: None)
    assert seen.get("TRITON_CACHE_AUTOTUNING") == expected and seen["TRITON_INTERPRET"] == "1"
    assert all(row.status is Status.RUNTIME_ERROR and "exited with code 0" in row.reason for row in rows)


def test_a_fork_server_that_died_is_started_again_with_the_import_time_environment(tmp_path, monkeypatch):
    reference = Path(__file__).resolve().parent.parent / "agents" / "reference"
    launch.stop_fork_server()  # whatever an earlier test in this process started: this test's run starts its own
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    assert all(row.status is Status.PASSED for row in score_dir(reference, tmp_path / "first", "rms_norm"))
    from multiprocessing import forkserver

    server = forkserver._forkserver._forkserver_pid  # private: the test kills it on purpose
    os.kill(server, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _state(server) not in ("Z", None):  # dead, left for ensure_running to reap
        time.sleep(0.05)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)  # the runner's own environment no longer has it
    rows = score_dir(reference, tmp_path / "second", "rms_norm")
    assert all(row.status is Status.PASSED for row in rows), [row.reason for row in rows]
    assert forkserver._forkserver._forkserver_pid != server


PARENT_SCRIPT = '''
import os, pathlib, sys
if __name__ == "__mp_main__":  # what multiprocessing runs in a child that re-imports the parent's main script
    pathlib.Path(os.environ["MARK"]).write_text("re-ran")
elif __name__ == "__main__":
    from fastkernels.launch import start_worker
    os.environ["MARK"] = sys.argv[1]
    worker = start_worker(sys.argv[2], sys.argv[3], dict(os.environ), "forkserver", bytes(32))
    sys.exit(0 if worker.wait() is not None else 1)
'''


def test_a_forked_worker_does_not_rerun_the_parents_main_script(tmp_path):
    """Under Ray the parent's main script is Ray's worker, which imports Ray: 0.5-0.9 s a task on the H200."""
    script, mark = tmp_path / "parent.py", tmp_path / "mark"
    script.write_text(PARENT_SCRIPT)
    done = subprocess.run([sys.executable, str(script), str(mark), str(tmp_path / "no.job.json"),
                           str(tmp_path / "worker.log")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "no.job.json" in (tmp_path / "worker.log").read_text()  # the worker ran (and failed on the missing job)
    assert not mark.exists()


STOP_SCRIPT = """
import os, sys
from multiprocessing import forkserver, resource_tracker
from fastkernels import launch
from fastkernels.launch import start_worker
start_worker(sys.argv[1], sys.argv[2], dict(os.environ), "forkserver", bytes(32)).wait()
helpers = [forkserver._forkserver._forkserver_pid, resource_tracker._resource_tracker._pid]
print(*[os.path.exists(f"/proc/{pid}") for pid in helpers])
launch.stop_fork_server()
print(*[os.path.exists(f"/proc/{pid}") for pid in helpers])
"""


def test_a_stopped_fork_server_and_its_resource_tracker_are_gone_when_the_call_returns(tmp_path):
    """`python -m fastkernels` stops them as it ends: on their own they outlived an interrupted run by about a second
    under load, holding its output open (tests/test_interruption.py's check, 2026-12-01)."""
    done = subprocess.run([sys.executable, "-c", STOP_SCRIPT, str(tmp_path / "no.job.json"),
                           str(tmp_path / "worker.log")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = done.stdout.splitlines()
    assert before == "True True" and after == "False False"  # both ran, and both are gone when the call returns


def test_a_start_interrupted_after_the_fork_ends_the_worker_it_started(tmp_path, monkeypatch):
    """Ctrl-C landing as a worker's start returns: nothing holds the worker yet, and multiprocessing joins every live
    child at interpreter exit, so a worker left running (a hanging candidate) would keep the run from ever exiting."""
    from types import SimpleNamespace

    job, _ = cpu_job(CANDIDATES / "hang", tmp_path)
    job_path = tmp_path / "job.json"
    job_path.write_text(job.model_dump_json())
    environment = {**os.environ, "TRITON_INTERPRET": "1"}
    launch.stop_fork_server()  # an earlier test's server may have imported under another environment
    assert launch._fork_server_matches(environment)  # the server up first: only the worker's start is interrupted
    context = launch._fork_server()
    before = {child.pid for child in multiprocessing.active_children()}
    monkeypatch.setattr(launch, "_fork_server", lambda: SimpleNamespace(
        Process=_InterruptedAfterTheFork, set_forkserver_preload=context.set_forkserver_preload))
    with pytest.raises(KeyboardInterrupt):
        start_worker(str(job_path), str(tmp_path / "worker.log"), environment, "forkserver", bytes(32))
    started = [child for child in multiprocessing.active_children() if child.pid not in before]
    assert started == [], "the started worker is still running"


class _InterruptedAfterTheFork(multiprocessing.get_context("forkserver").Process):
    """A worker process whose start() is interrupted (Ctrl-C) just after the fork server forked it (module level:
    the fork server unpickles it)."""

    def start(self) -> None:
        super().start()
        raise KeyboardInterrupt

