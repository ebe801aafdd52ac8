"""SGLang's JIT rope (rotary_embedding's and llama3_rope's sglang_jit baselines) on a real GPU, on the views the
attention composites hand it: q and k split from one fused qkv projection (rows strided by the whole projection's
width), rotated in place. The L1 cases pass contiguous tensors only; before a composite binds this kernel first,
this shows it rotates strided rows as PyTorch's path does and leaves v, the third slice of the same buffer, alone."""

from __future__ import annotations

import importlib.util

import pytest
import torch
from task_library import fresh_adapter, production_class

# marks, not a module-level importorskip: a module skipped while collected counts as skipped under any -k selection
pytestmark = [pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
              pytest.mark.skipif(importlib.util.find_spec("sglang") is None,
                                 reason="needs SGLang (scripts/pack-sglang.sh)")]


@pytest.mark.parametrize("heads,kv_heads,head_dim", [(32, 8, 128), (28, 4, 128), (8, 1, 64)])
@pytest.mark.parametrize("is_neox", [True, False])
def test_q_and_k_split_from_one_projection_rotate_as_pytorch_s_path_rotates_them(heads, kv_heads, head_dim,
                                                                                 is_neox):
    tokens = 257
    q_size, kv_size = heads * head_dim, kv_heads * head_dim
    g = torch.Generator(device="cuda").manual_seed(heads + head_dim)
    qkv = torch.randn(tokens, q_size + 2 * kv_size, generator=g, device="cuda").bfloat16()
    positions = torch.randint(0, 4096, (tokens,), generator=g, device="cuda")
    args = (head_dim, head_dim, 4096, 500000.0, is_neox)
    expected_q, expected_k = production_class("rotary_embedding", "torch_native")(*args).cuda()(
        positions, qkv[:, :q_size].clone(), qkv[:, q_size:q_size + kv_size].clone())
    v_before = qkv[:, q_size + kv_size:].clone()
    q, k, _ = qkv.split([q_size, kv_size, kv_size], dim=-1)
    module = fresh_adapter("rotary_embedding", "sglang_jit.py").RotaryEmbedding(*args).cuda()
    assert module.fallback_reason({"key": k}) == ""
    out_q, out_k = module(positions, q, k)
    assert out_q.data_ptr() == qkv.data_ptr()  # rotated in place, in the projection's buffer
    torch.testing.assert_close(out_q.float(), expected_q.float(), atol=2e-2, rtol=1.6e-2)
    torch.testing.assert_close(out_k.float(), expected_k.float(), atol=2e-2, rtol=1.6e-2)
    assert torch.equal(qkv[:, q_size + kv_size:], v_before)
