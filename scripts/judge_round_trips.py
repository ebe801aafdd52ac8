"""What the judge-held rechecks cost a timed candidate call: the seed asked before it and the decision after it,
two round trips over the judge's pipe (fastkernels/recheck_ledger.py), timed here against a live judge process;
and the baseline's call, which makes the same two trips (`unchecked_seed`, `unchecked_done`: checks.TimedRecheck).

Both happen outside the timed interval, so they cost wall time a call, not measured time. Run:
python scripts/judge_round_trips.py [--device cpu|cuda] [--calls N]
"""

from __future__ import annotations

import argparse
import statistics
import time

from fastkernels.config import TASKS_DIR
from fastkernels.judge import JudgeClient, JudgeSpec


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--case", default="cpu_small", help="an rms_norm case of the device's tier")
    args = parser.parse_args()
    judge = JudgeClient(JudgeSpec(str(TASKS_DIR), "rms_norm", args.device, 0, correctness_rounds=3))
    try:
        judge.start_case(args.case, atol=1e-2, rtol=1.6e-2)
        judge.settle()
        per_call = []
        for repeat in range(5):
            judge.start_recheck_batch(args.calls, 0, 0)  # no picks: the cost every timed call pays
            started = time.perf_counter()
            for index in range(args.calls):
                judge.issue_seed(index)
                judge.decide(index)
            per_call.append((time.perf_counter() - started) / args.calls * 1e6)
            judge.verify_rechecks()
        print(f"judge round trips a timed candidate call (seed + decision), {args.device}, {args.calls} calls x 5: "
              f"median {statistics.median(per_call):.1f} us, range {min(per_call):.1f}-{max(per_call):.1f} us")
        per_call = []
        for repeat in range(5):
            started = time.perf_counter()
            for _ in range(args.calls):
                judge.unchecked_seed()
                judge.unchecked_done()
            per_call.append((time.perf_counter() - started) / args.calls * 1e6)
        print(f"judge round trips a timed baseline call (the same two), {args.device}, {args.calls} calls x 5: "
              f"median {statistics.median(per_call):.1f} us, range {min(per_call):.1f}-{max(per_call):.1f} us")
    finally:
        judge.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
