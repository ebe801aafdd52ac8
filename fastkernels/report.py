"""`python -m fastkernels.report RUN_DIR [RUN_DIR ...]`: a Markdown table of each run's results.jsonl.
`python -m fastkernels.report SWEEP_DIR [--allow-mixed] [--allow-partial] [--out DIR]`: one leaderboard per hardware
profile, merged from every run directory under SWEEP_DIR (a Hydra multirun), written as leaderboard.md and
leaderboard.json.

Per run: one line per (task, case): status, baseline implementation, baseline and candidate time in microseconds,
speedup with its 95% interval, and the fraction of the hardware peak each side reaches (the docs' measured tables).

Merged: runs are grouped by hardware profile (env.json's resolved `profile`); within a profile, runs whose composed
config (.hydra/config.yaml) is the same apart from the task selection form one entry (a sweep over tasks=level1,level2
adds up), and each entry is scored by MacroEval's kernel level over the union of its rows. A profile's runs must share
one environment (device, driver, CUDA/cuDNN, Python, package versions, lock file, git commit, numeric switches): the
merge refuses otherwise unless --allow-mixed, which records the differences in both outputs. Interrupted runs are
refused unless --allow-partial, which names them. `--merge` merges run directories given one by one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml


def _us(ms: float | None) -> str:
    return f"{ms * 1e3:.1f}" if ms is not None else "—"


def _frac(value: float | None) -> str:
    return f"{value:.0%}" if value is not None else "—"


def results_table(run_dir: Path) -> str:
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]
    environment = json.loads((run_dir / "env.json").read_text()) if (run_dir / "env.json").exists() else {}
    lines = [
        f"run `{run_dir.name}`: agent={rows[0]['agent'] if rows else '?'}, device {environment.get('device', {}).get('name', '?')},"
        f" wall {environment.get('wall_s', '?')} s"
        + (f", **interrupted ({environment['interrupted']})**: only the rows it finished"
           if environment.get("interrupted") else ""),
        "",
        "| task | case | status | baseline (impl) | baseline µs | candidate µs | speedup [95% CI] | graph speedup"
        " | baseline % peak | candidate % peak | candidate compile s |",
        "| --- | --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        ci = row.get("speedup_ci95")
        speed = f"{row['speedup']:.3f}" if row.get("speedup") is not None else "—"
        if ci and row.get("candidate_ms") is not None:
            speed += f" [{ci[0]:.3f}, {ci[1]:.3f}]"
        graph = f"{row['graph_speedup']:.3f}" if row.get("graph_speedup") is not None else "—"
        compile_s = row.get("compile_s")  # a number in rows of a715d9d, per implementation since
        compile_s = compile_s.get("candidate") if isinstance(compile_s, dict) else None
        lines.append(
            f"| {row['task']} | {row['case']} | {row['status']} | {row.get('baseline_impl') or '—'} |"
            f" {_us(row.get('baseline_ms'))} | {_us(row.get('candidate_ms'))} | {speed} | {graph} |"
            f" {_frac(row.get('baseline_fraction_of_peak'))} | {_frac(row.get('candidate_fraction_of_peak'))} |"
            f" {'—' if compile_s is None else f'{compile_s:.2f}'} |"
        )
    timed = [row["speedup"] for row in rows if row.get("candidate_ms") is not None]
    if timed:
        deviation = [abs(1 - s) for s in timed]
        lines += ["", f"speedups: {len(timed)} timed rows, median |1-s| = {statistics.median(deviation):.4f},"
                      f" max |1-s| = {max(deviation):.4f}, min {min(timed):.3f}, max {max(timed):.3f}"]
    return "\n".join(lines)


class ReportError(ValueError):
    """Runs that cannot be merged into one leaderboard; the message is one line."""


# env.json values that must agree across a profile's runs (dotted paths; `packages` compares every package).
ENVIRONMENT_KEYS = (
    "device.name", "device.compute_capability", "device.sm_count", "device.driver_version", "cuda_runtime", "cudnn",
    "python", "python_implementation", "packages", "lock_sha256", "git_commit", "git_dirty", "harness_sha256",
    "matmul_allow_tf32", "cudnn_allow_tf32", "float32_matmul_precision", "deterministic_algorithms", "num_threads",
)
# Config groups that tell a leaderboard entry apart; `tasks` is left out so that task sweeps add up, `runner` and
# `hardware` because where a run executed and how its profile was chosen do not change what it measured.
ENTRY_KEYS = ("agent", "baseline", "mode", "harness", "clocks")


def find_runs(path: Path) -> list[Path]:
    """`path` itself when it is a run directory (holds results.jsonl), else every run directory below it."""
    if (path / "results.jsonl").is_file():
        return [path]
    return sorted({found.parent for found in path.rglob("results.jsonl") if "workers" not in found.parts[-2:]})


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        flat: dict[str, Any] = {}
        for key in sorted(value):
            flat.update(_flatten(value[key], f"{prefix}{key}."))
        return flat
    return {prefix[:-1]: value}


def _dig(data: dict[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(part)  # type: ignore[assignment]
    return data


def environment_signature(environment: dict[str, Any]) -> dict[str, Any]:
    """The values of ENVIRONMENT_KEYS in an env.json, flattened (`packages.torch`, `device.driver_version` ...)."""
    signature: dict[str, Any] = {}
    for key in ENVIRONMENT_KEYS:
        value = _dig(environment, key)
        signature.update(_flatten(value, f"{key}.") if isinstance(value, dict) else {key: value})
    return signature


def _show(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, str) else value


def environment_differences(runs: list[dict[str, Any]]) -> list[str]:
    """One line per environment value that is not the same in every run: `packages.torch: 2.13.0 (a) vs 2.12.0 (b)`."""
    signatures = [(run["name"], environment_signature(run["environment"])) for run in runs]
    keys = sorted({key for _, signature in signatures for key in signature})
    lines = []
    for key in keys:
        by_value: dict[str, list[str]] = {}
        for name, signature in signatures:
            by_value.setdefault(_show(signature.get(key)), []).append(name)
        if len(by_value) > 1:
            lines.append(f"{key}: " + " vs ".join(f"{value} ({', '.join(names)})" for value, names in by_value.items()))
    return lines


def load_run(path: Path, base: Path | None = None) -> dict[str, Any]:
    """A run directory's rows (validated), env.json, composed config and the profile it was scored against."""
    from fastkernels.records import ResultRow

    lines = (path / "results.jsonl").read_text().splitlines()
    try:
        rows = [ResultRow.model_validate_json(line) for line in lines if line.strip()]
    except ValueError as error:
        raise ReportError(f"{path / 'results.jsonl'}: not a results file ({' '.join(str(error).split())[:160]})") from None
    environment = json.loads((path / "env.json").read_text()) if (path / "env.json").is_file() else {}
    config_path = path / ".hydra" / "config.yaml"
    config = yaml.safe_load(config_path.read_text()) if config_path.is_file() else None
    profile = (environment.get("profile") or (rows[0].hardware if rows and rows[0].hardware else None)
               or _dig(config or {}, "hardware.name") or "unknown")
    if config is not None:
        key = {name: config.get(name) for name in ENTRY_KEYS}
    else:  # no .hydra/ (a run copied without it): what the rows say
        first = rows[0] if rows else None
        key = {"agent": {"name": first.agent if first else "?"}, "baseline": {"name": first.baseline if first else "?"},
               "mode": first.mode if first else "?"}
    try:
        name = str(path.relative_to(base)) if base is not None and path != base else path.name
    except ValueError:
        name = path.name
    return {"path": path, "name": name, "rows": rows, "environment": environment, "profile": profile, "key": key}


def merge_runs(paths: list[Path], allow_mixed: bool = False, allow_partial: bool = False) -> dict[str, Any]:
    """The merged leaderboard of every run directory in (or under) `paths`, as JSON-ready data.

    An interrupted run (env.json `interrupted`) holds only the rows it finished: merged, it would rank its entry on
    fewer tasks than the others, so it is refused unless `allow_partial`, which names it in the leaderboard."""
    from fastkernels.macroeval import kernel_level

    runs = []
    for path in paths:
        found = find_runs(path)
        if not found:
            raise ReportError(f"{path}: no run directories (no results.jsonl in it or below it)")
        runs += [load_run(run, path if path != run else path.parent) for run in found]
    partial = [f"{run['name']} ({run['environment']['interrupted']}, {len(run['rows'])} rows)"
               for run in runs if run["environment"].get("interrupted")]
    if partial and not allow_partial:
        raise ReportError(f"interrupted runs hold only the rows they finished: {', '.join(partial)}; re-run them, "
                          "or pass --allow-partial to merge them anyway")
    profiles: dict[str, Any] = {}
    for profile in sorted({run["profile"] for run in runs}):
        members = [run for run in runs if run["profile"] == profile]
        mixed = environment_differences(members)
        if mixed and not allow_mixed:
            raise ReportError(f"hardware={profile}: runs differ in their environment ({'; '.join(mixed[:3])}"
                              f"{f'; and {len(mixed) - 3} more' if len(mixed) > 3 else ''}); "
                              f"pass --allow-mixed to merge them anyway")
        entries: dict[str, dict[str, Any]] = {}
        for run in members:
            entry = entries.setdefault(json.dumps(run["key"], sort_keys=True, default=str),
                                       {"key": run["key"], "runs": [], "rows": [], "seen": {}})
            for row in run["rows"]:
                where = entry["seen"].setdefault((row.task, row.case), run["name"])
                if where != run["name"]:
                    raise ReportError(f"hardware={profile}: runs {where} and {run['name']} both score "
                                      f"{row.task}/{row.case} with the same config; report them separately")
            entry["runs"].append(run["name"])
            entry["rows"] += run["rows"]
        flat = {name: _flatten(entry["key"]) for name, entry in entries.items()}
        varying = sorted({k for f in flat.values() for k in f
                          if len({_show(other.get(k)) for other in flat.values()}) > 1}
                         - {"agent.name", "baseline.name", "mode"})
        table, listed = [], []
        for name, entry in entries.items():
            report = kernel_level(entry["rows"])
            agent = _dig(entry["key"], "agent.name") or "?"
            baseline = _dig(entry["key"], "baseline.name") or "?"
            mode = entry["key"].get("mode") or "?"
            config = {k: flat[name].get(k) for k in varying}
            listed.append({"agent": agent, "baseline": baseline, "mode": mode, "config": config, "runs": entry["runs"],
                           "kernel_level": report.model_dump(mode="json")})
            for level in report.levels:
                table.append({"level": level.level, "agent": agent, "baseline": baseline, "mode": mode,
                              "config": config, "tasks": level.tasks, "attempted": level.attempted,
                              "correct": level.correct, "geomean_speedup": level.geomean_speedup,
                              "fast_1": level.fast_1, "fast_2": level.fast_2, "fast_1_ci95": level.fast_1_ci95,
                              "fast_2_ci95": level.fast_2_ci95, "runs": entry["runs"],
                              # rows a reader should check before trusting a win (results.jsonl `review`)
                              "review": sum(1 for r in entry["rows"] if r.level == level.level and r.review)})
        # resolved wins first (a noop's noise scores fast_1 but not fast_1_ci95), then KernelBench's fast_1
        table.sort(key=lambda r: (r["level"], -r["fast_1_ci95"], -r["fast_1"], -(r["geomean_speedup"] or 0.0),
                                  -r["correct"], r["agent"]))
        rank: dict[int, int] = {}
        for row in table:
            rank[row["level"]] = rank.get(row["level"], 0) + 1
            row["rank"] = rank[row["level"]]
        first = members[0]["environment"]
        profiles[profile] = {
            "runs": [run["name"] for run in members],
            "environment": {key: value for key, value in environment_signature(first).items()
                            if not key.startswith("packages.") or key.split(".", 1)[1] in ("torch", "triton")}
            if not mixed else None,
            "mixed": mixed,
            "entries": listed,
            "leaderboard": table,
        }
    return {"generated": datetime.now(timezone.utc).isoformat(timespec="seconds"), "sources": [str(p) for p in paths],
            "allow_mixed": allow_mixed, "partial": partial, "profiles": profiles}


def _config_text(config: dict[str, Any]) -> str:
    return ", ".join(f"{key}={_show(value)}" for key, value in config.items()) or "—"


def leaderboard_markdown(merged: dict[str, Any]) -> str:
    """One Markdown table per hardware profile: per level, entries ranked by fast_1_ci95, fast_1, geomean speedup."""
    out = []
    if merged.get("partial"):
        out += ["**Interrupted runs (merged with --allow-partial; only the rows they finished):** "
                + ", ".join(merged["partial"]), ""]
    for profile, data in merged["profiles"].items():
        env = data["environment"] or {}
        facts = ", ".join(f"{label} {env[key]}" for label, key in (
            ("device", "device.name"), ("driver", "device.driver_version"), ("CUDA", "cuda_runtime"),
            ("torch", "packages.torch"), ("triton", "packages.triton"), ("commit", "git_commit")) if env.get(key))
        out += [f"## hardware={profile}: {len(data['runs'])} run(s)" + (f"; {facts}" if facts else ""), ""]
        if data["mixed"]:
            out += ["**Mixed environments (merged with --allow-mixed):**", *[f"- {line}" for line in data["mixed"]], ""]
        out += ["| level | rank | agent | baseline | mode | config | tasks | attempted | correct | geomean speedup |"
                " fast_1 | fast_2 | fast_1 (95%) | review | runs |",
                "| --- | ---: | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for row in data["leaderboard"]:
            speed = f"{row['geomean_speedup']:.3f}x" if row["geomean_speedup"] is not None else "—"
            out.append(f"| L{row['level']} | {row['rank']} | {row['agent']} | {row['baseline']} | {row['mode']} |"
                       f" {_config_text(row['config'])} | {row['tasks']} | {row['attempted']} | {row['correct']} |"
                       f" {speed} | {row['fast_1']:.1%} | {row['fast_2']:.1%} | {row['fast_1_ci95']:.1%} |"
                       f" {row['review']} | {', '.join(row['runs'])} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fastkernels.report", description=__doc__.strip().splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path, help="run directories, or sweep directories to merge")
    parser.add_argument("--merge", action="store_true", help="merge the given run directories into one leaderboard")
    parser.add_argument("--allow-mixed", action="store_true",
                        help="merge runs whose environments differ (the differences are recorded)")
    parser.add_argument("--allow-partial", action="store_true",
                        help="merge interrupted runs too (they hold only the rows they finished; they are named)")
    parser.add_argument("--out", type=Path, default=None,
                        help="write leaderboard.md and leaderboard.json here (default: the sweep directory, when "
                             "exactly one was given)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    missing = [str(path) for path in args.paths if not path.is_dir()]
    if missing:
        print(f"fastkernels.report: error: no such directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    if not args.merge and all((path / "results.jsonl").is_file() for path in args.paths):
        print("\n\n".join(results_table(path) for path in args.paths))
        return 0
    try:
        merged = merge_runs(args.paths, allow_mixed=args.allow_mixed, allow_partial=args.allow_partial)
    except ReportError as error:
        print(f"fastkernels.report: error: {error}", file=sys.stderr)
        return 2
    text = leaderboard_markdown(merged)
    out = args.out if args.out is not None else (args.paths[0] if len(args.paths) == 1 else None)
    if out is not None:
        from fastkernels.artifacts import write_atomic, write_json

        write_json(out / "leaderboard.json", merged)
        write_atomic(out / "leaderboard.md", text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
