"""Does the judge's path around timed calls bias a noop comparison? Times one implementation against a second
instance of it with the harness's own timing loop (checks.time_rechecked: fresh inputs from seeds, the judge's round
trips before and after every call, picked candidate outputs handed in and judged per batch), five ways:

  judged       the judge in its own process, as the harness runs: round trips over a pipe, a picked output copied
               and sent through CUDA IPC (shared memory on the CPU), where the judge clones it and synchronises
  in-process   the same requests served in this process: no second process, no IPC; a picked output still copied
  no-copies    in this process, and a picked output kept by reference, never copied (its verdict is not asked:
               the reference no longer holds that call's output by the batch's end)
  no-picks     in this process, and no call picked at all (the batch's picks are answered as taken): the
               candidate's calls then differ from the baseline's only in which ledger request draws their seed
  swapped      as judged, with the instances' roles swapped: the baseline's instance is the checked one (its calls
               picked and handed to the judge), and the speedup is turned round so that it still reads the
               baseline's instance's time over the candidate's. A process draws its pair's speed ratio, but every
               variant of one process shares that draw, so judged against swapped, round by round, tells whether
               being the checked side (the picks, the hand-in through CUDA IPC) slows a side: it would read below 1
               judged and above 1 swapped. The instances keep their order in every variant; only the roles move

and, on a GPU, the same over CUDA-graph replays (graphs.graph_fields, `graph_captures` captures a side), the
path where linear/llama31_8b_qkv_decode_1 reads 0.975-0.99 in 13 of 15 noop passes while 16 captures of two
instances replayed without the judge agree within 0.6% (H200, 2026-12-03; docs/measurement.md). The variants run in
turn, `--repeat` rounds, so drift hits each alike; a variant whose speedups sit below 1 where the others do not names
what in the judge's path does it. Noop passes since the judge took the rechecks (twenty-seventh session) read below 1
in 55-64% of their rows, against 48-49% before.

Two switches separate an instance from its role. `--build-order ba` builds the candidate side's instance first;
`--candidate-first` lists the candidate first wherever the harness takes the order of its sides (warm-ups, the
first capture round, the names a pair's order is drawn from). Read them against the draw each process makes: on the
H200 (2026-12-03) one linear decode GEMV pair, always built ab, read 0.992-1.014 eager and 0.999-1.010 replayed in
the three processes that listed the baseline first (0.988-1.014 and 0.991-1.010 over all six), each process's rounds
within a few tenths of a percent of each other, so one process per setting says nothing about the setting (the
thirty-first session's 1.011 built ab against 0.994 ba was such a pair).
Listed candidate first, linear's replayed speedup went down in three of four pairs of processes and vit_attention's
(siglip_so400m_1_image) up in both of its pairs: no order effect that holds across cases.

`--per-capture` prints, for every replayed variant, the speedup of each capture index alone: captures come in rounds
whose order turns round every round (graphs._capture_all: A0 B0 B1 A1 ...), so a lean that sits on the captures of
one round parity, or on the very first capture of all, shows there and not in the others.

Usage: python scripts/judge_paths.py TASK CASE [--repeat 3] [--iterations 50] [--max-iterations N] [--impl NAME]
       [--build-order ab|ba] [--candidate-first] [--paths eager,graph] [--variants judged,...] [--per-capture]
       python scripts/judge_paths.py --summarize LOG ...   (judged against the other variants, from earlier output)
(on the CPU: a cpu case, the eager path only, with the host clock)
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

# ask NVML whether a GPU exists, as the worker does (launch.py): the driver's own count would poison fork, and the
# judge is forked before this process touches the GPU ("Cannot re-initialize CUDA in forked subprocess", H200,
# 2026-12-03)
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
import torch  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fastkernels import checks  # noqa: E402
from fastkernels.build import build, reference_state  # noqa: E402
from fastkernels.cache import cache_flush  # noqa: E402
from fastkernels.checks import TimedRecheck, time_rechecked  # noqa: E402
from fastkernels.config import HarnessConfig  # noqa: E402
from fastkernels.inputs import generator, make_inputs, redrawn_inputs, stream_seed  # noqa: E402
from fastkernels.judge import JudgeClient, JudgeSpec  # noqa: E402
from fastkernels.recheck_in_process import InProcessRecheckJudge  # noqa: E402
from fastkernels.registry import Registry  # noqa: E402
from fastkernels.timing import CudaEventClock, HostClock, paired_speedup, speedup_ci95  # noqa: E402

sys.path.insert(0, str(ROOT / "scripts"))
from diagnose_noop import chosen_case  # noqa: E402

VARIANTS = ("judged", "in-process", "no-copies", "no-picks", "swapped")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", nargs="?")
    parser.add_argument("case", nargs="?")
    parser.add_argument("--impl", help="production implementation (default: the first available)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the variants")
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--max-iterations", type=int,
                        help="the adaptive repetition's cap (default: the harness's, 3200 on a GPU, 200 on the CPU)")
    parser.add_argument("--build-order", choices=("ab", "ba"), default="ab",
                        help="ba builds the candidate side's instance first: does a lean follow the build order?")
    parser.add_argument("--candidate-first", action="store_true",
                        help="list the candidate side first: does a lean follow the order of the sides?")
    parser.add_argument("--paths", default="eager,graph", help="comma-separated: eager, graph (graph on a GPU only)")
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of {', '.join(VARIANTS)}")
    parser.add_argument("--per-capture", action="store_true",
                        help="print each capture index's own speedup under replay (keeps the call times)")
    parser.add_argument("--summarize", nargs="+", type=Path, metavar="LOG",
                        help="time nothing: read the `round ...` lines of earlier runs' output and print, per file,"
                             " judged against each other variant round by round")
    args = parser.parse_args(argv)
    if args.summarize:
        for log in args.summarize:
            try:
                lines = against_judged(rounds_in(log.read_text()))
            except OSError as error:
                parser.error(f"--summarize: {error}")
            print(f"{log}:" + "".join(f"\n  {line}" for line in lines or ["no rounds of judged and another variant"]))
        return 0
    if args.task is None or args.case is None:
        parser.error("TASK and CASE are required (unless --summarize)")
    variants = [name for name in args.variants.split(",") if name]
    if unknown := set(variants) - set(VARIANTS):
        parser.error(f"--variants: unknown {', '.join(sorted(unknown))} (one of {', '.join(VARIANTS)})")
    wanted_paths = [name for name in args.paths.split(",") if name]
    if unknown := set(wanted_paths) - {"eager", "graph"}:
        parser.error(f"--paths: unknown {', '.join(sorted(unknown))} (eager, graph)")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    settings = OmegaConf.to_container(OmegaConf.load(ROOT / "conf" / "harness" / "default.yaml"), resolve=True)
    if args.max_iterations is not None:
        settings["max_iterations"] = args.max_iterations
    if args.per_capture:
        settings["keep_call_times"] = True
    harness = HarnessConfig(**settings)
    plan, impl, case = chosen_case(parser, args, device)
    manifest = plan.manifest
    tolerance = manifest.tolerance.get(case.dtype) or harness.tolerance[case.dtype]
    # the judge first, as the worker starts it (forked while this process has not touched the GPU)
    judge = JudgeClient(JudgeSpec(str(Registry().root), manifest.name, device, harness.seed, harness.correctness_rounds))
    judge.start_case(case.name, tolerance.atol, tolerance.rtol, manifest.output_tolerances(case.dtype))
    state = reference_state(manifest, case, plan.eager.cls, plan.eager.components, device, harness.seed)
    if args.build_order == "ab":
        a = build(impl.cls, case, impl.components, state, device, "A")
        b = build(impl.cls, case, impl.components, state, device, "B")
    else:
        b = build(impl.cls, case, impl.components, state, device, "B")
        a = build(impl.cls, case, impl.components, state, device, "A")
    sets = [make_inputs(manifest, case, device, generator(device, stream_seed(0, manifest.name, case.name, "timing", k)))
            for k in range(4)]
    with torch.no_grad():
        a(**sets[0]), b(**sets[0])
    if device == "cuda":
        clock: Any = CudaEventClock(harness.launch_pad_us, harness.launch_pad_max_us, harness.launch_pad_decay_after)
    else:
        clock = HostClock(None)
    sides = {"candidate": b, "baseline": a} if args.candidate_first else {"baseline": a, "candidate": b}
    flush, note = cache_flush(device, 60.0 if device == "cuda" else 32.0)
    print(f"{manifest.name}/{case.name} impl {impl.name} on {device} ({clock.name}; {note}); {args.repeat} rounds of"
          f" {', '.join(variants)}; built {args.build_order}; {next(iter(sides))} listed first", flush=True)

    def named(variant: str) -> dict[str, Any]:
        """The sides as the harness names them: `swapped` gives the baseline's instance the checked role."""
        if variant != "swapped":
            return sides
        return {("candidate" if module is a else "baseline"): module for module in sides.values()}

    def oriented(variant: str, speedup: float, low: float, high: float) -> tuple[float, float, float]:
        """The speedup as the baseline's instance's time over the candidate's, whichever role each played."""
        return (1 / speedup, 1 / high, 1 / low) if variant == "swapped" else (speedup, low, high)

    def ledger_for(variant: str) -> tuple[Any, Callable[[Any, Any], Any]]:
        if variant in ("judged", "swapped"):
            return judge, judge.judge_fresh
        rebuild = lambda seed: redrawn_inputs(manifest, case, sets[0], generator(device, seed))  # noqa: E731
        kind = _NoPicks if variant == "no-picks" else InProcessRecheckJudge
        return kind(judge.judge_fresh, rebuild, copies=variant == "in-process"), judge.judge_fresh

    def eager(variant: str) -> tuple[float, float, float]:
        ledger, judge_fresh = ledger_for(variant)
        recheck = TimedRecheck(manifest, case, device, args.iterations, harness.rechecks, flush, ledger)
        calls = {name: (lambda inputs, m=module: m(**inputs)) for name, module in named(variant).items()}
        with torch.no_grad(), _copies(variant not in ("no-copies", "no-picks")):
            samples, _, _ = time_rechecked(calls, sets, clock, recheck, judge_fresh, harness, device, harness.warmup,
                                           args.iterations, f"paths/{variant}", recheck.prepare, recheck.observe)
        low, high = speedup_ci95(samples["baseline"], samples["candidate"], clusters=len(sets))
        return oriented(variant, paired_speedup(samples["baseline"], samples["candidate"]), low, high)

    def graphs(variant: str) -> tuple[float, float, float]:
        from fastkernels.graphs import graph_fields

        ledger, judge_fresh = ledger_for(variant)
        with torch.no_grad(), _copies(variant not in ("no-copies", "no-picks")):
            fields = graph_fields(manifest, case, dict(named(variant)), sets[0], judge_fresh, ledger,
                                  clock, flush, harness.warmup, args.iterations, harness)
        if "graph_speedup" not in fields:
            raise SystemExit(f"not capturable: {fields.get('graph_note')}")
        if args.per_capture:
            per_capture = [oriented(variant, value, value, value)[0]
                           for value in capture_speedups(fields["graph_call_times"])]
            for index, speedup in enumerate(per_capture):
                by_capture.setdefault((variant, index), []).append(speedup)
            print(f"  {variant} per capture: " + " ".join(f"{value:.4f}" for value in per_capture), flush=True)
        return oriented(variant, fields["graph_speedup"], *fields["graph_speedup_ci95"])

    by_capture: dict[tuple[str, int], list[float]] = {}
    paths = {name: path for name, path in (("eager", eager), ("graph", graphs))
             if name in wanted_paths and (name == "eager" or device == "cuda")}
    speedups: dict[tuple[str, str], list[float]] = {}
    for round_ in range(args.repeat):
        for path, timed in paths.items():
            for variant in variants:
                speedup, low, high = timed(variant)
                speedups.setdefault((path, variant), []).append(speedup)
                print(f"round {round_} {path:5s} {variant:10s} speedup {speedup:.4f} [{low:.4f}, {high:.4f}]",
                      flush=True)
    for (path, variant), values in speedups.items():
        print(f"{path:5s} {variant:10s} median speedup {float(np.median(values)):.4f} over {len(values)} rounds"
              f" ({min(values):.4f}..{max(values):.4f})")
    for line in against_judged(speedups):
        print(line)
    for (variant, index), values in sorted(by_capture.items()):
        print(f"graph {variant:10s} capture {index:2d} ({'first' if index % 2 == 0 else 'second'}-listed side captured"
              f" first) geometric mean speedup {float(np.exp(np.mean(np.log(values)))):.4f} over {len(values)} rounds")
    judge.close()
    return 0


ROUND_LINE = re.compile(r"^round (\d+) (eager|graph) (\S+) +speedup (\S+)", re.MULTILINE)


def rounds_in(output: str) -> dict[tuple[str, str], list[float]]:
    """(path, variant) -> the speedup of each round, from this script's `round ...` output lines."""
    speedups: dict[tuple[str, str], list[float]] = {}
    for match in ROUND_LINE.finditer(output):
        speedups.setdefault((match[2], match[3]), []).append(float(match[4]))
    return speedups


def against_judged(speedups: dict[tuple[str, str], list[float]]) -> list[str]:
    """Per path, `judged` against each other variant round by round: the variants of one process share its draw of
    the pair's speed ratio, so only their ratio within a round says what the variant changed. Below 1 means the
    candidate side reads slower judged; against `swapped`, that the checked role slows its side."""
    lines = []
    for (path, variant), values in speedups.items():
        judged = speedups.get((path, "judged"), [])
        if variant == "judged" or not judged:
            continue
        logs = [float(np.log(x / y)) for x, y in zip(judged, values)]
        lines.append(f"{path:5s} judged/{variant} per round: mean {100 * float(np.mean(logs)):+.2f}%, below 1 in"
                     f" {sum(value < 0 for value in logs)} of {len(logs)} rounds")
    return lines


def capture_speedups(times: Any) -> list[float]:
    """Each capture index's own speedup: the median of baseline/candidate over the iterations that replayed it
    (iteration i replays capture i mod `input_sets` of both sides)."""
    ratios: list[list[float]] = [[] for _ in range(times.input_sets)]
    for index, (base, cand) in enumerate(zip(times.baseline_ms, times.candidate_ms)):
        ratios[index % times.input_sets].append(base / cand)
    return [float(np.median(values)) if values else float("nan") for values in ratios]


class _NoPicks(InProcessRecheckJudge):
    """Never picks a call, and answers every batch's picks as taken and every account as adding up: a diagnosis of
    the timing loop with the checked side's picks taken out, never a check of anything."""

    def decide(self, index: int) -> bool:
        return False

    def verify_rechecks(self) -> tuple[int, int, list[tuple[int, int, Any]]]:
        self.ledger.close_batch()
        return 0, 1 << 30, []

    def recheck_accounts(self, checked: bool) -> list[str]:
        self.ledger.accounts(checked)
        return []


class _copies:
    """With `on` False, the worker's own copy of a picked output (checks._detach_clone, for the second look) is not
    made either, for the block's duration."""

    def __init__(self, on: bool) -> None:
        self.on, self.saved = on, checks._detach_clone

    def __enter__(self) -> None:
        if not self.on:
            checks._detach_clone = lambda output: output

    def __exit__(self, *_: Any) -> None:
        checks._detach_clone = self.saved


if __name__ == "__main__":
    sys.exit(main())
