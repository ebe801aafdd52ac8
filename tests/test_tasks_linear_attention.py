"""Spec of the linear-attention family's tasks (Mamba, Mamba2, Jamba, GLA, Qwen3-Next's gated delta rule, RWKV-7,
RetNet) beyond what tests/test_tasks.py checks for every task: each recurrence oracle computes what the model computes
(checked against an independent formulation), every chunked PyTorch production path equals the recurrence in float64
over several chunks and a ragged tail (the CPU cases are shorter than one chunk), the decode step continues the
prefill's state, the GPU-only FLA adapters pass the tasks' arguments as FLA takes them (against an `fla` whose ops
are FLA's documented recurrences), the Mamba layer is exactly its components, and the Triton reference candidates
match the float64 oracle on the CPU cases and on drawn shapes.

CPU only; TRITON_INTERPRET must be set before the candidate files are imported (their kernels are decorated then).
"""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from torch import nn  # noqa: E402

from fastkernels.build import build, eager_classes, oracle_inputs, reference_state  # noqa: E402
from fastkernels.composition import bind  # noqa: E402
from fastkernels.correctness import judge  # noqa: E402
from fastkernels.inputs import generator, make_inputs, stream_seed  # noqa: E402
from task_library import (  # noqa: E402,F401
    REGISTRY, ROOT, candidate_class, case_inputs, eager_class, fresh_adapter, judged_on_cpu_cases,
    production_class,
)

FAST = settings(max_examples=8, deadline=None)
F64 = torch.float64


def randn(*shape: int, seed: int, scale: float = 1.0, dtype: torch.dtype = F64) -> torch.Tensor:
    return (torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=F64) * scale).to(dtype)


def uniform(*shape: int, seed: int, low: float, high: float) -> torch.Tensor:
    return torch.rand(shape, generator=torch.Generator().manual_seed(seed), dtype=F64) * (high - low) + low


def assert_same(got, want, tol: float = 1e-9) -> None:
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=tol, atol=tol)


def assert_fp32_close(got, want) -> None:
    """The chunked production paths compute in fp32 whatever the input dtype (as the model code does): they must
    agree with the float64 recurrence to fp32 rounding, scaled by the output's magnitude."""
    for g, w in zip(got, want):
        assert g.shape == w.shape
        scale = float(w.abs().max()) + 1.0
        torch.testing.assert_close(g.to(F64), w, rtol=1e-5, atol=1e-5 * scale)


# ----------------------------------------------------------------------------------------- causal_conv1d


def test_causal_conv1d_oracle_is_a_left_padded_depthwise_conv1d_then_silu():
    cls = eager_class("causal_conv1d")
    for bias, activation in ((True, "silu"), (False, None)):
        module = cls(11, 4, bias, activation).to(F64)
        x = randn(2, 11, 30, seed=1)
        want = F.conv1d(F.pad(x, (3, 0)), module.weight[:, None], module.bias, groups=11)
        want = F.silu(want) if activation else want
        torch.testing.assert_close(module(x), want, rtol=1e-12, atol=1e-12)


def test_causal_conv1d_output_at_t_ignores_inputs_after_t():
    module = eager_class("causal_conv1d")(5, 4, True, "silu").to(F64)
    x = randn(1, 5, 20, seed=2)
    later = x.clone()
    later[..., 12:] += 10.0
    assert torch.equal(module(x)[..., :12], module(later)[..., :12])
    assert not torch.equal(module(x)[..., 12:], module(later)[..., 12:])


def test_causal_conv1d_reference_candidate_passes_the_cpu_cases():
    judged_on_cpu_cases("causal_conv1d", candidate_class("causal_conv1d"))


@FAST
@given(batch=st.integers(1, 3), dim=st.integers(1, 70), seqlen=st.integers(1, 300), width=st.integers(2, 4),
       bias=st.booleans(), silu=st.booleans(), bf16=st.booleans(), view=st.booleans(), seed=st.integers(0, 2**16))
def test_causal_conv1d_reference_candidate_matches_float64_oracle(batch, dim, seqlen, width, bias, silu, bf16,
                                                                  view, seed):
    """Any shape, bias or not, SiLU or not; `view` hands it x as a [batch, dim, seqlen] slice of a [batch, seqlen,
    2 * dim] tensor, as the Mamba mixer does with in_proj's output."""
    dtype = torch.bfloat16 if bf16 else torch.float32
    activation = "silu" if silu else None
    eager = eager_class("causal_conv1d")(dim, width, bias, activation)
    cand = candidate_class("causal_conv1d")(dim, width, bias, activation)
    cand.load_state_dict(eager.state_dict())
    x = randn(batch, seqlen, 2 * dim, seed=seed, dtype=dtype).transpose(1, 2)[:, :dim] if view else \
        randn(batch, dim, seqlen, seed=seed, dtype=dtype)
    with torch.no_grad():
        got = cand.to(dtype)(x)
        want = eager.to(F64)(x.to(F64))
    atol, rtol = (1e-2, 1.6e-2) if bf16 else (1e-5, 1e-5)
    assert got.dtype == dtype and got.shape == want.shape
    assert ((got.to(F64) - want).abs() <= atol + rtol * want.abs()).all()


# ---------------------------------------------------------------------------- selective scan and Mamba2 SSD


def test_selective_scan_oracle_is_the_closed_form_sum_over_past_steps():
    """y_t = sum_{s<=t} C_t . (exp(sum_{s<r<=t} dt_r A) dt_s B_s u_s) + D u_t, times silu(z_t)."""
    batch, dim, state, seqlen = 1, 3, 4, 9
    u, delta, z = (randn(batch, dim, seqlen, seed=seed) for seed in (3, 4, 5))
    A, D, bias = -uniform(dim, state, seed=6, low=1, high=4), randn(dim, seed=7), randn(dim, seed=8)
    B, C = randn(batch, state, seqlen, seed=9), randn(batch, state, seqlen, seed=10)
    y, last = eager_class("selective_scan")(True)(u, delta, A, B, C, D, z, bias)
    dt = F.softplus(delta + bias[:, None])
    cum = torch.cumsum(dt, dim=-1)                                                  # [batch, dim, seqlen]
    want = torch.zeros(batch, dim, seqlen, dtype=F64)
    for t in range(seqlen):
        for s in range(t + 1):
            decay = torch.exp((cum[..., t] - cum[..., s])[..., None] * A)           # [batch, dim, state]
            h = decay * (dt[..., s] * u[..., s])[..., None] * B[:, None, :, s]
            want[..., t] += (h * C[:, None, :, t]).sum(-1)
    want = (want + D[:, None] * u) * F.silu(z)
    torch.testing.assert_close(y, want, rtol=1e-10, atol=1e-10)
    assert last.shape == (batch, dim, state)


def test_selective_scan_production_equals_the_recurrence_in_float64():
    inputs = case_inputs("selective_scan", "cpu_full")
    inputs = oracle_inputs(inputs)
    assert_fp32_close(production_class("selective_scan", "torch_scan")(True)(**inputs),
                eager_class("selective_scan")(True)(**inputs))


def test_selective_scan_reference_candidate_passes_the_cpu_cases():
    judged_on_cpu_cases("selective_scan", candidate_class("selective_scan"))


@FAST
@given(batch=st.integers(1, 2), dim=st.integers(1, 70), dstate=st.integers(1, 17), seqlen=st.integers(1, 24),
       gate=st.booleans(), bf16=st.booleans(), mixer_layout=st.booleans(), seed=st.integers(0, 2**16))
def test_selective_scan_reference_candidate_matches_float64_oracle(batch, dim, dstate, seqlen, gate, bf16,
                                                                   mixer_layout, seed):
    """Any shape, with or without the z gate; `mixer_layout` hands delta, B and C over as the Mamba mixer does:
    transposed views of [batch, seqlen, *] projections."""
    dtype = torch.bfloat16 if bf16 else torch.float32

    def seq_major(rows: int, s: int) -> torch.Tensor:  # [batch, rows, seqlen], maybe a transposed view
        if mixer_layout:
            return randn(batch, seqlen, rows, seed=s, dtype=dtype).transpose(1, 2)
        return randn(batch, rows, seqlen, seed=s, dtype=dtype)

    u, delta, B, C = seq_major(dim, seed), seq_major(dim, seed + 1), seq_major(dstate, seed + 2), \
        seq_major(dstate, seed + 3)
    A = -uniform(dim, dstate, seed=seed + 4, low=1, high=16).float()
    D, bias = randn(dim, seed=seed + 5).float(), uniform(dim, seed=seed + 6, low=-6.9, high=-2.3).float()
    z = randn(batch, dim, seqlen, seed=seed + 7, dtype=dtype) if gate else None
    with torch.no_grad():
        y, last = candidate_class("selective_scan")(True)(u, delta, A, B, C, D, z, bias)
        want_y, want_last = eager_class("selective_scan")(True)(
            *(t.to(F64) for t in (u, delta, A, B, C, D)), None if z is None else z.to(F64), bias.to(F64))
    assert y.dtype == dtype and last.dtype == torch.float32
    atol, rtol = (1e-2, 1.6e-2) if bf16 else (1e-5, 1e-5)
    for got, want in ((y, want_y), (last, want_last)):
        assert got.shape == want.shape
        assert ((got.to(F64) - want).abs() <= atol + rtol * want.abs()).all()


@pytest.mark.parametrize("seqlen, chunk", [(150, 64), (37, 8), (16, 16)])
def test_mamba2_chunked_ssd_equals_the_recurrence_over_several_chunks(seqlen, chunk):
    batch, heads, headdim, groups, dstate = 2, 4, 3, 2, 5
    args = (randn(batch, seqlen, heads, headdim, seed=11), randn(batch, seqlen, heads, seed=12),
            -uniform(heads, seed=13, low=1, high=16), randn(batch, seqlen, groups, dstate, seed=14),
            randn(batch, seqlen, groups, dstate, seed=15), randn(heads, seed=16),
            randn(batch, seqlen, heads, headdim, seed=17), uniform(heads, seed=18, low=-6.9, high=-2.3))
    assert_fp32_close(production_class("mamba2_ssd", "torch_ssd")(chunk, True)(*args),
                eager_class("mamba2_ssd")(chunk, True)(*args))


def test_mamba2_ssd_is_scalar_decay_linear_attention_as_the_fla_adapter_maps_it():
    """The FLA adapter's identity: SSD = simple GLA with q = C, k = B, v = dt x, log decay dt A, scale 1, plus D x.
    Checked against retention-style masked attention: y_t = sum_{s<=t} exp(G_t - G_s) (C_t . B_s) dt_s x_s."""
    batch, seqlen, heads, headdim, dstate = 1, 12, 2, 3, 4
    x, dt_in = randn(batch, seqlen, heads, headdim, seed=19), randn(batch, seqlen, heads, seed=20)
    A, B, C = -uniform(heads, seed=21, low=1, high=3), randn(batch, seqlen, 1, dstate, seed=22), \
        randn(batch, seqlen, 1, dstate, seed=23)
    y, _ = eager_class("mamba2_ssd")(256, True)(x, dt_in, A, B, C)
    dt = F.softplus(dt_in)
    G = torch.cumsum(dt * A, dim=1)                                                 # [batch, seqlen, heads]
    scores = torch.einsum("btn,bsn->bts", C[:, :, 0], B[:, :, 0])[..., None]       # shared by both heads
    decay = torch.exp(G[:, :, None, :] - G[:, None, :, :]).masked_fill(
        ~torch.tril(torch.ones(seqlen, seqlen, dtype=torch.bool))[None, :, :, None], 0.0)
    want = torch.einsum("btsh,bshp->bthp", scores * decay, dt[..., None] * x)
    torch.testing.assert_close(y, want, rtol=1e-10, atol=1e-10)


# ------------------------------------------------------------------------ GLA, retention, RWKV-7 and GDR


def gla_args(batch, seqlen, heads, dk, dv, seed, state=True):
    return (randn(batch, seqlen, heads, dk, seed=seed), randn(batch, seqlen, heads, dk, seed=seed + 1),
            randn(batch, seqlen, heads, dv, seed=seed + 2), -uniform(batch, seqlen, heads, dk, seed=seed + 3,
                                                                     low=0, high=1.5),
            randn(batch, heads, dk, dv, seed=seed + 4) if state else None)


def test_gla_with_zero_gates_is_causal_linear_attention():
    q, k, v, g, _ = gla_args(2, 13, 2, 4, 5, seed=30, state=False)
    o, state = eager_class("gla_chunk")()(q, k, v, torch.zeros_like(g))
    mask = torch.tril(torch.ones(13, 13, dtype=torch.bool))
    scores = torch.einsum("bthk,bshk->bhts", q, k).masked_fill(~mask, 0.0) * 4 ** -0.5
    torch.testing.assert_close(o, torch.einsum("bhts,bshv->bthv", scores, v), rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(state, torch.einsum("bshk,bshv->bhkv", k, v), rtol=1e-10, atol=1e-10)


def test_retention_oracle_is_retnets_parallel_form_with_decays_one_minus_two_to_the_minus_five_minus_h():
    heads, seqlen = 4, 20
    q, k = randn(1, seqlen, heads, 6, seed=31), randn(1, seqlen, heads, 6, seed=32)
    v = randn(1, seqlen, heads, 5, seed=33)
    o, _ = eager_class("retention")()(q, k, v)
    gamma = 1 - 2.0 ** (-5.0 - torch.arange(heads, dtype=F64))
    gap = torch.arange(seqlen)[:, None] - torch.arange(seqlen)[None, :]
    decay = (gamma[:, None, None] ** gap.clamp(min=0)) * (gap >= 0)                # [heads, t, s]
    scores = torch.einsum("thk,shk->hts", q[0], k[0]) * 6 ** -0.5 * decay
    torch.testing.assert_close(o[0], torch.einsum("hts,shv->thv", scores, v[0]), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("task, seqlen", [("gla_chunk", 75), ("retention", 150), ("rwkv7_wkv", 37),
                                          ("gated_delta_rule", 150)])
@pytest.mark.parametrize("with_state", [True, False])
def test_chunked_production_equals_the_recurrence_over_several_chunks(task, seqlen, with_state):
    """GLA chunks by 32, retention and the gated delta rule by 64, RWKV-7 by 16: the lengths span several chunks
    and end mid-chunk, so the inter-chunk state and the padded tail are both exercised (unlike the CPU cases)."""
    init = {"use_qk_l2norm": True} if task == "gated_delta_rule" else {}
    if task == "gla_chunk":
        q, k, v, g, s0 = gla_args(2, seqlen, 3, 8, 6, seed=40, state=with_state)
        args = (q, k, v, g, s0)
    elif task == "retention":
        q, k, v, _, s0 = gla_args(1, seqlen, 5, 8, 6, seed=41, state=with_state)
        args = (q, k, v, s0)
    elif task == "rwkv7_wkv":
        r, k, v, _, s0 = gla_args(2, seqlen, 2, 8, 8, seed=42, state=with_state)
        w = -uniform(2, seqlen, 2, 8, seed=47, low=0.001, high=0.6065)
        kk = F.normalize(randn(2, seqlen, 2, 8, seed=48), dim=-1)
        args = (r, w, k, v, kk, uniform(2, seqlen, 2, 8, seed=49, low=0, high=1), s0)
    else:
        q, k = randn(2, seqlen, 2, 8, seed=43), randn(2, seqlen, 2, 8, seed=44)
        v, g = randn(2, seqlen, 4, 6, seed=45), -uniform(2, seqlen, 4, seed=46, low=0, high=1)
        beta = uniform(2, seqlen, 4, seed=50, low=0, high=1)
        args = (q, k, v, g, beta, randn(2, 4, 8, 6, seed=51) if with_state else None)
    assert_fp32_close(production_class(task, "torch_chunk")(**init)(*args), eager_class(task)(**init)(*args))


def test_rwkv7_transition_removes_along_kk_and_decays_elsewhere():
    """With k = 0 the state evolves only by the transition diag(exp(w)) - (kk a)^T kk: from S0, one step gives
    exp(w) * S0 - (kk * a)^T (kk S0), which the oracle's final state must equal."""
    r, _, v, _, s0 = gla_args(1, 1, 1, 6, 4, seed=52)
    w, kk = -uniform(1, 1, 1, 6, seed=53, low=0, high=0.6), F.normalize(randn(1, 1, 1, 6, seed=54), dim=-1)
    a = uniform(1, 1, 1, 6, seed=55, low=0, high=1)
    _, state = eager_class("rwkv7_wkv")()(r, w, torch.zeros_like(r), v, kk, a, s0)
    kk0, a0, s = kk[0, 0, 0], a[0, 0, 0], s0[0, 0]
    want = torch.exp(w[0, 0, 0])[:, None] * s - torch.outer(kk0 * a0, kk0 @ s)
    torch.testing.assert_close(state[0, 0], want, rtol=1e-12, atol=1e-12)


def test_gated_delta_rule_with_beta_one_and_no_decay_writes_v_at_k():
    """beta = 1, g = 0 and a unit key: after the update, reading the state at that key gives back exactly v."""
    q, k, v = randn(1, 1, 1, 8, seed=56), randn(1, 1, 1, 8, seed=57), randn(1, 1, 1, 6, seed=58)
    s0 = randn(1, 1, 8, 6, seed=59)
    _, state = eager_class("gated_delta_rule")(True)(q, k, v, torch.zeros(1, 1, 1, dtype=F64),
                                                     torch.ones(1, 1, 1, dtype=F64), s0)
    unit = k[0, 0, 0] / k[0, 0, 0].norm()
    torch.testing.assert_close(unit @ state[0, 0], v[0, 0, 0], rtol=1e-6, atol=1e-6)  # l2norm's eps 1e-6


def test_decode_step_continues_the_prefill_state():
    """Prefill T tokens with the chunked task, then one decode step from its final state: the same output and state
    as a prefill of T + 1 tokens (in float64), and the same as one step of the prefill task itself."""
    T = 10
    q, k = randn(2, T + 1, 2, 8, seed=60), randn(2, T + 1, 2, 8, seed=61)
    v, g = randn(2, T + 1, 4, 6, seed=62), -uniform(2, T + 1, 4, seed=63, low=0, high=1)
    beta = uniform(2, T + 1, 4, seed=64, low=0, high=1)
    prefill, decode = eager_class("gated_delta_rule")(True), eager_class("gated_delta_rule_decode")(True)
    o_all, s_all = prefill(q, k, v, g, beta)
    _, s_head = prefill(q[:, :T], k[:, :T], v[:, :T], g[:, :T], beta[:, :T])
    last = (q[:, T:], k[:, T:], v[:, T:], g[:, T:], beta[:, T:], s_head)
    assert_same(decode(*last), (o_all[:, T:], s_all))
    assert_fp32_close(production_class("gated_delta_rule_decode", "torch_native")(True)(*last), (o_all[:, T:], s_all))
    assert_same(decode(*last), prefill(*last))


def test_gated_delta_rule_decode_reference_candidate_passes_the_cpu_cases():
    judged_on_cpu_cases("gated_delta_rule_decode", candidate_class("gated_delta_rule_decode"))


@FAST
@given(batch=st.integers(1, 4), key_heads=st.integers(1, 3), group=st.integers(1, 3), dk=st.integers(2, 130),
       dv=st.integers(1, 140), bf16=st.booleans(), seed=st.integers(0, 2**16))
def test_gated_delta_rule_decode_reference_candidate_matches_float64_oracle(batch, key_heads, group, dk, dv, bf16,
                                                                            seed):
    dtype = torch.bfloat16 if bf16 else torch.float32
    heads = key_heads * group
    q, k = randn(batch, 1, key_heads, dk, seed=seed, dtype=dtype), randn(batch, 1, key_heads, dk, seed=seed + 1,
                                                                          dtype=dtype)
    v = randn(batch, 1, heads, dv, seed=seed + 2, scale=64.0, dtype=dtype)
    g = (-uniform(batch, 1, heads, seed=seed + 3, low=0.001, high=1)).to(dtype)
    beta = uniform(batch, 1, heads, seed=seed + 4, low=0, high=1).to(dtype)
    s0 = randn(batch, heads, dk, dv, seed=seed + 5, scale=4.0, dtype=torch.float32)
    before = [t.clone() for t in (q, k, v, g, beta, s0)]
    with torch.no_grad():
        o, state = candidate_class("gated_delta_rule_decode")(True)(q, k, v, g, beta, s0)
        want_o, want_s = eager_class("gated_delta_rule_decode")(True)(*(t.to(F64) for t in (q, k, v, g, beta, s0)))
    assert all(torch.equal(a, b) for a, b in zip(before, (q, k, v, g, beta, s0)))
    assert o.dtype == dtype and state.dtype == torch.float32 and state.shape == s0.shape
    atol, rtol = (1e-2, 1.6e-2) if bf16 else (1e-5, 1e-5)
    for got, want in ((o, want_o), (state, want_s)):
        assert ((got.to(F64) - want).abs() <= atol + rtol * want.abs()).all()


# ------------------------------------------------------------------------------------------ composition


def test_mamba_mixer_reference_candidate_passes_the_cpu_cases():
    """The L2 candidate (Triton conv and scan inside the mixer's own projections), with and without Jamba's norms."""
    judged_on_cpu_cases("mamba_mixer", candidate_class("mamba_mixer", level=2))


class ZeroConv(nn.Module):
    """A deliberately wrong causal conv: zeros of the right shape (same parameters as the eager one)."""

    def __init__(self, dim: int, width: int, bias: bool = True, activation: str | None = "silu") -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(dim, width))
        self.bias = nn.Parameter(torch.empty(dim)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(x)


def test_mamba_block_is_its_norm_then_its_mixer_and_a_wrong_conv_reaches_its_output():
    manifest = REGISTRY.get("mamba_block")
    case = manifest.case("cpu_residual")
    eager = eager_class("mamba_block")
    components = eager_classes(REGISTRY, REGISTRY.closure("mamba_block"), "cpu")
    state = reference_state(manifest, case, eager, components, "cpu", 0)
    hidden, residual = case_inputs("mamba_block", case.name).values()
    init = case.init
    with bind(components):
        norm = components["rms_norm"](init["hidden_size"], eps=init["layer_norm_epsilon"])
        mixer = components["mamba_mixer"](*(init[k] for k in ("hidden_size", "intermediate_size", "state_size",
                                                               "conv_kernel", "time_step_rank", "use_conv_bias")))
    for prefix, part in (("norm", norm), ("mixer", mixer)):
        part.to(torch.bfloat16).load_state_dict({k[len(prefix) + 1:]: v for k, v in state.items()
                                                 if k.startswith(prefix + ".")})
    with torch.no_grad():
        normed, summed = norm(hidden, residual)
        by_hand = (mixer(normed), summed)
        layer = build(eager, case, components, state, "cpu", "eager")(hidden, residual)
        wrong = build(eager, case, {**components, "causal_conv1d": ZeroConv}, state, "cpu", "wrong")(hidden, residual)
    assert all(torch.equal(a, b) for a, b in zip(layer, by_hand))
    assert not torch.equal(wrong[0], layer[0]) and torch.equal(wrong[1], layer[1])


# ------------------------------------------------------------------------------- FLA adapters, wired up


def _recurrence(q, k, v, log_decay, scale, initial_state, a=None, b=None):
    """FLA's documented recurrences over [B, T, H, *] inputs with a [B, H, K, V] state:
    S <- exp(g) S + b^T (a S) + k^T v (the a/b term only for DPLR), o = scale q S. Returns (o, final state)."""
    batch, seqlen, heads, dk = q.shape
    state = torch.zeros(batch, heads, dk, v.shape[-1], dtype=F64) if initial_state is None else initial_state.to(F64)
    o = torch.empty(v.shape, dtype=F64)
    for t in range(seqlen):
        g = log_decay[:, t].to(F64)
        g = g[..., None, None] if g.dim() == 2 else g[..., None]
        low_rank = 0.0 if a is None else b[:, t].to(F64)[..., None] * torch.einsum(
            "bhk,bhkv->bhv", a[:, t].to(F64), state)[:, :, None]
        state = torch.exp(g) * state + low_rank + k[:, t].to(F64)[..., None] * v[:, t].to(F64)[:, :, None]
        o[:, t] = torch.einsum("bhk,bhkv->bhv", q[:, t].to(F64) * scale, state)
    return o.to(q.dtype), state


def _fake_gated_delta_rule(q, k, v, g, beta, scale=None, initial_state=None, output_final_state=False,
                           use_qk_l2norm_in_kernel=False, **_):
    # FLA 0.6 groups value heads in the kernel (GVA): value head j reads q/k head j // (HV / H)
    assert v.shape[2] % q.shape[2] == 0, "FLA takes a number of value heads divisible by the q/k heads"
    group = v.shape[2] // q.shape[2]
    q, k = q.repeat_interleave(group, dim=2), k.repeat_interleave(group, dim=2)
    if use_qk_l2norm_in_kernel:
        q, k = (x.to(F64) * torch.rsqrt((x.to(F64) ** 2).sum(-1, keepdim=True) + 1e-6) for x in (q, k))
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    state = torch.zeros(*v.shape[:1], v.shape[2], q.shape[-1], v.shape[-1], dtype=F64) if initial_state is None \
        else initial_state.to(F64)
    o = torch.empty(v.shape, dtype=F64)
    for t in range(q.shape[1]):
        kt = k[:, t].to(F64)
        state = torch.exp(g[:, t].to(F64))[..., None, None] * state
        delta = (v[:, t].to(F64) - torch.einsum("bhk,bhkv->bhv", kt, state)) * beta[:, t].to(F64)[..., None]
        state = state + kt[..., None] * delta[:, :, None]
        o[:, t] = torch.einsum("bhk,bhkv->bhv", q[:, t].to(F64) * scale, state)
    return o.to(v.dtype), state


def _fake_chunk_rwkv7(r, w, k, v, a, b, scale=1.0, initial_state=None, output_final_state=False,
                      lower_bound=None, **_):
    # FLA 0.6 takes the caller's word that lower_bound <= w < 0 (it picks its tensor-core scheme on it): the task's
    # inputs must keep that word
    assert lower_bound is None or lower_bound <= w.min().item() and w.max().item() < 0, (w.min(), lower_bound)
    return _recurrence(r, k, v, w, scale, initial_state, a=a, b=b)


def _fake_causal_conv1d(x, weight, bias=None, activation=None, **_):
    """fla.modules.convolution.causal_conv1d: x [B, T, D], weight [D, W] -> (y [B, T, D], final state)."""
    y = F.conv1d(F.pad(x.transpose(1, 2).to(F64), (weight.shape[1] - 1, 0)), weight.to(F64)[:, None],
                 None if bias is None else bias.to(F64), groups=x.shape[-1]).transpose(1, 2)
    return (F.silu(y) if activation in ("silu", "swish") else y).to(x.dtype), None


@pytest.fixture
def fake_fla(monkeypatch):
    """An `fla` package whose ops are FLA's documented recurrences (keyword arguments as FLA names them). Returns the
    list every op call is appended to, as (op name, keyword arguments)."""
    import types
    calls = []

    def recorded(name, op):
        def call(*args, **kwargs):
            calls.append((name, kwargs))
            return op(*args, **kwargs)
        return call
    ops = {
        "fla.ops.gla": {"chunk_gla": lambda q, k, v, g, scale=None, initial_state=None, output_final_state=False, **_:
                        _recurrence(q, k, v, g, q.shape[-1] ** -0.5 if scale is None else scale, initial_state)},
        "fla.ops.simple_gla": {"chunk_simple_gla": lambda q, k, v, g=None, scale=None, initial_state=None,
                               output_final_state=False, **_: _recurrence(
                                   q, k, v, g, q.shape[-1] ** -0.5 if scale is None else scale, initial_state)},
        "fla.ops.retention": {"chunk_retention": lambda q, k, v, scale=None, initial_state=None,
                              output_final_state=False, **_: _recurrence(
                                  q, k, v, torch.log(1 - 2.0 ** (-5.0 - torch.arange(q.shape[2], dtype=F64)))
                                  .expand(*q.shape[:3]), q.shape[-1] ** -0.5 if scale is None else scale,
                                  initial_state)},
        "fla.ops.rwkv7": {"chunk_rwkv7": _fake_chunk_rwkv7},
        "fla.ops.gated_delta_rule": {"chunk_gated_delta_rule": _fake_gated_delta_rule,
                                     "fused_recurrent_gated_delta_rule": _fake_gated_delta_rule},
        "fla.modules.convolution": {"causal_conv1d": _fake_causal_conv1d},
    }
    for name in ("fla", "fla.ops", "fla.modules", *ops):
        module = types.ModuleType(name)
        vars(module).update({op_name: recorded(op_name, op) for op_name, op in ops.get(name, {}).items()})
        monkeypatch.setitem(__import__("sys").modules, name, module)
    return calls


@pytest.mark.parametrize("task, case_name, impl_name", [
    ("causal_conv1d", "cpu_silu_bias", "fla"), ("causal_conv1d", "cpu_plain_width3", "fla"),
    ("mamba2_ssd", "cpu_groups_gate", "fla"), ("mamba2_ssd", "cpu_one_group_no_gate", "fla"),
    ("gla_chunk", "cpu_with_state", "fla"), ("gla_chunk", "cpu_from_zero", "fla"),
    ("gated_delta_rule", "cpu_grouped_with_state", "fla"), ("gated_delta_rule", "cpu_from_zero", "fla"),
    ("gated_delta_rule", "cpu_grouped_with_state", "fla_gva"), ("gated_delta_rule", "cpu_from_zero", "fla_gva"),
    ("gated_delta_rule_decode", "cpu_grouped", "fla"), ("gated_delta_rule_decode", "cpu_grouped", "fla_gva"),
    ("retention", "cpu_eight_scales", "fla"), ("retention", "cpu_with_state", "fla"),
    ("rwkv7_wkv", "cpu_with_state", "fla"), ("rwkv7_wkv", "cpu_with_state", "fla_bounded_gate"),
    ("rwkv7_wkv", "cpu_from_zero", "fla_bounded_gate"),
])
def test_fla_adapters_pass_the_tasks_arguments_as_fla_takes_them(fake_fla, task, case_name, impl_name):
    """The GPU-only FLA adapters cannot run here; against an `fla` whose ops are FLA's documented recurrences they
    must reproduce the task's oracle: layouts, head repeats or grouped value heads, the SSD-as-simple-GLA and RWKV-7
    a/b mappings, scales, and a decay bound the task's inputs keep."""
    got, want = _adapter_and_oracle(task, case_name, impl_name)
    assert len(got) == len(want)
    assert_fp32_close(got, want)


def _adapter_and_oracle(task: str, case_name: str, impl_name: str) -> tuple[tuple, tuple]:
    """A production adapter's outputs and the eager oracle's on one CPU case, both as tuples."""
    manifest = REGISTRY.get(task)
    impl = next(i for i in manifest.implementations.production if i.name == impl_name)
    path, _, class_name = impl.source.partition(":")
    adapter = getattr(fresh_adapter(task, path), class_name)  # bound to this test's fake `fla`
    case = manifest.case(case_name)
    components = eager_classes(REGISTRY, REGISTRY.closure(task), "cpu")
    state = reference_state(manifest, case, eager_class(task), components, "cpu", 0)
    inputs = oracle_inputs(case_inputs(task, case_name))
    with torch.no_grad():
        got = build(adapter, case, components, state, "cpu", "fla", F64)(**inputs)
        want = build(eager_class(task), case, components, state, "cpu", "oracle", F64)(**inputs)
    return ((got,) if isinstance(got, torch.Tensor) else got), ((want,) if isinstance(want, torch.Tensor) else want)


@pytest.mark.parametrize("task, case_name", [("gated_delta_rule", "cpu_grouped_with_state"),
                                             ("gated_delta_rule_decode", "cpu_grouped")])
def test_fla_gva_hands_fla_q_and_k_at_their_own_head_count_and_fla_repeats_them(fake_fla, task, case_name):
    # the point of fla_gva: no copies of q and k to the value heads; FLA groups the value heads in its kernel
    heads = {}
    for impl_name in ("fla", "fla_gva"):
        fake_fla.clear()
        _adapter_and_oracle(task, case_name, impl_name)
        (_, kwargs), = fake_fla
        heads[impl_name] = (kwargs["q"].shape[2], kwargs["k"].shape[2], kwargs["v"].shape[2])
    assert heads["fla"][0] == heads["fla"][1] == heads["fla"][2]
    assert heads["fla_gva"][0] == heads["fla_gva"][1] < heads["fla_gva"][2]


def test_fla_bounded_gate_passes_rwkv7attentions_decay_bound_and_chunks_of_64(fake_fla):
    # FLA 0.6's RWKV7Attention: safe_gate=True, lower_bound=-0.6065306597126334, chunk_size=64 (fla.py: the defaults)
    _adapter_and_oracle("rwkv7_wkv", "cpu_with_state", "fla_bounded_gate")
    (_, kwargs), = fake_fla
    assert kwargs["safe_gate"] is True and kwargs["chunk_size"] == 64
    assert kwargs["lower_bound"] == pytest.approx(-0.6065306597126334, abs=1e-15)
