"""The CUDA extensions built from source distributions (scripts/build_cuda_extension.py) and the baselines that call
them: selective_scan's mamba_ssm_cuda calls `selective_scan_cuda.fwd` exactly as mamba_ssm's SelectiveScanFn.forward
does, causal_conv1d's dao_cuda calls `causal_conv1d_cuda.causal_conv1d_fwd` as causal-conv1d's CausalConv1dFn does.
The extensions need a GPU, so here each is replaced by its contract: selective_scan.cpp (mamba_ssm 2.3.2)
fwd(u, delta, A, B[b, groups, dstate, l], C, D, z, delta_bias, delta_softplus) -> [out, x, out_z if z], out
ungated, x [b, dim, chunks, 2 * dstate] holding each chunk's (decay product, state) pairs; causal_conv1d.cpp
(causal-conv1d 1.7.0) causal_conv1d_fwd(x, weight[dim, width], bias, seq_idx, initial_states, out,
final_states_out, silu_activation) writing out in place."""

from __future__ import annotations

import io
import sys
import tarfile
import types
from pathlib import Path

import pytest
import torch
from task_library import REGISTRY, eager_class, fresh_adapter, judged_on_cpu_cases


ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import build_cuda_extension  # noqa: E402


@pytest.fixture
def fake_extension(monkeypatch):
    calls: list[dict] = []
    scan = eager_class("selective_scan")

    def fwd(u, delta, A, B, C, D, z, delta_bias, delta_softplus):
        calls.append(dict(B=tuple(B.shape), C=tuple(C.shape), softplus=delta_softplus, has_D=D is not None,
                          has_bias=delta_bias is not None, has_z=z is not None))
        assert B.dim() == C.dim() == 4 and B.shape[1] == C.shape[1] == 1, "one group axis, as SelectiveScanFn adds"
        gated, h = scan(delta_softplus)(u, delta, A, B[:, 0], C[:, 0], D, z, delta_bias)
        ungated, _ = scan(delta_softplus)(u, delta, A, B[:, 0], C[:, 0], D, None, delta_bias)
        x = torch.full((*h.shape[:2], 2, 2 * h.shape[2]), 7.0)  # two chunks; the pairs' decay halves are noise
        x[:, :, -1, 1::2] = h
        return [ungated, x, gated] if z is not None else [ungated, x]

    module = types.ModuleType("selective_scan_cuda")
    module.fwd = fwd
    monkeypatch.setitem(sys.modules, "selective_scan_cuda", module)
    return calls


def adapter():
    """The adapter imported afresh: it binds `selective_scan_cuda` at import, the fake of the test that calls it."""
    return fresh_adapter("selective_scan", "mamba_ssm_cuda.py")


def test_the_adapter_passes_the_cpu_cases_through_the_extensions_contract(fake_extension):
    judged_on_cpu_cases("selective_scan", adapter().SelectiveScan)
    assert {call["has_z"] for call in fake_extension} == {True, False}  # the gated case and the ungated one
    assert all(call["softplus"] and call["has_D"] and call["has_bias"] for call in fake_extension)


def test_with_z_the_gated_output_is_returned_and_the_last_state_comes_from_the_last_chunk(fake_extension):
    torch.manual_seed(0)
    b, d, n, l = 1, 3, 4, 5
    u, delta, z = torch.randn(b, d, l), torch.randn(b, d, l), torch.randn(b, d, l)
    A, B, C = -torch.rand(d, n) - 0.5, torch.randn(b, n, l), torch.randn(b, n, l)
    y, state = adapter().SelectiveScan(True)(u, delta, A, B, C, torch.ones(d), z, torch.zeros(d))
    expected, expected_state = eager_class("selective_scan")(True)(u, delta, A, B, C, torch.ones(d), z, torch.zeros(d))
    assert torch.allclose(y, expected) and torch.allclose(state, expected_state)
    assert fake_extension[-1]["B"] == (b, 1, n, l)


def sdist(tmp_path: Path, members: dict[str, str]) -> Path:
    path = tmp_path / "mamba_ssm-0.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, text in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            archive.addfile(info, io.BytesIO(text.encode()))
    return path


def test_the_build_takes_the_selective_scan_sources_and_stubs_every_backward_instance(tmp_path):
    sources = build_cuda_extension.EXTENSIONS["selective_scan_cuda"].sources
    path = sdist(tmp_path, {"mamba_ssm-0/csrc/selective_scan/selective_scan.h": "// params",
                            **{f"mamba_ssm-0/csrc/selective_scan/{name}": "//" for name in sources},
                            "mamba_ssm-0/csrc/causal_conv1d/other.cu": "// not taken"})
    source, files = build_cuda_extension.unpack("selective_scan_cuda", path, tmp_path / "src")
    assert (source / "selective_scan.h").exists() and not list((tmp_path / "src").rglob("other.cu"))
    assert [f.name for f in files] == [*build_cuda_extension.EXTENSIONS["selective_scan_cuda"].sources,
                                       "selective_scan_bwd_stub.cu"]  # the backward files are never compiled
    stub = (source / "selective_scan_bwd_stub.cu").read_text()
    # the binding dispatches input float/half/bf16 x weight float/complex: all six must link
    assert stub.count("template void selective_scan_bwd_cuda<") == 6
    assert "selective_scan_bwd_cuda<at::BFloat16, c10::complex<float>>" in stub and "throw std::runtime_error" in stub


def test_causal_conv1d_compiles_its_forward_sources_and_stubs_both_backward_entry_points(tmp_path):
    sources = ("causal_conv1d.cpp", "causal_conv1d_fwd.cu", "causal_conv1d_bwd.cu", "causal_conv1d_update.cu")
    path = sdist(tmp_path, {f"causal_conv1d-0/csrc/{name}": "//" for name in sources})
    source, files = build_cuda_extension.unpack("causal_conv1d_cuda", path, tmp_path / "src")
    assert [f.name for f in files] == ["causal_conv1d.cpp", "causal_conv1d_fwd.cu", "causal_conv1d_update.cu",
                                       "causal_conv1d_bwd_stub.cu"]  # causal_conv1d_bwd.cu is never compiled
    stub = (source / "causal_conv1d_bwd_stub.cu").read_text()
    # the binding dispatches input x weight over float/half/bf16 for both layouts: all eighteen must link
    assert stub.count("template void causal_conv1d_bwd_cuda<") == 9
    assert stub.count("template void causal_conv1d_channellast_bwd_cuda<") == 9
    assert "causal_conv1d_channellast_bwd_cuda<at::Half, at::BFloat16>" in stub and "throw std::runtime_error" in stub


def test_an_archive_without_the_sources_is_a_one_line_error_naming_it_and_what_is_missing(tmp_path):
    path = sdist(tmp_path, {"other-0/README": "x"})
    with pytest.raises(SystemExit, match=f"{path} lacks causal_conv1d_cuda's sources .*causal_conv1d_fwd.cu"):
        build_cuda_extension.unpack("causal_conv1d_cuda", path, tmp_path / "src")


@pytest.fixture
def fake_conv_extension(monkeypatch):
    calls: list[dict] = []
    conv = eager_class("causal_conv1d")

    def causal_conv1d_fwd(x, weight, bias, seq_idx, initial_states, out, final_states_out, silu_activation):
        calls.append(dict(out_like_x=out.shape == x.shape and out.dtype == x.dtype, silu=silu_activation,
                          rest=(seq_idx, initial_states, final_states_out), weight=tuple(weight.shape)))
        module = conv(x.shape[1], weight.shape[1], bias is not None, "silu" if silu_activation else None)
        module.weight.data.copy_(weight)
        if bias is not None:
            module.bias.data.copy_(bias)
        out.copy_(module(x))

    module = types.ModuleType("causal_conv1d_cuda")
    module.causal_conv1d_fwd = causal_conv1d_fwd
    monkeypatch.setitem(sys.modules, "causal_conv1d_cuda", module)
    return calls


def test_dao_cuda_passes_the_cpu_cases_with_no_states_and_the_weight_as_dim_by_width(fake_conv_extension):
    cls = fresh_adapter("causal_conv1d", "dao_cuda.py").CausalConv1d
    judged_on_cpu_cases("causal_conv1d", cls)
    assert {call["silu"] for call in fake_conv_extension} == {True, False}
    assert all(call["out_like_x"] and call["rest"] == (None, None, None) for call in fake_conv_extension)
    with pytest.raises(ValueError, match="widths"):
        cls(8, 5)


def test_where_the_extensions_are_built_the_composed_mamba_blocks_bind_them(fake_extension, fake_conv_extension):
    # transformers' Mamba runs causal_conv1d_fn and selective_scan_fn whenever the two packages are installed, so the
    # kernels production builds come first and the L2/L3 blocks composed from these tasks run them on a GPU
    from importlib.machinery import ModuleSpec

    from fastkernels.build import first_production_class

    for name in ("selective_scan_cuda", "causal_conv1d_cuda"):  # found as installed by the requires check
        sys.modules[name].__spec__ = ModuleSpec(name, None)
    assert first_production_class(REGISTRY, "selective_scan", "cuda")[0] == "mamba_ssm_cuda"
    assert first_production_class(REGISTRY, "causal_conv1d", "cuda")[0] == "dao_cuda"
    # on the CPU (devices: [cuda]) the blocks bind the torch paths, as a machine without the builds does
    assert first_production_class(REGISTRY, "selective_scan", "cpu")[0] == "torch_scan"
    assert first_production_class(REGISTRY, "causal_conv1d", "cpu")[0] == "torch_cudnn"
