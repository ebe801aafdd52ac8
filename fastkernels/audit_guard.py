"""Refuses candidate code the interpreter's back doors into the harness's objects, at the moment it tries them.

A candidate runs in the worker's own process (it must: CUDA events time the stream of the process that launches), so
everything the harness keeps there is one frame, one garbage-collector walk or one raw memory read away. Exploits
through exactly those doors PASSED until the checks behind them were added (tests/exploits: silences_rechecks and
swaps_recheck_ledger through `gc`, rewrites_timing_samples through `sys._getframe` imported under another name past
the static check). Those checks find an object that was changed; this guard keeps candidate code from reaching the
objects at all, through Python's audit hooks (PEP 578), which the interpreter raises from C and which no Python code
can remove once added.

`install(candidate_dir, trusted_dirs)` adds one hook, once per worker, just before the candidate is imported. For the
events in REFUSED the hook finds the code that caused it: the innermost Python frame, past the standard library's
helpers that do the same on their caller's behalf (inspect, traceback, ctypes' wrappers). Code is trusted when its
file lies under `trusted_dirs` or the interpreter's import path, outside the candidate's directory, and was last
changed before the guard started; the candidate's files, files written since (a module the candidate writes and
imports) and code compiled from strings ("<string>") are not. From code that is not trusted the event is refused: the
hook raises, so the frame, object list or memory is never handed over, and the refusal is kept for `refusals()`,
which the integrity check reports as a REWARD_HACK. Library code the candidate calls (torch.jit reading its caller's
frame, logging finding its caller, Triton's interpreter) is trusted and goes on as before.

Residual, in-process as any defence here: a trusted library function that compiles a string under a file name its
caller chooses (the standard library's `code.InteractiveInterpreter.runsource`) runs that string as trusted code.
"""

from __future__ import annotations

import ctypes
import inspect
import os
import sys
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
}
# attributes whose reading raises "object.__getattr__": the ones that hand over a frame
FRAME_ATTRIBUTES = {"tb_frame": "a traceback's frame", "gi_frame": "a generator's frame",
                    "cr_frame": "a coroutine's frame", "ag_frame": "an async generator's frame"}
# standard-library helpers that take frames or memory on their caller's behalf: the caller is who asked
PASS_THROUGH = frozenset(os.path.realpath(module.__file__) for module in (inspect, traceback, ctypes))


def install(candidate_dir: Path, trusted_dirs: Iterable[Path] = ()) -> Callable[[], list[str]]:
    """Add the hook (for the rest of this process's life) and return `refusals()`: what was refused so far, as
    "EVENT from FILE:LINE (what it hands over)"."""
    started = time.time()
    candidate_root = os.path.realpath(candidate_dir) + os.sep
    roots = tuple({os.path.realpath(path) + os.sep for path in (*sys.path, *map(str, trusted_dirs))
                   if path and os.path.isdir(path)})
    verdicts: dict[str, bool] = {}  # file name -> trusted
    passing: dict[str, bool] = {}  # file name -> one of PASS_THROUGH
    refused: list[str] = []
    busy = [False]  # the hook's own frame lookup raises an event too
    frame_of = sys._getframe

    def trusted(filename: str) -> bool:
        if filename not in verdicts:
            verdicts[filename] = _trusted(filename, candidate_root, roots, started)
        return verdicts[filename]

    def passes_through(filename: str) -> bool:
        if filename not in passing:
            passing[filename] = os.path.realpath(filename) in PASS_THROUGH
        return passing[filename]

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if busy[0]:
            return
        what = REFUSED.get(event)
        if what is None:
            if event != "object.__getattr__" or len(args) < 2 or args[1] not in FRAME_ATTRIBUTES:
                return
            what, event = FRAME_ATTRIBUTES[args[1]], f"{event} {args[1]}"
        busy[0] = True
        try:
            frame = frame_of(1)
            while frame is not None and passes_through(frame.f_code.co_filename):
                frame = frame.f_back
            if frame is None or trusted(frame.f_code.co_filename):
                return
            refusal = f"{event} from {Path(frame.f_code.co_filename).name}:{frame.f_lineno} ({what})"
            refused.append(refusal)
        finally:
            busy[0] = False
        raise RuntimeError(f"refused by the harness: {refusal}: candidate code may not reach into the interpreter")

    sys.addaudithook(hook)
    return lambda: list(refused)


def _trusted(filename: str, candidate_root: str, roots: tuple[str, ...], started: float) -> bool:
    """Library or harness code: a file under `roots`, outside the candidate's directory, unchanged since `started`
    (its ctime too, which no user call can set back); the interpreter's frozen modules."""
    if filename.startswith("<frozen "):
        return True
    if filename.startswith("<"):
        return False
    real = os.path.realpath(filename)
    if real.startswith(candidate_root) or not real.startswith(roots):
        return False
    try:
        status = os.stat(real)
    except OSError:
        return False
    return status.st_ctime < started and status.st_mtime < started
