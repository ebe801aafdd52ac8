"""Whether the working tree's harness differs from a revision's in what runs, or only in its prose.

The harness digest (`fastkernels.environment.harness_digest`, env.json's `harness_sha256`) names the code that made
the rows by its bytes, so a corrected docstring or a reflowed comment gives unchanged code a new digest, and a pass
measured at the old one (two sessions of device time) no longer names the tree. This compares the HARNESS_PATHS files
of REV (a commit or tag, e.g. `harness-1afca04a55b6`) with the working tree's, file by file, and sorts each one that
differs:
- Python: the syntax trees compared with docstrings left out (comments, blank lines and line positions never enter
  a tree). A file whose code reads `__doc__` keeps its docstrings in the comparison.
- YAML: the parsed content compared, with Hydra's `# @package` directive lines, which are comments that change what
  a config composes into. A task manifest's prose fields (its description, each case's source, each implementation's
  provenance: only `python -m fastkernels list` reads them) are left out.
- TOML: the parsed content compared.
- Markdown: prose, added or removed too.
- anything else (shell scripts, lockfiles), any other file added or removed, or one that does not parse: code, byte
  for byte.

Prints one line a differing file (`prose` or `code`) and a summary; exits 0 when every difference is prose (the rows
measured at REV stand for this tree), 1 when some file differs in code, 2 on bad input.

With --tasks it also says which tasks' rows still stand when the code changed only inside task directories: a file
under tasks/L*/NAME/ or an agent's agents/AGENT/L*/NAME.py (or NAME/) belongs to task NAME, and a task stands unless
its own files or those of a task it is built from (its manifest's components, transitively) differ in code, where a
component that only gained production implementations after its others (new files, entries appended to its
manifest's list) leaves what is built from it standing, and a task whose manifest only reordered its production
implementations keeps its own rows (every one is timed and the fastest serves) while what is built from it does not.
A code difference anywhere else (the package, configs, scripts, requirements) leaves no task standing.
scripts/remaining_tasks.py --standing-from REV stitches a pass from rows of both harnesses this way; its rows are
noop rows, which run no agent's candidate files, so a change under agents/ leaves them standing (`stale_tasks`'s
`agent`).
Usage: python scripts/harness_diff.py REV [--root DIR] [--tasks]
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fastkernels.environment import HARNESS_PATHS, harness_digest  # noqa: E402
from fastkernels.registry import Registry  # noqa: E402

PROSE, CODE = "prose", "code"


def _counted(relative: str) -> bool:
    """The files harness_digest counts: caches and compiled Python left out."""
    return "__pycache__" not in relative.split("/") and not relative.endswith(".pyc")


def working_tree_files(root: Path) -> dict[str, bytes]:
    """HARNESS_PATHS files on disk, as harness_digest walks them (untracked ones too)."""
    files: dict[str, bytes] = {}
    for top in HARNESS_PATHS:
        start = root / top
        paths = [start] if start.is_file() else sorted(path for path in start.rglob("*") if path.is_file())
        for path in paths:
            relative = path.relative_to(root).as_posix()
            if _counted(relative):
                files[relative] = path.read_bytes()
    return files


def revision_files(root: Path, revision: str) -> dict[str, bytes]:
    """HARNESS_PATHS files as committed at `revision`."""
    listing = subprocess.run(["git", "-C", str(root), "ls-tree", "-r", "--name-only", revision, "--", *HARNESS_PATHS],
                             capture_output=True, text=True)
    if listing.returncode != 0:
        raise ValueError(f"git cannot read revision {revision!r} in {root}: {listing.stderr.strip()}")
    files: dict[str, bytes] = {}
    for relative in listing.stdout.splitlines():
        if _counted(relative):
            files[relative] = subprocess.run(["git", "-C", str(root), "show", f"{revision}:{relative}"],
                                             capture_output=True, check=True).stdout
    return files


def _without_docstrings(source: bytes) -> str:
    tree = ast.parse(source)
    reads_doc = any(isinstance(node, ast.Name) and node.id == "__doc__"
                    or isinstance(node, ast.Attribute) and node.attr == "__doc__" for node in ast.walk(tree))
    if not reads_doc:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
                first = node.body[0]
                if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                        and isinstance(first.value.value, str)):
                    node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree)


def _yaml_content(source: bytes) -> tuple[object, list[str]]:
    directives = [line.strip() for line in source.decode().splitlines() if line.strip().startswith("# @")]
    return yaml.safe_load(source), directives


def _manifest_without_prose(content: object) -> object:
    """A task manifest's parsed content less its prose fields, which only `list` prints: the task's description,
    each case's source and each implementation's provenance."""
    if not isinstance(content, dict):
        return content
    content = {key: value for key, value in content.items() if key != "description"}
    if isinstance(content.get("cases"), list):
        content["cases"] = [{k: v for k, v in case.items() if k != "source"} if isinstance(case, dict) else case
                            for case in content["cases"]]
    implementations = content.get("implementations")
    if isinstance(implementations, dict):
        def plain(impl: object) -> object:
            return {k: v for k, v in impl.items() if k != "provenance"} if isinstance(impl, dict) else impl
        content["implementations"] = {
            group: [plain(impl) for impl in impls] if isinstance(impls, list) else plain(impls)
            for group, impls in implementations.items()}
    return content


def kind_of_difference(relative: str, before: bytes, after: bytes) -> str:
    """PROSE where the two versions of one file run alike, else CODE."""
    try:
        if relative.endswith(".py"):
            same = _without_docstrings(before) == _without_docstrings(after)
        elif relative.endswith((".yaml", ".yml")):
            (was, was_directives), (now, now_directives) = _yaml_content(before), _yaml_content(after)
            if relative.startswith("tasks/L") and relative.endswith("/task.yaml"):
                was, now = _manifest_without_prose(was), _manifest_without_prose(now)
            same = (was, was_directives) == (now, now_directives)
        elif relative.endswith(".toml"):
            same = tomllib.loads(before.decode()) == tomllib.loads(after.decode())
        else:
            same = relative.endswith(".md")
    except (SyntaxError, ValueError, UnicodeDecodeError, yaml.YAMLError):
        same = False
    return PROSE if same else CODE


def differences(root: Path, revision: str) -> dict[str, str]:
    """Each HARNESS_PATHS file that differs between `revision` and the working tree, with its kind."""
    return compare(root, revision)[0]


def compare(root: Path, revision: str) -> tuple[dict[str, str], dict[str, bytes]]:
    """(each differing file with its kind, the files as they were at `revision`)."""
    before, after = revision_files(root, revision), working_tree_files(root)
    found: dict[str, str] = {}
    for relative in sorted(before.keys() | after.keys()):
        if relative not in before or relative not in after:
            found[relative] = PROSE if relative.endswith(".md") else CODE
        elif before[relative] != after[relative]:
            found[relative] = kind_of_difference(relative, before[relative], after[relative])
    return found, before


def task_of(relative: str) -> str | None:
    """The task a harness file belongs to (tasks/L*/NAME/..., an agent's candidate agents/AGENT/L*/NAME.py or
    agents/AGENT/L*/NAME/...), None for the shared code."""
    parts = relative.split("/")
    if len(parts) >= 4 and parts[0] == "tasks" and parts[1][:1] == "L":
        return parts[2]
    if len(parts) >= 4 and parts[0] == "agents" and parts[2][:1] == "L":
        return parts[3].removesuffix(".py") if len(parts) == 4 else parts[3]
    return None


def stale_tasks(root: Path, found: dict[str, str], before: dict[str, bytes] | None = None,
                agent: str | None = None) -> tuple[list[str], list[str]]:
    """(shared files that differ in code, tasks whose rows no longer stand): every task when a shared file differs in
    code, else the tasks whose own files differ in code and every task built from one of them, unless (given the
    files `before`) the change only appended production implementations (`appended_only`): a task built from it
    binds the same class as before. With `agent`, the rows are that agent's: another agent's candidate files
    (agents/OTHER/...) never ran in them, and `noop` rows ran no agent's files at all."""
    if agent is not None:
        found = {relative: kind for relative, kind in found.items()
                 if not relative.startswith("agents/") or (agent != "noop" and relative.startswith(f"agents/{agent}/"))}
    shared = [relative for relative, kind in found.items() if kind == CODE and task_of(relative) is None]
    registry = Registry(root / "tasks")
    if shared:
        return shared, registry.names
    code = [relative for relative, kind in found.items() if kind == CODE]
    changed = {task_of(relative) for relative in code}
    own = {task for task in changed if before is None or not reordered_only(root, task, code, before)}
    reaching = {task for task in changed if before is None or not appended_only(root, task, code, before)}
    stale = [name for name in registry.names
             if name in own or reaching & set(registry.closure(name))]
    return [], stale


def _production_lists(root: Path, manifest: str, before: dict[str, bytes]) -> tuple[list, list, bool] | None:
    """(old production list, new one, whether the manifests are equal but for those lists); None if unreadable."""
    try:
        old, new = yaml.safe_load(before[manifest]), yaml.safe_load((root / manifest).read_bytes())
        old_list, new_list = old["implementations"]["production"], new["implementations"]["production"]
    except (KeyError, TypeError, yaml.YAMLError):
        return None
    old["implementations"]["production"] = new["implementations"]["production"] = None
    return old_list, new_list, old == new


def _only_manifest(task: str, code: list[str], before: dict[str, bytes]) -> str | None:
    """The task's manifest when it is the one file of the task that differs in code and it existed `before`."""
    files = [relative for relative in code if task_of(relative) == task]
    return files[0] if len(files) == 1 and files[0].endswith("/task.yaml") and files[0] in before else None


def reordered_only(root: Path, task: str, code: list[str], before: dict[str, bytes]) -> bool:
    """Whether `task` changed only in the order of its production implementations: the same entries, no file of its
    own otherwise changed. Its own rows stand: a case checks and times every production implementation that runs,
    interleaved, and serves the fastest (fastkernels.baseline_choice), so the order decides only which class a
    higher level binds (its first that can run), and what is built from it is measured again (`stale_tasks`). What
    the order can still move is which one is timed first within each interleaved round, as between any two runs."""
    manifest = _only_manifest(task, code, before)
    lists = _production_lists(root, manifest, before) if manifest else None
    if lists is None:
        return False
    old_list, new_list, rest_equal = lists
    canonical = sorted(yaml.safe_dump(impl, sort_keys=True) for impl in old_list)
    return rest_equal and canonical == sorted(yaml.safe_dump(impl, sort_keys=True) for impl in new_list)


def appended_only(root: Path, task: str, code: list[str], before: dict[str, bytes]) -> bool:
    """Whether `task` changed only by production implementations appended after the ones it had: new files, and a
    manifest equal but for entries added at the end of `implementations.production`, where an earlier entry runs
    everywhere (no `requires`, no `devices`), so a higher level, which binds a component's first production class
    that can run (fastkernels.build), still binds the one it bound."""
    files = [relative for relative in code if task_of(relative) == task]
    manifests = [relative for relative in files if relative.endswith("/task.yaml")]
    if any(relative.startswith("agents/") or relative in before and relative not in manifests for relative in files):
        return False
    if len(manifests) != 1:
        return not manifests  # only new files, none of them its manifest
    lists = _production_lists(root, manifests[0], before)
    if lists is None:
        return False
    old_list, new_list, rest_equal = lists
    runs_everywhere = any(not impl.get("requires") and "devices" not in impl for impl in old_list)
    return rest_equal and new_list[:len(old_list)] == old_list and runs_everywhere


def standing_rows(root: Path, revision: str, agent: str | None = None) -> tuple[str, frozenset[str]]:
    """(REV's harness_sha256, the tasks whose rows made at it no longer stand for the working tree); with `agent`,
    for that agent's rows (stale_tasks)."""
    with tempfile.TemporaryDirectory() as scratch:
        archive = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", revision, "--", *HARNESS_PATHS],
                                 capture_output=True)
        if archive.returncode != 0:
            raise ValueError(f"git cannot read revision {revision!r}: {archive.stderr.decode().strip()}")
        tar_path = Path(scratch) / "harness.tar"
        tar_path.write_bytes(archive.stdout)
        with tarfile.open(tar_path) as tar:
            tar.extractall(Path(scratch) / "tree", filter="data")
        digest = harness_digest(Path(scratch) / "tree")["harness_sha256"]
    _, stale = stale_tasks(root, *compare(root, revision), agent=agent)
    return digest, frozenset(stale)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revision", help="the commit or tag whose rows are in question, e.g. harness-1afca04a55b6")
    parser.add_argument("--root", type=Path, default=Path("."), help="the repository (default: here)")
    parser.add_argument("--tasks", action="store_true", help="also say which tasks' rows stand")
    args = parser.parse_args(argv)
    try:
        found, before = compare(args.root, args.revision)
    except ValueError as error:
        print(f"harness_diff.py: {error}", file=sys.stderr)
        return 2
    for relative, kind in found.items():
        print(f"{kind:5}  {relative}")
    code = [relative for relative, kind in found.items() if kind == CODE]
    if not found:
        print(f"the harness is byte for byte {args.revision}'s")
    elif code:
        print(f"{len(code)} of {len(found)} differing files differ in code: rows made at {args.revision} do not "
              f"stand for this tree")
    else:
        print(f"{len(found)} files differ from {args.revision} in prose only (docstrings, comments, Markdown): rows "
              f"made at it stand for this tree")
    if args.tasks and code:
        shared, stale = stale_tasks(args.root, found, before)
        total = len(Registry(args.root / "tasks").names)
        if shared:
            print(f"shared code differs ({', '.join(shared[:3])}{' ...' if len(shared) > 3 else ''}): no task's rows "
                  f"stand")
        else:
            print(f"rows made at {args.revision} stand for {total - len(stale)} of {total} tasks; measure again: "
                  f'FK_TASKS="tasks=all tasks.include=[{",".join(stale)}]"')
    return 1 if code else 0


if __name__ == "__main__":
    sys.exit(main())
