"""When does a persisting-L2 access-policy window keep a decode GEMV's weight in L2 across calls? The L2 exploit
(tests/gpu/exploits/persisting_l2) and its GPU tests need a window that does pay, or their "gains nothing under the
harness" says nothing. The GPU test's first run (H200, 2026-12-03) read a pinned 50 MB weight no faster behind the
overwrite alone than behind the harness's flush (51 and 48 us, 36 unpinned), and two probes with this script found no
weight size, hit ratio, reader or stream at which the window paid; but all three timed each call from an idle device,
so their 25-50 us were mostly the host's launch of one op, whatever its size, and they tell nothing about L2.
This times a reader of a weight W (`--reader gemv`: F.linear(x, W) on a [1, K] input; `sum`: W.sum(), a reduction
that streams W at close to full bandwidth) for several weight sizes and hit ratios, on the current stream or
(`--stream own`) on a stream of its own (a window is a stream attribute; torch's current stream is the legacy
default one), every call timed by the harness's clock (timing.CudaEventClock: a spin kernel queued ahead of the
start event, so the interval holds the device's work and not the host's launch):

  unpinned     no window; the harness's flush (persisting lines reset, 2x L2 overwritten) before every call
  hot          window on; nothing between calls (the weight as warm as L2 can keep it)
  overwritten  window on; only the 2x-L2 overwrite before every call (what a harness without the reset does)
  flushed      window on; the harness's flush before every call (reset, then overwrite)

The window is put on the current stream and taken off (set-aside back to 0, lines reset) after each size, so nothing
outlasts the probe. It changes no clock, power or mode of the device: the set-aside is a limit of this process's
context. Usage: python scripts/probe_persisting_l2.py [--sizes-mb 16,32,50] [--hit-fractions 1.0,0.5] [--calls 60]
       [--reader gemv|sum] [--stream current|own]
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
from fastkernels.timing import CudaEventClock  # noqa: E402


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


def median_us(clock: CudaEventClock, call: Callable[[], object], before: Callable[[], object] | None,
              calls: int) -> float:
    """The median device time of `call`, `before` run untimed ahead of every call, the first sixth left out."""
    times = [clock.time_call(call, before, "probe") * 1e3 for _ in range(calls)]
    return statistics.median(times[calls // 6:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ignored", nargs="*")
    parser.add_argument("--sizes-mb", default="16,32,50")
    parser.add_argument("--hit-fractions", default="1.0,0.5",
                        help="the window's persisting bytes as fractions of the set-aside (hit ratio capped at 1)")
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--reader", choices=("gemv", "sum"), default="gemv")
    parser.add_argument("--stream", choices=("current", "own"), default="current")
    args = parser.parse_args(argv)
    if args.stream == "own":
        torch.cuda.set_stream(torch.cuda.Stream())
    from cuda.bindings import runtime

    device = torch.cuda.current_device()
    most = _ok(runtime.cudaDeviceGetAttribute(runtime.cudaDeviceAttr.cudaDevAttrMaxPersistingL2CacheSize, device))
    widest = _ok(runtime.cudaDeviceGetAttribute(runtime.cudaDeviceAttr.cudaDevAttrMaxAccessPolicyWindowSize, device))
    l2 = torch.cuda.get_device_properties(device).L2_cache_size
    print(f"{torch.cuda.get_device_name(device)}: L2 {l2 / 2**20:.1f} MiB, most persisting set-aside"
          f" {most / 2**20:.1f} MiB, widest window {widest / 2**20:.1f} MiB", flush=True)
    clock = CudaEventClock(pad_us=50, max_pad_us=20000)
    flush, note = cache_flush("cuda", None)
    overwrite = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    print(f"harness flush: {note}; reader {args.reader} on the {args.stream} stream"
          f" ({torch.cuda.current_stream().cuda_stream:#x})", flush=True)
    in_features = 4096
    for size_mb in (float(value) for value in args.sizes_mb.split(",")):
        rows = max(1, int(size_mb * 2**20 / (2 * in_features)))
        weight = torch.randn(rows, in_features, device="cuda", dtype=torch.bfloat16)
        x = torch.randn(1, in_features, device="cuda", dtype=torch.bfloat16)
        nbytes = weight.numel() * weight.element_size()
        reader = ((lambda: torch.nn.functional.linear(x, weight)) if args.reader == "gemv"  # noqa: E731
                else (lambda: weight.sum(dtype=torch.float32)))
        unpinned = median_us(clock, reader, flush, args.calls)
        for fraction in (float(value) for value in args.hit_fractions.split(",")):
            hit_ratio = min(1.0, fraction * most / nbytes)
            try:
                set_window(weight, most, hit_ratio)
                reader()
                hot = median_us(clock, reader, None, args.calls)
                overwritten = median_us(clock, reader, overwrite.zero_, args.calls)
                flushed = median_us(clock, reader, flush, args.calls)
            finally:
                set_window(None, 0, 0.0)
            print(f"weight {nbytes / 2**20:5.1f} MiB, hit ratio {hit_ratio:.2f} ({hit_ratio * nbytes / 2**20:4.1f} MiB"
                  f" persisting): unpinned {unpinned:6.1f} us, hot {hot:6.1f}, overwritten {overwritten:6.1f},"
                  f" flushed {flushed:6.1f}; overwritten/flushed {overwritten / flushed:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
