"""SGLang adapters (paged_decode_attention's decode kernel, mamba2_ssd's chunked SSD, causal_conv1d's varlen
prefill kernel, rope_3d's matrix RoPE) map the task's layout onto SGLang's exactly. SGLang is not installed for CI
(its wheel and import chain are large; the device carries it, scripts/pack-sglang.sh), so here its kernels are
replaced by PyTorch versions of their semantics as SGLang 0.5.23's source defines them (e.g. request b attends to
the pool slots kv_indices[kv_indptr[b]:kv_indptr[b + 1]] of a [slots, kv_heads, head_dim] pool, a split count a
request), and the arguments the adapter passes are checked. Where SGLang is installed, its real Triton kernels run
too, under the Triton interpreter in float32 and float16 (the interpreter mis-multiplies bfloat16 tensors: SGLang's
kernel gave errors near 1e9 in bfloat16 and 1e-6 in float32 there, 2026-12-02)."""

from __future__ import annotations

import importlib.util
import math
import sys
import types

import pytest
import torch
import torch.nn.functional as F
from task_library import REGISTRY, case_inputs, eager_class, fresh_adapter, judged_on_cpu_cases


TASK_DIR = REGISTRY.directory("paged_decode_attention")


def adapter_module(task: str = "paged_decode_attention"):
    """The adapter imported afresh (it binds SGLang's kernels at import), against whatever `sglang` is there now."""
    return fresh_adapter(task, "sglang.py")


class FakeSplitCounts:
    """get_num_kv_splits_triton's launch `[(1,)](num_kv_splits, seq_lens, num_seq, num_group, num_head,
    num_kv_head, max_kv_splits, device_core_count, MAX_NUM_SEQ=...)`: a split count in [1, max] a request."""

    def __init__(self, calls: list[dict]) -> None:
        self.calls = calls

    def __getitem__(self, grid):
        def launch(num_kv_splits, seq_lens, num_seq, num_group, num_head, num_kv_head, max_kv_splits, cores,
                   MAX_NUM_SEQ):  # noqa: N803 - SGLang's keyword
            self.calls.append(dict(grid=grid, num_seq=num_seq, num_group=num_group, max_kv_splits=max_kv_splits,
                                   max_num_seq=MAX_NUM_SEQ, heads=(num_head, num_kv_head)))
            num_kv_splits.copy_(torch.clamp(seq_lens // 16, 1, max_kv_splits))
        return launch


def fake_decode(calls: list[dict]):
    """decode_attention_fwd(q, k_buffer, v_buffer, o, kv_indptr, kv_indices, attn_logits, attn_lse, num_kv_splits,
    max_kv_splits, sm_scale, k_scale, v_scale): o[b] = softmax(q[b] K^T * sm_scale * k_scale) V * v_scale over
    request b's slots, each query head reading kv head h // (heads / kv_heads)."""

    def decode(q, k_buffer, v_buffer, o, kv_indptr, kv_indices, attn_logits, attn_lse, num_kv_splits, max_kv_splits,
               sm_scale, k_scale, v_scale, **options):
        calls.append(dict(k_buffer=k_buffer, v_buffer=v_buffer, logits=attn_logits.shape, lse=attn_lse.shape,
                          max_kv_splits=max_kv_splits, sm_scale=sm_scale, scales=(k_scale, v_scale), options=options))
        assert kv_indptr.dtype == kv_indices.dtype == num_kv_splits.dtype == torch.int32
        group = q.shape[1] // k_buffer.shape[1]
        for b in range(q.shape[0]):
            slots = kv_indices[kv_indptr[b]:kv_indptr[b + 1]].long()
            k = k_buffer[slots].float().repeat_interleave(group, dim=1)  # [tokens, heads, head_dim]
            v = v_buffer[slots].float().repeat_interleave(group, dim=1)
            weights = torch.softmax(torch.einsum("hd,thd->ht", q[b].float(), k) * sm_scale * k_scale, dim=-1)
            o[b] = (torch.einsum("ht,thd->hd", weights, v) * v_scale).to(o.dtype)
    return decode


def fake_chunk_scan(calls: list[dict]):
    """mamba_chunk_scan_combined(x, dt, A, B, C, chunk_size, D, z, dt_bias, dt_softplus, out, return_final_states,
    state_dtype): y written into `out`, the final state [batch, heads, headdim, dstate] returned in state_dtype (the
    SSD recurrence itself, from the task's eager module)."""
    eager = eager_class("mamba2_ssd")

    def scan(x, dt, A, B, C, chunk_size, D=None, z=None, dt_bias=None, dt_softplus=False, out=None,
             return_final_states=False, state_dtype=None, **options):
        calls.append(dict(chunk_size=chunk_size, dt_softplus=dt_softplus, out=out, x=x,
                          return_final_states=return_final_states, state_dtype=state_dtype, options=options))
        y, state = eager(chunk_size, dt_softplus)(x, dt, A, B, C, D, z, dt_bias)
        out.copy_(y)
        return state.to(state_dtype or C.dtype) if return_final_states else None
    return scan


def fake_causal_conv1d(calls: list[dict]):
    """causal_conv1d_fn(x, weight, bias, conv_states, query_start_loc, seq_lens_cpu, cache_indices, has_initial_state,
    activation): x [dim, total_tokens], sequence i its tokens query_start_loc[i]:query_start_loc[i + 1], from zeros
    (no has_initial_state), in fp32; conv_states[i] left holding its last width - 1 inputs; out like x (x's strides,
    torch.empty_like)."""

    def conv(x, weight, bias, conv_states, query_start_loc, seq_lens_cpu, cache_indices=None, has_initial_state=None,
             activation="silu", **options):
        calls.append(dict(x=x, weight=weight, bias=bias, conv_states=conv_states, query_start_loc=query_start_loc,
                          seq_lens_cpu=seq_lens_cpu, cache_indices=cache_indices,
                          has_initial_state=has_initial_state, activation=activation, options=options))
        assert x.dim() == 2 and query_start_loc.dtype == torch.int32
        width = weight.shape[1]
        out = torch.empty_like(x)
        for i, length in enumerate(seq_lens_cpu):
            start = int(query_start_loc[i])
            assert int(query_start_loc[i + 1]) - start == length
            padded = F.pad(x[:, start:start + length].float(), (width - 1, 0))
            y = F.conv1d(padded[None], weight.float()[:, None], None if bias is None else bias.float(),
                         groups=x.shape[0])[0]
            out[:, start:start + length] = F.silu(y) if activation in ("silu", "swish") else y
            conv_states[i] = padded[:, -(width - 1):]
        return out
    return conv


def fake_matrix_rope(calls: list[dict]):
    """apply_matrix_rope(x, rope, dtype): x contiguous [batch, seq, heads, dim], rope fp32 [batch or 1, seq, 1,
    dim / 2, 2, 2]; the channel pair (2i, 2i + 1) of token s becomes rope[b, s, 0, i] @ (x[2i], x[2i + 1]) in fp32,
    rounded to dtype (x's by default): Kandinsky 6's torch path (kandinsky6._apply_rotary) off CUDA."""

    def apply(x, rope, dtype=None):
        calls.append(dict(x=x, rope=rope, dtype=dtype))
        batch, seq, heads, dim = x.shape
        assert x.is_contiguous() and dim % 2 == 0 and rope.dtype == torch.float32
        assert rope.shape[0] in (1, batch) and rope.shape[1:] == (seq, 1, dim // 2, 2, 2)
        dtype = x.dtype if dtype is None else dtype
        pairs = x.to(dtype).reshape(batch, seq, heads, dim // 2, 1, 2).to(torch.float32)
        return (rope * pairs).sum(dim=-1).reshape(x.shape).to(dtype)
    return apply


@pytest.fixture
def fake_sglang(monkeypatch):
    calls: dict[str, list[dict]] = {"decode": [], "splits": [], "scan": [], "conv": [], "rope": []}
    for name in ("sglang", "sglang.kernels", "sglang.kernels.ops", "sglang.kernels.ops.attention",
                 "sglang.kernels.ops.mamba", "sglang.kernels.ops.diffusion", "sglang.kernels.ops.diffusion.rope"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    decode = types.ModuleType("sglang.kernels.ops.attention.decode_attention")
    decode.decode_attention_fwd = fake_decode(calls["decode"])
    metadata = types.ModuleType("sglang.kernels.ops.attention.metadata")
    metadata.get_num_kv_splits_triton = FakeSplitCounts(calls["splits"])
    mamba = types.ModuleType("sglang.kernels.ops.mamba.triton_ops")
    mamba.mamba_chunk_scan_combined = fake_chunk_scan(calls["scan"])
    conv = types.ModuleType("sglang.kernels.ops.mamba.causal_conv1d_triton")
    conv.causal_conv1d_fn = fake_causal_conv1d(calls["conv"])
    rope = types.ModuleType("sglang.kernels.ops.diffusion.rope.matrix_rope")
    rope.apply_matrix_rope = fake_matrix_rope(calls["rope"])
    for module in (decode, metadata, mamba, conv, rope):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    return calls


def test_the_block_table_becomes_each_requests_slots_back_to_back_and_the_tail_is_never_read(fake_sglang):
    token_slots = adapter_module().token_slots
    block_tables = torch.tensor([[3, 3, 0], [1, 2, 4]], dtype=torch.int32)  # a block named twice, blocks shared
    seq_lens = torch.tensor([5, 9], dtype=torch.int32)
    kv_indptr, kv_indices = token_slots(block_tables, seq_lens, block_size=4)
    assert kv_indptr.tolist() == [0, 5, 14] and kv_indptr.dtype == kv_indices.dtype == torch.int32
    assert kv_indices[:5].tolist() == [12, 13, 14, 15, 12]
    assert kv_indices[5:14].tolist() == [4, 5, 6, 7, 8, 9, 10, 11, 16]
    assert kv_indices.numel() == 2 * 12 + 1  # sized for full tables: its used length is known only on the device


def test_the_adapter_passes_every_cpu_case_against_the_float64_oracle(fake_sglang):
    judged_on_cpu_cases("paged_decode_attention", adapter_module().PagedDecodeAttention)


def test_the_cache_is_read_in_place_with_sglangs_defaults(fake_sglang):
    module = adapter_module()
    case = REGISTRY.get("paged_decode_attention").case("cpu_gqa")
    inputs = case_inputs("paged_decode_attention", "cpu_gqa")
    attention = module.PagedDecodeAttention(**case.init)
    out = attention(**inputs)
    assert out.shape == inputs["query"].shape and out.dtype == inputs["query"].dtype
    (decode,), (splits,) = fake_sglang["decode"], fake_sglang["splits"]
    # the pool is a view of the cache (no copy), one slot a row
    assert decode["k_buffer"].data_ptr() == inputs["key_cache"].data_ptr()
    assert decode["v_buffer"].data_ptr() == inputs["value_cache"].data_ptr()
    assert decode["k_buffer"].shape == (40 * 4, 2, 16)
    assert decode["max_kv_splits"] == splits["max_kv_splits"] == module.MAX_KV_SPLITS == 8
    assert decode["logits"] == (5, 6, 8, 16) and decode["lse"] == (5, 6, 8)
    assert math.isclose(decode["sm_scale"], 1 / math.sqrt(16)) and decode["scales"] == (1.0, 1.0)
    assert decode["options"] == {}  # page_size 1, no logit cap, sinks or score_mod: plain decoding
    assert splits["grid"] == (1,) and splits["num_seq"] == 5 and splits["num_group"] == 1
    assert splits["max_num_seq"] == 256 and splits["heads"] == (6, 2)


def test_the_adapter_matches_the_eager_module_on_a_larger_batch(fake_sglang):
    # more than 256 requests: SGLang schedules the split heuristic over the next power of two
    module = adapter_module()
    torch.manual_seed(0)
    init = dict(num_heads=4, num_kv_heads=2, head_dim=8, block_size=2)
    block_tables = torch.randint(0, 50, (300, 3), dtype=torch.int32)
    seq_lens = torch.randint(3, 7, (300,), dtype=torch.int32)
    cache = dict(key_cache=torch.randn(50, 2, 2, 8), value_cache=torch.randn(50, 2, 2, 8))
    query = torch.randn(300, 4, 8)
    out = module.PagedDecodeAttention(**init)(query, **cache, block_tables=block_tables, seq_lens=seq_lens)
    expected = eager_class("paged_decode_attention")(**init)(query, **cache, block_tables=block_tables,
                                                              seq_lens=seq_lens)
    torch.testing.assert_close(out, expected)
    assert fake_sglang["splits"][0]["max_num_seq"] == 512


def test_the_ssd_adapter_passes_every_cpu_case_against_the_float64_oracle(fake_sglang):
    judged_on_cpu_cases("mamba2_ssd", adapter_module("mamba2_ssd").MambaChunkScan)


def test_the_ssd_adapter_asks_for_float32_states_and_writes_y_into_a_buffer_like_x(fake_sglang):
    case = REGISTRY.get("mamba2_ssd").case("cpu_groups_gate")
    inputs = case_inputs("mamba2_ssd", "cpu_groups_gate")
    y, state = adapter_module("mamba2_ssd").MambaChunkScan(**case.init)(**inputs)
    (scan,) = fake_sglang["scan"]
    assert scan["out"] is y and y.shape == inputs["x"].shape and y.dtype == inputs["x"].dtype
    assert scan["x"] is inputs["x"] and scan["options"] == {}  # no initial states, seq_idx or varlen: one pass
    assert scan["return_final_states"] and scan["state_dtype"] == torch.float32 and state.dtype == torch.float32
    assert (scan["chunk_size"], scan["dt_softplus"]) == (case.init["chunk_size"], case.init["dt_softplus"])


def interpreter_shims(monkeypatch) -> None:
    """What SGLang's kernels need of a GPU that the Triton interpreter lacks: the SSD wrappers enter
    torch.get_device_module(device).device(index), and an autotuned kernel benchmarks its configs on a driver
    (every config timed alike here, so the first one that fits runs)."""
    import contextlib

    from triton.runtime.autotuner import Autotuner

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(torch.cpu, "device", lambda index=None: contextlib.nullcontext(), raising=False)
    monkeypatch.setattr(Autotuner, "_bench", lambda self, *args, config, **meta: [1.0, 1.0, 1.0])


@pytest.mark.skipif(importlib.util.find_spec("sglang") is None, reason="SGLang is not installed (the device has it)")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_sglangs_own_ssd_kernels_match_the_oracle_under_the_interpreter(dtype, monkeypatch):
    interpreter_shims(monkeypatch)
    module = adapter_module("mamba2_ssd")
    eager = eager_class("mamba2_ssd")
    torch.manual_seed(0)
    for batch, seqlen, heads, headdim, groups, dstate, chunk, gated in [(2, 24, 4, 8, 2, 16, 8, True),
                                                                        (1, 40, 2, 16, 1, 8, 16, False)]:
        x = torch.randn(batch, seqlen, heads, headdim, dtype=dtype)
        dt = torch.randn(batch, seqlen, heads, dtype=dtype)
        A = torch.empty(heads).uniform_(-16, -1)
        B, C = (torch.randn(batch, seqlen, groups, dstate, dtype=dtype) for _ in range(2))
        D = 1 + 0.1 * torch.randn(heads)
        z = torch.randn(batch, seqlen, heads, headdim, dtype=dtype) if gated else None
        dt_bias = torch.empty(heads).uniform_(-6.9, -2.3)
        y, state = module.MambaChunkScan(chunk, True)(x, dt, A, B, C, D, z, dt_bias)
        wide = [t.double() if t is not None else None for t in (x, dt, A, B, C, D, z, dt_bias)]
        y_oracle, state_oracle = eager(chunk, True)(*wide)
        tolerance = 1e-5 if dtype == torch.float32 else 5e-3
        assert (y.double() - y_oracle).abs().max() <= tolerance
        assert (state.double() - state_oracle).abs().max() <= tolerance


@pytest.mark.skipif(importlib.util.find_spec("sglang") is None, reason="SGLang is not installed (the device has it)")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_sglangs_own_triton_kernels_match_the_oracle_under_the_interpreter(dtype, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    module = adapter_module()
    eager = eager_class("paged_decode_attention")
    torch.manual_seed(0)
    for heads, kv_heads, head_dim, block_size, batch, max_blocks, num_blocks in [
            (6, 2, 16, 4, 5, 9, 40), (3, 1, 24, 16, 3, 7, 13), (4, 4, 32, 16, 2, 3, 6)]:
        query = torch.randn(batch, heads, head_dim, dtype=dtype) * 3
        cache = [torch.randn(num_blocks, block_size, kv_heads, head_dim, dtype=dtype) for _ in range(2)]
        block_tables = torch.randint(0, num_blocks, (batch, max_blocks), dtype=torch.int32)
        seq_lens = torch.randint(max_blocks * block_size // 2, max_blocks * block_size + 1, (batch,),
                                 dtype=torch.int32)
        init = (heads, kv_heads, head_dim, block_size)
        out = module.PagedDecodeAttention(*init)(query, *cache, block_tables, seq_lens)
        oracle = eager(*init)(query.double(), *(c.double() for c in cache), block_tables, seq_lens)
        tolerance = 1e-5 if dtype == torch.float32 else 3e-3
        assert (out.double() - oracle).abs().max() <= tolerance


def test_the_conv_adapter_passes_every_cpu_case_against_the_float64_oracle(fake_sglang):
    judged_on_cpu_cases("causal_conv1d", adapter_module("causal_conv1d").CausalConv1d)


def test_the_conv_adapter_reads_one_sequence_in_place_and_packs_several_token_major(fake_sglang):
    module = adapter_module("causal_conv1d")
    for case_name, packed_strides in [("cpu_plain_width3", (17, 1)), ("cpu_silu_bias", (1, 37))]:
        case = REGISTRY.get("causal_conv1d").case(case_name)
        x = case_inputs("causal_conv1d", case_name)["x"]
        batch, dim, seqlen = x.shape
        conv = module.CausalConv1d(**case.init)
        out = conv(x)
        assert out.shape == x.shape and out.dtype == x.dtype
        call = fake_sglang["conv"][-1]
        assert call["x"].shape == (dim, batch * seqlen) and call["x"].stride() == packed_strides
        assert (call["x"].data_ptr() == x.data_ptr()) == (batch == 1)  # one sequence: no copy
        assert call["weight"] is conv.weight and call["bias"] is conv.bias
        assert call["activation"] == case.init["activation"]
        assert call["query_start_loc"].tolist() == [seqlen * i for i in range(batch + 1)]
        assert call["seq_lens_cpu"] == [seqlen] * batch  # a host list: the grid needs no sync
        assert call["conv_states"].shape == (batch, dim, case.init["width"] - 1)
        assert call["conv_states"].dtype == x.dtype
        # every sequence from zeros, no cache slots, SGLang's defaults otherwise
        assert call["cache_indices"] is None and call["has_initial_state"] is None and call["options"] == {}
        conv(x)
        again = fake_sglang["conv"][-1]  # the varlen buffers are built once a shape
        assert again["conv_states"] is call["conv_states"] and again["query_start_loc"] is call["query_start_loc"]


def test_the_conv_adapter_matches_the_eager_module_off_the_cases_and_refuses_widths_the_kernel_lacks(fake_sglang):
    module = adapter_module("causal_conv1d")
    eager = eager_class("causal_conv1d")
    torch.manual_seed(0)
    for batch, dim, seqlen, width, bias, activation in [(3, 6, 2, 4, True, "silu"), (4, 9, 11, 2, False, "swish"),
                                                        (1, 5, 1, 3, True, None)]:
        reference = eager(dim, width, bias, activation)
        conv = module.CausalConv1d(dim, width, bias, activation)
        conv.load_state_dict(reference.state_dict())
        x = torch.randn(batch, dim, seqlen)
        torch.testing.assert_close(conv(x), reference(x))
        torch.testing.assert_close(conv(x[:1]), reference(x[:1]))  # a new batch size: new varlen buffers
    with pytest.raises(ValueError, match="widths"):
        module.CausalConv1d(8, 5, True, "silu")


def interpreter_bool_masks(monkeypatch) -> None:
    """The Triton interpreter (3.9) gives `(idx_token < segment_len) & (idx_feats < dim)` in SGLang's conv kernel
    int32 data under an int1 type, and its masked store refuses a mask that is not bool; compiled, it is a mask of
    bits. The store gets the same mask as bool."""
    from triton.runtime import interpreter

    store = interpreter.InterpreterBuilder.create_masked_store

    def create_masked_store(self, ptrs, value, mask, cache_policy):
        if mask.data.dtype != bool:
            mask = interpreter.TensorHandle(mask.data.astype(bool), mask.dtype)
        return store(self, ptrs, value, mask, cache_policy)

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(interpreter.InterpreterBuilder, "create_masked_store", create_masked_store)


@pytest.mark.skipif(importlib.util.find_spec("sglang") is None, reason="SGLang is not installed (the device has it)")
def test_sglangs_own_conv_kernel_matches_the_oracle_under_the_interpreter(monkeypatch):
    interpreter_bool_masks(monkeypatch)
    module = adapter_module("causal_conv1d")
    eager = eager_class("causal_conv1d")
    manifest = REGISTRY.get("causal_conv1d")
    shapes = [(c.init, c.dims["batch"], c.dims["seqlen"]) for c in manifest.cases if c.tier == "cpu"]
    shapes.append((dict(dim=300, width=4, bias=True, activation="silu"), 3, 2))  # two channel blocks, seqlen < 3
    torch.manual_seed(0)
    for init, batch, seqlen in shapes:  # float32: the interpreter mis-multiplies bfloat16
        reference = eager(**init)
        conv = module.CausalConv1d(**init)
        conv.load_state_dict(reference.state_dict())
        x = torch.randn(batch, init["dim"], seqlen)
        saved = x.clone()
        out = conv(x)
        oracle = reference.double()(x.double())
        assert out.shape == x.shape and out.dtype == torch.float32 and torch.equal(x, saved)
        assert (out.double() - oracle).abs().max() <= 1e-5
        last = F.pad(x, (init["width"] - 1, 0))[..., -(init["width"] - 1):]  # the kernel's prefill state update
        assert torch.equal(conv._conv_states, last)


def test_the_rope_adapter_passes_every_cpu_case_against_the_float64_oracle(fake_sglang):
    judged_on_cpu_cases("rope_3d", adapter_module("rope_3d").VJEPA2RotaryEmbedding3D)


def rope_matrices(head_dim: int, grid_size: int, position_ids: torch.Tensor) -> torch.Tensor:
    """The [tokens, head_dim / 2, 2, 2] matrices of V-JEPA 2's map in float64, from the eager module's positions:
    [[cos A, -sin A], [sin B, cos B]] for a pair whose channels have angles A and B, the identity past the
    segments."""
    eager = eager_class("rope_3d")(head_dim, grid_size)
    d = eager.axis_dim
    matrices = torch.eye(2, dtype=torch.float64).repeat(len(position_ids), head_dim // 2, 1, 1)
    for axis, pos in enumerate(eager.positions(position_ids)):
        for j in range(0, d, 2):
            a, b = (pos.double() * 10000.0 ** (-(c % (d // 2)) / (d // 2)) for c in (j, j + 1))
            matrices[:, (axis * d + j) // 2] = torch.stack([a.cos(), -a.sin(), b.sin(), b.cos()], -1).view(-1, 2, 2)
    return matrices


def test_the_rope_adapter_hands_q_and_k_in_place_with_one_fp32_table_built_from_position_ids(fake_sglang):
    module = adapter_module("rope_3d")
    for case_name in ("cpu_passthrough", "cpu_exact_thirds"):
        case = REGISTRY.get("rope_3d").case(case_name)
        inputs = case_inputs("rope_3d", case_name)
        rope = module.VJEPA2RotaryEmbedding3D(**case.init)
        q, k = rope(**inputs)
        assert q.shape == inputs["q"].shape and q.dtype == k.dtype == inputs["q"].dtype
        q_call, k_call = fake_sglang["rope"][-2:]
        # q and k read in place (no copy) with one table for both, the kernel's defaults otherwise
        assert q_call["x"].data_ptr() == inputs["q"].data_ptr() and k_call["x"].data_ptr() == inputs["k"].data_ptr()
        assert q_call["rope"] is k_call["rope"] and q_call["dtype"] is None and k_call["dtype"] is None
        table = q_call["rope"]
        head_dim, tokens = case.init["head_dim"], len(inputs["position_ids"])
        assert table.shape == (1, tokens, 1, head_dim // 2, 2, 2) and table.dtype == torch.float32
        expected = rope_matrices(head_dim, case.init["grid_size"], inputs["position_ids"])
        assert (table[0, :, 0].double() - expected).abs().max() <= 1e-6
        passthrough = 3 * rope.axis_dim // 2
        assert torch.equal(table[0, :, 0, passthrough:].abs(), expected[:, passthrough:].float())  # the identity
        # built in every call from position_ids: other ids, another table
        shuffled = inputs["position_ids"][torch.randperm(tokens, generator=torch.Generator().manual_seed(0))]
        rope(inputs["q"], inputs["k"], shuffled)
        expected = rope_matrices(head_dim, case.init["grid_size"], shuffled)
        assert (fake_sglang["rope"][-1]["rope"][0, :, 0].double() - expected).abs().max() <= 1e-6


def test_the_rope_adapter_matches_the_eager_module_off_the_cases_and_refuses_odd_head_dims(fake_sglang):
    module = adapter_module("rope_3d")
    eager = eager_class("rope_3d")
    torch.manual_seed(0)
    # V-JEPA 2's head_dim 64 (4 channels passed through) and 80 (2), one pair a segment, no segment at all
    for head_dim, grid_size, batch, tokens, heads in [(64, 4, 2, 40, 3), (80, 3, 1, 27, 2), (6, 2, 2, 9, 1),
                                                     (4, 2, 1, 5, 2)]:
        q, k = torch.randn(2, batch, tokens, heads, head_dim).unbind()
        position_ids = torch.randperm(3 * tokens)[:tokens]  # ids off arange: frames, rows and columns mixed
        for dtype in (torch.float32, torch.bfloat16):
            out = module.VJEPA2RotaryEmbedding3D(head_dim, grid_size)(q.to(dtype), k.to(dtype), position_ids)
            expected = eager(head_dim, grid_size)(q.to(dtype), k.to(dtype), position_ids)
            torch.testing.assert_close(out, expected)
    with pytest.raises(ValueError, match="odd"):
        module.VJEPA2RotaryEmbedding3D(21, 4)


def interpreted_matrix_rope(monkeypatch, module) -> None:
    """The adapter's apply_matrix_rope replaced by the wrapper's own launch of SGLang's kernel (grid, arguments and
    options as matrix_rope.apply_matrix_rope writes them), without the wrapper's CUDA guards (x.is_cuda,
    torch.cuda.device), which keep it off the CPU."""
    import triton
    from sglang.kernels.ops.diffusion.rope.matrix_rope import _matrix_rope_kernel

    def apply(x, rope, dtype=None):
        batch, seq, heads, dim = x.shape
        output = torch.empty_like(x, dtype=x.dtype if dtype is None else dtype)
        pairs = x.numel() // 2
        _matrix_rope_kernel[(triton.cdiv(pairs, 512),)](
            x, rope, output, pairs, SEQ=seq, HEADS=heads, HALF_DIM=dim // 2,
            BATCH_STRIDE=rope.stride(0) if rope.shape[0] != 1 else 0, SEQ_STRIDE=rope.stride(1),
            PAIR_STRIDE=rope.stride(3), ROW_STRIDE=rope.stride(4), COL_STRIDE=rope.stride(5), BLOCK=512,
            enable_fp_fusion=False,
        )
        return output

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(module, "apply_matrix_rope", apply)


@pytest.mark.skipif(importlib.util.find_spec("sglang") is None, reason="SGLang is not installed (the device has it)")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_sglangs_own_matrix_rope_kernel_matches_the_oracle_under_the_interpreter(dtype, monkeypatch):
    module = adapter_module("rope_3d")
    interpreted_matrix_rope(monkeypatch, module)
    eager = eager_class("rope_3d")
    manifest = REGISTRY.get("rope_3d")
    shapes = [(c.init, c.dims["batch"], c.dims["tokens"], c.dims["heads"]) for c in manifest.cases if c.tier == "cpu"]
    shapes.append((dict(head_dim=64, grid_size=4), 2, 40, 3))  # V-JEPA 2's head_dim, 4 channels passed through
    torch.manual_seed(0)
    for init, batch, tokens, heads in shapes:  # no bfloat16: the interpreter mis-multiplies it
        q, k = (torch.randn(batch, tokens, heads, init["head_dim"], dtype=dtype) * 2 for _ in range(2))
        saved = (q.clone(), k.clone())
        position_ids = torch.arange(tokens)
        out = module.VJEPA2RotaryEmbedding3D(**init)(q, k, position_ids)
        oracle = eager(**init)(q.double(), k.double(), position_ids)
        tolerance = 1e-5 if dtype == torch.float32 else 5e-3
        for x, y, z in zip(out, oracle, saved):
            assert y.shape == x.shape and x.dtype == dtype and (x.double() - y).abs().max() <= tolerance
            passthrough = 3 * (2 * ((init["head_dim"] // 3) // 2))
            assert torch.equal(x[..., passthrough:], z[..., passthrough:])  # exactly: the identity matrices
        assert torch.equal(q, saved[0]) and torch.equal(k, saved[1])
