"""paged_decode_attention's cudnn_paged baseline on a real GPU and cuDNN: what the task's GPU cases may not show.
Sequence lengths that end inside a page and at one token, a block the table names twice, pages shared between
sequences, MQA and GQA, head_dim 64 and 128, vLLM's block_size 16 and larger pages; each against the eager module."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
cudnn = pytest.importorskip("cudnn", reason="nvidia-cudnn-frontend is not installed")

from task_library import eager_class, fresh_adapter  # noqa: E402

TASK = "paged_decode_attention"


def paged_inputs(batch: int, heads: int, kv_heads: int, dim: int, block: int, max_blocks: int,
                 seq_lens: list[int]) -> dict[str, torch.Tensor]:
    g = torch.Generator(device="cuda").manual_seed(batch * 131 + dim + block)
    num_blocks = batch * max_blocks
    table = torch.randint(0, num_blocks, (batch, max_blocks), generator=g, device="cuda", dtype=torch.int32)
    table[0, 1] = table[0, 0]  # a block named twice
    table[-1] = table[0]  # pages shared between sequences
    return {"query": (3 * torch.randn(batch, heads, dim, generator=g, device="cuda")).bfloat16(),
            "key_cache": torch.randn(num_blocks, block, kv_heads, dim, generator=g, device="cuda").bfloat16(),
            "value_cache": torch.randn(num_blocks, block, kv_heads, dim, generator=g, device="cuda").bfloat16(),
            "block_tables": table, "seq_lens": torch.tensor(seq_lens, dtype=torch.int32, device="cuda")}


@pytest.mark.parametrize("heads,kv_heads", [(8, 1), (8, 2), (28, 4)])
@pytest.mark.parametrize("dim", [64, 128])
@pytest.mark.parametrize("block", [16, 64])
def test_decode_over_pages_matches_the_eager_module(heads, kv_heads, dim, block):
    max_blocks = 9
    capacity = max_blocks * block
    x = paged_inputs(4, heads, kv_heads, dim, block, max_blocks, [1, block + 3, capacity - 5, capacity])
    args = (heads, kv_heads, dim, block)
    out = fresh_adapter(TASK, "cudnn_paged.py").PagedDecodeAttention(*args)(**x)
    expected = eager_class(TASK)(*args)(**{n: t.float() if t.is_floating_point() else t for n, t in x.items()})
    torch.testing.assert_close(out.float(), expected, atol=2e-2, rtol=1.6e-2)
    first_key_v = x["value_cache"][x["block_tables"][0, 0].long(), 0]  # sequence 0 has one token
    torch.testing.assert_close(out[0], first_key_v.repeat_interleave(heads // kv_heads, dim=0), atol=0, rtol=0)
