"""The warden (warden.py) runs a worker below it and exits with the worker's status, unless something the worker
started left its process group: then it kills that too and exits STRAYS_EXIT. The runner reads those exits, and a
warden killed from below, as REWARD_HACK (runner._warden_verdict). Where NVML reads a GPU (a fake one here), the
warden also names processes below the worker, other than those it vouched for before candidate code, that hold a GPU
context; the runner makes every case of the task a REWARD_HACK. Where NVML cannot see this pid namespace (a
container's: it lists host pids), the watch notices and reads /proc maps instead."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fastkernels.records import Status
from fastkernels.runner import _warden_verdict
from fastkernels.warden import SIGNAL_EXIT_BASE, STRAYS_EXIT


def _warded(body: str, tmp_path: Path, fake_nvml: bool = False) -> subprocess.CompletedProcess:
    """Run `body` (the worker's work, returning an exit code) under a warden in a fresh interpreter; with
    `fake_nvml`, NVML is tests/fake_nvml (its GPU's processes: the pids written to gpu.pids)."""
    script = textwrap.dedent('''
        import os, signal, subprocess, sys, time
        from fastkernels.gpu_processes import vouch_for_children
        from fastkernels.warden import run_warded
        def work():
        ''') + textwrap.indent(textwrap.dedent(body), "    ") + "\nrun_warded(work)\n"
    path = [str(Path(__file__).resolve().parent / "fake_nvml")] if fake_nvml else []
    environment = {**os.environ, "FAKE_NVML_PIDS": str(tmp_path / "gpu.pids"),
                   "PYTHONPATH": os.pathsep.join(path + [str(Path(__file__).resolve().parents[1])])}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env=environment)


@pytest.mark.parametrize("body, code", [("return 3", 3), ("raise ValueError('no')", 1), ("sys.exit(4)", 4),
                                        ("os.kill(os.getpid(), signal.SIGSEGV)", SIGNAL_EXIT_BASE + 11)])
def test_the_warden_exits_with_its_workers_status(body, code, tmp_path):
    assert _warded(body, tmp_path).returncode == code


def test_a_child_in_a_session_of_its_own_is_killed_and_named(tmp_path):
    done = _warded('''
        child = subprocess.Popen(["sleep", "60"], start_new_session=True)
        open("child.pid", "w").write(str(child.pid))
        return 0
        ''', tmp_path)
    assert done.returncode == STRAYS_EXIT
    pid = int((tmp_path / "child.pid").read_text())
    assert f"warden: killed 1 stray process(es): pid {pid} (sleep 60)" in done.stderr
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_plain_subprocess_left_running_in_the_workers_group_is_ended_without_blame(tmp_path):
    done = _warded('''
        child = subprocess.Popen(["sleep", "60"])
        open("child.pid", "w").write(str(child.pid))
        return 0
        ''', tmp_path)
    assert done.returncode == 0 and "warden:" not in done.stderr
    with pytest.raises(ProcessLookupError):
        os.kill(int((tmp_path / "child.pid").read_text()), 0)


def test_the_runner_reads_the_wardens_exits(tmp_path):
    log = tmp_path / "task.log"
    log.write_text("case c PASSED\nwarden: killed 1 stray process(es): pid 7 (sleep 60)\n")
    assert _warden_verdict(0, set(), log) == ""
    assert _warden_verdict(SIGNAL_EXIT_BASE + 9, {"asked"}, log) == ""  # its worker was killed: not a hack
    assert "the warden killed 1 stray process(es): pid 7 (sleep 60)" in _warden_verdict(STRAYS_EXIT, set(), log)
    assert "died of SIGKILL, a signal the runner did not send" in _warden_verdict(-signal.SIGKILL, set(), log)
    assert _warden_verdict(-signal.SIGTERM, {"asked"}, log) == ""  # the runner's own request, before it warded
    assert "did not end the task within" in _warden_verdict(-signal.SIGKILL, {"asked", "killed"}, log)
    assert "was stopped (SIGSTOP or a tracer) from below" in _warden_verdict(0, {"asked", "stopped"}, log)


def test_a_process_the_worker_starts_after_vouching_is_noted_when_it_holds_a_gpu_context(tmp_path):
    # The judge stands in as a child started before the worker vouches; the helper comes after (candidate code).
    done = _warded('''
        judge = subprocess.Popen(["sleep", "30"])
        vouch_for_children()
        helper = subprocess.Popen(["sleep", "31"])
        open("gpu.pids", "w").write(f"{os.getpid()} {judge.pid} {helper.pid} 1")
        open("helper.pid", "w").write(str(helper.pid))
        time.sleep(2.5)  # the warden reads NVML every second
        return 0
        ''', tmp_path, fake_nvml=True)
    helper = int((tmp_path / "helper.pid").read_text())
    assert done.returncode == 0  # the warden reports; the runner decides
    assert f"warden: GPU contexts below the worker besides its own and its judge's: pid {helper} (sleep 31)" \
        in done.stderr.splitlines()  # not the worker, not its vouched judge, not pid 1 (not below the warden)


def test_a_helper_that_reaches_the_gpu_as_the_worker_ends_is_noted(tmp_path):
    # No second passes on the GPU before the worker returns, so only the warden's read as the worker ends can see it
    # (on the H200 a helper that raced its worker this way went unnamed, 2026-12-04).
    done = _warded('''
        vouch_for_children()
        helper = subprocess.Popen(["sleep", "32"])
        open("gpu.pids", "w").write(str(helper.pid))
        open("helper.pid", "w").write(str(helper.pid))
        return 0
        ''', tmp_path, fake_nvml=True)
    helper = int((tmp_path / "helper.pid").read_text())
    assert done.returncode == 0
    assert f"warden: GPU contexts below the worker besides its own and its judge's: pid {helper} (sleep 32)" \
        in done.stderr.splitlines()
    with pytest.raises(ProcessLookupError):  # and it is ended with the worker's group
        os.kill(helper, 0)


def test_a_helper_on_the_gpu_makes_every_case_of_the_task_a_reward_hack(tmp_path, monkeypatch):
    from fastkernels import runner
    from scoring import cpu_job

    def start(job_path, log_path, environment, how, row_key):  # a stand-in worker: no rows, the warden's line
        Path(log_path).write_text("warden: GPU contexts below the worker besides its own and its judge's: "
                                  "pid 9 (sleep 31)\n")
        return subprocess.Popen(["true"], start_new_session=True)

    monkeypatch.setattr(runner, "start_worker", start)
    job, manifest = cpu_job(None, tmp_path, "rms_norm")
    rows = runner.run_task(job, manifest, tmp_path, lambda row: None)
    assert rows and all(row.status is Status.REWARD_HACK for row in rows)
    assert all(row.reason.startswith("GPU contexts below the worker besides its own and its judge's: pid 9 (sleep 31)"
                                      " (a helper process on the GPU") for row in rows)


class _Nvml:
    """An NVML whose one GPU lists `pids` (host pids, in a container with a pid namespace of its own: none of ours)."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids

    def nvmlDeviceGetCount(self) -> int:
        return 1

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index

    def nvmlDeviceGetComputeRunningProcesses(self, handle: int) -> list:
        return [type("Process", (), {"pid": pid})() for pid in self.pids]

    def nvmlDeviceGetGraphicsRunningProcesses(self, handle: int) -> list:
        return []


def _mapping(device: Path) -> subprocess.Popen:
    """A child of this process that maps `device` (a stand-in for /dev/nvidia-uvm, which a CUDA context maps)."""
    code = ("import mmap, sys, time; f = open(sys.argv[1], 'rb');"
            " m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ); print('ready', flush=True); time.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", code, str(device)], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    return child


def _watch(worker: int, lib: _Nvml, device: Path):
    from fastkernels.gpu_processes import GpuWatch

    vouch_read, vouch_write = os.pipe()
    os.write(vouch_write, b"\n")  # the worker vouched for no child
    os.close(vouch_write)
    return GpuWatch(os.getpid(), worker, vouch_read, lib=lib, device_file=str(device))


@pytest.fixture
def device(tmp_path):
    """A stand-in for /dev/nvidia-uvm, and the children started to map it (or not), killed afterwards."""
    path = tmp_path / "nvidia-uvm"
    path.write_bytes(b"\0" * 4096)
    started: list[subprocess.Popen] = []

    def child(maps: bool = True) -> subprocess.Popen:
        idle = [sys.executable, "-c", "import time; time.sleep(60)"]
        started.append(_mapping(path) if maps else subprocess.Popen(idle))
        return started[-1]

    yield path, child
    for process in started:
        process.kill()
        process.wait()


def test_where_nvml_cannot_see_this_pid_namespace_the_watch_reads_maps_and_says_so(device):
    # The worker holds a context NVML does not list (host pids only) on two polls in a row: the watch is blind to
    # NVML here, so a helper below the warden that maps the device file is named from its maps.
    path, child = device
    worker, helper = child(), child()
    watch = _watch(worker.pid, _Nvml([4242, 4243]), path)
    watch.poll()
    assert watch.sees_namespace is None and not watch.found  # one poll is not enough to call NVML blind
    watch.poll()
    assert watch.sees_namespace is False and set(watch.found) == {helper.pid}
    first, second = watch.report().splitlines()
    assert first.startswith("warden: NVML lists no process of this pid namespace")
    assert second.startswith("warden: GPU contexts below the worker besides its own and its judge's: "
                             f"pid {helper.pid} ")


def test_where_nvml_lists_the_worker_it_is_trusted_and_maps_are_not_read(device):
    path, child = device
    worker, _mapper = child(), child()
    watch = _watch(worker.pid, _Nvml([worker.pid]), path)
    watch.poll()
    watch.poll()
    assert watch.sees_namespace is True and not watch.found and watch.report() == ""


def test_a_worker_without_a_context_never_makes_nvml_look_blind(device):
    path, child = device
    worker, _helper = child(maps=False), child()
    watch = _watch(worker.pid, _Nvml([]), path)
    for _ in range(3):
        watch.poll()
    assert watch.sees_namespace is None and not watch.found  # maps are read only once NVML is known blind
