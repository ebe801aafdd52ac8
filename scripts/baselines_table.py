"""How strong the production baselines are: docs/baselines.md's table, from the rows of H200 runs.

For every (task, case) row with a baseline time it prints the production baseline's time and implementation, the eager
module's time (runs with harness.time_eager=true record it under baseline_alternatives.eager), and the fraction of the
physical limit the baseline reaches: max(bytes / measured copy bandwidth, FLOPs / measured bf16 GEMM rate) over its
time. Rows timed with harness.cuda_graphs=true also carry the baseline's CUDA-graph replay time, which leaves out the
host's launch overhead (how a serving engine runs decode-size kernels); its fraction of the limit is printed beside.
Below 50% a baseline is marked weak, with the reason given in WEAK_REASONS (per task, written by whoever
analysed it) or, where the limit is under LAUNCH_BOUND_US, that the case is launch/latency bound.

Usage: python scripts/baselines_table.py --copy-gbs 4153.8 --gemm-tflops 771.6 RUN_DIR [RUN_DIR ...] > table.md
(a run directory's rows are read from results.jsonl, or from workers/*.rows.jsonl when the run was cut short). The
first run listed that has a case gives its production row; its eager time comes from the first run listed that
timed the eager module for that case (it does not depend on which production implementation served), else, with
--eager-from TABLE.md, from an earlier table's `eager µs` column, marked † (a run that timed the eager module is
gone, its table is not).
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from fastkernels.artifacts import run_rows

CARRIED = "†"

LAUNCH_BOUND_US = 5.0
WEAK_REASONS = {
    "group_norm": "PyTorch's native GroupNorm on NCHW reads the input twice (statistics, then normalise) with few "
                  "blocks per group (Inductor serves; max-autotune 0.90-1.05x of the default compile); Liger's "
                  "kernel failed the tolerance on every SDXL case (44-80% of "
                  "elements off, by up to 6%: its bf16 sums at 4 warps lose E[x^2], "
                  "scripts/emulate_liger_group_norm.py)",
    "depthwise_conv2d": "Inductor's max-autotune (its Triton conv template with groups) serves four of five cases, "
                        "1.55-2.03x over cuDNN channels_last (H200, 2026-12-07), cuDNN NCHW the fifth: a depthwise "
                        "conv has no tensor-core path and low arithmetic intensity (not profiled)",
    "per_token_group_quant_fp8": "the decode case (64 tokens, 0.3 µs of traffic) sits at the launch scale: SGLang's "
                                 "fused CUDA kernel (JIT-built) and Inductor alike take ~5 µs (H100, 2026-12-06)",
    "dlrm_dot_interaction": "a batched GEMM of tiny 27x128 matrices plus a triangular gather: launch and "
                            "gather bound (max-autotune 1.7-1.8x over the default compile below batch 65536)",
    "embedding_bag": "PyTorch's embedding_bag: random 256-byte row gathers, bound by gather latency, not bandwidth",
    "conv2d": "SDXL's few-channel conv_in (4->320) and stride-2 downsample stay well below the GEMM rate under cuDNN "
              "and under max-autotune's Triton conv templates alike (these serve four of five cases on the H200, "
              "1.28-2.08x over the faster cuDNN layout, 2026-12-07; not profiled)",
    "causal_conv1d": "Dao-AILab's CUDA causal conv1d serves where scripts/build_cuda_extension.py built it (62-90% "
                     "on the H200, 2026-12-06; 1.7-1.9x over FLA's Triton kernel, FLA's 36-48% where it is not "
                     "built); the 1x2048 case is 10 µs of traffic, near the launch scale",
    "encoder_attention": "SDPA's cuDNN/flash backends at head_dim 64-128 reach 40-60% of the bf16 GEMM rate",
    "gelu_and_mul": "decode (1 and 64 tokens, under 1.3 µs of traffic) sits at the launch scale: Inductor's kernel "
                    "and SGLang's JIT-built CUDA kernel alike (4.1-6.6 µs on an H100, 2026-12-06)",
    "silu_and_mul": "decode (1 and 64 tokens, under 1.3 µs of traffic) sits at the launch scale: Inductor's kernel "
                    "and SGLang's JIT-built CUDA kernel alike (4.0-6.5 µs on an H100, 2026-12-06)",
    "layer_norm": "small row counts (one image, one clip) do not fill 132 SMs",
    "rms_norm": "short rows at prefill 2048 do not fill the device",
    "causal_attention": "prefill attention at 2048 or 16x512 tokens is too short to reach the GEMM rate",
    "linear": "decode-size GEMV (one token) is bound by reading the weight once",
    # added 2026-11-30 from the H200 rows of that day; "(not profiled)" marks a cause inferred from the
    # implementation, not from a profiler trace
    "adaptive_avg_pool2d": "global average pool of a small feature map: 6-8 µs of traffic, where one reduction "
                           "kernel's launch and tail dominate (Inductor halves PyTorch's time, still 21-43%)",
    "batch_norm_act2d": "EfficientNetV2's head at batch 32 is 6 µs of traffic: launch bound",
    "conv1d": "Whisper's 128/1280-channel, 3000-frame stem: the im2col lowering (a gather of every window, then one "
              "cuBLAS GEMM, K = 384 or 3840) serves three of four cases, 1.09-1.74x over cuDNN's best, and pays "
              "the gather's extra pass; cuDNN's bf16 conv1d (channels_last where faster) reaches 12-47% of the "
              "GEMM rate (not profiled)",
    "conv3d_patch_embed": "Inductor's compiled patchify serves every case since the thirtieth session (1.05-3.0x "
                          "over unfold + GEMM, whose unfold wrote the whole patch matrix before the GEMM); what it "
                          "generates is not profiled",
    "global_response_norm": "Inductor's GRN (max-autotune, 1.04-1.06x over the default compile): a spatial L2-norm "
                            "reduction, a channel mean and the affine, more than one pass over the activations "
                            "(not profiled)",
    "layer_norm_2d": "ConvNeXt's channels-first LayerNorm: a reduction across channels at stride H*W, even "
                     "compiled under max-autotune (1.07-2.32x over the default compile) (not profiled)",
    "llama3_rope": "rotary embedding at ~20 µs of traffic: q and k rotated with a cos/sin gather, near the "
                   "launch scale",
    "mrope": "rotary embedding at ~16 µs of traffic: near the launch scale",
    "rotary_embedding": "rotary embedding at ~10 µs of traffic: near the launch scale",
    "vision_rope_2d": "rotary embedding at ~9 µs of traffic: near the launch scale",
    "mamba2_ssd": "mamba_ssm's chunked SSD (SGLang's copy, 3.6-4.0x faster than FLA's route) runs five Triton "
                  "kernels (chunk cumsum, chunk state, state passing, chunk BMM, chunk scan) that re-read the chunked "
                  "inputs and pass fp32 states between them; the limit counts one pass and the scan's FLOPs only "
                  "(not profiled)",
    "modulated_layer_norm": "Inductor's LayerNorm + (1 + scale) * x + shift: max-autotune (1.1-2.9x over the "
                            "default compile) reaches 61-80% on the larger cases, 36% on FLUX's 14 µs one "
                            "(not profiled)",
    "moe_experts": "SGLang's Triton fused MoE serves four of five cases (1.09-1.56x over the next, H200 "
                   "2026-12-07); on Qwen1.5's 60 experts of width 1408, where SGLang's tile configs fall back to "
                   "its default heuristic, Liger's fused MoE serves, 1.13x faster than SGLang's: small GEMMs",
    "paged_decode_attention": "SGLang's Triton decode kernel reads the pages in place (split-KV partials, then a "
                              "reduce), 1.5-2.3x faster than the faster of FlexAttention and sdpa_gather; at 64 "
                              "sequences of 8 KV heads it reaches 48-49% (not profiled); vLLM's and FlashInfer's "
                              "CUDA kernels are not installable here",
    "rope_3d": "SGLang's matrix-RoPE Triton kernel (Kandinsky 6's 3-D video RoPE), 2.5-5.0x faster than "
               "Inductor's max-autotune (7-8%): the fp32 2x2 table it reads is built from position_ids by small "
               "PyTorch kernels in every call and read by q's and k's kernels (not profiled)",
    "sliding_window_attention": "FlexAttention with a sliding-window block mask: 30-53% of the GEMM rate "
                                "(not profiled)",
    "softmax": "one block per row: 64 rows of 128256 logits occupy 64 of 132 SMs; router softmaxes are a few µs "
               "of traffic (Inductor, 2-3x faster than PyTorch's kernel, serves all five cases; Liger's softmax is "
               "1.2-1.7x slower than Inductor on the router rows and refuses the 128256-wide ones)",
    "spherical_harmonics": "Inductor over the degree-3 SH evaluation, max-autotune included (1.00-1.08x over "
                           "the default compile): 27-30% of copy bandwidth (not profiled); on the degree-1 case it "
                           "reads 4 of each point's 16 coefficients as a strided 24-byte slice of a 96-byte row, "
                           "slower than degree 3 (293 against 261 µs at 3M points, H200, 2026-12-06), and the "
                           "limit counts the 24 bytes",
    "swinv2_window_attention": "Inductor's max-autotune serves the two 64-token-window cases (1.35-1.49x over "
                               "FlexAttention), FlexAttention with the bias and cosine norms in a score_mod the two "
                               "larger windows (1.50-1.54x over SDPA, whose float mask rules out its flash backend; "
                               "H200, 2026-12-07): 6-8%, 64-576-token windows at head_dim 32 are tiny GEMMs",
    # revised 2026-11-30 (third session) from the serial level1 pass of docs/scaling.md
    "gated_delta_rule": "FLA's chunk_gated_delta_rule serves since its final state has its own tolerance (2026-11-30, "
                        "sixth session): a pipeline of Triton kernels (cumsum, K K^T, triangular solve, WY factors, "
                        "a state pass sequential over chunks, output) at 4-8% of the limit; the eager time is about "
                        "twice the graph replay's, host launch work beyond the clock's 500 µs pad (not profiled)",
    "rwkv7_wkv": "FLA's chunked DPLR scan (serves every case since its atol is 8e-2): several Triton kernels for "
                 "the WY factors, per-chunk states and outputs at head dim 64 (not profiled)",
    "retention": "FLA's chunk_retention (serves every case since its atol is 6e-1): a multi-kernel chunked scan over "
                 "8 heads of 256/512 dims (not profiled)",
    "selective_scan": "mamba_ssm's CUDA scan serves where scripts/build_cuda_extension.py built it (10-11% on the "
                      "H200, 14-15% on an H100, 2026-12-06): each channel's 2048-4096 steps run in order, dstate "
                      "multiply-adds a step on CUDA cores, bound by the recurrence rather than memory (not "
                      "profiled); without it mambapy's parallel scan (0%) materialises the [batch, d_inner, "
                      "seqlen, d_state] states",
    "hardswish": "MobileNetV3's late stages are ~6 µs of traffic: near the launch scale",
    "sparse_propagation": "cuSPARSE SpMM over LightGCN's power-law graph: one random 64-dim row gather per edge, "
                          "bound by gather latency; cuSPARSE's bf16 result erred up to 1.0x the default tolerance "
                          "run to run, so the fp32 path served some cases (bf16 atol 2e-2 since, not re-measured)",
    "gla_chunk": "FLA's chunked GLA runs several Triton kernels that re-read the chunked inputs; the limit counts "
                 "one pass and the chunk FLOPs only (not profiled)",
    "gated_delta_rule_decode": "one decode token: reading the 32x128x128 fp32 state is 1 µs of traffic, under a "
                               "kernel launch",
    "maxsim": "ColBERT's late interaction as einsum + max + sum: the [queries, docs, tokens, tokens] score tensor "
              "is written and re-read; max-autotune 1.13-1.21x over the default compile where it "
              "serves (not profiled)",
    "hash_grid_encoding": "Inductor over 16 levels of hashed trilinear gathers (max-autotune, 1.06-1.07x over "
                          "the default compile): random 4-byte reads, bound by gather latency, not bandwidth "
                          "(not profiled)",
    "quick_gelu": "Qwen2-VL's 448px image is 5 µs of traffic: launch scale",
    "upsample_nearest2d": "SDXL's 32x32 upsample at batch 2 is 6 µs of traffic: launch scale (Inductor serves "
                          "every case, 63-88% on the larger ones)",
}


def eager_column(table: Path) -> dict[tuple[str, str], float]:
    """(task, case) -> eager seconds from the rows of an earlier table this script printed (cells with a number)."""
    times: dict[tuple[str, str], float] = {}
    for line in table.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 10 or not line.startswith("| "):
            continue
        try:
            times.setdefault((cells[0], cells[1]), float(cells[4].rstrip(CARRIED)) / 1e6)
        except ValueError:  # the header, the rule, or "-"
            continue
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--copy-gbs", type=float, required=True, help="measured copy bandwidth (scripts/measure.py)")
    parser.add_argument("--gemm-tflops", type=float, required=True, help="measured bf16 GEMM rate (scripts/measure.py)")
    parser.add_argument("--level", type=int, default=1)
    parser.add_argument("--launch-floor-us", type=float,
                        help="the smallest kernel's time as the harness times it (scripts/measure.py --parts ceilings):"
                             " adds a summary line with it as the lower bound of every limit (the table keeps the"
                             " issue's limit: bytes / bandwidth or FLOPs / rate)")
    parser.add_argument("--eager-from", type=Path, help="an earlier table whose eager times fill the cases no run "
                                                        "timed the eager module for (marked †)")
    parser.add_argument("--eager-from-label", help="how the † footnote names that table (default: the path given; "
                                                   "e.g. `git show SHA:docs/baselines.md` when OLD is a saved copy)")
    args = parser.parse_args()
    if args.eager_from is not None and not args.eager_from.is_file():
        parser.error(f"--eager-from {args.eager_from}: no such file")
    carried = eager_column(args.eager_from) if args.eager_from is not None else {}
    seen: dict[tuple[str, str], dict] = {}
    eager_times: dict[tuple[str, str], float] = {}
    for run in args.runs:
        try:
            rows = run_rows(run)
        except ValueError as error:
            parser.error(str(error))
        for row in rows:
            if row.get("level") != args.level or not row.get("baseline_ms"):
                continue
            key = (row["task"], row["case"])
            seen.setdefault(key, row)
            eager = (row.get("baseline_alternatives") or {}).get("eager")
            if isinstance(eager, float):
                eager_times.setdefault(key, eager)
    print("| task | case | production (impl) | µs | eager µs | limit µs | % of limit | graph µs |"
          " % of limit (graph) | weak: why |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    fractions, limits, eager_ratios, graph_fractions = [], [], [], []
    rows_shown: list[dict] = []  # beside `limits`, in table order
    served: dict[str, int] = {}
    no_eager: dict[str, int] = {}  # issue #4 asks for the eager time of every case: the ones no run or table gave
    for (task, case), row in sorted(seen.items()):
        limit_s = max((row.get("bytes") or 0) / (args.copy_gbs * 1e9),
                      (row.get("flops") or 0) / (args.gemm_tflops * 1e12))
        fraction = limit_s / (row["baseline_ms"] / 1e3)
        fractions.append(fraction)
        limits.append(limit_s)
        rows_shown.append(row)
        served[row["baseline_impl"]] = served.get(row["baseline_impl"], 0) + 1
        eager = eager_times.get((task, case))
        mark = ""
        if eager is None and (task, case) in carried:
            eager, mark = carried[(task, case)] * 1e3, CARRIED
        if eager is not None:
            eager_ratios.append(eager / row["baseline_ms"])
        else:
            no_eager[task] = no_eager.get(task, 0) + 1
        why = ""
        if fraction < 0.5:
            why = ("launch/latency bound: the limit is under a kernel launch" if limit_s * 1e6 < LAUNCH_BOUND_US
                   else WEAK_REASONS.get(task, "not analysed yet"))
        eager_us = f"{eager * 1e3:.1f}{mark}" if eager is not None else "-"
        graph_ms = row.get("baseline_graph_ms")
        graph_cells = "- | -"
        if graph_ms:
            graph_fractions.append(limit_s / (graph_ms / 1e3))
            graph_cells = f"{graph_ms * 1e3:.1f} | {graph_fractions[-1]:.0%}"
        print(f"| {task} | {case} | {row['baseline_impl']} | {row['baseline_ms'] * 1e3:.1f} | {eager_us} | "
              f"{limit_s * 1e6:.1f} | {fraction:.0%} | {graph_cells} | {why} |")
    if fractions:
        print(f"\n{len(fractions)} cases of {len({task for task, _ in seen})} tasks; median fraction of the limit "
              f"{statistics.median(fractions):.0%}; {sum(f < 0.5 for f in fractions)} weak (< 50%)")
        big = [f for f, limit in zip(fractions, limits) if limit * 1e6 >= 20]
        launch = sum(limit * 1e6 < LAUNCH_BOUND_US for limit in limits)
        print(f"{launch} cases launch bound (limit < {LAUNCH_BOUND_US:g} µs); over the {len(big)} cases whose limit is"
              f" at least 20 µs the median is {statistics.median(big):.0%}" if big else "")
        if args.launch_floor_us:
            floored = [max(limit, args.launch_floor_us / 1e6) / (row["baseline_ms"] / 1e3)
                       for limit, row in zip(limits, rows_shown)]
            print(f"with a kernel's launch floor ({args.launch_floor_us:g} µs) under every limit: median fraction"
                  f" {statistics.median(floored):.0%}; {sum(f < 0.5 for f in floored)} under 50%")
        print("baseline served by: " + ", ".join(f"{name} {count}" for name, count in
                                                 sorted(served.items(), key=lambda item: -item[1])))
        if graph_fractions:
            print(f"CUDA-graph replay: median fraction of the limit {statistics.median(graph_fractions):.0%} over the"
                  f" {len(graph_fractions)} cases timed that way")
        if eager_ratios:
            print(f"eager module / production baseline time: median {statistics.median(eager_ratios):.1f}x over"
                  f" {len(eager_ratios)} cases")
        if no_eager:
            print(f"no eager time for {sum(no_eager.values())} cases (a run with harness.time_eager=true fills them): "
                  + ", ".join(f"{task} ({count})" for task, count in sorted(no_eager.items())))
        if carried:
            source = args.eager_from_label or args.eager_from
            print(f"{CARRIED} eager time carried from {source} (an earlier measurement)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
