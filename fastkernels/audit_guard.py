"""Refuses candidate code the interpreter's back doors into the harness's objects, at the moment it tries them.

A candidate runs in the worker's own process (it must: CUDA events time the stream of the process that launches), so
everything the harness keeps there is one frame, one garbage-collector walk or one raw memory read away. Exploits
through exactly those doors PASSED until the checks behind them were added (tests/exploits: silences_rechecks and
swaps_recheck_ledger through `gc`, rewrites_timing_samples through `sys._getframe` imported under another name past
the static check). Those checks find an object that was changed; this guard keeps candidate code from reaching the
objects at all, through Python's audit hooks (PEP 578), which the interpreter raises from C and which no Python code
can remove once added.

`install(candidate_dir, trusted_dirs)` adds one hook, once per worker, just before the candidate is imported. For the
events in REFUSED (the doors above, and the processes and signals the static check bans: work the timer does not see;
threads too where the interpreter audits their start, which Python 3.11 does not) the hook finds the code that caused
it: the innermost Python frame, past the standard library's modules that do these things on their caller's behalf
(inspect, traceback, ctypes, threading, subprocess, multiprocessing, concurrent.futures, os). Code is trusted when its
file lies under `trusted_dirs` or the interpreter's import path, outside the candidate's directory, and was last
changed before the guard started; the candidate's files, files written since (a module the candidate writes and
imports) and code compiled from strings ("<string>") are not. From code that is not trusted the event is refused: the
hook raises, so the frame, object list or memory is never handed over, and the refusal is kept for `refusals()`,
which the integrity check reports as a REWARD_HACK. Library code the candidate calls (torch.jit reading its caller's
frame, logging finding its caller, Triton's interpreter) is trusted and goes on as before. No audit event fires in a
torch eager or compiled forward, so the hook costs a timed call nothing.

Residual, in-process as any defence here: a trusted library function that compiles a string under a file name its
caller chooses (the standard library's `code.InteractiveInterpreter.runsource`) runs that string as trusted code.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import inspect
import multiprocessing
import os
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Iterable

# audit event -> what it hands over, for the refusal's reason
REFUSED = {
    "sys._getframe": "a frame (the harness's locals)",
    "sys._getframemodulename": "a caller's module",
    "sys._current_frames": "every thread's frame",
    "gc.get_objects": "the interpreter's objects",
    "gc.get_referrers": "the objects that refer to an object",
    "gc.get_referents": "the objects an object refers to",
    "sys.settrace": "a trace function that sees every frame",
    "sys.setprofile": "a profile function that sees every frame",
    "sys.addaudithook": "an audit hook that sees the harness's own audited objects",
    "ctypes.cdata": "raw memory at an address",
    "ctypes.cdata/buffer": "raw memory at an address",
    "ctypes.string_at": "raw memory at an address",
    "ctypes.wstring_at": "raw memory at an address",
    "ctypes.PyObj_FromPtr": "an object made from an address",
    "exec": "code run from a string or code object",
    "compile": "code compiled from a string",
    "code.__new__": "a code object built by hand",
    "function.__new__": "a function built from a code object",
    "_thread.start_new_thread": "a thread the timer does not see",
    "os.fork": "a process the timer does not see",
    "os.forkpty": "a process the timer does not see",
    "os.posix_spawn": "a process the timer does not see",
    "os.spawn": "a process the timer does not see",
    "os.exec": "another program in the worker's process",
    "os.system": "a process the timer does not see",
    "subprocess.Popen": "a process the timer does not see",
    "os.kill": "a signal to another process (the worker's warden, its judge)",
    "os.killpg": "a signal to a process group",
    "signal.pthread_kill": "a signal to a thread",
}
# attributes whose reading raises "object.__getattr__": the ones that hand over a frame
FRAME_ATTRIBUTES = {"tb_frame": "a traceback's frame", "gi_frame": "a generator's frame",
                    "cr_frame": "a coroutine's frame", "ag_frame": "an async generator's frame"}
# standard-library modules that do these things on their caller's behalf (a frame for inspect, a thread for threading,
# a process for subprocess or multiprocessing): the caller is who asked
PASS_THROUGH_FILES = tuple(module.__file__ for module in (inspect, traceback, ctypes, threading, subprocess, os))
PASS_THROUGH_PACKAGES = tuple(os.path.dirname(module.__file__) + os.sep
                              for module in (multiprocessing, concurrent.futures))
KEPT = 100  # refusals kept word for word; a candidate that tries more is counted, not remembered


def install(candidate_dir: Path, trusted_dirs: Iterable[Path] = ()) -> Callable[[], list[str]]:
    """Add the hook (for the rest of this process's life) and return `refusals()`: what was refused so far, as
    "EVENT from FILE:LINE (what it hands over)".

    Everything the hook reads is bound here, before any candidate code runs: the tables above copied, the
    interpreter's own `stat` and `_getframe`, plain string checks for paths. A candidate that imports this module and
    empties its tables, or patches `os.path`, changes nothing the hook uses."""
    started = time.time()
    refused_events, frame_attributes = dict(REFUSED), dict(FRAME_ATTRIBUTES)
    candidate_roots = _spellings([str(candidate_dir)])
    roots = _spellings([*sys.path, *map(str, trusted_dirs)])
    pass_files = frozenset(_spellings_of_files(PASS_THROUGH_FILES))
    pass_packages = _spellings(PASS_THROUGH_PACKAGES)
    stat, frame_of, runtime_error, basename = os.stat, sys._getframe, RuntimeError, os.path.basename
    verdicts: dict[str, bool] = {}  # file name -> trusted
    passing: dict[str, bool] = {}  # file name -> does it on its caller's behalf
    refused: list[str] = []
    counted = [0]
    busy = [False]  # the hook's own frame lookup raises an event too

    def trusted(filename: str) -> bool:
        """Library or harness code: a file under a root, outside the candidate's directory, unchanged since the
        guard started (its ctime too, which no user call can set back); the interpreter's frozen modules."""
        if filename not in verdicts:
            verdict = filename.startswith("<frozen ")
            if not filename.startswith("<") and not filename.startswith(candidate_roots) \
                    and filename.startswith(roots):
                try:
                    status = stat(filename)  # follows links and "..": a file written since has a new ctime
                    verdict = status.st_ctime < started and status.st_mtime < started
                except OSError:
                    verdict = False
            verdicts[filename] = verdict
        return verdicts[filename]

    def passes_through(filename: str) -> bool:
        if filename not in passing:
            passing[filename] = filename in pass_files or filename.startswith(pass_packages)
        return passing[filename]

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if busy[0]:
            return
        what = refused_events.get(event)
        if what is None:
            if event != "object.__getattr__" or len(args) < 2 or args[1] not in frame_attributes:
                return
            what, event = frame_attributes[args[1]], f"{event} {args[1]}"
        busy[0] = True
        try:
            frame = frame_of(1)
            while frame is not None and passes_through(frame.f_code.co_filename):
                frame = frame.f_back
            if frame is None or trusted(frame.f_code.co_filename):
                return
            refusal = f"{event} from {basename(frame.f_code.co_filename)}:{frame.f_lineno} ({what})"
            counted[0] += 1
            if len(refused) < KEPT:
                refused.append(refusal)
        finally:
            busy[0] = False
        raise runtime_error(f"refused by the harness: {refusal}: candidate code may not reach into the interpreter")

    sys.addaudithook(hook)
    return lambda: refused[:] + ([f"and {counted[0] - KEPT} more"] if counted[0] > KEPT else [])


def _spellings(directories: Iterable[str]) -> tuple[str, ...]:
    """Each existing directory as given (absolute) and resolved, with a trailing separator: a frame's file name is
    spelled the way its module was found."""
    found: set[str] = set()
    for directory in directories:
        if directory and os.path.isdir(directory):
            found |= {os.path.abspath(directory) + os.sep, os.path.realpath(directory) + os.sep}
    return tuple(found)


def _spellings_of_files(files: Iterable[str]) -> set[str]:
    return {spelling for file in files for spelling in (os.path.abspath(file), os.path.realpath(file))}
