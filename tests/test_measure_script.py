"""scripts/measure.py --noop-rows: the noop distribution of runs already made (a row over 2% is called systematic
when its interval excludes 1, noise otherwise), the same for graph-replay speedups, the device-sync lags the stream-escape check compared, and the
workers' own seconds per task-case from their logs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "measure.py"


def noop_rows(tmp_path: Path, *runs: str) -> str:
    """What `measure.py --parts none --noop-rows` prints for the runs tmp_path/RUN..., in that order."""
    return subprocess.run([sys.executable, str(SCRIPT), "--parts", "none", "--noop-rows",
                           *(str(tmp_path / run) for run in runs), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, check=True).stdout


def _row(task, case, speedup, ci, status="PASSED", lags=(0.008, 0.009)):
    return {"task": task, "case": case, "status": status, "speedup": speedup, "speedup_ci95": ci,
            "baseline_impl": "native", "baseline_ms": 0.010, "candidate_ms": 0.010, "samples": 1,
            "sync_lag_ms": list(lags)}


def test_the_lean_of_composed_rows_is_printed_beside_the_others(tmp_path):
    # composed L2/L3 rows replay many kernels: their lean is told apart (79% below 1 replayed on the H200, 2026-12-03);
    # an L2 row served by Inductor over the composed module is one of them
    workers = tmp_path / "run" / "workers"
    workers.mkdir(parents=True)
    rows = [_row("l2", "c0", 0.99, [0.98, 1.00]) | {"baseline_impl": "composed"},
            _row("l2", "c1", 0.98, [0.97, 0.99]) | {"baseline_impl": "torch_compile", "level": 2},
            _row("l1", "c0", 1.01, [1.00, 1.02]), _row("l1", "c1", 0.995, [0.99, 1.00])]
    (workers / "all.rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = noop_rows(tmp_path, "run")
    assert "  rows below 1: 3/4 (75%); geometric mean 0.9937 (binomial p 0.62)\n" \
           "    composed rows (L2/L3 built from lower-level baselines): 2/2 (100%); geometric mean 0.9850;" \
           " the others: 1/2 (50%); geometric mean 1.0025\n" in out


def test_the_lean_of_short_kernels_is_printed_beside_the_longer_ones(tmp_path):
    # replayed, the lean sat on kernels under 100 us (H200, 2026-12-03); the split reads each row's own baseline time
    workers = tmp_path / "run" / "workers"
    workers.mkdir(parents=True)
    rows = [_row("a", "c0", 0.99, [0.98, 1.00]) | {"graph_speedup": 0.98, "baseline_graph_ms": 0.02},
            _row("a", "c1", 1.01, [1.00, 1.02]) | {"graph_speedup": 1.01, "baseline_graph_ms": 0.5, "baseline_ms": 0.5}]
    (workers / "a.rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = noop_rows(tmp_path, "run")
    assert "    baseline under 100 us: 1/1 (100%); geometric mean 0.9900; 100 us or more: 0/1 (0%);" \
           " geometric mean 1.0100\n" in out
    assert "    baseline under 100 us: 1/1 (100%); geometric mean 0.9800; 100 us or more: 0/1 (0%);" \
           " geometric mean 1.0100\n" in out


def test_noop_rows_and_worker_time_of_a_cut_short_run(tmp_path):
    workers = tmp_path / "run" / "workers"
    workers.mkdir(parents=True)
    rows = {"a": [_row("a", "c0", 1.001, [0.99, 1.01]) | {"graph_speedup": 0.985, "graph_sync_lag_ms": [0.004, 0.006]},
                  _row("a", "c1", 1.05, [1.03, 1.07], lags=(0.010, 0.0065)) | {"graph_speedup": 1.004}],
            "b": [_row("b", "c0", 0.97, [0.90, 1.02]) | {"compile_s": {"native": 0.09, "candidate": 0.41}},
                  _row("b", "c1", 0.999, [0.99, 1.01]) | {"compile_s": {"native": 5.0, "candidate": 0.5}}]}
    for task, task_rows in rows.items():
        (workers / f"{task}.rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in task_rows))
    (workers / "a.log").write_text("[    1.00 s] torch imported\n[    4.00 s] case c0 PASSED\n[    6.00 s] case c1 PASSED\n")
    (workers / "b.log").write_text("[    1.00 s] torch imported\n[    2.00 s] case c0 PASSED\n"
                                   "[    8.00 s] b/c1: 1 baseline(s) checked (Inductor: native: fxgraph_cache_miss +1 (cold))\n"
                                   "[    9.00 s] b/c1: timed (50 pairs, 0.40 s of it judging rechecks, launch pad 4000 us)\n"
                                   "[    9.00 s] b/c1: graph replays timed (10 pairs, 0.30 s of it judging rechecks,"
                                   " launch pad 5000 us)\n"
                                   "[   10.00 s] case c1 PASSED\n")
    out = noop_rows(tmp_path, "run")
    # |1-s| = 0.001, 0.05, 0.03, 0.001: median 0.0155, max 0.05 (a/c1); two over 2%
    assert "noop: 4/4 rows PASSED over 2 tasks; median |1-s| = 0.0155, max |1-s| = 0.0500 (a/c1);" \
           " 2 rows over 2%, 2 over 1%" in out
    assert "a/c1 [native, 10.0 us]: 1.0500 [1.030, 1.070] systematic (interval excludes 1)" in out
    assert "b/c0 [native, 10.0 us, candidate's first call +0.41 s]: 0.9700 [0.900, 1.020] noise (interval holds 1)" \
        in out
    # a noop leans to neither side: 0.97 and 0.999 of the four below 1, geometric mean exp(mean log s)
    assert "  rows below 1: 2/4 (50%); geometric mean 1.0046 (binomial p 1)\n" in out
    # a noop's intervals should hold 1: a/c1's does not, and it is further than 1% from 1
    assert "95% intervals hold 1 on 3/4 rows (75.0%); further than 1% with 1 outside the interval: 1\n" \
           "    a/c1: 1.0500 [1.030, 1.070]" in out
    # graph replay, where the run timed it (two rows here): |1-s| = 0.015, 0.004
    assert "noop under graph replay: 2 rows; median |1-s| = 0.0095, max |1-s| = 0.0150 (a/c0); 0 rows over 2%," \
           " 1 over 1%" in out
    assert "  rows below 1: 1/2 (50%); geometric mean 0.9945 (binomial p 1)\n" in out
    # the stream-escape check's inputs: candidate - baseline lag per row = 1, -3.5, 1, 1 us
    assert "sync lag (60th percentile of calls) over 4 rows: baseline median 8.0 us; candidate - baseline:" \
           " median 1.0 us, max 1.0 us, min -3.5 us" in out
    assert "under graph replay, sync lag (60th percentile of calls) over 1 rows: baseline median 4.0 us;" \
           " candidate - baseline: median 2.0 us, max 2.0 us, min 2.0 us" in out
    assert "worker time: 16 s for 4 task-cases of 2 tasks = 4.0 s each; slowest: b 10 s, a 6 s" in out
    # the seconds before each line, by phase: a's cases took 3 + 2 s, b's 1 + (6 checking its baseline + 2), each
    # start-up 1 s; without the baseline check (where compiles land) the 4 cases took 10 s
    assert "by phase: case verdict 7 s, baseline checked 6 s, torch imported 2 s, timed 1 s" in out
    assert "of the timed phases, judging the rechecks: 0.7 s" in out  # 0.4 s eager, 0.3 s under graph replay
    # 50 pairs behind 4 ms: 0.4 s eager; 10 pairs behind 5 ms: 0.1 s replayed
    assert "spinning launch pads (pairs x 2 x the case's final pad): eager 0.4 s, graph replays 0.1 s" in out
    # per case, eager only: where each case's pad settled, and what it cost
    assert "eager launch pads over 1 task-cases: median final pad 4000 us, 1 at 1600 us or more; costliest: b/c1 0.4 s" \
           " (4000 us)" in out
    assert "without the baseline checks (first compiles and autotuning, and the baselines' correctness rounds): " \
           "2.5 s each" in out
    # b's rows say 6 s of it went to first calls beyond a steady call: (16 - 6) / 4 cases
    assert "compile time (first calls beyond the quickest later call, 2 rows): 6 s; harness overhead without it:" \
           " 2.50 s per task-case" in out
    # a: 6 s over 2 cases; b: 10 s less its 6 s of compiles over 2 cases
    assert "costliest tasks without compile time, a task-case: a 3.0 s, b 2.0 s" in out
    # 4 rows of one pair each at 0.010 ms a side (_row's samples): 0.08 ms of kernels
    assert "the kernels' own time in the eager timed calls (samples x both medians): 0 s, 0.00 s per task-case" in out
    # b/c1's eager timed phase: 1 s, of it 0.4 s rechecks (the graph replays' 0.3 s are not in it); 8 calls in the
    # four rows: (1 - 0.4 - 0.00008) / 8
    assert "eager timing's own cost per timed call (the phase less its rechecks and the kernels; warm-ups included):" \
           " 74.99 ms over 8 calls" in out


def test_a_task_case_re_run_later_counts_once_from_the_last_run_listed(tmp_path):
    for run, speedup in (("first", 1.08), ("rerun", 1.002)):
        (tmp_path / run).mkdir()
        (tmp_path / run / "results.jsonl").write_text(
            json.dumps(_row("a", "c0", speedup, [speedup - 0.01, speedup + 0.01])) + "\n"
            + (json.dumps(_row("b", "c0", 0.995, [0.99, 1.0])) + "\n" if run == "first" else ""))
    out = noop_rows(tmp_path, "first", "rerun")
    assert "noop: 2/2 rows PASSED over 2 tasks; median |1-s| = 0.0035, max |1-s| = 0.0050 (b/c0);" in out


def test_a_task_re_run_later_takes_its_worker_time_from_the_same_run_as_its_rows(tmp_path):
    # a cold first run (9 s, 8 of them compiling) and a warm re-run (3 s, 1 compiling): the overhead must pair the
    # re-run's log with the re-run's compile seconds, not the cold log with the warm rows
    for run, seconds, compile_s in (("cold", 9.0, 8.0), ("warm", 3.0, 1.0)):
        workers = tmp_path / run / "workers"
        workers.mkdir(parents=True)
        row = _row("a", "c0", 1.0, [0.99, 1.01]) | {"compile_s": {"native": compile_s, "candidate": 0.0}}
        (workers / "a.rows.jsonl").write_text(json.dumps(row) + "\n")
        (workers / "a.log").write_text(f"[    0.50 s] torch imported\n[{seconds:8.2f} s] case c0 PASSED\n")
    out = noop_rows(tmp_path, "cold", "warm")
    assert "worker time: 3 s for 1 task-cases of 1 tasks = 3.0 s each" in out
    assert "compile time (first calls beyond the quickest later call, 1 rows): 1 s; harness overhead without it:" \
           " 2.00 s per task-case" in out


def test_each_lanes_fork_server_start_up_is_counted_apart(tmp_path):
    # the first task on a lane waits ~10 s for its fork server; a task forked from a running one logs at once
    for run in ("one", "two"):
        workers = tmp_path / run / "workers"
        workers.mkdir(parents=True)
        for task, first in ((f"{run}_a", 10.50), (f"{run}_b", 0.03)):
            (workers / f"{task}.rows.jsonl").write_text(json.dumps(_row(task, "c0", 1.0, [0.99, 1.01])) + "\n")
            (workers / f"{task}.log").write_text(f"[{first:8.2f} s] torch imported (16 CPU threads)\n"
                                                 f"[{first + 2:8.2f} s] case c0 PASSED\n")
    out = noop_rows(tmp_path, "one", "two")
    assert "worker start-ups (a fork server importing torch and the kernel libraries, once a lane and run): 2, 21.0 s" \
        in out


def test_a_pass_stitched_from_runs_also_reports_its_overhead_with_one_start_up(tmp_path):
    # two runs, each paying its fork server (10.5 and 12.5 s); the rows say 1 s of first compiles per task
    for run, first in (("one", 10.50), ("two", 12.50)):
        workers = tmp_path / run / "workers"
        workers.mkdir(parents=True)
        task = f"{run}_a"
        row = _row(task, "c0", 1.0, [0.99, 1.01]) | {"compile_s": {"native": 1.0, "candidate": 0.0}}
        (workers / f"{task}.rows.jsonl").write_text(json.dumps(row) + "\n")
        (workers / f"{task}.log").write_text(f"[{first:8.2f} s] torch imported (16 CPU threads)\n"
                                             f"[{first + 3:8.2f} s] case c0 PASSED\n")
    out = noop_rows(tmp_path, "one", "two")
    # worker time 13.5 + 15.5 = 29 s, less 2 s compiling: 13.5 s a case; less the shorter start-up: (27 - 10.5) / 2
    assert "harness overhead without it: 13.50 s per task-case" in out
    assert "the same with one start-up (the longest), as one run on one lane pays it: 8.25 s per task-case" in out


def test_graph_captures_raised_are_counted_per_task_case_with_the_count_they_ended_at(tmp_path):
    workers = tmp_path / "run" / "workers"
    workers.mkdir(parents=True)
    (workers / "a.rows.jsonl").write_text("".join(json.dumps(_row("a", case, 1.0, [0.99, 1.01])) + "\n"
                                                  for case in ("c0", "c1", "c2")))
    (workers / "a.log").write_text(
        "[    1.00 s] torch imported\n"
        "[    2.00 s] a/c0: graph replays timed (50 pairs, 0.10 s of it judging rechecks, launch pad 100 us)\n"
        "[    2.10 s] a/c0: graph captures raised to 16 a side (the interval was +-2.7% over 8)\n"
        "[    3.00 s] a/c0: graph replays timed (50 pairs, 0.10 s of it judging rechecks, launch pad 100 us)\n"
        "[    3.10 s] a/c0: graph captures raised to 32 a side (the interval was +-1.9% over 16)\n"
        "[    4.00 s] a/c0: graph replays timed (50 pairs, 0.10 s of it judging rechecks, launch pad 100 us)\n"
        "[    4.10 s] case c0 PASSED\n"
        "[    5.00 s] a/c1: graph captures raised to 16 a side (the interval was +-1.2% over 8)\n"
        "[    5.50 s] case c1 PASSED\n[    6.00 s] case c2 PASSED\n")
    out = noop_rows(tmp_path, "run")
    assert "graph captures raised on 2 task-cases (the interval wider than the target), ending at 16 a side on 1," \
           " 32 a side on 1: a/c0, a/c1" in out
    assert "graph captures raised 1 s" in out  # 0.1 + 0.1 + 0.9 s before the three lines, one phase


def test_eager_launches_tell_a_host_slow_on_every_call_from_one_late_on_a_few(tmp_path):
    workers = tmp_path / "run" / "workers"
    workers.mkdir(parents=True)
    (workers / "a.rows.jsonl").write_text("".join(json.dumps(_row("a", case, 1.0, [0.99, 1.01])) + "\n"
                                                  for case in ("slow", "late", "short")))
    timed = "timed (50 pairs, 0.01 s of it judging rechecks, launch pad {pad} us, launches {median} us median," \
            " {tail} us p99, {most} us max over 120 calls, 4 timed again)"
    (workers / "a.log").write_text(
        "[    1.00 s] torch imported\n"
        f"[    2.00 s] a/slow: {timed.format(pad=1600, median=900, tail=1200, most=1230)}\n"
        "[    2.10 s] case slow PASSED\n"
        f"[    3.00 s] a/late: {timed.format(pad=3200, median=400, tail=2500, most=2600)}\n"
        "[    3.10 s] case late PASSED\n"
        f"[    4.00 s] a/short: {timed.format(pad=100, median=30, tail=70, most=80)}\n"
        "[    4.10 s] case short PASSED\n")
    out = noop_rows(tmp_path, "run")
    # medians 30, 400, 900 and p99s 70, 1200, 2500: the middle ones; slow's median launch (900 us) is over half its
    # 1600 us pad, late's (400 us) under half its 3200 us pad, short's pad is below 1600 us and not counted
    assert "eager launches (host time to queue one timed call) over 3 task-cases: median of the medians 400 us, of" \
           " the p99s 1200 us; of the 2 pads at 1600 us or more, 1 on a host slow on every call (median launch at" \
           " least half the pad), 1 on a few late launches" in out


def test_the_summary_names_the_harness_digest_its_runs_were_made_at_and_says_when_they_differ(tmp_path):
    for run, digest in (("one", "7fe74853eb19" + "0" * 52), ("two", "7fe74853eb19" + "0" * 52),
                        ("three", "227a92e760a5" + "1" * 52)):
        workers = tmp_path / run / "workers"
        workers.mkdir(parents=True)
        (workers / f"t{run}.rows.jsonl").write_text(json.dumps(_row(f"t{run}", "c0", 1.0, [0.99, 1.01])) + "\n")
        (tmp_path / run / "env.json").write_text(json.dumps({"harness_sha256": digest}))
    assert "harness 7fe74853eb19 (every run's env.json)" in noop_rows(tmp_path, "one", "two")
    stitched = noop_rows(tmp_path, "one", "two", "three")
    assert "harnesses 7fe74853eb19 (2 runs), 227a92e760a5 (1 run): a pass stitched across harness changes" in stitched


def test_two_passes_are_compared_on_the_tasks_they_share(tmp_path):
    for run, tasks in (("this", ("a", "b")), ("other", ("b", "c"))):
        workers = tmp_path / run / "workers"
        workers.mkdir(parents=True)
        for task in tasks:
            (workers / f"{task}.rows.jsonl").write_text(json.dumps(_row(task, "c0", 1.0, [0.99, 1.01])) + "\n")
            (workers / f"{task}.log").write_text("[    1.00 s] torch imported\n[    3.00 s] case c0 PASSED\n")
    out = subprocess.run([sys.executable, str(SCRIPT), "--parts", "none", "--noop-rows", str(tmp_path / "this"),
                          "--only-tasks-of", str(tmp_path / "other"), "--out", str(tmp_path / "out")],
                         capture_output=True, text=True, check=True).stdout
    assert "only the 2 tasks of 1 other run(s)" in out
    assert "noop: 1/1 rows PASSED over 1 tasks" in out  # task b alone: a is not in the other run
    assert "worker time: 3 s for 1 task-cases of 1 tasks" in out


def test_the_lean_of_tasks_with_weights_is_printed_beside_that_of_tasks_without(tmp_path):
    # where an instance's weights land was a suspect of the lean; a task's module is asked whether it holds any
    # (rms_norm holds its scale, silu_and_mul none), and a task this checkout lacks is left out of the split
    workers = tmp_path / "run" / "workers"
    workers.mkdir(parents=True)
    rows = [_row("rms_norm", "c0", 0.99, [0.98, 1.00]), _row("rms_norm", "c1", 1.01, [1.00, 1.02]),
            _row("silu_and_mul", "c0", 0.98, [0.97, 0.99]), _row("no_such_task", "c0", 0.97, [0.96, 0.98])]
    (workers / "all.rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = noop_rows(tmp_path, "run")
    assert "    tasks with weights: 1/2 (50%); geometric mean 0.9999; without: 1/1 (100%); geometric mean 0.9800\n" \
        in out, out


def test_a_pass_stitched_across_a_task_local_change_reads_the_older_runs_only_for_the_tasks_that_stand(tmp_path):
    sys.path.insert(0, str(SCRIPT.parent))
    import measure
    from fastkernels.environment import harness_digest

    here, old = harness_digest(SCRIPT.parent.parent)["harness_sha256"], "0ld0" * 16
    for run, digest, rows in (("before", old, [("a", "c0"), ("a", "c1"), ("b", "c0")]), ("after", here, [("a", "c0")])):
        workers = tmp_path / run / "workers"
        workers.mkdir(parents=True)
        (workers / "all.rows.jsonl").write_text("".join(json.dumps(_row(t, c, 1.0, [0.99, 1.01])) + "\n"
                                                        for t, c in rows))
        (tmp_path / run / "env.json").write_text(json.dumps({"harness_sha256": digest}))
    runs = [tmp_path / "before", tmp_path / "after"]
    # task a changed in code since REV: its older rows are out, the case the new run lacks (a/c1) included
    assert set(measure.stitched_rows(runs, (old, frozenset({"a"})))) == {("a", "c0"), ("b", "c0")}
    assert set(measure.stitched_rows(runs)) == {("a", "c0"), ("a", "c1"), ("b", "c0")}
    note = measure.harness_note(runs, ("5bf55bf", old, frozenset({"a"})))
    assert note == (f"harness {here[:12]} (this tree); 1 run(s) at {old[:12]} (5bf55bf) read for the tasks whose rows"
                    " stand for it, all but 1")


def test_standing_from_without_noop_rows_is_a_one_line_error(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--parts", "none", "--standing-from", "HEAD", "--out",
                           str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 2 and "--standing-from says which runs of --noop-rows to read" in done.stderr
