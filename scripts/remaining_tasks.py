"""Which tasks a pass stitched from several device calls (or sessions) still lacks, as FK_TASKS strings.

A pass over the whole library does not fit one device call, and on one GPU not one session: its pieces are runs made
at one tree (the commit every run's env.json names). Given the runs made so far, this prints what is left: every task
with a case of the tier that has no row yet, split into `--calls` groups of about equal expected worker time (from
`--times-from` runs' worker logs, else equal counts), one `FK_TASKS=...` line per call for scripts/device-session.sh.
Runs at another commit are refused (their rows belong to another harness); one whose tree differed from its commit
(env.json's git_dirty) is named.

Runs made at another commit count only when named with `--same-harness` and git shows no difference from `--commit`
in what makes rows (HARNESS_PATHS: the package, configs, tasks, agents, requirements and the device-session
scripts); the sixteenth session's device copy named its branch tip, not the tree it ran.

Runs made since 2026-12-01 also name their code by content (env.json `harness_sha256`): `--harness PREFIX` instead of
`--commit` accepts exactly the runs whose digest starts with it. With `--standing-from REV` it also accepts runs made
at REV's harness, for the tasks whose rows scripts/harness_diff.py says still stand (the working tree, which must be
the --harness one, differs from REV in prose only, or in code only inside other tasks' directories).

Usage: python scripts/remaining_tasks.py [RUN ...] (--commit SHA [--same-harness SHA ...] | --harness SHA256
       [--standing-from REV])
       [--calls 3 [--first-call-share 0.5]] [--times-from OLD_RUN ...]
       [--lanes-dir .lanes --gpus 2 [--warm-lanes 6 --no-warm moe_experts]]
(the runs first: the options that take several values would take them too)
With --lanes-dir the groups are also written as scripts/device-lanes.sh files, a noop lane a GPU, --gpus lanes a call;
--warm-lanes adds warm.txt, the warm step in lanes side by side on GPU 0 (compiling is CPU-bound), run first.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fastkernels.artifacts import run_rows  # noqa: E402
from fastkernels.environment import HARNESS_PATHS, harness_digest  # noqa: E402
from fastkernels.registry import Registry  # noqa: E402

sys.path.insert(0, str(ROOT / "scripts"))
import harness_diff  # noqa: E402

LOG_TIME = re.compile(r"\[\s*([\d.]+) s\]")


def harness_differences(commit: str, other: str) -> list[str]:
    """Files of HARNESS_PATHS that differ between two commits of this repository (git diff --name-only)."""
    done = subprocess.run(["git", "diff", "--name-only", commit, other, "--", *HARNESS_PATHS], cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise ValueError(f"git diff {commit} {other}: {done.stderr.strip() or 'failed'}")
    return done.stdout.split()


def _same(made_at: str, commit: str) -> bool:
    return bool(made_at) and (made_at.startswith(commit) or commit.startswith(made_at))


def finished_cases(runs: list[Path], commit: str | None, same_harness: tuple[str, ...] = (),
                   harness: str | None = None,
                   standing: tuple[str, frozenset[str]] | None = None) -> set[tuple[str, str]]:
    """(task, case) of every row in `runs`, each made at `commit` or one of `same_harness` (commits the caller
    checked to make rows the same way), or, with `harness`, by the code whose env.json `harness_sha256` starts with
    it (the content digest, whatever commit the run's git metadata named). `standing` (an older digest, the tasks
    whose rows it made no longer stand) also accepts that digest's runs, for the other tasks."""
    done: set[tuple[str, str]] = set()
    accepted = tuple(sha for sha in (commit, *same_harness) if sha)
    for run in runs:
        env_path = run / "env.json"
        if not env_path.is_file():
            raise ValueError(f"{run}: no env.json (not a run directory?)")
        env = json.loads(env_path.read_text())
        made_at = env.get("git_commit") or ""
        digest = env.get("harness_sha256") or ""
        stale: frozenset[str] = frozenset()
        if harness and standing and digest == standing[0] and not digest.startswith(harness):
            stale = standing[1]
        elif harness:
            if not digest.startswith(harness):
                also = f" or the --standing-from harness {standing[0][:12]}" if standing else ""
                raise ValueError(f"{env_path}: harness_sha256 {digest[:16] or 'unknown (a run before 2026-12-01)'} "
                                 f"is not {harness}{also}")
        elif not any(_same(made_at, sha) for sha in accepted):
            raise ValueError(f"{env_path}: git_commit {made_at or 'unknown'} is not {commit}"
                             + (f" or {', '.join(same_harness)}" if same_harness else ""))
        if env.get("git_dirty") and not harness:  # untracked files count too (git_state): say so, do not refuse
            print(f"note: {env_path} says its tree differed from {made_at[:12]} (git_dirty)", file=sys.stderr)
        rows = run_rows(run)
        other_agents = sorted({str(row.get("agent")) for row in rows} - {"noop"})
        if standing and digest == standing[0] and other_agents:
            raise ValueError(f"{run}: rows of agent {', '.join(other_agents)}: --standing-from counts noop rows only "
                             f"(they run no agent's files)")
        done.update((row["task"], row["case"]) for row in rows if row["task"] not in stale)
    return done


def worker_seconds(runs: list[Path]) -> dict[str, float]:
    """Task -> seconds its worker ran (the last timestamp of workers/TASK.log), from the last run listed that has it."""
    seconds: dict[str, float] = {}
    for run in runs:
        for log in (run / "workers").glob("*.log"):
            stamps = LOG_TIME.findall(log.read_text(errors="replace"))
            if stamps:
                seconds[log.stem] = float(stamps[-1])
    return seconds


def compile_seconds(runs: list[Path]) -> dict[str, float]:
    """Task -> seconds its rows' first calls spent compiling (the rows' `compile_s`, every implementation), from the
    last run listed that has the task: what a timed run on warm caches no longer pays."""
    seconds: dict[str, float] = {}
    for run in runs:
        found: dict[str, float] = {}
        for row in run_rows(run):
            found[row["task"]] = found.get(row["task"], 0.0) + sum((row.get("compile_s") or {}).values())
        seconds.update(found)
    return seconds


def split(tasks: list[str], calls: int, seconds: dict[str, float], first_share: float = 1.0) -> list[list[str]]:
    """`tasks` in `calls` groups of about equal expected time, longest first into the lightest group (order kept
    within a group). A task without a time counts as the median of the known ones. With `first_share` below 1 the
    first group is sized to that share of the others (the first call also runs the warm lanes)."""
    known = sorted(seconds[t] for t in tasks if t in seconds)
    default = known[len(known) // 2] if known else 1.0
    groups: list[list[str]] = [[] for _ in range(max(1, min(calls, len(tasks))))]
    loads = [0.0] * len(groups)
    shares = [first_share] + [1.0] * (len(groups) - 1)
    for task in sorted(tasks, key=lambda t: -seconds.get(t, default)):
        fill = [(load + seconds.get(task, default)) / share for load, share in zip(loads, shares)]
        lightest = fill.index(min(fill))
        groups[lightest].append(task)
        loads[lightest] += seconds.get(task, default)
    order = {task: index for index, task in enumerate(tasks)}
    return [sorted(group, key=order.__getitem__) for group in groups if group]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=Path, help="run directories of the pass so far")
    parser.add_argument("--commit", help="the tree every run of the pass is made at")
    parser.add_argument("--harness", metavar="SHA256",
                        help="instead of --commit: the harness_sha256 (a prefix) in every run's env.json, the content "
                             "digest of what makes rows")
    parser.add_argument("--same-harness", nargs="*", default=[], metavar="SHA",
                        help="other commits whose runs count too, refused unless they differ from --commit nowhere in "
                             "what makes rows (HARNESS_PATHS)")
    parser.add_argument("--standing-from", metavar="REV",
                        help="with --harness: also count runs made at REV's harness, for the tasks whose rows "
                             "scripts/harness_diff.py says still stand for the working tree")
    parser.add_argument("--tier", default="gpu")
    parser.add_argument("--level", type=int, choices=(1, 2, 3),
                        help="only this level's tasks (a pass's L1 part first: the L1 table is made from its rows)")
    parser.add_argument("--calls", type=int, default=1, help="how many device calls to split what is left into")
    parser.add_argument("--lanes-dir", type=Path,
                        help="also write the groups as scripts/device-lanes.sh files, DIR/call-K.txt, one noop run a "
                             "lane, --gpus lanes a call (--calls counts lanes then)")
    parser.add_argument("--gpus", type=int, default=2, help="GPUs a device call has, with --lanes-dir")
    parser.add_argument("--times-from", nargs="*", type=Path, default=[],
                        help="earlier runs whose worker logs give each task's expected time")
    parser.add_argument("--warm-lanes", type=int, default=0, metavar="N",
                        help="with --lanes-dir, also write DIR/warm.txt: the warm step over what is left in N lanes "
                             "side by side on GPU 0, to run before the calls (they then time on warm caches)")
    parser.add_argument("--first-call-share", type=float, default=1.0, metavar="F",
                        help="size the first group to F of the others (0 < F <= 1): the first call also runs the warm "
                             "lanes (2026-12-02: they took 230 s of a 575 s call, and an equal third ran out of time)")
    parser.add_argument("--no-warm", nargs="*", default=[], metavar="TASK",
                        help="tasks the warm lanes leave out (one whose autotuning times the GPU: Liger's fused MoE "
                             "in moe_experts would tune beside the other lanes' work)")
    args = parser.parse_args()
    if not 0 < args.first_call_share <= 1:
        parser.error(f"--first-call-share {args.first_call_share}: a share in (0, 1]")
    if bool(args.commit) == bool(args.harness):
        parser.error("name the pass's code by one of --commit or --harness")
    if args.harness and args.same_harness:
        parser.error("--same-harness widens --commit; --harness already names the code by its content")
    if args.standing_from and not args.harness:
        parser.error("--standing-from widens --harness: name the working tree's harness with --harness")
    standing = None
    try:
        if args.standing_from:
            here = harness_digest(ROOT)["harness_sha256"]
            if not here.startswith(args.harness):
                parser.error(f"--standing-from compares {args.standing_from} with the working tree, whose harness is "
                             f"{here[:12]}, not --harness {args.harness}")
            standing = harness_diff.standing_rows(ROOT, args.standing_from, agent="noop")  # its lanes are noop runs
            print(f"rows at {args.standing_from} (harness {standing[0][:12]}) count for every task but "
                  f"{len(standing[1])}" + (f": {', '.join(sorted(standing[1]))}" if standing[1] else ""),
                  file=sys.stderr)
        for other in args.same_harness:
            if differing := harness_differences(args.commit, other):
                parser.error(f"--same-harness {other}: differs from {args.commit} in what makes rows: "
                             + ", ".join(differing[:5]) + (f" and {len(differing) - 5} more" if len(differing) > 5
                                                           else ""))
        done = finished_cases(args.runs, args.commit, tuple(args.same_harness), args.harness, standing)
    except ValueError as error:
        parser.error(str(error))
    registry = Registry()
    names = [name for name in registry.names if args.level in (None, registry.get(name).level)]
    left = [name for name in names
            if any(case.tier == args.tier and (name, case.name) not in done for case in registry.get(name).cases)]
    seconds = worker_seconds(args.times_from)
    if args.warm_lanes:  # the timed calls after warm lanes skip first compiles, but not for the tasks left out of them
        compiled = compile_seconds(args.times_from)
        timed_seconds = {task: time if task in args.no_warm else max(0.0, time - compiled.get(task, 0.0))
                         for task, time in seconds.items()}
    else:
        timed_seconds = seconds
    total = sum(len([c for c in registry.get(n).cases if c.tier == args.tier]) for n in names)
    done = {(task, case) for task, case in done if task in names}
    print(f"{len(names) - len(left)} of {len(names)} tasks done ({len(done)} of {total} "
          f"{args.tier} cases have rows at {args.commit or args.harness}); {len(left)} left", file=sys.stderr)
    groups = split(left, args.calls, timed_seconds, args.first_call_share) if left else []
    for group in groups:
        expected = sum(timed_seconds.get(task, 0.0) for task in group)
        print(f'FK_TASKS="tasks=all tasks.include=[{",".join(group)}]"  # {len(group)} tasks, ~{expected:.0f} s '
              f"of worker time where known")
    if args.lanes_dir:
        for path in write_lanes(groups, args.gpus, args.lanes_dir, timed_seconds):
            print(f"wrote {path}", file=sys.stderr)
        if args.warm_lanes:
            warm = split([task for task in left if task not in args.no_warm], args.warm_lanes, seconds)
            print(f"wrote {write_warm_lanes(warm, args.lanes_dir, seconds)}", file=sys.stderr)
    elif args.warm_lanes:
        parser.error("--warm-lanes writes a lanes file: give --lanes-dir too")
    return 0


def write_lanes(groups: list[list[str]], gpus: int, directory: Path, seconds: dict[str, float]) -> list[Path]:
    """The groups as scripts/device-lanes.sh files: call K runs groups K*gpus .. K*gpus+gpus-1, one noop lane a GPU."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for number, start in enumerate(range(0, len(groups), gpus), 1):
        lines = [f"# call {number}: FK_CALL_BUDGET=<timeout_s> bash scripts/device-lanes.sh "
                 f"{directory}/call-{number}.txt"]
        for gpu, group in enumerate(groups[start:start + gpus]):
            expected = sum(seconds.get(task, 0.0) for task in group)
            lines.append(f"# {len(group)} tasks, ~{expected:.0f} s of worker time where known")
            lines.append(f'{gpu} noop FK_TASKS="tasks=all tasks.include=[{",".join(group)}]"')
        path = directory / f"call-{number}.txt"
        path.write_text("\n".join(lines) + "\n")
        written.append(path)
    return written


def write_warm_lanes(groups: list[list[str]], directory: Path, seconds: dict[str, float]) -> Path:
    """The groups as one scripts/device-lanes.sh file of warm runs, lanes 0:w1, 0:w2 ... side by side on GPU 0, in
    its cache (/tmp/fk-lane-0), which the calls' lane 0 then times on."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = [f"# warm: FK_CALL_BUDGET=<timeout_s> bash scripts/device-lanes.sh {directory}/warm.txt, before the calls,"
             " on the same warm machine"]
    for number, group in enumerate(groups, 1):
        expected = sum(seconds.get(task, 0.0) for task in group)
        lines.append(f"# {len(group)} tasks, ~{expected:.0f} s of worker time in a timed pass where known")
        lines.append(f'0:w{number} warm FK_TASKS="tasks=all tasks.include=[{",".join(group)}]"')
    path = directory / "warm.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


if __name__ == "__main__":
    raise SystemExit(main())
