"""moe_experts' SGLang baseline (tasks/L1/moe_experts/sglang.py) runs SGLang's fused-MoE kernels in the order SGLang's
fused_experts_impl runs them, with the tile configs SGLang would pick. SGLang is not installed for CI, so here its
kernels are PyTorch versions of their contracts (SGLang 0.5.23): moe_align_block_size pads each expert's (token, slot)
pairs to whole blocks and names each block's expert; fused_moe_kernel writes, for every slot a block holds, row
A[slot // top_k] times the block's expert weight, times the slot's routing weight where asked, rounded to C's dtype;
silu_and_mul and the top-k sum as their names say. SGLang's triton_utils package is made by an import hook that, as
its fused_moe module does on CUDA, imports `moe_sum_reduce` from sgl_kernel while it loads."""

from __future__ import annotations

import importlib.abc
import importlib.util
import importlib.machinery
import json
import sys
import types

import pytest
import torch
import torch.nn.functional as F
from task_library import REGISTRY, fresh_adapter, judged_on_cpu_cases

from fastkernels.implementations import import_file

UTILS = "sglang.srt.layers.moe.moe_runner.triton_utils"
calls: list[tuple] = []


def moe_align_block_size(topk_ids, block_size, num_experts):
    flat = topk_ids.flatten()
    sorted_ids, expert_ids = [], []
    for e in range(num_experts):
        slots = (flat == e).nonzero().flatten().tolist()
        for start in range(0, len(slots), block_size):
            block = slots[start:start + block_size]
            sorted_ids += block + [flat.numel()] * (block_size - len(block))  # padding names no slot
            expert_ids.append(e)
    calls.append(("align", topk_ids.dtype, block_size))
    return (torch.tensor(sorted_ids, dtype=torch.int32), torch.tensor(expert_ids, dtype=torch.int32),
            torch.tensor([len(sorted_ids)], dtype=torch.int32))


def invoke_fused_moe_kernel(A, B, bias, C, A_scale, B_scale, B_zp, topk_weights, topk_ids, sorted_token_ids,
                            expert_ids, num_tokens_post_padded, mul_routed_weight, top_k, config, compute_type,
                            use_fp8_w8a8, use_int8_w8a8, use_int8_w8a16, use_int4_w4a16, per_channel_quant,
                            block_shape=None, filter_expert=True, router_topk=1, **rest):
    assert bias is A_scale is B_scale is B_zp is block_shape is None and not rest
    assert not (use_fp8_w8a8 or use_int8_w8a8 or use_int8_w8a16 or use_int4_w4a16 or per_channel_quant)
    calls.append(("gemm", mul_routed_weight, top_k, router_topk, filter_expert, dict(config)))
    out = C.view(-1, C.shape[-1])
    block = config["BLOCK_SIZE_M"]
    for position in range(int(num_tokens_post_padded[0])):
        slot = int(sorted_token_ids[position])
        if slot >= topk_ids.numel():
            continue
        row = A[slot // top_k].float() @ B[int(expert_ids[position // block])].float().T
        if mul_routed_weight:
            row = row * topk_weights.flatten()[slot]
        out[slot] = row.to(C.dtype)


def silu_and_mul(input, out):
    gate, up = input.float().chunk(2, dim=-1)
    out.copy_((F.silu(gate) * up).to(out.dtype))


def moe_sum_reduce_triton(input, output, routed_scaling_factor):
    calls.append(("sum", input.shape[1]))
    output.copy_((input.float().sum(1) * routed_scaling_factor).to(output.dtype))


def aot_moe_align(*args):
    raise ModuleNotFoundError("No module named 'sgl_kernel'")  # what SGLang's AOT wrapper raised on the H100


class TritonUtils(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """SGLang's triton_utils package: its moe_align_block_size and fused_moe_triton_config modules; loading the
    package needs sgl_kernel.moe_sum_reduce, as SGLang's does on CUDA through its fused_moe module."""

    def __init__(self, configs_root, on_cuda=False):
        self.configs_root = configs_root
        self.on_cuda = on_cuda

    def find_spec(self, name, path=None, target=None):
        if name in (UTILS, f"{UTILS}.moe_align_block_size", f"{UTILS}.fused_moe_triton_config"):
            return importlib.machinery.ModuleSpec(name, self, is_package=name == UTILS)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        if module.__name__ == UTILS:
            from sgl_kernel import moe_sum_reduce  # noqa: F401 - raises as SGLang's package does without sgl_kernel
            module.__path__ = []
        elif module.__name__.endswith("moe_align_block_size"):
            module.moe_align_block_size = moe_align_block_size
            if self.on_cuda:  # SGLang binds its AOT alignment kernel's wrapper on CUDA only
                module.sgl_moe_align_block_size = aot_moe_align
        else:
            module.__file__ = str(self.configs_root / "fused_moe_triton_config.py")
            module.get_config_file_name = lambda E, N, dtype, down_moe=False: (
                f"E={E},N={N},device_name=NVIDIA_H200{'_down' if down_moe else ''}.json")


@pytest.fixture
def fake_sglang(request, monkeypatch, tmp_path):
    calls.clear()
    for name in ("sglang", "sglang.kernels", "sglang.kernels.ops", "sglang.kernels.ops.moe",
                 "sglang.kernels.ops.activation", "sglang.srt", "sglang.srt.layers", "sglang.srt.layers.moe",
                 "sglang.srt.layers.moe.moe_runner", "tvm_ffi"):
        package = types.ModuleType(name)
        package.__path__ = []
        monkeypatch.setitem(sys.modules, name, package)
    kernels = types.ModuleType("sglang.kernels.ops.moe.fused_moe_triton_kernels")
    kernels.invoke_fused_moe_kernel = invoke_fused_moe_kernel
    kernels.moe_sum_reduce_triton = moe_sum_reduce_triton
    activation = types.ModuleType("sglang.kernels.ops.activation.activation")
    activation.silu_and_mul = silu_and_mul
    for module in (kernels, activation):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    for name in (UTILS, f"{UTILS}.moe_align_block_size", f"{UTILS}.fused_moe_triton_config", "sgl_kernel"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    on_cuda = getattr(request, "param", False)
    monkeypatch.setattr(sys, "meta_path", [TritonUtils(tmp_path, on_cuda), *sys.meta_path])
    jit_align = types.ModuleType("sglang.kernels.ops.moe.moe_align")
    jit_align.moe_align_block_size = lambda *args: calls.append(("jit_align", args))
    monkeypatch.setitem(sys.modules, jit_align.__name__, jit_align)
    (tmp_path / "configs").mkdir()
    return tmp_path / "configs"


def adapter():
    return fresh_adapter("moe_experts", "sglang.py")


def write(configs, folder, name, table):
    (configs / folder).mkdir(exist_ok=True)
    (configs / folder / name).write_text(json.dumps({str(m): config for m, config in table.items()}))


def test_the_task_passes_through_sglang_s_kernel_sequence(fake_sglang):
    judged_on_cpu_cases("moe_experts", adapter().FusedMoEExperts)
    gemms = [call for call in calls if call[0] == "gemm"]
    assert gemms and all(call[4] is False for call in gemms)  # no expert parallelism: filter_expert off
    ups, downs = gemms[0::2], gemms[1::2]
    assert all(not up[1] and up[3] == 1 for up in ups)  # gate_up: top_k rows a token, no routing weight
    assert all(down[1] and down[2] == 1 and down[3] > 1 for down in downs)  # down: one row a slot, weighted
    assert all(call[1] == torch.int32 for call in calls if call[0] == "align")
    assert ("sum", 4) in calls  # the CPU case with top_k 4 sums its slots in SGLang's Triton kernel


def test_without_sgl_kernel_the_stand_in_is_gone_after_the_import(fake_sglang):
    adapter()
    assert "sgl_kernel" not in sys.modules and f"{UTILS}.moe_align_block_size" in sys.modules


@pytest.mark.parametrize("fake_sglang, aligner_bound", [(False, None), (True, aot_moe_align)],
                         indirect=["fake_sglang"], ids=["cpu", "cuda"])
def test_an_installed_sgl_kernel_is_used_as_it_is_its_aot_alignment_included(fake_sglang, aligner_bound, monkeypatch):
    real = types.ModuleType("sgl_kernel")
    real.__spec__ = importlib.machinery.ModuleSpec("sgl_kernel", None)
    real.moe_sum_reduce = lambda input, output, routed_scaling_factor: None
    monkeypatch.setitem(sys.modules, "sgl_kernel", real)
    adapter()
    assert sys.modules["sgl_kernel"] is real
    aligner = getattr(sys.modules[f"{UTILS}.moe_align_block_size"], "sgl_moe_align_block_size", None)
    assert aligner is aligner_bound  # SGLang binds it on CUDA only; the adapter leaves it as bound


@pytest.mark.parametrize("fake_sglang", [True], indirect=True)
def test_on_cuda_without_sgl_kernel_sglang_s_aot_alignment_call_goes_to_its_jit_kernel(fake_sglang):
    module = adapter()
    aligner = sys.modules[f"{UTILS}.moe_align_block_size"].sgl_moe_align_block_size
    assert aligner is module.jit_moe_align
    aligner("ids", 9, 16, "sorted", "experts", "padded", "cumsum", True, False)
    assert calls == [("jit_align", ("ids", 9, 16, "sorted", "experts", "padded", "cumsum", True))]
    with pytest.raises(ValueError, match="ignore_invalid_expert"):
        aligner("ids", 9, 16, "sorted", "experts", "padded", "cumsum", True, True)


def test_tuned_configs_are_found_as_sglang_finds_them(fake_sglang, monkeypatch):
    module = adapter()
    monkeypatch.setattr(module.triton, "__version__", "3.6.0")
    up = {1: {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64}, 4096: {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "USE_TMA": True}}
    write(fake_sglang, "triton_3_1_0", "E=8,N=14336,device_name=NVIDIA_H200.json", {1: {"BLOCK_SIZE_M": 99}})
    write(fake_sglang, "triton_3_7_1", "E=8,N=14336,device_name=NVIDIA_H200.json", up)  # the newest other version
    assert module.tuned_configs(8, 14336, down=False) == up
    assert module.tuned_configs(8, 14336, down=True) == up  # no down file: the up one, as SGLang reuses it
    write(fake_sglang, "triton_3_6_0", "E=8,N=14336,device_name=NVIDIA_H200.json", {1: {"BLOCK_SIZE_M": 32}})
    assert module.tuned_configs(8, 14336, down=False) == {1: {"BLOCK_SIZE_M": 32}}  # the installed version first
    assert module.tuned_configs(60, 1408, down=False) is None


def test_the_closest_batch_size_serves_without_tma_and_one_block_size(fake_sglang, monkeypatch):
    module = adapter()
    monkeypatch.setattr(module.triton, "__version__", "3.6.0")
    write(fake_sglang, "triton_3_6_0", "E=128,N=768,device_name=NVIDIA_H200.json",
          {64: {"BLOCK_SIZE_M": 16, "USE_TMA": True}, 4096: {"BLOCK_SIZE_M": 64, "num_warps": 8}})
    write(fake_sglang, "triton_3_6_0", "E=128,N=768,device_name=NVIDIA_H200_down.json",
          {4096: {"BLOCK_SIZE_M": 128, "num_warps": 4, "USE_TMA": True}})
    assert module.kernel_configs(3000, 128, 768) == ({"BLOCK_SIZE_M": 64, "num_warps": 8},
                                                     {"BLOCK_SIZE_M": 64, "num_warps": 4})
    assert module.kernel_configs(10, 128, 768)[0] == {"BLOCK_SIZE_M": 16}
    assert module.kernel_configs(64, 60, 1408)[0] == module.default_config(64, 60) == {
        "BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}  # SGLang's heuristic
    assert module.default_config(32, 60)["BLOCK_SIZE_M"] == 16


REAL_SGLANG = importlib.util.find_spec("sglang") is not None


@pytest.mark.skipif(not REAL_SGLANG, reason="needs SGLang and its import chain (pip install -e '.[sglang]')")
@pytest.mark.parametrize("experts, hidden, intermediate, tokens, top_k", [(5, 48, 40, 13, 2), (8, 64, 32, 70, 8)])
def test_sglang_s_real_kernels_called_so_match_the_oracle_under_the_triton_interpreter(
        experts, hidden, intermediate, tokens, top_k, monkeypatch):
    """SGLang's own fused_moe_kernel and top-k sum, in float16 (the interpreter mis-rounds bfloat16); the alignment
    and the activation are SGLang's CUDA JIT kernels, so here their contracts above stand in."""
    module = adapter()
    monkeypatch.setattr(module, "_align", types.SimpleNamespace(moe_align_block_size=moe_align_block_size))
    monkeypatch.setattr(module, "silu_and_mul", silu_and_mul)
    monkeypatch.setattr(module._configs, "get_device_name", lambda: "NVIDIA H200")
    eager = import_file(REGISTRY.directory("moe_experts") / "experts.py", namespace="test.sglang_moe_eager")
    torch.manual_seed(0)
    sglang_experts = module.FusedMoEExperts(experts, hidden, intermediate).half()
    oracle = eager.FusedMoEExperts(experts, hidden, intermediate).double()
    oracle.load_state_dict(sglang_experts.state_dict())
    x, weights = torch.randn(tokens, hidden).half(), torch.rand(tokens, top_k)
    ids = torch.randint(0, experts, (tokens, top_k))
    error = (sglang_experts(x, weights, ids).double() - oracle(x.double(), weights.double(), ids)).abs().max()
    print(f"{experts} experts, {tokens} tokens, top {top_k}: max |sglang - oracle| {error:.2e}")
    assert error < 1e-2  # float16 rounding of gate_up, the activation and each slot: 1.35e-3, 6.16e-3 seen
