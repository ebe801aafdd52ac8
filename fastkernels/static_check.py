"""A first filter over a candidate's source (an AST pass) that explains what it rejects and why.

It is never the only defence: every pattern here is also caught, or made useless, at run time (audit_guard.py refuses
frames, the collector's walks and trace hooks to candidate code by whatever name it reaches them; integrity.py,
checks.py, the timers bound before import). It exists so the common hacks fail fast with a clear reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

# module -> why importing it is a reward hack in a kernel candidate
FORBIDDEN_IMPORTS = {
    "gc": "walks the interpreter's objects (the harness's reference outputs among them)",
    "fastkernels": "reaches into the harness that scores it",
    "threading": "runs work on a thread the timer does not see",
    "multiprocessing": "runs work in a process the timer does not see",
    "concurrent": "runs work on threads or processes the timer does not see",
    "signal": "interferes with the worker's signal handling",
    "subprocess": "runs work in a process the timer does not see",
}
# dotted call -> why calling it is a reward hack
FORBIDDEN_CALLS = {
    "sys._getframe": "reads the caller's frames (the harness's locals)",
    "inspect.currentframe": "reads the caller's frames (the harness's locals)",
    "inspect.stack": "reads the caller's frames (the harness's locals)",
    "inspect.getouterframes": "reads the caller's frames (the harness's locals)",
    "sys.settrace": "runs its code on every Python call of the process and reads every frame (the harness's locals)",
    "sys.setprofile": "runs its code on every Python call of the process and reads every frame (the harness's locals)",
    "os.fork": "runs work in a process the timer does not see",
    "os.forkpty": "runs work in a process the timer does not see",
    "os.posix_spawn": "runs work in a process the timer does not see",
    "os.system": "runs work in a process the timer does not see",
    "os.popen": "runs work in a process the timer does not see",
}
SETATTRS = {"setattr", "builtins.setattr", "type.__setattr__", "object.__setattr__"}
STREAM_CALLS = {"torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.set_stream", "torch.cuda.ExternalStream"}


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def findings(source: str, filename: str, allow: frozenset[str] = frozenset()) -> list[str]:
    """Explanations, one per offending line; empty for a clean candidate."""
    tree = ast.parse(source, filename=filename)
    modules: dict[str, str] = {}  # local alias -> imported module
    found: list[str] = []

    def flag(node: ast.AST, text: str) -> None:
        found.append(f"{Path(filename).name}:{getattr(node, 'lineno', '?')}: {text}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules[alias.asname or alias.name.split(".")[0]] = alias.name
                _check_import(alias.name, node, flag, allow)
        elif isinstance(node, ast.ImportFrom) and node.module:
            _check_import(node.module, node, flag, allow)
            for alias in node.names:
                modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and _dotted(target).split(".")[0] in modules:
                    flag(node, f"assigns {_dotted(target)}: patching an imported module changes the baseline or the timer")
        elif isinstance(node, ast.Call):
            name = _resolve(_dotted(node.func), modules)
            if name in SETATTRS and node.args and _dotted(node.args[0]).split(".")[0] in modules:
                flag(node, f"setattr on {_dotted(node.args[0])}: patching an imported module")
            elif name in FORBIDDEN_CALLS:
                flag(node, f"calls {name}: {FORBIDDEN_CALLS[name]}")
            elif name in STREAM_CALLS and "side_streams" not in allow:
                flag(node, f"calls {name}: work on another stream escapes the timed stream (the task does not allow it)")
    return found


def _resolve(dotted: str, modules: dict[str, str]) -> str:
    head, _, rest = dotted.partition(".")
    if head in modules:
        return f"{modules[head]}.{rest}" if rest else modules[head]
    return dotted


def _check_import(module: str, node: ast.AST, flag, allow: frozenset[str]) -> None:
    root = module.split(".")[0]
    if root in FORBIDDEN_IMPORTS and not (root in ("threading", "concurrent") and "threads" in allow):
        flag(node, f"imports {module}: {FORBIDDEN_IMPORTS[root]}")
