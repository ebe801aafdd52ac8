"""sliding_window_attention's cudnn_band baseline on a real GPU and cuDNN: the band's edges. A window of 1 leaves each
query only itself (the output is its kv head's v row), and small windows make an off-by-one in the left bound a
whole key of difference, which the task's long cases (windows of 1024 and 4096) could hide in their tolerance."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
cudnn = pytest.importorskip("cudnn", reason="nvidia-cudnn-frontend is not installed")

from task_library import eager_class, fresh_adapter  # noqa: E402


def qkv(seq: int, heads: int, kv_heads: int, dim: int) -> dict[str, torch.Tensor]:
    g = torch.Generator(device="cuda").manual_seed(seq * 31 + dim)
    shape = (2, seq, heads, dim)
    return {"q": (3 * torch.randn(shape, generator=g, device="cuda")).bfloat16(),
            "k": torch.randn(2, seq, kv_heads, dim, generator=g, device="cuda").bfloat16(),
            "v": torch.randn(2, seq, kv_heads, dim, generator=g, device="cuda").bfloat16()}


@pytest.mark.parametrize("window", [1, 2, 7, 64, 200])
@pytest.mark.parametrize("dim", [64, 128, 256])
def test_the_band_keeps_exactly_the_last_window_keys_with_gqa(window, dim):
    args = (8, 2, dim, window)
    x = qkv(150, 8, 2, dim)
    out = fresh_adapter("sliding_window_attention", "cudnn_band.py").SlidingWindowAttention(*args)(**x)
    expected = eager_class("sliding_window_attention")(*args)(**{n: t.float() for n, t in x.items()})
    torch.testing.assert_close(out.float(), expected, atol=2e-2, rtol=1.6e-2)
    if window == 1:  # only itself: query head h returns its kv head's v row
        torch.testing.assert_close(out, x["v"].repeat_interleave(4, dim=2), atol=0, rtol=0)
