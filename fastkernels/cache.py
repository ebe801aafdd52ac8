"""The cache flush run before every timed call (outside the timed interval), so no call starts with warm data.

Two parts: lines a kernel marked *persisting* (a CUDA access-policy window on its stream, with a persisting-L2
set-aside) survive ordinary traffic, so they are first demoted to normal with `cudaCtxResetPersistingL2Cache`
(through cuda-python, which CUDA builds of torch install); then a buffer of twice the last-level cache is overwritten.
Where the reset cannot be called (no cuda-python, a CPU run) only the overwrite runs, and the worker's log says so.
"""

from __future__ import annotations

from typing import Callable

import torch


def persisting_l2_reset() -> Callable[[], None] | None:
    """A call that resets the context's persisting L2 lines to normal, or None where none can be made."""
    try:
        from cuda.bindings import runtime
    except ImportError:
        return None

    def reset() -> None:
        (error,) = runtime.cudaCtxResetPersistingL2Cache()
        if error != runtime.cudaError_t.cudaSuccess:
            raise RuntimeError(f"cudaCtxResetPersistingL2Cache failed: {error}")

    return reset


def cache_flush(device: str, l2_cache_mb: float | None) -> tuple[Callable[[], None], str]:
    """The flush for `device` and a note on what it covers (for the worker's log)."""
    cache_mb = l2_cache_mb
    if device == "cuda":
        cache_mb = max(cache_mb or 0, torch.cuda.get_device_properties(0).L2_cache_size / 2**20)
    buffer = torch.empty(int(2 * (cache_mb or 32) * 2**20) // 4, dtype=torch.int32, device=device)
    reset = persisting_l2_reset() if device == "cuda" else None
    note = f"cache flush: {2 * (cache_mb or 32):.0f} MB overwritten"
    if device == "cuda":
        note += ", persisting L2 lines reset" if reset is not None else ", persisting L2 NOT reset (no cuda-python)"

    def flush() -> None:
        if reset is not None:
            reset()
        buffer.zero_()

    return flush, note
