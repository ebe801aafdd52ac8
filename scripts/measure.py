"""The harness's own measurement benchmark: how close to the hardware, how noisy, how costly.

Prints, for the machine it runs on:
1. copy bandwidth (device-to-device, bytes read + written) and the bf16 GEMM rate (8192^3, random data) against the
   hardware profile's peaks, and on a GPU the launch floor (the smallest kernel as the harness times it);
2. the noop speedup distribution over every task and case (median and max |1 - s|);
3. one candidate task re-measured five times in fresh runs: its speedup spread (max / min) per case;
4. harness overhead: wall seconds per task-case of the noop run; with --noop-rows, the workers' own seconds per
   task-case by phase, less the rows' measured compile time (`compile_s`), and the parts of the timed phase.

Usage: python scripts/measure.py [hardware=h200] [--tasks all] [--repeat-task silu_and_mul] [--out DIR]
       python scripts/measure.py --parts none --noop-rows RUN_DIR...   (the distribution of noop runs already made)
On the CPU it runs the same steps on the CPU cases (fp32 GEMM, host clock); the numbers are then CPU numbers.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fastkernels.phases import phase_name  # noqa: E402

sys.path.insert(0, str(ROOT / "scripts"))
from compare_noop import lean  # noqa: E402


def ceilings(device: str) -> dict[str, float]:
    """Measured copy GB/s and GEMM TFLOP/s (median of 10 after 3 warm-ups)."""
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    n = 1 << 30 if device == "cuda" else 1 << 26
    src = torch.randn(n // 4, device=device)
    dst = torch.empty_like(src)
    size = 8192 if device == "cuda" else 1024
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)

    def median_seconds(step) -> float:
        for _ in range(3):
            step()
        sync()
        times = []
        for _ in range(10):
            start = time.perf_counter()
            step()
            sync()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    copy_s = median_seconds(lambda: dst.copy_(src))
    gemm_s = median_seconds(lambda: a @ b)
    return {"copy_gbs": 2 * n / copy_s / 1e9, "gemm_tflops": 2 * size**3 / gemm_s / 1e12,
            "gemm_dtype": str(dtype).removeprefix("torch.")}


def launch_floor_us(calls: int = 400) -> dict[str, float]:
    """The smallest kernel's time (one element incremented) under the harness's own clock (CUDA events behind its
    adaptive launch pad, L2 flushed before every call), eager and as a CUDA-graph replay: no kernel, however little
    it moves, is timed faster, so it is the floor under a limit of bytes / bandwidth that is smaller (GPU only)."""
    from fastkernels.cache import cache_flush
    from fastkernels.timing import CudaEventClock

    clock, (flush, _) = CudaEventClock(), cache_flush("cuda", None)
    x = torch.zeros(1, device="cuda")
    for _ in range(10):
        x.add_(1)
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        x.add_(1)
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        x.add_(1)
    eager = [clock.time_call(lambda: x.add_(1), flush) for _ in range(calls)]
    replayed = [clock.time_call(graph.replay, flush) for _ in range(calls)]
    return {"eager_us": statistics.median(eager) * 1e3, "graph_us": statistics.median(replayed) * 1e3}


def fastkernels(out: Path, *overrides: str) -> tuple[list[dict], float]:
    start = time.time()
    subprocess.run([sys.executable, "-m", "fastkernels", f"hydra.run.dir={out}", *overrides], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return rows, time.time() - start


# A task whose first log line ("torch imported") comes later than this started a lane's fork server; forked from a
# running one it comes at 0.03-0.04 s (H200, 2026-11-30), a server's own start took 10.5-11 s.
START_UP_S = 2.0
PADDED = re.compile(r"\((\d+) pairs.*launch pad (\d+) us")  # a timed phase's log line (timing.pad_note)
RAISED = re.compile(r"^(\S+): graph captures raised to (\d+) a side")  # graphs.graph_fields, since 2026-12-02
LAUNCHES = re.compile(r"launches (\d+) us median, (\d+) us p99")  # timing.pad_note, since 2026-12-03


def launch_line(launches: dict[str, tuple[float, float]], pads: dict[str, tuple[float, float]]) -> None:
    """Print how long the host took to queue an eager timed call (the median over task-cases of each case's median
    and p99), and, of the cases whose pad settled at 1600 us or more, how many launched slowly on every call (their
    median launch at least half the pad) and how many were late on a few (below half). A pad doubles until it covers
    the slowest launches (timing.CudaEventClock), so it settles within 2x above a case's p99."""
    medians = sorted(median for median, _ in launches.values())
    tails = sorted(tail for _, tail in launches.values())
    long_pads = {label: pads[label][1] for label in launches if label in pads and pads[label][1] >= 1600}
    slow_host = sum(launches[label][0] >= pad / 2 for label, pad in long_pads.items())
    print(f"  eager launches (host time to queue one timed call) over {len(launches)} task-cases: median of the"
          f" medians {medians[len(medians) // 2]:.0f} us, of the p99s {tails[len(tails) // 2]:.0f} us; of the"
          f" {len(long_pads)} pads at 1600 us or more, {slow_host} on a host slow on every call (median launch at"
          f" least half the pad), {len(long_pads) - slow_host} on a few late launches", flush=True)


def worker_seconds(runs: list[Path], rows: list[dict], tasks: set[str] | None = None) -> dict:
    """Print the workers' own seconds per task-case, from their logs (the last phase line of each task: seconds
    since its launch), the slowest tasks, and where the time went: the seconds before each phase line, added up by
    phase ("baseline checked" holds the first calls, so Inductor's and Triton's compiling and autotuning). Where
    the rows say how long their first calls took beyond a steady call (`compile_s`), print issue #3's harness
    overhead: the worker time less that compile time, per task-case. `tasks`, where given, is every log read."""
    per_task: dict[str, tuple[float, int]] = {}
    per_phase: dict[str, float] = {}
    rechecks_s = 0.0  # the part of the timed phases the judge's rechecks took (worker logs since 2026-11-30)
    eager_rechecks_s = 0.0  # of it, in the eager timed phases
    pads_s: dict[str, float] = {}  # the launch pads' share of the timed phases, eager and graph replays
    eager_pads: dict[str, tuple[float, float]] = {}  # task/case -> (seconds its eager pads spun, its final pad in us)
    eager_launches: dict[str, tuple[float, float]] = {}  # task/case -> (median, p99 us the host took to queue a call)
    start_ups: list[float] = []  # the first task of a lane waits for its fork server to import torch and libraries
    raised: dict[str, int] = {}  # task/case -> the captures a side its graph timing ended with, where they were raised
    for run in reversed(runs):  # a task re-run later counts from the last run listed, as its rows do
        for log in sorted((run / "workers").glob("*.log")):
            if log.stem in per_task or (tasks is not None and log.stem not in tasks):
                continue
            lines = log.read_text(errors="replace").splitlines()
            stamped = [(float(line[1:9]), line[12:].strip())
                       for line in lines if line.startswith("[") and line[9:11] == " s"]
            cases = sum(1 for line in lines if "] case " in line)
            if stamped and cases:
                per_task[log.stem] = (stamped[-1][0], cases)
                if stamped[0][1].startswith("torch imported") and stamped[0][0] > START_UP_S:
                    start_ups.append(stamped[0][0])
                previous = 0.0
                for stamp, text in stamped:
                    name = phase_name(text)
                    judging = re.search(r"pairs, ([0-9.]+) s of it judging rechecks", text)
                    rechecks_s += float(judging.group(1)) if judging else 0.0
                    if judging and name == "timed":
                        eager_rechecks_s += float(judging.group(1))
                    if found := RAISED.match(text):
                        raised[found.group(1)] = int(found.group(2))
                    padded = PADDED.search(text)
                    if padded:  # two calls a pair, each behind the case's final pad (warm-ups and retimes left out)
                        kind = "eager" if name == "timed" else "graph replays"
                        spun = 2 * int(padded.group(1)) * float(padded.group(2)) / 1e6
                        pads_s[kind] = pads_s.get(kind, 0.0) + spun
                        if kind == "eager" and ": " in text:
                            eager_pads[text.split(": ", 1)[0]] = (spun, float(padded.group(2)))
                            if launched := LAUNCHES.search(text):
                                eager_launches[text.split(": ", 1)[0]] = (float(launched.group(1)),
                                                                          float(launched.group(2)))
                    per_phase[name] = per_phase.get(name, 0.0) + stamp - previous
                    previous = stamp
    total = sum(seconds for seconds, _ in per_task.values())
    cases = sum(count for _, count in per_task.values())
    slowest = sorted(per_task.items(), key=lambda item: -item[1][0])[:5]
    print(f"worker time: {total:.0f} s for {cases} task-cases of {len(per_task)} tasks = {total / max(1, cases):.1f} s"
          f" each; slowest: " + ", ".join(f"{task} {seconds:.0f} s" for task, (seconds, _) in slowest), flush=True)
    print("  by phase: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in
                                     sorted(per_phase.items(), key=lambda item: -item[1])[:8]), flush=True)
    if rechecks_s:
        print(f"  of the timed phases, judging the rechecks: {rechecks_s:.1f} s", flush=True)
    if pads_s:  # a pad ratchets up for a case and never shrinks (timing.CudaEventClock)
        print("  of the timed phases, spinning launch pads (pairs x 2 x the case's final pad): "
              + ", ".join(f"{kind} {seconds:.1f} s" for kind, seconds in sorted(pads_s.items())), flush=True)
    if eager_pads:  # where a case's pad settled says how late its host launched (garbage_collector.py, 2026-12-02)
        finals = sorted(pad for _, pad in eager_pads.values())
        costliest = sorted(eager_pads.items(), key=lambda item: -item[1][0])[:5]
        print(f"  eager launch pads over {len(finals)} task-cases: median final pad {finals[len(finals) // 2]:.0f} us,"
              f" {sum(pad >= 1600 for pad in finals)} at 1600 us or more; costliest: "
              + ", ".join(f"{label} {spun:.1f} s ({pad:.0f} us)" for label, (spun, pad) in costliest), flush=True)
    if eager_launches:  # what the pads answered: a host slow on every call, or late on a few
        launch_line(eager_launches, eager_pads)
    if raised:  # the captures' speeds spread too much for the interval: only more captures narrow it
        ended = sorted(set(raised.values()))
        print(f"  graph captures raised on {len(raised)} task-cases (the interval wider than the target), ending at "
              + ", ".join(f"{n} a side on {sum(v == n for v in raised.values())}" for n in ended) + ": "
              + ", ".join(sorted(raised)[:8]) + (" ..." if len(raised) > 8 else ""), flush=True)
    if start_ups:  # a run pays one per lane, whatever its length: runs stitched together pay it again each
        print(f"  worker start-ups (a fork server importing torch and the kernel libraries, once a lane and run):"
              f" {len(start_ups)}, {sum(start_ups):.1f} s", flush=True)
    # Issue #3's overhead target leaves compile time out; on cold caches it sits in the baseline checks (with the
    # baselines' own correctness rounds, so this figure is a little low); on warm caches the total is the figure.
    uncompiled = (total - per_phase.get("baseline checked", 0.0)) / max(1, cases)
    print(f"  without the baseline checks (first compiles and autotuning, and the baselines' correctness rounds): "
          f"{uncompiled:.1f} s each", flush=True)
    summary = dict(worker_s_per_case=total / max(1, cases), worker_s_per_case_without_baseline_checks=uncompiled)
    # a number in the rows of a715d9d (2026-11-30), per implementation since
    compiled = [(row["task"], sum(seconds.values()) if isinstance(seconds, dict) else seconds)
                for row in rows if row["task"] in per_task and (seconds := row.get("compile_s")) not in (None, {})]
    if compiled:
        compile_s = sum(seconds for _, seconds in compiled)
        print(f"  compile time (first calls beyond the quickest later call, {len(compiled)} rows): {compile_s:.0f} s;"
              f" harness overhead without it: {(total - compile_s) / max(1, cases):.2f} s per task-case", flush=True)
        summary.update(compile_s=compile_s, worker_overhead_s_per_case=(total - compile_s) / max(1, cases))
        compile_by_task: dict[str, float] = {}
        for task, seconds in compiled:
            compile_by_task[task] = compile_by_task.get(task, 0.0) + seconds
        costliest = sorted(((seconds - compile_by_task.get(task, 0.0)) / count, task)
                           for task, (seconds, count) in per_task.items())[::-1][:5]
        print("  costliest tasks without compile time, a task-case: "
              + ", ".join(f"{task} {seconds:.1f} s" for seconds, task in costliest), flush=True)
        if len(start_ups) > 1:  # a pass stitched from several runs paid a start-up per run, one run pays one a lane
            one_run = (total - compile_s - sum(start_ups) + max(start_ups)) / max(1, cases)
            print(f"  the same with one start-up (the longest), as one run on one lane pays it: {one_run:.2f} s per"
                  f" task-case", flush=True)
            summary.update(worker_overhead_s_per_case_one_start_up=one_run)
    timed = [row for row in rows if row["task"] in per_task and row.get("samples") and row.get("candidate_ms")]
    if timed:  # what no harness can save: the measured calls themselves (median times the calls made)
        device_s = sum(row["samples"] * (row["baseline_ms"] + row["candidate_ms"]) for row in timed) / 1e3
        print(f"  of the worker time, the kernels' own time in the eager timed calls (samples x both medians):"
              f" {device_s:.0f} s, {device_s / max(1, cases):.2f} s per task-case", flush=True)
        summary.update(timed_device_s=device_s)
        calls = sum(2 * row["samples"] for row in timed)
        if rechecks_s and per_phase.get("timed"):  # logs that split the rechecks out (2026-11-30 on)
            own = per_phase["timed"] - eager_rechecks_s - device_s
            print(f"  eager timing's own cost per timed call (the phase less its rechecks and the kernels; warm-ups"
                  f" included): {own / calls * 1e3:.2f} ms over {calls} calls: launch pad, cache flush, input refill,"
                  f" syncs", flush=True)
            summary.update(per_call_ms=own / calls * 1e3)
    return summary


def noop_distribution(rows: list[dict]) -> dict:
    """Print the noop |1 - s| distribution and every row over 2%, saying whether its 95% interval excludes 1
    (a systematic difference between two instances of the same module) or not (noise the time cap left), and how
    long its candidate's first call took beyond a steady one where the row says (`compile_s`)."""
    unique: dict[tuple[str, str], dict] = {}
    for row in rows:
        unique.setdefault((row["task"], row["case"]), row)
    timed = [row for row in unique.values() if row.get("speedup") is not None and row["status"] == "PASSED"]
    median, largest = _deviations(timed, "speedup",
                                  f"noop: {len(timed)}/{len(unique)} rows PASSED over {len({r['task'] for r in timed})}"
                                  " tasks")
    for row in sorted(timed, key=lambda r: -abs(1 - r["speedup"])):
        if abs(1 - row["speedup"]) <= 0.02:
            break
        low, high = row.get("speedup_ci95") or (float("nan"), float("nan"))
        kind = "systematic (interval excludes 1)" if low > 1 or high < 1 else "noise (interval holds 1)"
        first = row.get("compile_s")
        first = first.get("candidate") if isinstance(first, dict) else None
        # a noop candidate that spent long over its first call compiled (and, under max-autotune, tuned) afresh
        first_note = f", candidate's first call +{first:.2f} s" if first is not None else ""
        print(f"  {row['task']}/{row['case']} [{row['baseline_impl']}, {row['baseline_ms'] * 1e3:.1f} us{first_note}]:"
              f" {row['speedup']:.4f} [{low:.3f}, {high:.3f}] {kind}")
    summary = dict(noop_median_dev=median, noop_max_dev=largest, noop_rows=len(timed))
    summary.update(graph_distribution(timed))
    summary.update(sync_lags(timed))
    return summary


def graph_distribution(rows: list[dict]) -> dict:
    """The same distribution for the rows' CUDA-graph replay speedups (runs with harness.cuda_graphs=true)."""
    replayed = [row for row in rows if row.get("graph_speedup") is not None]
    if not replayed:
        return {}
    median, largest = _deviations(replayed, "graph_speedup", f"noop under graph replay: {len(replayed)} rows")
    return dict(noop_graph_median_dev=median, noop_graph_max_dev=largest)


SHORT_MS = 0.1  # a kernel under 100 us: where the replayed lean sits (_deviations)


def _lean(rows: list[dict], field: str, significance: bool = False) -> str:
    """"B/N (P%); geometric mean G" of the rows' `field` (compare_noop.lean), with its binomial p if asked."""
    return lean([row[field] for row in rows], significance)


@functools.cache
def holds_weights(task: str) -> bool | None:
    """Whether `task`'s module holds any weights (its reference state on a CPU case has a tensor with elements);
    None for a task this checkout does not have."""
    from fastkernels.build import reference_state
    from fastkernels.config import BaselineConfig
    from fastkernels.plan import plan_task
    from fastkernels.registry import Registry, UnknownTaskError

    try:
        plan = plan_task(Registry(), task, "cpu", BaselineConfig(name="production"), None, "independent")
    except UnknownTaskError:
        return None
    case = next(case for case in plan.manifest.cases if case.tier == "cpu")
    state = reference_state(plan.manifest, case, plan.eager.cls, plan.eager.components, "cpu", 0)
    return any(tensor.numel() for tensor in state.values())


def _deviations(rows: list[dict], field: str, head: str) -> tuple[float, float]:
    """Print `head` with the median and max |1 - s| of `field` over `rows` and how many are over 2% and 1%."""
    deviation = [abs(1 - row[field]) for row in rows]
    worst = max(rows, key=lambda r: abs(1 - r[field]))
    print(f"{head}; median |1-s| = {statistics.median(deviation):.4f}, max |1-s| = {max(deviation):.4f}"
          f" ({worst['task']}/{worst['case']}); {sum(d > 0.02 for d in deviation)} rows over 2%,"
          f" {sum(d > 0.01 for d in deviation)} over 1%", flush=True)
    # a noop has no side to lean to: far more than half the rows below 1 (and a mean under 1) is a bias against the
    # candidate shared by many rows (52-61% in three H200 passes while only its calls made round trips to the judge;
    # 56-79% after they made the same ones, widest on composed rows replayed: split below)
    print(f"  rows below 1: {_lean(rows, field, significance=True)}", flush=True)
    composed = [row for row in rows if _built_from_lower_levels(row)]
    if composed and len(composed) < len(rows):
        single = [row for row in rows if not _built_from_lower_levels(row)]
        print(f"    composed rows (L2/L3 built from lower-level baselines): {_lean(composed, field)};"
              f" the others: {_lean(single, field)}", flush=True)
    # ... and by the baseline's time: replayed, the lean sat on kernels under 100 us (0.9986 there, 0.9998 above, on
    # the H200's complete pass at 61c8ba7fb37f, 2026-12-03)
    timed = "baseline_graph_ms" if field == "graph_speedup" else "baseline_ms"
    short = [row for row in rows if row.get(timed) is not None and row[timed] < SHORT_MS]
    long = [row for row in rows if row.get(timed) is not None and row[timed] >= SHORT_MS]
    if short and long:
        print(f"    baseline under {SHORT_MS * 1e3:.0f} us: {_lean(short, field)}; {SHORT_MS * 1e3:.0f} us or more:"
              f" {_lean(long, field)}", flush=True)
    # ... and by whether the task's module holds weights: where weights land was one suspect, and tasks without any
    # (pure functions, mostly one compiled function both sides call) leaned as much or more on the H200 (2026-12-03:
    # 56% eager and 59% replayed below 1 without weights, 58% and 59% with, over the complete pass at 61c8ba7fb37f;
    # docs/results/h200-2026-12-03-thirty-second/measure-noop-61c8-337-rows-with-weights-split.txt), which cleared it
    held = {task: holds_weights(task) for task in {row["task"] for row in rows}}
    weighted = [row for row in rows if held[row["task"]] is True]
    weightless = [row for row in rows if held[row["task"]] is False]
    if weighted and weightless:
        print(f"    tasks with weights: {_lean(weighted, field)}; without: {_lean(weightless, field)}", flush=True)
    # a noop's speedup is 1 by construction: how often its interval holds 1 checks the interval itself, and a row
    # further than 1% whose interval excludes 1 is a bias of the setting (an instance, a capture), not noise
    with_interval = [row for row in rows if row.get(f"{field}_ci95")]
    if with_interval:
        held = [row for row in with_interval if row[f"{field}_ci95"][0] <= 1 <= row[f"{field}_ci95"][1]]
        biased = sorted((row for row in with_interval if row not in held and abs(1 - row[field]) > 0.01),
                        key=lambda r: -abs(1 - r[field]))
        print(f"  95% intervals hold 1 on {len(held)}/{len(with_interval)} rows"
              f" ({100 * len(held) / len(with_interval):.1f}%); further than 1% with 1 outside the interval:"
              f" {len(biased)}" + "".join(f"\n    {r['task']}/{r['case']}: {r[field]:.4f} [{r[f'{field}_ci95'][0]:.3f},"
                                          f" {r[f'{field}_ci95'][1]:.3f}]" for r in biased[:10]), flush=True)
    return statistics.median(deviation), max(deviation)


def sync_lags(rows: list[dict]) -> dict:
    """Print what the stream-escape check compared in honest rows: the device-sync lag after the timed stream, at the
    60th percentile of calls, and how far the candidate's exceeded the baseline's (StreamEscape lets it by MARGIN_MS
    or MARGIN_FRACTION of the call before the row is a REWARD_HACK): the margin's calibration on this machine."""
    summary: dict = {}
    for field, what, key in (("sync_lag_ms", "sync lag", "sync_lag"),
                             ("graph_sync_lag_ms", "under graph replay, sync lag", "graph_sync_lag")):
        lags = [row[field] for row in rows if row.get(field)]
        if not lags:
            continue
        excess = sorted((candidate - baseline) * 1e3 for baseline, candidate in lags)
        baseline_us = statistics.median(b for b, _ in lags) * 1e3
        print(f"{what} (60th percentile of calls) over {len(lags)} rows: baseline median {baseline_us:.1f} us;"
              f" candidate - baseline: median {statistics.median(excess):.1f} us, max {excess[-1]:.1f} us,"
              f" min {excess[0]:.1f} us")
        summary.update({f"{key}_excess_us_max": excess[-1], f"{key}_excess_us_median": statistics.median(excess)})
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("overrides", nargs="*", help="extra Hydra overrides, e.g. hardware=h200")
    parser.add_argument("--tasks", default="all")
    parser.add_argument("--repeat-task", default="silu_and_mul")
    parser.add_argument("--out", type=Path, default=ROOT / "outputs" / "measure")
    parser.add_argument("--noop-rows", nargs="*", type=Path, default=[],
                        help="also report the noop distribution of these finished (or cut-short) noop run directories;"
                             " a task-case in several of them counts once, from the last run listed (a re-run)")
    parser.add_argument("--only-tasks-of", nargs="*", type=Path, default=[],
                        help="with --noop-rows: only the tasks these other runs have rows for (two passes compared on"
                             " the tasks they share: measure each with the other's runs here)")
    parser.add_argument("--standing-from", metavar="REV",
                        help="with --noop-rows: runs made at REV's harness count only for the tasks whose rows "
                             "scripts/harness_diff.py says still stand for this tree (a pass stitched across a "
                             "task-local change, as remaining_tasks.py --standing-from counts it)")
    parser.add_argument("--parts", default="ceilings,noop,repeat",
                        help="which measurements, comma-separated (a device call may not fit all of them)")
    args = parser.parse_intermixed_args()
    if args.standing_from and not args.noop_rows:
        parser.error("--standing-from says which runs of --noop-rows to read: give those runs")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    from fastkernels.config import CONF_DIR, HardwareProfile
    from fastkernels.hardware import detect_device, load_profiles, resolve_profile

    profile = resolve_profile(HardwareProfile(name="auto"), detect_device(), load_profiles(CONF_DIR))
    parts = set(args.parts.split(","))
    summary: dict = {}
    print(f"device {torch.cuda.get_device_name() if device == 'cuda' else 'cpu'}, profile {profile.name},"
          f" {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
    if "ceilings" in parts:
        measured = ceilings(device)
        summary["ceilings"] = measured
        peak_bw, peak_rate = profile.peak_memory_bandwidth_gbs, profile.peak_tflops.get(measured["gemm_dtype"])
        print(f"copy bandwidth  {measured['copy_gbs']:9.1f} GB/s" + (f"  ({measured['copy_gbs'] / peak_bw:.0%} of {peak_bw:g})" if peak_bw else ""))
        print(f"{measured['gemm_dtype']} GEMM     {measured['gemm_tflops']:9.1f} TFLOP/s" + (f"  ({measured['gemm_tflops'] / peak_rate:.0%} of {peak_rate:g})" if peak_rate else ""))
        if device == "cuda":
            floor = launch_floor_us()
            summary["launch_floor"] = floor
            print(f"launch floor    {floor['eager_us']:9.2f} µs eager, {floor['graph_us']:.2f} µs replayed (the smallest"
                  f" kernel, timed as the harness times: baselines_table.py --launch-floor-us)")

    if "noop" in parts:
        noop, wall = fastkernels(args.out / "noop", "agent=noop", f"tasks={args.tasks}", *args.overrides)
        summary.update(noop_distribution(noop))
        print(f"harness overhead: {wall:.1f} s wall for {len(noop)} task-cases = {wall / max(1, len(noop)):.2f} s each")
        summary["overhead_s_per_case"] = wall / max(1, len(noop))
    if args.noop_rows:
        from fastkernels.artifacts import run_rows

        standing = None
        try:
            if args.standing_from:
                from harness_diff import standing_rows

                standing = standing_rows(ROOT, args.standing_from, agent="noop")  # --noop-rows
            latest = stitched_rows(args.noop_rows, standing)
        except ValueError as error:
            parser.error(str(error))
        rows = list(latest.values())
        tasks = None
        if args.only_tasks_of:
            tasks = {row["task"] for run in args.only_tasks_of for row in run_rows(run)}
            rows = [row for row in rows if row["task"] in tasks]
        devices = sorted({row.get("device") or "?" for row in rows})
        print(f"noop rows read from {len(args.noop_rows)} run(s), measured on {', '.join(devices)}"
              + (f", only the {len(tasks)} tasks of {len(args.only_tasks_of)} other run(s)" if tasks is not None
                 else ""), flush=True)
        print(harness_note(args.noop_rows, standing and (args.standing_from, *standing)), flush=True)
        summary.update(noop_distribution(rows))
        summary.update(worker_seconds(args.noop_rows, rows, tasks))

    speedups: dict[str, list[float]] = {}
    for attempt in range(5 if "repeat" in parts else 0):
        rows, _ = fastkernels(args.out / f"repeat{attempt}", "agent=reference", f"tasks.include=[{args.repeat_task}]",
                              *args.overrides)
        for row in rows:
            if row.get("speedup") is not None and row["status"] == "PASSED":
                speedups.setdefault(row["case"], []).append(row["speedup"])
        # printed as it goes: a device call cut short by its time limit still reports the runs it finished
        print(f"repeat {attempt}: " + ", ".join(f"{case} {values[-1]:.4f}" for case, values in speedups.items()),
              flush=True)
    for case, values in speedups.items():
        print(f"reference {args.repeat_task}/{case}: 5 runs, speedup {min(values):.3f}..{max(values):.3f},"
              f" spread max/min = {max(values) / min(values):.4f}")
    summary["repeat_spread"] = {case: max(v) / min(v) for case, v in speedups.items()}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2))
    return 0


def _built_from_lower_levels(row: dict) -> bool:
    """An L2/L3 row: its baseline is the composed module, or Inductor over it (since 2026-12-04)."""
    return (row.get("level") or 1) >= 2 or row.get("baseline_impl") == "composed"


def stitched_rows(runs: list[Path], standing: tuple[str, frozenset[str]] | None = None) -> dict[tuple, dict]:
    """(task, case) -> row over `runs`, the last run listed winning; with `standing` (an older harness digest, the
    tasks whose rows it made no longer stand) that digest's rows of those tasks are left out."""
    from fastkernels.artifacts import run_rows

    return {(row["task"], row["case"]): row for run in runs for row in run_rows(run)
            if not (standing and _digest(run) == standing[0] and row["task"] in standing[1])}


def _digest(run: Path) -> str:
    """The run's env.json `harness_sha256`, or "unknown"."""
    try:
        return json.loads((Path(run) / "env.json").read_text()).get("harness_sha256") or "unknown"
    except (OSError, ValueError):
        return "unknown"


def harness_note(runs: list[Path], standing: tuple[str, str, frozenset[str]] | None = None) -> str:
    """Which code made the runs' rows (env.json `harness_sha256`, first 12 digits): a pass stitched from runs at
    several digests says so, since its figures then describe no single harness, unless `standing` (REV, its digest,
    the tasks whose rows it made no longer stand) accounts for the older runs: their rows of the other tasks stand
    for this tree's harness, and only those were read."""
    digests: dict[str, int] = {}
    for run in runs:
        digest = _digest(run)
        digests[digest[:12]] = digests.get(digest[:12], 0) + 1
    if standing:
        revision, old, stale = standing
        from fastkernels.environment import harness_digest

        here = harness_digest(ROOT)["harness_sha256"][:12]
        if set(digests) <= {here, old[:12]}:
            return (f"harness {here} (this tree); {digests.get(old[:12], 0)} run(s) at {old[:12]} ({revision}) read"
                    f" for the tasks whose rows stand for it, all but {len(stale)}")
    if len(digests) == 1:
        return f"harness {next(iter(digests))} (every run's env.json)"
    listed = ", ".join(f"{digest} ({count} run{'s' if count > 1 else ''})" for digest, count in digests.items())
    return f"harnesses {listed}: a pass stitched across harness changes, whose figures describe no single harness"


if __name__ == "__main__":
    sys.exit(main())
