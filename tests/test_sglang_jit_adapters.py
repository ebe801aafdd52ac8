"""SGLang's JIT-compiled CUDA kernels as production baselines (silu_and_mul, gelu_and_mul,
per_token_group_quant_fp8, rotary_embedding, llama3_rope: each task's sglang_jit.py). SGLang is not installed for
CI, and its kernels need a GPU, so here they are replaced by PyTorch versions of their semantics as SGLang 0.5.23's
source defines them (kernels/jit/csrc/elementwise/activation.cuh: act(gate) * up in fp32 into a caller-owned out;
fp8_kernel.py: q and fp32 [tokens, groups] scales from x, group_size and scale_ue8m0; rope.cuh: q and k rotated in
place from the fp32 cos/sin cache), and each adapter must pass its task on the CPU cases through them and hand
SGLang exactly what its layers hand it. Where SGLang, apache-tvm-ffi and nvcc are all
installed, the real kernels are compiled for sm_90 too (no GPU needed to build)."""

from __future__ import annotations

import importlib.util
import inspect
import os
import shutil
import sys
import types

import pytest
import torch
import torch.nn.functional as F
from task_library import eager_class, fresh_adapter, judged_on_cpu_cases



def adapter_class(task: str, class_name: str) -> type:
    """The adapter imported afresh (it binds SGLang's kernels at import), against whatever `sglang` is there now."""
    return getattr(fresh_adapter(task, "sglang_jit.py"), class_name)


def fake_activation(calls: list[tuple]):
    """run_activation's contract: out[..., d] = act(x[..., :d]) * x[..., d:] in fp32, rounded once to out's dtype."""
    def run(name: str, act):
        def kernel(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
            calls.append((name, x.data_ptr(), tuple(out.shape), out.dtype))
            d = x.shape[-1] // 2
            assert out.shape == x.shape[:-1] + (d,) and out.dtype == x.dtype, "a caller-owned out, half as wide"
            out.copy_((act(x[..., :d].float()) * x[..., d:].float()).to(out.dtype))
            return out
        return kernel
    return {"silu_and_mul": run("silu", F.silu),
            "gelu_and_mul": run("gelu", lambda a: F.gelu(a)),
            "gelu_tanh_and_mul": run("gelu_tanh", lambda a: F.gelu(a, approximate="tanh")),
            "activation_module": lambda dtype: calls.append(("build", dtype))}


def fake_group_quant(calls: list[dict]):
    """sglang_per_token_group_quant_fp8(x, group_size, scale_ue8m0=...): scale = max(absmax, 1e-10) / 448 (UE8M0:
    rounded up to a power of two), q = saturate_fp8(x * (1 / scale)); scales fp32 [..., groups], row-major."""
    def quant(x: torch.Tensor, group_size: int, eps: float = 1e-10, column_major_scales: bool = False,
              scale_tma_aligned: bool = False, scale_ue8m0: bool = False, **rest):
        calls.append(dict(group_size=group_size, ue8m0=scale_ue8m0, contiguous=x.is_contiguous(),
                          column_major=column_major_scales, rest=rest))
        grouped = x.float().reshape(*x.shape[:-1], x.shape[-1] // group_size, group_size)
        scales = grouped.abs().amax(-1, keepdim=True).clamp(min=eps) / 448.0
        if scale_ue8m0:
            scales = torch.exp2(torch.ceil(torch.log2(scales)))
        q = (grouped * (1.0 / scales)).clamp(-448.0, 448.0).to(torch.float8_e4m3fn).reshape(x.shape)
        return q, scales.squeeze(-1)
    return quant


def fake_rope(calls: list[dict]):
    """apply_rope_with_cos_sin_cache_inplace(q, k, cos_sin_cache, positions, *, is_neox, rope_dim=0): q and k
    [tokens, heads, rope_dim] (views) rotated in place from the fp32 cache, cos = cache[pos, :rope_dim / 2] and
    sin = cache[pos, rope_dim / 2:]; neox pairs (i, i + rope_dim / 2), GPT-J pairs (2i, 2i + 1); fp32, one rounding."""
    def apply(q, k, cos_sin_cache, positions, *, is_neox, rope_dim=0, fused_args=None):
        calls.append(dict(q=(q.data_ptr(), tuple(q.shape)), k=(k.data_ptr(), tuple(k.shape)), is_neox=is_neox,
                          cache=cos_sin_cache.dtype, rope_dim=rope_dim, fused=fused_args))
        assert cos_sin_cache.dtype == torch.float32 and q.shape[-1] == k.shape[-1] == cos_sin_cache.shape[-1]
        cos, sin = cos_sin_cache[positions].unsqueeze(1).chunk(2, dim=-1)
        for t in (q, k):
            x = t.float()
            x1, x2 = x.chunk(2, dim=-1) if is_neox else (x[..., ::2], x[..., 1::2])
            o1, o2 = x1 * cos - x2 * sin, x2 * cos + x1 * sin
            t.copy_(torch.cat((o1, o2), -1) if is_neox else torch.stack((o1, o2), -1).flatten(-2))
    return {"apply_rope_with_cos_sin_cache_inplace": apply,
            "_jit_fused_rope_module": lambda *args: calls.append({"build": args})}


@pytest.fixture
def fake_sglang(monkeypatch):
    calls: dict[str, list] = {"activation": [], "quant": [], "rope": []}
    for name in ("tvm_ffi", "sglang", "sglang.kernels", "sglang.kernels.ops", "sglang.kernels.ops.activation",
                 "sglang.kernels.ops.quantization", "sglang.kernels.ops.attention"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    activation = types.ModuleType("sglang.kernels.ops.activation.activation")
    for name, function in fake_activation(calls["activation"]).items():
        setattr(activation, name, function)
    quant = types.ModuleType("sglang.kernels.ops.quantization.fp8_kernel")
    quant.sglang_per_token_group_quant_fp8 = fake_group_quant(calls["quant"])
    rope = types.ModuleType("sglang.kernels.ops.attention.rope")
    for name, function in fake_rope(calls["rope"]).items():
        setattr(rope, name, function)
    for module in (activation, quant, rope):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    return calls


def test_silu_and_mul_hands_sglang_x_in_place_and_an_out_buffer_half_as_wide_and_passes(fake_sglang):
    adapter = adapter_class("silu_and_mul", "SiluAndMul")
    judged_on_cpu_cases("silu_and_mul", adapter)
    x = torch.randn(3, 16)
    adapter()(x)
    name, pointer, shape, dtype = fake_sglang["activation"][-1]
    assert (name, pointer, shape, dtype) == ("silu", x.data_ptr(), (3, 8), x.dtype)


@pytest.mark.parametrize("approximate, kernel", [("tanh", "gelu_tanh"), ("none", "gelu")])
def test_gelu_and_mul_calls_the_kernel_of_its_approximation_and_passes(fake_sglang, approximate, kernel):
    adapter = adapter_class("gelu_and_mul", "GeluAndMul")
    judged_on_cpu_cases("gelu_and_mul", adapter)
    adapter(approximate)(torch.randn(2, 32))
    assert fake_sglang["activation"][-1][0] == kernel


def test_group_quant_passes_group_size_and_the_ue8m0_flag_with_row_major_scales_and_passes(fake_sglang):
    adapter = adapter_class("per_token_group_quant_fp8", "PerTokenGroupQuantFP8")
    judged_on_cpu_cases("per_token_group_quant_fp8", adapter)
    seen = {(call["group_size"], call["ue8m0"]) for call in fake_sglang["quant"]}
    assert seen == {(128, False), (32, True)}  # the two CPU cases
    assert all(call["contiguous"] and not call["column_major"] and not call["rest"] for call in fake_sglang["quant"])


@pytest.mark.parametrize("task, class_name", [("rotary_embedding", "RotaryEmbedding"),
                                              ("llama3_rope", "Llama3RotaryEmbedding")])
def test_rope_rotates_q_and_k_in_place_from_the_fp32_table_and_passes(fake_sglang, task, class_name):
    judged_on_cpu_cases(task, adapter_class(task, class_name))
    # the 64-wide heads took SGLang's kernel, viewed [tokens, heads, head_size] over the caller's own storage
    assert fake_sglang["rope"] and all(call["cache"] == torch.float32 and call["rope_dim"] == 0
                                       and call["fused"] is None for call in fake_sglang["rope"])


def test_rope_hands_sglang_the_rotary_slice_of_each_head_in_the_gptj_layout(fake_sglang):
    """A partial rotary dim in the GPT-J layout, sliced as SGLang's forward_cuda slices it: the eager module's
    result, the pass-through channels untouched, q and k rotated where they lie."""
    args = (64, 32, 100, 10000.0, False)  # head_size, rotary_dim, max_position_embeddings, base, is_neox_style
    g = torch.Generator().manual_seed(0)
    positions = torch.randint(0, 100, (5,), generator=g)
    query, key = torch.randn(5, 3 * 64, generator=g), torch.randn(5, 64, generator=g)
    expected_q, expected_k = eager_class("rotary_embedding")(*args)(positions, query.clone(), key.clone())
    out_q, out_k = adapter_class("rotary_embedding", "RotaryEmbedding")(*args)(positions, query, key)
    assert out_q is query and out_k is key  # in place, as vLLM's and SGLang's kernels rotate
    torch.testing.assert_close(out_q, expected_q, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(out_k, expected_k, atol=1e-6, rtol=1e-6)
    call = fake_sglang["rope"][-1]
    assert call["q"] == (query.data_ptr(), (5, 3, 32)) and call["k"] == (key.data_ptr(), (5, 1, 32))
    assert call["is_neox"] is False


def test_rope_without_a_key_or_with_another_head_size_falls_back_and_says_why(fake_sglang):
    cls = adapter_class("rotary_embedding", "RotaryEmbedding")
    assert cls(64, 64, 100, 10000.0, True).fallback_reason({"key": None}) == (
        "no key (SGLang's forward_cuda rotates q and k together)")
    assert cls(48, 32, 100, 10000.0, True).fallback_reason({"key": torch.zeros(1)}) == (
        "head size 48 (SGLang's fused rope kernel takes 64, 128, 256, 512)")
    assert cls(128, 128, 100, 10000.0, True).fallback_reason({"key": torch.zeros(1)}) == ""


def test_no_build_is_attempted_at_import_without_a_gpu(fake_sglang):
    adapter_class("silu_and_mul", "SiluAndMul")
    assert not torch.cuda.is_available() and ("build", torch.bfloat16) not in fake_sglang["activation"]


@pytest.mark.skipif(importlib.util.find_spec("sglang") is None, reason="needs SGLang (scripts/pack-sglang.sh)")
def test_the_rope_adapter_s_calls_bind_to_sglang_s_own_signatures():
    rope = pytest.importorskip("sglang.kernels.ops.attention.rope")
    inspect.signature(rope.apply_rope_with_cos_sin_cache_inplace).bind(
        positions=None, q=None, k=None, cos_sin_cache=None, is_neox=True)
    inspect.signature(rope._jit_fused_rope_module).bind(True, 128, torch.bfloat16, torch.bfloat16)


REAL_JIT = (importlib.util.find_spec("sglang") is not None and importlib.util.find_spec("tvm_ffi") is not None
            and shutil.which("nvcc") is not None and shutil.which("ninja") is not None)


@pytest.mark.skipif(not REAL_JIT, reason="needs SGLang, apache-tvm-ffi, nvcc and ninja (scripts/pack-sglang.sh)")
def test_the_real_jit_kernels_compile_for_sm90_without_a_gpu(tmp_path, monkeypatch):
    """The modules the adapters load, built by SGLang's own JIT for sm_90a into an empty cache (about 10 s each on
    a 2-core machine): a kernel nvcc refuses is found before any GPU time is spent."""
    from sglang.kernels.jit.utils import arch
    from sglang.kernels.ops.activation.activation import activation_module
    from sglang.kernels.ops.quantization.per_token_group_quant import _jit_module

    monkeypatch.setenv("SGLANG_JIT_CACHE_DIR", str(tmp_path))
    if "CUDA_HOME" not in os.environ and os.path.exists("/usr/local/cuda/lib64/libcudart.so"):
        monkeypatch.setenv("CUDA_HOME", "/usr/local/cuda")
    monkeypatch.setattr(arch, "is_cuda", lambda: True)  # as on a GPU machine: --use_fast_math, as there
    with arch.override_jit_cuda_arch(9, 0):
        assert activation_module(torch.bfloat16) is not None
        # bf16 -> fp8 e4m3, group 128, fp32 row-major scales, not fused with SiLU, flat: the adapter's kernel
        assert _jit_module(torch.bfloat16, torch.float8_e4m3fn, 128, False, True, True, False, False,
                           arch.is_arch_support_pdl())
    assert len(list(tmp_path.rglob("*.so"))) >= 2
