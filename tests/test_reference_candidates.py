"""The shipped Triton reference candidates (agents/reference) match float64 oracles, on CPU via Triton's interpreter.

TRITON_INTERPRET must be set before triton is first imported, hence the first lines. The interpreter truncates when
narrowing fp32 to bf16 (a GPU rounds to nearest), so bf16 results may sit one ulp low: inside the bf16 tolerance.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"

import importlib.util  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from types import ModuleType  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = {torch.float32: (1e-5, 1e-5), torch.bfloat16: (1e-2, 1.6e-2)}  # dtype -> (atol, rtol)
FAST = settings(max_examples=15, deadline=None)


def load(path: Path) -> ModuleType:
    """Import a file that is not part of a package (candidate files and task baselines)."""
    name = f"_reference_candidates_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


eager_rms = load(ROOT / "tasks/L1/rms_norm/rms_norm.py")
eager_silu = load(ROOT / "tasks/L1/silu_and_mul/silu_and_mul.py")
cand_rms = load(ROOT / "agents/reference/L1/rms_norm.py")
cand_silu = load(ROOT / "agents/reference/L1/silu_and_mul.py")


def randn(shape, dtype: torch.dtype, seed: int, scale: float = 1.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype)


def assert_matches_oracle(actual: torch.Tensor, oracle: torch.Tensor, dtype: torch.dtype) -> None:
    """Every element within atol + rtol * |oracle|; no NaN anywhere."""
    atol, rtol = TOLERANCE[dtype]
    assert actual.dtype == dtype
    assert actual.shape == oracle.shape
    got = actual.double()
    assert not torch.isnan(got).any()
    err = (got - oracle).abs()
    bad = err > atol + rtol * oracle.abs()
    assert not bad.any(), f"{int(bad.sum())}/{bad.numel()} elements off, max error {err.max().item():.3g}"


def assert_bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    assert torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


# ---------------------------------------------------------------------------------------------- rms_norm


def make_rms_pair(hidden: int, eps: float, seed: int):
    """An eager module with task-like weights (normal, mean 1, std 0.1) and a candidate loaded from its state dict."""
    eager = eager_rms.RMSNorm(hidden, eps)
    with torch.no_grad():
        eager.weight.copy_(1.0 + 0.1 * randn(hidden, torch.float32, seed + 1))
    cand = cand_rms.RMSNorm(hidden, eps)
    cand.load_state_dict(eager.state_dict())
    return eager, cand


def check_rms(x: torch.Tensor, residual: torch.Tensor | None, eps: float = 1e-6, seed: int = 0) -> None:
    """Candidate vs. eager (shape, dtype) and vs. the eager module run in float64 (values); inputs untouched."""
    eager, cand = make_rms_pair(x.shape[-1], eps, seed)
    oracle_mod = make_rms_pair(x.shape[-1], eps, seed)[0].double()
    inputs = (x,) if residual is None else (x, residual)
    before = [t.clone() for t in inputs]
    with torch.no_grad():
        got = cand(*inputs)
        expected = eager(*inputs)
        oracle = oracle_mod(*(t.double() for t in inputs))
    for t, saved in zip(inputs, before):
        assert_bitwise_equal(t, saved)
    if residual is None:
        assert isinstance(got, torch.Tensor)
        got, expected, oracle = (got,), (expected,), (oracle,)
    assert len(got) == len(expected)
    for g, e, o in zip(got, expected, oracle):
        assert g.shape == e.shape and g.dtype == e.dtype
        assert_matches_oracle(g, o, x.dtype)


def test_rms_norm_state_dict_has_only_weight_like_eager():
    eager, cand = make_rms_pair(64, 1e-6, 0)
    assert list(cand.state_dict()) == list(eager.state_dict()) == ["weight"]
    assert cand.weight.shape == (64,)


@FAST
@given(rows=st.integers(1, 9), hidden=st.integers(1, 300), dtype=st.sampled_from([torch.float32, torch.bfloat16]),
       seed=st.integers(0, 2**16))
def test_rms_norm_matches_float64_oracle(rows, hidden, dtype, seed):
    check_rms(randn((rows, hidden), dtype, seed), None, seed=seed)


@FAST
@given(rows=st.integers(1, 9), hidden=st.integers(1, 300), dtype=st.sampled_from([torch.float32, torch.bfloat16]),
       seed=st.integers(0, 2**16))
def test_rms_norm_with_residual_returns_normed_sum_and_sum(rows, hidden, dtype, seed):
    check_rms(randn((rows, hidden), dtype, seed), randn((rows, hidden), dtype, seed + 7), eps=1e-5, seed=seed)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("with_residual", [False, True])
def test_rms_norm_non_power_of_two_hidden_200(dtype, with_residual):
    residual = randn((13, 200), dtype, 2) if with_residual else None
    check_rms(randn((13, 200), dtype, 1), residual, eps=1e-5)


@pytest.mark.parametrize("with_residual", [False, True])
def test_rms_norm_flattens_any_leading_dims(with_residual):
    residual = randn((2, 3, 96), torch.float32, 4) if with_residual else None
    check_rms(randn((2, 3, 96), torch.float32, 3), residual)


@pytest.mark.parametrize("layout", ["transposed", "row_slice"])
def test_rms_norm_accepts_non_contiguous_inputs(layout):
    def view(seed: int) -> torch.Tensor:
        if layout == "transposed":
            return randn((72, 5), torch.bfloat16, seed).t()  # column stride 5
        return randn((5, 100), torch.bfloat16, seed)[:, 10:82]  # row stride 100
    x, residual = view(5), view(6)
    assert not x.is_contiguous()
    check_rms(x, None)
    check_rms(x, residual)


@pytest.mark.parametrize("with_residual", [False, True])
def test_rms_norm_hidden_wider_than_register_block_takes_looped_path(with_residual):
    hidden = cand_rms.MAX_FUSED + 3000
    residual = randn((2, hidden), torch.float32, 9) if with_residual else None
    check_rms(randn((2, hidden), torch.float32, 8), residual)


def test_rms_norm_tolerates_large_and_tiny_magnitudes():
    check_rms(randn((3, 128), torch.float32, 10, scale=1e4), randn((3, 128), torch.float32, 11, scale=1e-4))
    check_rms(randn((3, 128), torch.bfloat16, 12, scale=1e-3), None)


# ------------------------------------------------------------------------------------------- silu_and_mul


def check_silu_and_mul(x: torch.Tensor) -> None:
    """Candidate vs. eager (shape, dtype) and vs. silu(a) * b in float64 (values); x untouched."""
    d = x.shape[-1] // 2
    before = x.clone()
    with torch.no_grad():
        got = cand_silu.SiluAndMul()(x)
        expected = eager_silu.SiluAndMul()(x)
    assert_bitwise_equal(x, before)
    x64 = x.double()
    oracle = torch.nn.functional.silu(x64[..., :d]) * x64[..., d:]
    assert got.shape == expected.shape == (*x.shape[:-1], d) and got.dtype == expected.dtype
    assert_matches_oracle(got, oracle, x.dtype)


@FAST
@given(rows=st.integers(1, 9), d=st.integers(1, 300), dtype=st.sampled_from([torch.float32, torch.bfloat16]),
       seed=st.integers(0, 2**16))
def test_silu_and_mul_matches_float64_oracle(rows, d, dtype, seed):
    check_silu_and_mul(randn((rows, 2 * d), dtype, seed, scale=3.0))


@pytest.mark.parametrize("rows, d", [(7, 333), (1, 1000)])  # the task's cpu cases, x ~ N(0, 2)
def test_silu_and_mul_task_cpu_cases(rows, d):
    for dtype in (torch.float32, torch.bfloat16):
        check_silu_and_mul(randn((rows, 2 * d), dtype, d, scale=2.0))


@pytest.mark.parametrize("rows", [1, 80])  # few rows and many rows pick different column blocks
def test_silu_and_mul_column_blocks_cover_wide_rows(rows):
    check_silu_and_mul(randn((rows, 2 * 1500), torch.bfloat16, rows))


def test_silu_and_mul_flattens_any_leading_dims():
    check_silu_and_mul(randn((2, 3, 2 * 100), torch.float32, 20))


def test_silu_and_mul_accepts_non_contiguous_input():
    x = randn((2 * 100, 6), torch.float32, 21).t()
    assert not x.is_contiguous()
    check_silu_and_mul(x)
    check_silu_and_mul(randn((6, 300), torch.float32, 22)[:, 50:250])


@pytest.mark.filterwarnings("ignore:overflow encountered in exp:RuntimeWarning")  # numpy, in the interpreter
def test_silu_and_mul_saturates_without_nan_for_large_inputs():
    x = torch.tensor([[-1e4, -100.0, 0.0, 100.0, 1e4, 2.0, 3.0, 4.0, 5.0, -6.0]], dtype=torch.float32)
    check_silu_and_mul(x)
