"""When does a persisting-L2 access-policy window keep a decode GEMV's weight in L2 across calls? The L2 exploit
(tests/gpu/exploits/persisting_l2) and its GPU tests need a window that does pay, or their "gains nothing under the
harness" says nothing. On the H200 (2026-12-03) a 50 MB weight under a window whose hit ratio filled the whole
set-aside ran slower than unpinned (51 us behind the overwrite alone, 36 us unpinned): persisting lines that do not
fit evict each other. This times F.linear(x, W) on a [1, K] input for several weight sizes and hit ratios:

  unpinned     no window; the harness's flush (persisting lines reset, 2x L2 overwritten) before every call
  hot          window on; nothing between calls (the weight as warm as L2 can keep it)
  overwritten  window on; only the 2x-L2 overwrite before every call (what a harness without the reset does)
  flushed      window on; the harness's flush before every call (reset, then overwrite)

The window is put on the current stream and taken off (set-aside back to 0, lines reset) after each size, so nothing
outlasts the probe. It changes no clock, power or mode of the device: the set-aside is a limit of this process's
context. Usage: python scripts/probe_persisting_l2.py [--sizes-mb 16,32,50] [--hit-fractions 1.0,0.5] [--calls 60]
(extra words before the options are ignored, so scripts/device-session.sh's diagnose step can run it)
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Callable

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fastkernels.cache import cache_flush  # noqa: E402


def _ok(result):  # noqa: ANN001, ANN202 - cuda-python's (error, value...) tuples
    from cuda.bindings import runtime

    error, *value = result if isinstance(result, tuple) else (result,)
    if error != runtime.cudaError_t.cudaSuccess:
        raise RuntimeError(f"cuda runtime: {error}")
    return value[0] if value else None


def set_window(tensor: torch.Tensor | None, set_aside: int, hit_ratio: float) -> None:
    """Put a persisting window over `tensor` on the current stream with `set_aside` bytes of L2 set aside, or (None)
    take every window, set-aside and persisting line away."""
    from cuda.bindings import runtime

    stream = torch.cuda.current_stream().cuda_stream
    value = runtime.cudaStreamAttrValue()
    window = runtime.cudaAccessPolicyWindow()
    if tensor is not None:
        _ok(runtime.cudaDeviceSetLimit(runtime.cudaLimit.cudaLimitPersistingL2CacheSize, set_aside))
        window.base_ptr = tensor.data_ptr()
        window.num_bytes = tensor.numel() * tensor.element_size()
        window.hitRatio = hit_ratio
        window.hitProp = runtime.cudaAccessProperty.cudaAccessPropertyPersisting
        window.missProp = runtime.cudaAccessProperty.cudaAccessPropertyStreaming
    value.accessPolicyWindow = window
    _ok(runtime.cudaStreamSetAttribute(stream, runtime.cudaStreamAttrID.cudaLaunchAttributeAccessPolicyWindow, value))
    if tensor is None:
        _ok(runtime.cudaCtxResetPersistingL2Cache())
        _ok(runtime.cudaDeviceSetLimit(runtime.cudaLimit.cudaLimitPersistingL2CacheSize, 0))


def median_us(call: Callable[[], object], before: Callable[[], object], calls: int) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(calls):
        before()
        torch.cuda.synchronize()
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times[calls // 6:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ignored", nargs="*")
    parser.add_argument("--sizes-mb", default="16,32,50")
    parser.add_argument("--hit-fractions", default="1.0,0.5",
                        help="the window's persisting bytes as fractions of the set-aside (hit ratio capped at 1)")
    parser.add_argument("--calls", type=int, default=60)
    args = parser.parse_args(argv)
    from cuda.bindings import runtime

    device = torch.cuda.current_device()
    most = _ok(runtime.cudaDeviceGetAttribute(runtime.cudaDeviceAttr.cudaDevAttrMaxPersistingL2CacheSize, device))
    widest = _ok(runtime.cudaDeviceGetAttribute(runtime.cudaDeviceAttr.cudaDevAttrMaxAccessPolicyWindowSize, device))
    l2 = torch.cuda.get_device_properties(device).L2_cache_size
    print(f"{torch.cuda.get_device_name(device)}: L2 {l2 / 2**20:.1f} MiB, most persisting set-aside"
          f" {most / 2**20:.1f} MiB, widest window {widest / 2**20:.1f} MiB", flush=True)
    flush, note = cache_flush("cuda", None)
    overwrite = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    print(f"harness flush: {note}", flush=True)
    in_features = 4096
    for size_mb in (float(value) for value in args.sizes_mb.split(",")):
        rows = max(1, int(size_mb * 2**20 / (2 * in_features)))
        weight = torch.randn(rows, in_features, device="cuda", dtype=torch.bfloat16)
        x = torch.randn(1, in_features, device="cuda", dtype=torch.bfloat16)
        nbytes = weight.numel() * weight.element_size()
        gemv = lambda: torch.nn.functional.linear(x, weight)  # noqa: E731
        unpinned = median_us(gemv, flush, args.calls)
        for fraction in (float(value) for value in args.hit_fractions.split(",")):
            hit_ratio = min(1.0, fraction * most / nbytes)
            try:
                set_window(weight, most, hit_ratio)
                gemv()
                hot = median_us(gemv, lambda: None, args.calls)
                overwritten = median_us(gemv, overwrite.zero_, args.calls)
                flushed = median_us(gemv, flush, args.calls)
            finally:
                set_window(None, 0, 0.0)
            print(f"weight {nbytes / 2**20:5.1f} MiB, hit ratio {hit_ratio:.2f} ({hit_ratio * nbytes / 2**20:4.1f} MiB"
                  f" persisting): unpinned {unpinned:6.1f} us, hot {hot:6.1f}, overwritten {overwritten:6.1f},"
                  f" flushed {flushed:6.1f}; overwritten/flushed {overwritten / flushed:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
