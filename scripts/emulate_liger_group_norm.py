"""Why Liger-Kernel 0.8.5's group_norm misses group_norm's tolerance on SDXL shapes: an emulation of its statistics.

Liger's forward kernel (liger_kernel/ops/group_norm.py) runs one program per (sample, group) and sums each block of
up to 65536 elements with `tl.sum(X)` and `tl.sum(X * X)` on bf16 X, which Triton reduces in bf16. The launch passes
no `num_warps`, so Triton's default of 4 warps applies: 128 threads each add 512 elements one after another in bf16
before a tree across threads. A running bf16 sum of x² (x of mean 0.5, std 1, as the task draws it) passes 512 after
a few hundred terms, where the bf16 spacing is 4: most further terms round away, E[x²] comes out low, the variance
6-10% low and every output of the group about 3-5% too large.

This script replays that order of bf16 roundings on the CPU (torch, no Triton): each thread's elements in the
blocked layout of 8-element vectors (thread t holds 8t..8t+7, then the same 1024 further on), summed in order with
a rounding to bf16 after every add, then a pairwise tree. It prints, per SDXL case, the variance error and the share
of outputs outside the task's bf16 tolerance against a float64 GroupNorm (no affine: weight ~1 barely moves it).
On the H200 (2026-11-30 16:21-16:29 UTC, docs/results/h200-2026-11-30-tenth/noop-level1-rest.tgz, in git history: docs/results/ARCHIVED.md) Liger's kernel put
76, 79, 44, 74 and 80% of the elements outside it on the five cases in the order below, its outputs 5-6% too large;
this emulation gives 75, 79, 46, 73 and 80% (seed 0), and with 1024 threads (fewer adds per thread) 0%. So the bf16
accumulation at Triton's default 4 warps is the cause; the exact in-thread order on the GPU may differ.

Usage: python scripts/emulate_liger_group_norm.py [--threads 128] [--seed 0]
"""

from __future__ import annotations

import argparse

import torch

BLOCK = 65536
VECTOR = 8
CASES = {  # task case -> (channels, height, width), 32 groups (tasks/L1/group_norm/task.yaml)
    "sdxl_down_320x128x128_b2": (320, 128, 128),
    "sdxl_up_960x128x128_b2": (960, 128, 128),
    "sdxl_mid_1280x32x32_b2": (1280, 32, 32),
    "sdxl_up_2560x32x32_b2": (2560, 32, 32),
    "sdxl_vae_decoder_128x1024x1024": (128, 1024, 1024),
}
GROUPS = 32
ATOL, RTOL = 1.0e-2, 1.6e-2  # the task's bf16 tolerance


def bf16_block_sum(values: torch.Tensor, threads: int) -> float:
    """One `tl.sum` over a block of bf16 `values` (zero-padded to BLOCK): in-thread sequential bf16 adds, then a
    pairwise bf16 tree over the threads."""
    padded = torch.nn.functional.pad(values, (0, BLOCK - values.numel()))
    per_thread = padded.view(-1, threads, VECTOR).permute(1, 0, 2).reshape(threads, -1)  # [thread, its elements]
    total = torch.zeros(threads, dtype=torch.bfloat16)
    for column in range(per_thread.shape[1]):
        total = (total.float() + per_thread[:, column].float()).bfloat16()
    while total.numel() > 1:
        total = (total[0::2].float() + total[1::2].float()).bfloat16()
    return total.float().item()


def emulate(channels: int, height: int, width: int, threads: int, generator: torch.Generator) -> str:
    """Liger's mean and variance of one group against float64, and the outputs they put outside the tolerance."""
    size = channels // GROUPS * height * width
    x = (torch.randn(size, generator=generator) + 0.5).bfloat16()
    total = squares = 0.0
    for start in range(0, size, BLOCK):
        block = x[start:start + BLOCK]
        total += bf16_block_sum(block, threads)
        squares += bf16_block_sum((block.float() * block.float()).bfloat16(), threads)
    mean = total / size
    variance = squares / size - mean * mean
    exact = x.double()
    exact_variance = exact.var(unbiased=False).item()
    out = (exact - mean) / (variance + 1e-5) ** 0.5
    ref = (exact - exact.mean()) / (exact_variance + 1e-5) ** 0.5
    outside = ((out - ref).abs() > ATOL + RTOL * ref.abs()).double().mean().item()
    return (f"variance {variance:.4f} vs {exact_variance:.4f} ({(variance / exact_variance - 1) * 100:+.1f}%), "
            f"outputs outside the tolerance {outside * 100:.0f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=128, help="threads per program (4 warps: Triton's default)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    generator = torch.Generator().manual_seed(args.seed)
    for name, shape in CASES.items():
        print(f"{name}: {emulate(*shape, args.threads, generator)}")


if __name__ == "__main__":
    main()
