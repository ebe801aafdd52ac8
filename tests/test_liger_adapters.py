"""Liger-Kernel adapters map the task's layout onto Liger's exactly. Liger runs only on CUDA, so here each Liger op is
replaced by a PyTorch version of its semantics as Liger 0.8.5's source defines them (rope: HF rotate_half on
[batch, heads, seq, head_dim] with cos/sin [1, seq, head_dim]; GEGLU; group norm; fused MoE; softmax), and the
arguments the adapter passes are checked; the real kernels are exercised on the device by the noop/reference suites."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from task_library import REGISTRY, case_inputs, eager_class

from fastkernels.build import build, eager_classes, reference_state
from fastkernels.implementations import import_file
from fastkernels.manifest import Case

TASK = Path(__file__).resolve().parent.parent / "tasks" / "L1" / "rotary_embedding"


def fake_liger_rope(monkeypatch) -> None:
    def rotate_half(x):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)

    class LigerRopeFunction:
        @staticmethod
        def apply(q, k, cos, sin):
            cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)  # [1, 1, seq, head_dim]
            rotate = lambda t: (t.float() * cos + rotate_half(t.float()) * sin).to(t.dtype)  # noqa: E731
            return rotate(q), rotate(k)

    for name in ("liger_kernel", "liger_kernel.ops"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    rope = types.ModuleType("liger_kernel.ops.rope")
    rope.LigerRopeFunction = LigerRopeFunction
    monkeypatch.setitem(sys.modules, "liger_kernel.ops.rope", rope)


def test_liger_rope_adapter_matches_the_pytorch_production_path(monkeypatch):
    fake_liger_rope(monkeypatch)
    liger = import_file(TASK / "liger.py", namespace="test.liger_adapter")
    native = import_file(TASK / "torch_native.py", namespace="tasks.rotary_embedding")
    args = dict(head_size=16, rotary_dim=16, max_position_embeddings=64, base=10000.0, is_neox_style=True)
    ours, theirs = liger.RotaryEmbedding(**args), native.RotaryEmbedding(**args)
    positions = torch.randint(0, 64, (5,))
    query, key = torch.randn(5, 3 * 16), torch.randn(5, 1 * 16)
    for got, want in zip(ours(positions, query.clone(), key.clone()), theirs(positions, query.clone(), key.clone())):
        torch.testing.assert_close(got, want)
    gptj = dict(args, is_neox_style=False)  # not Liger's layout: the adapter falls back to the PyTorch path
    for got, want in zip(liger.RotaryEmbedding(**gptj)(positions, query, key), native.RotaryEmbedding(**gptj)(positions, query, key)):
        torch.testing.assert_close(got, want)
    # ... and says so, so the harness does not time the fallback under Liger's name
    assert ours.fallback_reason({"key": key}) == ""
    assert liger.RotaryEmbedding(**gptj).fallback_reason({"key": key}) == "GPT-J (interleaved) layout"
    assert ours.fallback_reason({"key": None}) == "no key (Liger rotates q and k together)"
    partial = liger.RotaryEmbedding(**dict(args, rotary_dim=8))
    assert partial.fallback_reason({"key": key}) == "partial rotary dim (8 of 16)"


def test_liger_geglu_adapter_feeds_gate_and_up_and_falls_back_for_exact_gelu(monkeypatch):
    calls = []

    class LigerGELUMulFunction:  # Liger's documented semantics: tanh GELU of gate in fp32, times up
        @staticmethod
        def apply(gate, up):
            calls.append((gate.shape, up.shape))
            return (torch.nn.functional.gelu(gate.float(), approximate="tanh").to(gate.dtype) * up)

    install_fake_liger(monkeypatch, "geglu", LigerGELUMulFunction=LigerGELUMulFunction)
    task = TASK.parent / "gelu_and_mul"
    liger = import_file(task / "liger.py", namespace="test.liger_geglu")
    native = import_file(task / "torch_native.py", namespace="tasks.gelu_and_mul")
    x = torch.randn(4, 2 * 6)
    torch.testing.assert_close(liger.GeluAndMul("tanh")(x), native.GeluAndMul("tanh")(x))
    assert calls == [(torch.Size([4, 6]), torch.Size([4, 6]))]
    torch.testing.assert_close(liger.GeluAndMul("none")(x), native.GeluAndMul("none")(x))  # vLLM's forward_native
    assert len(calls) == 1
    assert liger.GeluAndMul("tanh").fallback_reason({"x": x}) == ""
    assert liger.GeluAndMul("none").fallback_reason({"x": x}) == "approximate='none' (Liger has only tanh GELU)"


# ------------------------------------------------------------------------------------------------ shared helpers


def install_fake_liger(monkeypatch, submodule: str, **symbols: object) -> None:
    """Stand-in `liger_kernel`, `liger_kernel.ops` and `liger_kernel.ops.<submodule>` holding `symbols`."""
    for name in ("liger_kernel", "liger_kernel.ops"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    module = types.ModuleType(f"liger_kernel.ops.{submodule}")
    for name, value in symbols.items():
        setattr(module, name, value)
    monkeypatch.setitem(sys.modules, module.__name__, module)


def cpu_cases(task: str) -> list[Case]:
    return [case for case in REGISTRY.get(task).cases if case.tier == "cpu"]


def built_pair(task: str, adapter: type, case: Case) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The task's eager module and `adapter`, built as the harness builds baselines: case dtype, one reference state
    dict loaded strictly into both."""
    manifest, eager = REGISTRY.get(task), eager_class(task)
    components = eager_classes(REGISTRY, REGISTRY.closure(task), "cpu")
    state = reference_state(manifest, case, eager, components, "cpu", seed=0)
    return (build(eager, case, components, state, "cpu", "eager"),
            build(adapter, case, components, state, "cpu", "liger"))


# -------------------------------------------------------------------------------------------------- group_norm


def fake_liger_group_norm(monkeypatch) -> list[dict]:
    """LigerGroupNormFunction as liger_kernel/ops/group_norm.py (0.8.5) defines its forward; returns its call log.

    X is made contiguous and viewed as [batch, num_groups, hidden]; per (sample, group): mean, variance E[x^2] -
    mean^2, rstd = rsqrt(variance + eps), all in fp32; element i of the group belongs to channel
    group * channels_per_group + i // (hidden / channels_per_group); Y = (x - mean) * rstd * W[c] + B[c], stored in
    X's dtype with X's shape."""
    calls: list[dict] = []

    class LigerGroupNormFunction:
        @staticmethod
        def apply(X, W, B, num_channels, num_groups, eps):
            calls.append(dict(x=X, contiguous=X.is_contiguous(), weight=W, bias=B, num_channels=num_channels,
                              num_groups=num_groups, eps=eps))
            h = X.contiguous().view(X.shape[0], num_groups, -1).float()
            hidden, per_group = h.shape[-1], num_channels // num_groups
            mean = h.sum(-1, keepdim=True) / hidden
            rstd = torch.rsqrt((h * h).sum(-1, keepdim=True) / hidden - mean * mean + eps)
            channel = torch.arange(num_groups)[:, None] * per_group + torch.arange(hidden) // (hidden // per_group)
            return ((h - mean) * rstd * W.float()[channel] + B.float()[channel]).to(X.dtype).view(X.shape)

    install_fake_liger(monkeypatch, "group_norm", LigerGroupNormFunction=LigerGroupNormFunction)
    return calls


def test_liger_group_norm_adapter_passes_nchw_x_weight_bias_channels_groups_and_eps_and_matches_eager(monkeypatch):
    calls = fake_liger_group_norm(monkeypatch)
    liger = import_file(TASK.parent / "group_norm" / "liger.py", namespace="test.liger_group_norm")
    for case in cpu_cases("group_norm"):
        eager, adapter = built_pair("group_norm", liger.GroupNorm, case)
        x = case_inputs("group_norm", case.name)["x"]
        with torch.no_grad():
            torch.testing.assert_close(adapter(x), eager(x))  # case dtype (bf16): one rounding each
        call = calls[-1]
        assert call["x"] is x and call["contiguous"]
        assert call["weight"] is adapter.weight and call["bias"] is adapter.bias
        assert (call["num_channels"], call["num_groups"], call["eps"]) == (
            case.init["num_channels"], case.init["num_groups"], case.init["eps"])
        with torch.no_grad():  # fp32: the fake's only rounding is fp32's, so the mapping must be exact
            torch.testing.assert_close(adapter.float()(x.float()), eager.float()(x.float()), atol=1e-5, rtol=1e-5)
    assert len(calls) == 2 * len(cpu_cases("group_norm"))


def test_liger_group_norm_adapter_without_affine_falls_back_to_torch_group_norm(monkeypatch):
    calls = fake_liger_group_norm(monkeypatch)
    liger = import_file(TASK.parent / "group_norm" / "liger.py", namespace="test.liger_group_norm_plain")
    x = torch.randn(2, 6, 5, 7) + 0.5
    torch.testing.assert_close(liger.GroupNorm(3, 6, 1e-5, affine=False)(x), F.group_norm(x, 3, None, None, 1e-5))
    assert calls == []
    assert liger.GroupNorm(3, 6, 1e-5, affine=False).fallback_reason({"x": x}) == (
        "no affine (Liger needs a weight and a bias)")
    assert liger.GroupNorm(3, 6, 1e-5, affine=True).fallback_reason({"x": x}) == ""


# ------------------------------------------------------------------------------------------------- moe_experts


def fake_liger_fused_moe(monkeypatch) -> list[dict]:
    """LigerFusedMoEFunction as liger_kernel/ops/fused_moe.py (0.8.5) defines its forward; returns its call log.

    Every (token, slot) pair t, k with expert e = top_k_index[t, k] (int32) is its own row: [gate | up] =
    x[t] @ gate_up_proj[e].T in fp32 (gate_up_proj [E, 2I, H], gate rows first); a = silu(gate) * up rounded to x's
    dtype; y = a @ down_proj[e].T (down_proj [E, H, I]) in fp32, rounded to x's dtype; out[t] = sum_k
    top_k_weights[t, k] * y in fp32, stored in x's dtype."""
    calls: list[dict] = []

    class LigerFusedMoEFunction:
        @staticmethod
        def apply(x, gate_up_proj, down_proj, top_k_index, top_k_weights):
            calls.append(dict(x=x, gate_up_proj=gate_up_proj, down_proj=down_proj, top_k_index=top_k_index,
                              top_k_weights=top_k_weights))
            tokens, top_k = top_k_index.shape
            experts = top_k_index.reshape(-1).long()
            rows = x.float().repeat_interleave(top_k, dim=0)
            gate, up = torch.einsum("nh,nih->ni", rows, gate_up_proj[experts].float()).chunk(2, dim=-1)
            act = (F.silu(gate) * up).to(x.dtype).float()
            y = torch.einsum("ni,nhi->nh", act, down_proj[experts].float()).to(x.dtype).float()
            weighted = y.view(tokens, top_k, -1) * top_k_weights.float()[..., None]
            return weighted.sum(1).to(x.dtype)

    install_fake_liger(monkeypatch, "fused_moe", LigerFusedMoEFunction=LigerFusedMoEFunction)
    return calls


def test_liger_moe_adapter_passes_w13_as_gate_up_w2_as_down_int32_ids_and_weights_and_matches_eager(monkeypatch):
    calls = fake_liger_fused_moe(monkeypatch)
    liger = import_file(TASK.parent / "moe_experts" / "liger.py", namespace="test.liger_moe_experts")
    tolerance = REGISTRY.get("moe_experts").tolerance["bfloat16"]
    for case in cpu_cases("moe_experts"):
        eager, adapter = built_pair("moe_experts", liger.FusedMoEExperts, case)
        inputs = case_inputs("moe_experts", case.name)
        inputs["topk_ids"][0] = inputs["topk_ids"][0, 0]  # a token naming one expert in every slot: each slot counts
        with torch.no_grad():
            torch.testing.assert_close(adapter(**inputs), eager(**inputs), atol=tolerance.atol, rtol=tolerance.rtol)
            fp32 = {**inputs, "hidden_states": inputs["hidden_states"].float()}
            torch.testing.assert_close(adapter.float()(**fp32), eager.float()(**fp32), atol=1e-5, rtol=1e-5)
        call = calls[-1]
        assert call["x"] is fp32["hidden_states"] and call["top_k_weights"] is inputs["topk_weights"]
        assert call["gate_up_proj"] is adapter.w13_weight and call["down_proj"] is adapter.w2_weight
        assert call["top_k_index"].dtype == torch.int32 and call["top_k_index"].is_contiguous()
        assert torch.equal(call["top_k_index"].long(), inputs["topk_ids"])
    assert len(calls) == 2 * len(cpu_cases("moe_experts"))


# ----------------------------------------------------------------------------------------------------- softmax


def fake_liger_softmax(monkeypatch) -> list[dict]:
    """LigerSoftmaxFunction as liger_kernel/ops/softmax.py (0.8.5) defines its forward; returns its call log.

    x is made contiguous and viewed as rows of its last dimension; calculate_settings raises RuntimeError when
    next_power_of_2(n) > 65536; one program per row takes the row max with tl.max, which upcasts bf16 to fp32, so
    x - max, exp, the row sum and the division are fp32; y is stored in x's dtype (empty_like) with x's shape."""
    calls: list[dict] = []

    class LigerSoftmaxFunction:
        @staticmethod
        def apply(x):
            calls.append(dict(x=x))
            n = x.shape[-1]
            if 1 << (n - 1).bit_length() > 65536:
                raise RuntimeError(f"Cannot launch Triton kernel since n = {n} exceeds the recommended Triton "
                                   "blocksize = 65536.")
            rows = x.contiguous().view(-1, n).float()
            e = torch.exp(rows - rows.max(dim=-1, keepdim=True).values)
            return (e / e.sum(dim=-1, keepdim=True)).to(x.dtype).view(x.shape)

    install_fake_liger(monkeypatch, "softmax", LigerSoftmaxFunction=LigerSoftmaxFunction)
    return calls


def test_liger_softmax_adapter_passes_x_unchanged_and_matches_eager_on_the_cpu_cases(monkeypatch):
    calls = fake_liger_softmax(monkeypatch)
    liger = import_file(TASK.parent / "softmax" / "liger.py", namespace="test.liger_softmax")
    for case in cpu_cases("softmax"):
        eager, adapter = built_pair("softmax", liger.Softmax, case)
        x = case_inputs("softmax", case.name)["x"]
        torch.testing.assert_close(adapter(x), eager(x))  # case dtype (bf16): fp32 math, one rounding each
        assert calls[-1]["x"] is x
        torch.testing.assert_close(adapter(x.float()), eager(x.float()), atol=1e-6, rtol=1e-5)
    assert len(calls) == 2 * len(cpu_cases("softmax"))


def test_liger_softmax_adapter_takes_the_torch_native_path_for_rows_liger_refuses(monkeypatch):
    calls = fake_liger_softmax(monkeypatch)
    liger = import_file(TASK.parent / "softmax" / "liger.py", namespace="test.liger_softmax_wide")
    widest = (torch.randn(2, 65536) * 3).bfloat16()
    torch.testing.assert_close(liger.Softmax()(widest), torch.softmax(widest.float(), dim=-1).bfloat16())
    assert len(calls) == 1  # 65536 columns still fit Liger's one block
    logits = (torch.randn(1, 128256) * 3).bfloat16()  # Llama-3.1's vocabulary: Liger would raise; torch_native's code
    torch.testing.assert_close(liger.Softmax()(logits), torch.softmax(logits, dim=-1, dtype=torch.float32).bfloat16(),
                               atol=0, rtol=0)
    assert len(calls) == 1
    # the harness asks first, and leaves the adapter out of the logits cases' baseline choice
    assert liger.Softmax().fallback_reason({"x": widest}) == ""
    assert liger.Softmax().fallback_reason({"x": logits}) == "rows of 128256 > 65536, which Liger refuses"


# ------------------------------------------------------------------------------------------ real Liger kernels


REAL_LIGER = """
import sys, torch
from pathlib import Path
from fastkernels.implementations import import_file
level1 = Path(sys.argv[1])
moe = level1 / "moe_experts"
eager = import_file(moe / "experts.py", namespace="tasks.moe_experts").FusedMoEExperts(5, 48, 40)
liger = import_file(moe / "liger.py", namespace="tasks.moe_experts").FusedMoEExperts(5, 48, 40)
liger.load_state_dict(eager.state_dict())
gen = torch.Generator().manual_seed(0)
x, weights = torch.randn(13, 48, generator=gen), torch.rand(13, 2, generator=gen)
ids = torch.randint(0, 5, (13, 2), generator=gen)
ids[0] = 3
with torch.no_grad():
    torch.testing.assert_close(liger(x, weights, ids), eager(x, weights, ids), atol=1e-5, rtol=1e-5)
softmax = level1 / "softmax"
eager = import_file(softmax / "softmax.py", namespace="tasks.softmax").Softmax()
liger = import_file(softmax / "liger.py", namespace="tasks.softmax").Softmax()
for shape in [(7, 1000), (33, 61), (1, 70000)]:
    x = torch.randn(*shape, generator=gen) * 3
    torch.testing.assert_close(liger(x), eager(x), atol=1e-6, rtol=1e-5)
"""


@pytest.mark.skipif(importlib.util.find_spec("liger_kernel") is None, reason="liger_kernel is not installed")
def test_real_liger_fused_moe_and_softmax_under_the_triton_interpreter_match_eager_in_fp32():
    """Liger's own Triton kernels behind the moe_experts and softmax adapters, on CPU tensors (TRITON_INTERPRET=1,
    fp32: the interpreter truncates to bf16), in a fresh process because LIGER_FUSED_MOE_AUTOTUNE=0 must be set
    before liger_kernel is imported (the autotuner needs a GPU driver). Its group norm kernel does not run under
    the interpreter (it calls eps.to(tl.float32) on a Python float), so group_norm has the stand-in test only."""
    env = {**os.environ, "TRITON_INTERPRET": "1", "LIGER_FUSED_MOE_AUTOTUNE": "0"}
    done = subprocess.run([sys.executable, "-c", REAL_LIGER, str(TASK.parent)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


# ------------------------------------------------------------------------------------- layer_norm and mrope


def test_liger_layer_norm_adapter_passes_x_weight_bias_and_eps_and_falls_back_without_affine(monkeypatch):
    calls = []

    class LigerLayerNormFunction:  # liger_kernel/ops/layer_norm.py: per-row fp32 mean and variance, affine in x's dtype
        @staticmethod
        def apply(x, weight, bias, eps):
            calls.append((x.shape, weight, bias, eps))
            mean = x.float().mean(-1, keepdim=True)
            var = x.float().var(-1, unbiased=False, keepdim=True)
            return ((x.float() - mean) * torch.rsqrt(var + eps) * weight.float() + bias.float()).to(x.dtype)

    install_fake_liger(monkeypatch, "layer_norm", LigerLayerNormFunction=LigerLayerNormFunction)
    task = TASK.parent / "layer_norm"
    liger = import_file(task / "liger.py", namespace="test.liger_layer_norm")
    eager = import_file(task / "layer_norm.py", namespace="tasks.layer_norm")
    ours, theirs = liger.LayerNorm(24, 1e-6), eager.LayerNorm(24, 1e-6)
    with torch.no_grad():
        theirs.weight.normal_(1.0, 0.1)
        theirs.bias.normal_(0.0, 0.1)
    ours.load_state_dict(theirs.state_dict(), strict=True)
    x = torch.randn(5, 24) + 0.5
    torch.testing.assert_close(ours(x), theirs(x))
    assert len(calls) == 1 and calls[0][1] is ours.weight and calls[0][2] is ours.bias and calls[0][3] == 1e-6
    assert ours.fallback_reason({"x": x}) == ""
    plain = liger.LayerNorm(24, 1e-6, elementwise_affine=False)
    torch.testing.assert_close(plain(x), F.layer_norm(x, (24,), None, None, 1e-6))
    assert len(calls) == 1
    assert plain.fallback_reason({"x": x}) == "no elementwise affine (Liger needs a weight and a bias)"


def test_the_liger_mrope_adapter_says_which_layouts_its_kernel_does_not_serve(monkeypatch):
    class LigerQwen2VLMRopeFunction:  # never reached here: only the layouts are asked about
        @staticmethod
        def apply(*args):
            raise AssertionError("not called")

    install_fake_liger(monkeypatch, "qwen2vl_mrope", LigerQwen2VLMRopeFunction=LigerQwen2VLMRopeFunction)
    liger = import_file(TASK.parent / "mrope" / "liger.py", namespace="test.liger_mrope")
    args = dict(head_size=32, rotary_dim=32, max_position_embeddings=64, base=10000.0, is_neox_style=True,
                mrope_section=[4, 6, 6])
    assert liger.MRotaryEmbedding(**args).fallback_reason({}) == ""
    assert liger.MRotaryEmbedding(**args, mrope_interleaved=True).fallback_reason({}) == (
        "interleaved M-RoPE sections (Qwen3-VL)")
    assert liger.MRotaryEmbedding(**dict(args, is_neox_style=False)).fallback_reason({}) == "GPT-J (interleaved) layout"
    partial = dict(args, rotary_dim=16, mrope_section=[2, 3, 3])
    assert liger.MRotaryEmbedding(**partial).fallback_reason({}) == "partial rotary dim (16 of 32)"
