"""The audit guard: candidate code is refused the interpreter's back doors into the harness's objects (frames, the
garbage collector's walks, raw memory, trace and audit hooks, code built from strings) the moment it tries them, by
whatever name it reaches them, while library code it calls goes on as before. An audit hook stays for the life of
its process, so each test runs a fresh interpreter: it installs the guard, imports a candidate file and calls its
`run()`, and prints what came back and what was refused."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNNER = """
import importlib.util, json, sys
from pathlib import Path
from fastkernels.audit_guard import install

candidate_dir = Path(sys.argv[1])
refusals = install(candidate_dir)
harness_frame = sys._getframe()  # the harness itself may walk frames: it is trusted
spec = importlib.util.spec_from_file_location("candidate", candidate_dir / "candidate.py")
module = importlib.util.module_from_spec(spec)
try:
    spec.loader.exec_module(module)
    outcome = repr(module.run())
except Exception as error:
    outcome = f"raised {type(error).__name__}: {error}"
print(json.dumps({"outcome": outcome, "refusals": refusals()}))
"""


# appended to every candidate file (after its own lines, whose numbers the refusals name): `refused_count(*attempts)`
# calls each attempt and counts those the guard refused with a RuntimeError
REFUSED_COUNT = """

def refused_count(*attempts):
    refused = 0
    for attempt in attempts:
        try:
            attempt()
        except RuntimeError:
            refused += 1
    return refused
"""


def guarded(tmp_path: Path, candidate: str) -> dict:
    """What `run()` of a candidate file with this source returned (or raised), and the guard's refusals."""
    candidate_dir = tmp_path / "candidate"
    candidate_dir.mkdir(exist_ok=True)
    (candidate_dir / "candidate.py").write_text(textwrap.dedent(candidate) + REFUSED_COUNT)
    (tmp_path / "runner.py").write_text(RUNNER)
    done = subprocess.run([sys.executable, str(tmp_path / "runner.py"), str(candidate_dir)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_frame_asked_for_by_any_name_is_refused_and_named_with_the_line_that_asked(tmp_path):
    result = guarded(tmp_path, """
        frame_of = getattr(__import__("s" + "ys"), "_get" + "frame")  # past the static check

        def run():
            return frame_of(1).f_locals
    """)
    assert result["outcome"].startswith(
        "raised RuntimeError: refused by the harness: sys._getframe from candidate.py:5")
    assert result["refusals"] == ["sys._getframe from candidate.py:5 (a frame (the harness's locals))"]


def test_frames_reached_through_inspect_tracebacks_or_generators_are_refused_as_the_candidates(tmp_path):
    result = guarded(tmp_path, """
        import inspect

        def generator():
            yield 1

        def run():
            return refused_count(lambda: inspect.currentframe(), lambda: inspect.stack(),
                                 lambda: generator().gi_frame, lambda: traceback_frame())

        def traceback_frame():
            try:
                raise ValueError
            except ValueError as error:
                return error.__traceback__.tb_frame
    """)
    assert result["outcome"] == "4"
    assert [refusal.split(" (")[0] for refusal in result["refusals"]] == [
        "sys._getframe from candidate.py:8", "sys._getframe from candidate.py:8",  # inspect asked on its behalf
        "object.__getattr__ gi_frame from candidate.py:9", "object.__getattr__ tb_frame from candidate.py:15"]


def test_the_collectors_object_walks_raw_memory_and_hooks_are_refused(tmp_path):
    result = guarded(tmp_path, """
        import ctypes, sys
        gc = __import__("g" + "c")

        def run():
            return refused_count(gc.get_objects, lambda: gc.get_referrers(run), lambda: gc.get_referents(run),
                                 lambda: ctypes.c_char.from_address(id(run)), lambda: ctypes.string_at(id(run), 8),
                                 lambda: sys.setprofile(lambda *args: None),
                                 lambda: sys.addaudithook(lambda *args: None))
    """)
    # a hook refused to sys.addaudithook is not added, and the refusal is not raised (the interpreter's rule for
    # audit hooks): it is only in the guard's record
    assert result["outcome"] == "6"
    assert [refusal.split(" from ")[0] for refusal in result["refusals"]] == [
        "gc.get_objects", "gc.get_referrers", "gc.get_referents", "ctypes.cdata", "ctypes.string_at", "sys.setprofile",
        "sys.addaudithook"]


def test_code_built_from_strings_is_refused_whatever_file_name_it_claims(tmp_path):
    result = guarded(tmp_path, """
        import os, types

        def run():
            return refused_count(lambda: exec("x = 1"), lambda: compile("x = 1", os.__file__, "exec"),
                                 lambda: run.__code__.replace(co_filename=os.__file__),
                                 lambda: types.FunctionType(run.__code__, {}))
    """)
    assert result["outcome"] == "4"
    assert [refusal.split(" from ")[0] for refusal in result["refusals"]] == [
        "compile", "compile", "code.__new__", "function.__new__"]  # exec of a string is refused at its compile


def test_a_module_the_candidate_writes_outside_its_directory_and_imports_is_not_trusted(tmp_path):
    result = guarded(tmp_path, f"""
        import importlib.util
        from pathlib import Path

        def run():
            helper = Path({str(tmp_path / "elsewhere.py")!r})
            helper.write_text("import sys\\nfind = lambda: getattr(sys, '_get' + 'frame')(2)\\n")
            spec = importlib.util.spec_from_file_location("elsewhere", helper)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module.find()
    """)
    assert result["outcome"].startswith(
        "raised RuntimeError: refused by the harness: sys._getframe from elsewhere.py:2")


def test_processes_started_by_candidate_code_are_refused(tmp_path):
    # (threads too, where the interpreter audits their start: Python 3.11 raises no event for it)
    result = guarded(tmp_path, """
        import os
        subprocess = __import__("subpro" + "cess")

        def run():
            return refused_count(lambda: subprocess.run(["true"]), lambda: os.system("true"), lambda: os.fork())
    """)
    assert result["outcome"] == "3"
    assert [refusal.split(" (")[0] for refusal in result["refusals"]] == [
        "subprocess.Popen from candidate.py:6", "os.system from candidate.py:6", "os.fork from candidate.py:6"]


def test_emptying_the_guards_tables_or_patching_os_path_after_it_started_changes_nothing(tmp_path):
    result = guarded(tmp_path, """
        import os, sys
        guard = __import__("fastkernels.audit_guard", fromlist=["REFUSED"])
        guard.REFUSED.clear()
        guard.FRAME_ATTRIBUTES.clear()
        os.path.realpath = os.path.abspath = lambda path: "/usr/lib/python3/" + os.path.basename(path)
        os.stat = lambda path: os.lstat("/")  # an old file for every path

        def run():
            return getattr(sys, "_get" + "frame")(1)
    """)
    assert result["outcome"].startswith(
        "raised RuntimeError: refused by the harness: sys._getframe from candidate.py:10")


def test_library_code_the_candidate_calls_may_still_read_frames_for_itself(tmp_path):
    # logging finds its caller through sys._getframe, and a dataclass's methods are exec'd by the dataclasses module
    result = guarded(tmp_path, """
        import dataclasses, logging

        @dataclasses.dataclass
        class Settings:
            block: int = 128

        def run():
            logging.getLogger("candidate").warning("from the candidate")
            return Settings().block
    """)
    assert result == {"outcome": "128", "refusals": []}


def test_no_audit_event_fires_in_torch_eager_or_compiled_forwards_so_the_hook_never_runs_in_a_timed_call():
    counting = """
import sys, torch
events = []
counting = [False]
sys.addaudithook(lambda event, args: events.append(event) if counting[0] else None)
x, w = torch.randn(64, 256), torch.ones(256)
eager = lambda: torch.nn.functional.rms_norm(x, (256,), w, 1e-6)
compiled = torch.compile(lambda x: (x.float().pow(2).mean(-1, keepdim=True) + 1e-6).rsqrt() * x)
eager(), compiled(x)  # first calls: imports, compiling
counting[0] = True
for _ in range(100):
    eager(), compiled(x)
print(len(events), sorted(set(events)))
"""
    done = subprocess.run([sys.executable, "-c", counting], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "0 []"
