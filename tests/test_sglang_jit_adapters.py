"""SGLang's JIT-compiled CUDA kernels as production baselines (silu_and_mul, gelu_and_mul,
per_token_group_quant_fp8: each task's sglang_jit.py). SGLang is not installed for CI, and its kernels need a GPU,
so here they are replaced by PyTorch versions of their semantics as SGLang 0.5.23's source defines them
(kernels/jit/csrc/elementwise/activation.cuh: act(gate) * up in fp32 into a caller-owned out; fp8_kernel.py: q and
fp32 [tokens, groups] scales from x, group_size and scale_ue8m0), and each adapter must pass its task on the CPU
cases through them and hand SGLang exactly what its layers hand it. Where SGLang, apache-tvm-ffi and nvcc are all
installed, the real kernels are compiled for sm_90 too (no GPU needed to build)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import types

import pytest
import torch
import torch.nn.functional as F
from task_library import fresh_adapter, judged_on_cpu_cases



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


@pytest.fixture
def fake_sglang(monkeypatch):
    calls: dict[str, list] = {"activation": [], "quant": []}
    for name in ("tvm_ffi", "sglang", "sglang.kernels", "sglang.kernels.ops", "sglang.kernels.ops.activation",
                 "sglang.kernels.ops.quantization"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    activation = types.ModuleType("sglang.kernels.ops.activation.activation")
    for name, function in fake_activation(calls["activation"]).items():
        setattr(activation, name, function)
    quant = types.ModuleType("sglang.kernels.ops.quantization.fp8_kernel")
    quant.sglang_per_token_group_quant_fp8 = fake_group_quant(calls["quant"])
    for module in (activation, quant):
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


def test_no_build_is_attempted_at_import_without_a_gpu(fake_sglang):
    adapter_class("silu_and_mul", "SiluAndMul")
    assert not torch.cuda.is_available() and ("build", torch.bfloat16) not in fake_sglang["activation"]


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
