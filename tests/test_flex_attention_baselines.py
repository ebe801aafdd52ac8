"""The FlexAttention production baselines of paged_decode_attention and swinv2_window_attention as a spec: each
computes its task (the float64 eager module is the reference) on the CPU cases and on shapes that stress what the
task allows, through flex_attention itself (the dense reference semantics of its mask_mod and score_mod) and
through the compiled kernel (Inductor's C++ flex template here, which like the CUDA one visits only the blocks a
block mask lists), and leaves its inputs unchanged.

Both are listed for cuda only (compiled flex is timed there); these tests load their files directly. The compiled
path needs Inductor's C++ toolchain and is skipped without one.
"""

from __future__ import annotations

import contextlib
import math
from typing import Callable

import pytest
import torch
from torch.nn.attention.flex_attention import flex_attention

from fastkernels.implementations import import_file
from task_library import REGISTRY, eager_class, judged_on_cpu_cases

PAGED = import_file(REGISTRY.directory("paged_decode_attention") / "flex.py", "tasks.paged_decode_attention")
SWIN = import_file(REGISTRY.directory("swinv2_window_attention") / "flex.py", "tasks.swinv2_window_attention")
SWIN_SDPA = import_file(REGISTRY.directory("swinv2_window_attention") / "sdpa.py", "tasks.swinv2_window_attention")
SWIN_CUDNN = import_file(REGISTRY.directory("swinv2_window_attention") / "sdpa_cudnn.py",
                         "tasks.swinv2_window_attention")
TOLERANCE = {torch.bfloat16: (1e-2, 1.6e-2), torch.float32: (1e-5, 1e-5)}  # conf/harness/default.yaml


def compiled_or_skip(run: Callable[[], object]) -> object:
    """`run()`, skipping the test where Inductor cannot compile on this machine."""
    try:
        return run()
    except (torch._dynamo.exc.BackendCompilerFailed, torch._inductor.exc.InductorError) as error:
        pytest.skip(f"Inductor cannot compile on this machine: {str(error)[:200]}")


def assert_within(out: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype, atol: float | None = None) -> None:
    """Every element within the harness's |out - ref| <= atol + rtol |ref| for dtype, and out in dtype."""
    default_atol, rtol = TOLERANCE[dtype]
    atol = default_atol if atol is None else atol
    assert out.dtype == dtype and out.shape == ref.shape
    error = (out.double() - ref).abs()
    worst = (error / (atol + rtol * ref.abs())).max().item()
    assert worst <= 1.0, f"max |error| {error.max().item():.3g}, {worst:.2f} x the tolerance"


# --------------------------------------------------------------------------------------- paged_decode_attention


def paged_inputs(heads: int, kv_heads: int, head_dim: int, block: int, num_blocks: int, max_blocks: int,
                 dtype: torch.dtype, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Four sequences over a shared pool: 0 fills its table and names one block for two of its full pages; 1 shares
    0's first page (prefix caching) and ends on a page boundary; 2's partial tail page is the block of its first
    page; 3 holds one token. Table entries past a sequence's pages are garbage block ids."""
    assert max_blocks >= 3 and block >= 2
    gen = torch.Generator().manual_seed(seed)
    query = (3 * torch.randn(4, heads, head_dim, generator=gen)).to(dtype)
    key_cache = torch.randn(num_blocks, block, kv_heads, head_dim, generator=gen).to(dtype)
    value_cache = torch.randn(num_blocks, block, kv_heads, head_dim, generator=gen).to(dtype)
    tables = torch.randint(0, num_blocks, (4, max_blocks), generator=gen, dtype=torch.int32)
    tables[0, 2] = tables[0, 1]
    tables[1, 0] = tables[0, 0]
    tables[2, 1] = tables[2, 0]
    lens = torch.tensor([max_blocks * block, 2 * block, block + block // 2, 1], dtype=torch.int32)
    return query, key_cache, value_cache, tables, lens


def paged_reference(inputs: tuple[torch.Tensor, ...], heads: int, kv_heads: int, head_dim: int,
                    block: int) -> torch.Tensor:
    query, key_cache, value_cache, tables, lens = inputs
    module = eager_class("paged_decode_attention")(heads, kv_heads, head_dim, block).double()
    return module(query.double(), key_cache.double(), value_cache.double(), tables, lens)


PAGED_SHAPES = [  # heads, kv_heads, head_dim, block, num_blocks, max_blocks
    pytest.param(8, 8, 16, 4, 12, 5, id="mha"),
    pytest.param(6, 2, 16, 4, 10, 4, id="gqa3"),
    pytest.param(14, 2, 32, 8, 9, 6, id="gqa7"),
    pytest.param(4, 1, 24, 16, 4, 3, id="mqa4"),
]


def test_paged_flex_passes_the_tasks_cpu_cases_compiled():
    torch._dynamo.reset()
    compiled_or_skip(lambda: judged_on_cpu_cases("paged_decode_attention", PAGED.PagedDecodeAttention))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=["bf16", "fp32"])
@pytest.mark.parametrize("heads, kv_heads, head_dim, block, num_blocks, max_blocks", PAGED_SHAPES)
def test_paged_flex_counts_repeated_shared_and_partial_pages_like_the_task(heads, kv_heads, head_dim, block,
                                                                           num_blocks, max_blocks, dtype):
    """Through flex_attention's dense semantics and through the compiled block-sparse kernel alike."""
    inputs = paged_inputs(heads, kv_heads, head_dim, block, num_blocks, max_blocks, dtype)
    saved = [t.clone() for t in inputs]
    ref = paged_reference(inputs, heads, kv_heads, head_dim, block)
    scale = 1 / math.sqrt(head_dim)
    assert_within(PAGED.paged_flex_attention(*inputs, scale, attend=flex_attention), ref, dtype)
    torch._dynamo.reset()
    module = PAGED.PagedDecodeAttention(heads, kv_heads, head_dim, block)
    assert_within(compiled_or_skip(lambda: module(*inputs)), ref, dtype)
    assert all(torch.equal(a, b) for a, b in zip(inputs, saved)), "inputs must not be modified"


def test_paged_block_mask_lists_each_sequences_pages_once_and_counts_every_logical_position():
    block, num_blocks = 4, 10
    _, _, _, tables, lens = paged_inputs(6, 2, 16, block, num_blocks, 4, torch.float32)
    mask, score_mod = PAGED.paged_block_mask(tables, lens, num_blocks, block, group=3)
    slots = torch.arange(num_blocks * block)
    counts = torch.zeros(4, num_blocks * block, dtype=torch.float64)
    for b, length in enumerate(lens.tolist()):
        for t in range(length):
            counts[b, int(tables[b, t // block]) * block + t % block] += 1
        pages = tables[b, : -(-length // block)]
        listed = mask.kv_indices[b, 0, 0, : int(mask.kv_num_blocks[b, 0, 0])]
        assert listed.tolist() == sorted(set(pages.tolist()))
        index = torch.tensor(b), torch.tensor(0), torch.tensor(0)
        log_count = score_mod(torch.zeros(slots.shape, dtype=torch.float64), *index, slots)
        torch.testing.assert_close(log_count.exp(), counts[b], rtol=1e-12, atol=0)
        assert torch.equal(mask.mask_mod(*index, slots), counts[b] > 0)
    repeated = int(tables[0, 1]) * block
    assert counts[0, repeated: repeated + block].min() >= 2  # named for two full pages of sequence 0
    tail = int(tables[2, 0]) * block  # sequence 2's first page, and its tail page holding block // 2 tokens
    assert counts[2, tail: tail + block].tolist() == [2.0] * (block // 2) + [1.0] * (block - block // 2)


def test_paged_flex_hands_the_kernel_views_of_the_cache_not_copies():
    inputs = paged_inputs(6, 2, 16, 4, 10, 4, torch.bfloat16)
    seen = {}

    def spy(q, k, v, **kwargs):
        seen.update({name: t.untyped_storage().data_ptr() for name, t in (("q", q), ("k", k), ("v", v))})
        return flex_attention(q, k, v, **kwargs)

    PAGED.paged_flex_attention(*inputs, 0.25, attend=spy)
    assert seen == {"q": inputs[0].data_ptr(), "k": inputs[1].data_ptr(), "v": inputs[2].data_ptr()}


def test_the_compiled_paged_kernel_reads_only_the_pages_its_block_mask_lists():
    """Dropping sequence 0's last listed page changes its output and no other sequence's."""
    heads, kv_heads, head_dim, block, num_blocks = 6, 2, 16, 4, 10
    query, key_cache, value_cache, tables, lens = paged_inputs(heads, kv_heads, head_dim, block, num_blocks, 4,
                                                               torch.float32)
    mask, score_mod = PAGED.paged_block_mask(tables, lens, num_blocks, block, group=3)
    q = query.view(4, kv_heads, 3, head_dim)
    k, v = (c.view(1, -1, kv_heads, head_dim).transpose(1, 2) for c in (key_cache, value_cache))
    torch._dynamo.reset()
    whole = compiled_or_skip(lambda: PAGED._compiled(q, k, v, score_mod=score_mod, block_mask=mask))
    mask.kv_num_blocks[0] -= 1
    cut = PAGED._compiled(q, k, v, score_mod=score_mod, block_mask=mask)
    assert not torch.allclose(whole[0], cut[0]) and torch.equal(whole[1:], cut[1:])


def test_new_paged_inputs_of_the_same_shapes_reuse_the_compiled_kernel():
    """The block mask and the score_mod are rebuilt every call from that call's tensors without a recompile."""
    torch._dynamo.reset()
    module = PAGED.PagedDecodeAttention(6, 2, 16, 4)
    compiled_or_skip(lambda: module(*paged_inputs(6, 2, 16, 4, 10, 4, torch.bfloat16, seed=0)))
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    for seed in (1, 2):
        inputs = paged_inputs(6, 2, 16, 4, 10, 4, torch.bfloat16, seed=seed)
        assert_within(module(*inputs), paged_reference(inputs, 6, 2, 16, 4), torch.bfloat16)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == graphs


# -------------------------------------------------------------------------------------- swinv2_window_attention


SWIN_ATOL = REGISTRY.get("swinv2_window_attention").tolerance["bfloat16"].atol


def swin_modules(heads: int, head_dim: int, window: int, seed: int = 0) -> tuple[torch.nn.Module, ...]:
    """The eager module in float64 with logit scales drawn as the manifest draws them, and the flex and sdpa
    modules with its state dict loaded strictly."""
    eager = eager_class("swinv2_window_attention")(heads, head_dim, window)
    with torch.no_grad():
        eager.logit_scale.normal_(2.3, 0.5, generator=torch.Generator().manual_seed(seed))
    flex = SWIN.Swinv2WindowAttention(heads, head_dim, window)
    sdpa = SWIN_SDPA.Swinv2WindowAttention(heads, head_dim, window)
    flex.load_state_dict(eager.state_dict(), strict=True)
    sdpa.load_state_dict(eager.state_dict(), strict=True)
    return eager.double(), flex, sdpa


def shifted_window_mask(heads: int, window: int) -> torch.Tensor:
    """transformers' cyclic-shift mask (0 / -100) of the last window of a shifted Swinv2Layer on a 2 x 2 window
    grid, the window where four shifted regions meet, repeated per head: [heads, N, N]."""
    from transformers import Swinv2Config
    from transformers.models.swinv2.modeling_swinv2 import Swinv2Layer

    side = 2 * window
    layer = Swinv2Layer(Swinv2Config(window_size=window), heads * 8, (side, side), heads, shift_size=window // 2)
    mask = layer.get_attn_mask(side, side, torch.float64)[-1]
    assert mask.min() == -100 and mask.max() == 0
    return mask.expand(heads, -1, -1)


def test_swinv2_flex_passes_the_tasks_cpu_cases_compiled():
    torch._dynamo.reset()
    compiled_or_skip(lambda: judged_on_cpu_cases("swinv2_window_attention", SWIN.Swinv2WindowAttention))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=["bf16", "fp32"])
@pytest.mark.parametrize("shifted", [False, True], ids=["unshifted", "shift_mask_in_bias"])
@pytest.mark.parametrize("heads, head_dim, window, windows", [(3, 16, 4, 6), (2, 24, 7, 3)], ids=["w4", "w7"])
def test_swinv2_flex_matches_the_task_with_and_without_a_shift_mask_in_the_bias(heads, head_dim, window, windows,
                                                                               shifted, dtype):
    """The task takes no shift mask of its own (unshifted windows); a bias that carries a shifted window's -100
    entries must come out the same way, through flex_attention and compiled."""
    gen = torch.Generator().manual_seed(window)
    n = window * window
    q, k, v = (torch.randn(windows, heads, n, head_dim, generator=gen).to(dtype) for _ in range(3))
    bias = 16 * torch.rand(heads, n, n, generator=gen, dtype=torch.float64)
    if shifted:
        bias = bias + shifted_window_mask(heads, window)
    bias = bias.to(dtype)
    saved = [t.clone() for t in (q, k, v, bias)]
    eager, flex, _ = swin_modules(heads, head_dim, window)
    atol = SWIN_ATOL if dtype == torch.bfloat16 else None
    with torch.no_grad():
        ref = eager(q.double(), k.double(), v.double(), bias.double())
        assert_within(flex.flex(q, k, v, bias, flex_attention), ref, dtype, atol)
        # the max-autotune implementation's options: the flash-style kernel, whatever the window's token count
        assert_within(flex.flex(q, k, v, bias, flex_attention, SWIN._FLASH_STYLE), ref, dtype, atol)
        torch._dynamo.reset()
        assert_within(compiled_or_skip(lambda: flex(q, k, v, bias)), ref, dtype, atol)
    assert all(torch.equal(a, b) for a, b in zip((q, k, v, bias), saved)), "inputs must not be modified"


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=["bf16", "fp32"])
def test_swinv2_sdpa_cudnn_computes_the_task_with_the_bias_broadcast_over_windows(monkeypatch, dtype):
    """sdpa_cudnn.py's forward with SDPA's default CPU backend in place of cuDNN's (a GPU-only backend): the compiled
    normalisation, the logit scale folded into q and the [heads, N, N] bias expanded over windows compute the task,
    within the task's bf16 tolerance, and leave the inputs unchanged."""
    monkeypatch.setattr(SWIN_CUDNN, "sdpa_kernel", lambda backend: contextlib.nullcontext())
    heads, head_dim, window, windows = 3, 16, 4, 6
    gen = torch.Generator().manual_seed(7)
    n = window * window
    q, k, v = (torch.randn(windows, heads, n, head_dim, generator=gen).to(dtype) for _ in range(3))
    bias = (16 * torch.rand(heads, n, n, generator=gen) + shifted_window_mask(heads, window)).to(dtype)
    saved = [t.clone() for t in (q, k, v, bias)]
    eager, _, _ = swin_modules(heads, head_dim, window)
    cudnn = SWIN_CUDNN.Swinv2WindowAttention(heads, head_dim, window)
    cudnn.load_state_dict(eager.state_dict(), strict=True)
    torch._dynamo.reset()
    with torch.no_grad():
        ref = eager(q.double(), k.double(), v.double(), bias.double())
        out = compiled_or_skip(lambda: cudnn(q, k, v, bias))
    assert_within(out, ref, dtype, SWIN_ATOL if dtype == torch.bfloat16 else None)
    assert all(torch.equal(a, b) for a, b in zip((q, k, v, bias), saved)), "inputs must not be modified"


def test_swinv2_flex_in_bf16_is_at_least_as_accurate_as_the_sdpa_baseline():
    """The score_mod scales fp32 q.k of the inputs instead of rounding normalised q and k to bf16 first."""
    heads, head_dim, window, windows = 4, 32, 8, 16
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(windows, heads, window**2, head_dim, generator=gen).bfloat16() for _ in range(3))
    bias = (16 * torch.rand(heads, window**2, window**2, generator=gen)).bfloat16()
    eager, flex, sdpa = swin_modules(heads, head_dim, window, seed=1)
    torch._dynamo.reset()
    with torch.no_grad():
        ref = eager(q.double(), k.double(), v.double(), bias.double())
        outputs = {"flex": compiled_or_skip(lambda: flex(q, k, v, bias)), "sdpa": sdpa(q, k, v, bias)}
    rms = {name: (out.double() - ref).pow(2).mean().sqrt().item() for name, out in outputs.items()}
    assert rms["flex"] <= rms["sdpa"], rms


def test_a_zero_swinv2_query_or_key_row_has_cosine_zero_as_with_f_normalize():
    heads, head_dim, window = 2, 16, 4
    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, heads, window**2, head_dim, generator=gen) for _ in range(3))
    q[0, 1, 5] = 0
    k[1, 0, 2] = 0
    bias = 16 * torch.rand(heads, window**2, window**2, generator=gen)
    eager, flex, _ = swin_modules(heads, head_dim, window)
    with torch.no_grad():
        out = flex.flex(q, k, v, bias, flex_attention)
        assert torch.isfinite(out).all()
        assert_within(out, eager(q.double(), k.double(), v.double(), bias.double()), torch.float32)
