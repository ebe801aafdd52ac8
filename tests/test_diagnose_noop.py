"""scripts/diagnose_noop.py times one implementation against itself eight ways (same instance, the same with inputs
refilled before every call, the same with pair orders drawn as the harness draws them, two instances, roles swapped,
a fresh instance, one instance's weights moved, two instances under the harness's conditions) and, with --lottery K,
K more instances against the first, with the harness's clock and estimator, after saying how long each instance's
first call took and what Inductor's caches did meanwhile; here on a CPU case, where it must run
end to end and report an interval around each speedup."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "diagnose_noop.py"


def test_the_eight_comparisons_and_the_lottery_each_report_a_speedup_inside_its_interval():
    result = subprocess.run([sys.executable, str(SCRIPT), "silu_and_mul", "cpu_odd", "--iterations", "12",
                             "--lottery", "2"], capture_output=True, text=True, timeout=300, check=True)
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if " speedup " in line}
    assert set(lines) == {"same", "refilled", "drawn", "instances", "swapped", "fresh", "relocated", "harness",
                          "lottery0", "lottery1"}
    for line in lines.values():
        speedup, low, high = map(float, re.search(r"speedup (\S+) \[(\S+), (\S+)\]", line).groups())
        assert low <= speedup <= high
        if not line.startswith(("drawn", "harness", "lottery")):  # strict alternation: the median call time at each place of the four
            assert re.search(r"calls by position in each four: [\d.]+ [\d.]+ [\d.]+ [\d.]+ us$", line)
    firsts = re.findall(r"^first call (\S+) +\((\w+)\): [\d.]+ s; inductor counters ", result.stdout, re.MULTILINE)
    assert [who for who, _ in firsts] == ["A", "B", "C", "D0", "D1"]
    draws = [float(re.search(r"speedup (\S+) ", lines[f"lottery{k}"]).group(1)) for k in range(2)]
    assert f"lottery: 2 instances against A, speedups {min(draws):.4f}..{max(draws):.4f}" in result.stdout


def test_kernels_profiles_both_instances_and_lists_each_kernels_time_side_by_side():
    result = subprocess.run([sys.executable, str(SCRIPT), "silu_and_mul", "cpu_odd", "--iterations", "6",
                             "--kernels", "3"], capture_output=True, text=True, timeout=300, check=True)
    header = re.search(r"^kernels over 3 calls a side \(own CPU us a call; A total ([\d.]+), B total ([\d.]+)\), "
                       r"largest difference first:$", result.stdout, re.MULTILINE)
    assert header and float(header.group(1)) > 0 and float(header.group(2)) > 0, result.stdout
    rows = re.findall(r"^  kernel +([\d.]+) +([\d.]+) +(\S+)  (\S.*)$", result.stdout, re.MULTILINE)
    assert rows and any("aten::" in name for *_, name in rows), result.stdout


def test_judge_paths_times_the_harness_loop_four_ways_and_summarises_each():
    # scripts/judge_paths.py: the judge in its own process, in this process, in this process without copies,
    # without picks, and with the roles swapped (the baseline's instance checked);
    # here with the instances built the other way round and the candidate listed first, which the header says
    script = SCRIPT.parent / "judge_paths.py"
    result = subprocess.run([sys.executable, str(script), "silu_and_mul", "cpu_odd", "--repeat", "1",
                             "--iterations", "6", "--max-iterations", "24", "--build-order", "ba",
                             "--candidate-first"],
                            capture_output=True, text=True, timeout=300, check=True)
    assert "; built ba; candidate listed first" in result.stdout, result.stdout
    rows = re.findall(r"^round 0 eager (\S+) +speedup (\S+) \[(\S+), (\S+)\]$", result.stdout, re.MULTILINE)
    assert [variant for variant, *_ in rows] == ["judged", "in-process", "no-copies", "no-picks", "swapped"], \
        result.stdout
    for _, speedup, low, high in rows:
        assert float(low) <= float(speedup) <= float(high)
    assert len(re.findall(r"^eager (judged|in-process|no-copies|no-picks|swapped) +median speedup [\d.]+ over 1 rounds",
                          result.stdout, re.MULTILINE)) == 5
    # judged against every other variant within the process, swapped among them: the checked role played by each
    # instance in turn
    compared = re.findall(r"^eager judged/(\S+) per round: mean [+-][\d.]+%, below 1 in [01] of 1 rounds$",
                          result.stdout, re.MULTILINE)
    assert compared == ["in-process", "no-copies", "no-picks", "swapped"], result.stdout


def test_judge_paths_runs_only_the_variants_asked_for_and_names_an_unknown_one():
    script = SCRIPT.parent / "judge_paths.py"
    result = subprocess.run([sys.executable, str(script), "silu_and_mul", "cpu_odd", "--repeat", "1",
                             "--iterations", "6", "--max-iterations", "12", "--variants", "no-picks"],
                            capture_output=True, text=True, timeout=300, check=True)
    assert re.findall(r"^round 0 eager (\S+) ", result.stdout, re.MULTILINE) == ["no-picks"], result.stdout
    refused = subprocess.run([sys.executable, str(script), "silu_and_mul", "cpu_odd", "--variants", "judged,nope"],
                             capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "--variants: unknown nope" in refused.stderr


def test_a_capture_index_speedup_takes_only_the_iterations_that_replayed_that_capture():
    sys.path.insert(0, str(SCRIPT.parent))
    from judge_paths import capture_speedups

    from fastkernels.records import CallTimes

    # two captures a side: iterations 0, 2, 4 replayed capture 0 (candidate 2x faster), 1, 3, 5 capture 1 (even)
    times = CallTimes(baseline_ms=[2.0, 1.0, 2.0, 1.0, 2.0, 1.0], candidate_ms=[1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                      first=["baseline"] * 6, rechecked=[], input_sets=2)
    assert capture_speedups(times) == [2.0, 1.0]


def test_judge_paths_summarizes_earlier_output_round_by_round_and_needs_a_case_otherwise(tmp_path):
    script = SCRIPT.parent / "judge_paths.py"
    log = tmp_path / "run.txt"
    log.write_text("header\nround 0 graph judged     speedup 0.9900 [0.98, 1.00]\n"
                   "round 0 graph no-picks   speedup 1.0000 [0.99, 1.01]\n"
                   "round 1 graph judged     speedup 1.0000 [0.99, 1.01]\n"
                   "round 1 graph no-picks   speedup 0.9950 [0.98, 1.00]\n")
    result = subprocess.run([sys.executable, str(script), "--summarize", str(log)], capture_output=True, text=True,
                            timeout=300, check=True)
    # log(0.99) + log(1/0.995), halved: -0.25%; one round of two below 1
    assert result.stdout == f"{log}:\n  graph judged/no-picks per round: mean -0.25%, below 1 in 1 of 2 rounds\n"
    refused = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "TASK and CASE are required (unless --summarize)" in refused.stderr
