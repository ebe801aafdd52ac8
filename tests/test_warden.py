"""The warden (warden.py) runs a worker below it and exits with the worker's status, unless something the worker
started left its process group: then it kills that too and exits STRAYS_EXIT. The runner reads those exits, and a
warden killed from below, as REWARD_HACK (runner._warden_verdict)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fastkernels.runner import _warden_verdict
from fastkernels.warden import SIGNAL_EXIT_BASE, STRAYS_EXIT


def _warded(body: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run `body` (the worker's work, returning an exit code) under a warden in a fresh interpreter."""
    script = textwrap.dedent('''
        import os, signal, subprocess, sys, time
        from fastkernels.warden import run_warded
        def work():
        ''') + textwrap.indent(textwrap.dedent(body), "    ") + "\nrun_warded(work)\n"
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})


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
