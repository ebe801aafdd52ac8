"""Vision / video / audio and world-model tasks as a spec: their float64 oracles agree with independent
formulations (PyTorch's own ops, the closed-form timestep embedding, transformers' V-JEPA 2 rotation); the
higher-level tasks equal the transformers modules they mirror, state dict and all (VJEPA2RopeAttention,
VJEPA2Layer, WhisperEncoderLayer); swapping one L1 class changes what an L3 task computes; and the Triton reference
candidates (group_norm, modulated_layer_norm, timestep_embedding, rope_3d, and the adaln_modulation L2 built on
the fused norm) match the oracles, on CPU via Triton's interpreter.

TRITON_INTERPRET must be set before triton is first imported, hence the first lines. The interpreter truncates when
narrowing fp32 to bf16 (a GPU rounds to nearest), so bf16 results may sit one ulp low: inside the bf16 tolerance.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"

import importlib.util  # noqa: E402
import itertools  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from types import ModuleType  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from fastkernels.build import eager_classes  # noqa: E402
from fastkernels.composition import bind  # noqa: E402
from fastkernels.implementations import load_implementation  # noqa: E402
from fastkernels.registry import Registry  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = Registry()
TOLERANCE = {torch.float32: (1e-5, 1e-5), torch.bfloat16: (1e-2, 1.6e-2)}  # dtype -> (atol, rtol)
FAST = settings(max_examples=12, deadline=None)


def load(relative: str) -> ModuleType:
    """Import a file that is not part of a package (candidate files and task baselines)."""
    path = ROOT / relative
    name = f"_vision_tasks_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def randn(shape, dtype: torch.dtype = torch.float64, seed: int = 0, scale: float = 1.0, mean: float = 0.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale + mean).to(dtype)


def assert_matches_oracle(actual: torch.Tensor, oracle: torch.Tensor, dtype: torch.dtype) -> None:
    """Every element within atol + rtol * |oracle|; no NaN anywhere."""
    atol, rtol = TOLERANCE[dtype]
    assert actual.dtype == dtype and actual.shape == oracle.shape
    got = actual.double()
    assert not torch.isnan(got).any()
    err = (got - oracle).abs()
    bad = err > atol + rtol * oracle.abs()
    assert not bad.any(), f"{int(bad.sum())}/{bad.numel()} elements off, max error {err.max().item():.3g}"


# ------------------------------------------------------------------------------- the oracles themselves


def test_conv1d_im2col_gemm_baseline_is_torch_conv1d_wherever_the_windows_meet_the_padding():
    # the production baseline gathers windows in up to three ranges (left padding, inside x, right padding): every
    # combination below, down to windows wholly in the padding and lengths shorter than the kernel, is the same
    # conv1d in float64 (4488 of them, ~3 s on the 2-core development machine)
    module_file = load("tasks/L1/conv1d/im2col_gemm.py")
    checked = 0
    for channels, kernel, stride, padding, length, batch, bias in itertools.product(
            (1, 3), range(1, 6), range(1, 4), range(0, 5), (1, 2, 3, 4, 5, 7, 16, 23), (1, 2), (True, False)):
        if length + 2 * padding < kernel:
            continue
        module = module_file.Conv1d(channels, 6, kernel, stride, padding, bias).double()
        x = randn((batch, channels, length), seed=checked)
        want = F.conv1d(x, module.weight, module.bias, stride, padding)
        got = module(x)
        assert got.shape == want.shape and torch.allclose(got, want, rtol=0, atol=1e-12), (
            channels, kernel, stride, padding, length, batch, bias)
        checked += 1
    assert checked == 4488


def test_group_norm_oracle_is_torch_group_norm_in_float64():
    eager = load("tasks/L1/group_norm/group_norm.py")
    for groups, channels, shape in [(3, 6, (2, 6, 5, 7)), (8, 40, (3, 40, 9, 11)), (2, 4, (2, 4, 3, 2, 5))]:
        module = eager.GroupNorm(groups, channels, 1e-5).double()
        with torch.no_grad():
            module.weight.copy_(randn(channels, seed=1, scale=0.1, mean=1.0))
            module.bias.copy_(randn(channels, seed=2, scale=0.1))
        x = randn(shape, seed=3, mean=0.5)
        expected = F.group_norm(x, groups, module.weight, module.bias, 1e-5)
        torch.testing.assert_close(module(x), expected, rtol=1e-12, atol=1e-12)


def test_patch_embed_token_n_is_the_projection_of_tubelet_n():
    """Tokens run frame-major, then rows, then columns; each is W . patch + b."""
    eager = load("tasks/L1/conv3d_patch_embed/conv3d_patch_embed.py")
    module = eager.HunyuanVideoPatchEmbed([2, 4, 4], 3, 40).double()
    x = randn((2, 3, 4, 12, 8), seed=4)
    tokens = module(x)  # 2 x 3 x 2 tubelets per clip
    assert tokens.shape == (2, 12, 40)
    for b, f, h, w in [(0, 0, 0, 0), (1, 1, 2, 1), (0, 1, 0, 1)]:
        patch = x[b, :, 2 * f:2 * f + 2, 4 * h:4 * h + 4, 4 * w:4 * w + 4]
        expected = module.weight.flatten(1) @ patch.flatten() + module.bias
        torch.testing.assert_close(tokens[b, (f * 3 + h) * 2 + w], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("channels, flip, shift, scale", [(33, False, 1, 1), (64, True, 0, 2), (256, True, 0, 1)])
def test_timestep_embedding_oracle_is_the_closed_form(channels, flip, shift, scale):
    eager = load("tasks/L1/timestep_embedding/timestep_embedding.py")
    t = torch.tensor([0.0, 1.0, 37.5, 999.0], dtype=torch.float64)
    out = eager.Timesteps(channels, flip, shift, scale)(t)
    half = channels // 2
    assert out.shape == (4, channels) and out.dtype == torch.float64
    for row, value in enumerate(t.tolist()):
        args = [scale * value * math.exp(-math.log(10000) * i / (half - shift)) for i in range(half)]
        sines, cosines = [math.sin(a) for a in args], [math.cos(a) for a in args]
        expected = (cosines + sines) if flip else (sines + cosines)
        expected += [0.0] * (channels % 2)
        torch.testing.assert_close(out[row], torch.tensor(expected, dtype=torch.float64), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scale", [2.0, 3.0])
def test_upsample_oracle_is_interpolate_nearest(scale):
    eager = load("tasks/L1/upsample_nearest2d/upsample_nearest2d.py")
    x = randn((2, 3, 5, 7), seed=5)
    torch.testing.assert_close(eager.UpsamplingNearest2d(None, scale)(x),
                               F.interpolate(x, scale_factor=scale, mode="nearest"), rtol=0, atol=0)


def test_encoder_attention_oracle_equals_unchunked_sdpa_in_float64():
    """600 query rows: two chunks of the eager module's 512."""
    eager = load("tasks/L1/encoder_attention/encoder_attention.py")
    q, k, v = (randn((1, 600, 2, 24), seed=s, scale=3.0 if s == 6 else 1.0) for s in (6, 7, 8))
    expected = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
    torch.testing.assert_close(eager.EncoderAttention(2, 24)(q, k, v), expected.transpose(1, 2), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("head_dim, grid", [(64, 4), (80, 3), (20, 3)])
def test_rope_3d_oracle_is_transformers_vjepa2_rotation(head_dim, grid):
    """The task's [batch, tokens, heads, head_dim] rotation equals VJEPA2RopeAttention.apply_rotary_embeddings on
    [batch, heads, tokens, head_dim], in float64, including V-JEPA 2's repeated-angle pairing and passthrough."""
    vjepa2 = pytest.importorskip("transformers.models.vjepa2.modeling_vjepa2")
    from transformers import VJEPA2Config

    eager = load("tasks/L1/rope_3d/rope_3d.py")
    config = VJEPA2Config(hidden_size=2 * head_dim, num_attention_heads=2, crop_size=16 * grid, patch_size=16,
                          frames_per_clip=8, tubelet_size=2)
    attention = vjepa2.VJEPA2RopeAttention(config, hidden_size=2 * head_dim, num_attention_heads=2)
    tokens = 4 * grid * grid
    pos = attention.get_position_ids(torch.zeros(1, tokens, 2 * head_dim))
    q, k = randn((3, tokens, 2, head_dim), seed=9), randn((3, tokens, 2, head_dim), seed=10)
    got_q, got_k = eager.VJEPA2RotaryEmbedding3D(head_dim, grid)(q, k, torch.arange(tokens))
    for got, x in ((got_q, q), (got_k, k)):
        expected = attention.apply_rotary_embeddings(x.transpose(1, 2), pos).transpose(1, 2)
        torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)


def test_modulated_layer_norm_oracle_is_layer_norm_then_modulation():
    eager = load("tasks/L1/modulated_layer_norm/modulated_layer_norm.py")
    x, shift, scale = randn((2, 5, 48), seed=11, mean=0.5), randn((2, 1, 48), seed=12), randn((2, 1, 48), seed=13)
    for affine in (False, True):
        module = eager.LayerNormScaleShift(48, 1e-6, affine).double()
        normed = F.layer_norm(x, (48,), module.weight, module.bias, 1e-6)
        torch.testing.assert_close(module(x, shift, scale), normed * (1 + scale) + shift, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(module(x, torch.zeros_like(shift), torch.zeros_like(scale)), normed,
                                   rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------- reference candidate: group_norm

eager_gn = load("tasks/L1/group_norm/group_norm.py")
cand_gn = load("agents/reference/L1/group_norm.py")


def check_group_norm(x: torch.Tensor, groups: int, affine: bool = True, eps: float = 1e-5, chunk: int | None = None,
                     seed: int = 0) -> None:
    """Candidate (through the module, or the function with a forced chunk size) vs the eager module in float64."""
    channels = x.shape[1]
    eager = eager_gn.GroupNorm(groups, channels, eps, affine)
    if affine:
        with torch.no_grad():
            eager.weight.copy_(randn(channels, torch.float32, seed + 1, 0.1, 1.0))
            eager.bias.copy_(randn(channels, torch.float32, seed + 2, 0.1))
    cand = cand_gn.GroupNorm(groups, channels, eps, affine).to(x.dtype)
    cand.load_state_dict(eager.state_dict())
    before = x.clone()
    with torch.no_grad():
        oracle = eager.double()(x.double())
        got = cand(x) if chunk is None else cand_gn.group_norm(x, groups, cand.weight, cand.bias, eps, chunk)
    assert torch.equal(x, before)
    assert_matches_oracle(got, oracle, x.dtype)


def test_group_norm_candidate_has_the_eager_state_dict():
    assert list(cand_gn.GroupNorm(4, 8).state_dict()) == list(eager_gn.GroupNorm(4, 8).state_dict()) == ["weight", "bias"]
    assert issubclass(cand_gn.GroupNorm, cand_gn._eager.GroupNorm)


@FAST
@given(batch=st.integers(1, 3), groups=st.integers(1, 4), per_group=st.integers(1, 5), h=st.integers(1, 7),
       w=st.integers(1, 7), dtype=st.sampled_from([torch.float32, torch.bfloat16]), affine=st.booleans(),
       chunk=st.sampled_from([None, 4, 16]), seed=st.integers(0, 2**16))
def test_group_norm_candidate_matches_float64_oracle(batch, groups, per_group, h, w, dtype, affine, chunk, seed):
    x = randn((batch, groups * per_group, h, w), dtype, seed, mean=0.5)
    check_group_norm(x, groups, affine, chunk=chunk, seed=seed)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_group_norm_candidate_on_the_task_cpu_cases(dtype):
    check_group_norm(randn((2, 6, 5, 7), dtype, 1, mean=0.5), 3)
    check_group_norm(randn((3, 40, 9, 11), dtype, 2, mean=0.5), 8, eps=1e-6)


def test_group_norm_candidate_merges_many_chunks_of_offset_data():
    """A group of 2 x 900 elements in chunks of 16 (113 partial statistics) with mean 10: Chan's merge stays exact
    where E[x^2] - E[x]^2 would lose the variance."""
    check_group_norm(randn((1, 4, 30, 30), torch.float32, 3, mean=10.0), 2, chunk=16)


def test_group_norm_candidate_takes_any_spatial_rank_and_strided_input():
    check_group_norm(randn((2, 8, 17), torch.float32, 4), 4)  # [N, C, L]
    check_group_norm(randn((1, 6, 2, 3, 4), torch.float32, 5), 3)  # [N, C, T, H, W]
    x = randn((2, 9, 5, 6), torch.float32, 6).transpose(2, 3)
    assert not x.is_contiguous()
    check_group_norm(x, 3)


# --------------------------------------------------------------- reference candidate: modulated_layer_norm

eager_mln = load("tasks/L1/modulated_layer_norm/modulated_layer_norm.py")
cand_mln = load("agents/reference/L1/modulated_layer_norm.py")


def check_modulated(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor, affine: bool, eps: float = 1e-6,
                    seed: int = 0) -> None:
    hidden = x.shape[-1]
    torch.manual_seed(seed)
    eager = eager_mln.LayerNormScaleShift(hidden, eps, affine)
    cand = cand_mln.LayerNormScaleShift(hidden, eps, affine).to(x.dtype)
    cand.load_state_dict(eager.state_dict())
    saved = [t.clone() for t in (x, shift, scale)]
    with torch.no_grad():
        oracle = eager.double()(x.double(), shift.double(), scale.double())
        got = cand(x, shift, scale)
    assert all(torch.equal(t, s) for t, s in zip((x, shift, scale), saved))
    assert_matches_oracle(got, oracle, x.dtype)


def test_modulated_layer_norm_candidate_has_the_eager_state_dict():
    for affine in (False, True):
        keys = list(cand_mln.LayerNormScaleShift(8, 1e-6, affine).state_dict())
        assert keys == list(eager_mln.LayerNormScaleShift(8, 1e-6, affine).state_dict())
    assert keys == ["weight", "bias"]


@FAST
@given(batch=st.integers(1, 3), seq=st.integers(1, 9), hidden=st.integers(1, 300), affine=st.booleans(),
       dtype=st.sampled_from([torch.float32, torch.bfloat16]), seed=st.integers(0, 2**16))
def test_modulated_layer_norm_candidate_matches_float64_oracle(batch, seq, hidden, affine, dtype, seed):
    x = randn((batch, seq, hidden), dtype, seed, mean=0.5)
    shift, scale = randn((batch, 1, hidden), dtype, seed + 1, 0.5), randn((batch, 1, hidden), dtype, seed + 2, 0.5)
    check_modulated(x, shift, scale, affine, seed=seed)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_modulated_layer_norm_candidate_reads_chunked_modulation_views(dtype):
    """diffusers takes shift and scale as chunk() views of one [batch, 6 * hidden] projection: strided rows."""
    x = randn((2, 13, 200), dtype, 7, mean=0.5)
    emb = randn((2, 6 * 200), dtype, 8, 0.5)
    shift, scale = (part[:, None] for part in emb.chunk(6, dim=1)[:2])
    assert not shift.is_contiguous()
    check_modulated(x, shift, scale, affine=False)
    check_modulated(randn((3, 7, 96), dtype, 9).transpose(0, 1).contiguous().transpose(0, 1),
                    randn((3, 1, 96), dtype, 10), randn((3, 1, 96), dtype, 11), affine=True, eps=1e-5)


# ---------------------------------------------------------- higher levels equal the libraries they mirror


def eager_module(task: str, components: dict[str, type] | None = None, **init) -> torch.nn.Module:
    """The task's eager module in float64, built with its eager components (or the ones given), with its norms'
    ones and zeros redrawn so that they matter."""
    manifest = REGISTRY.get(task)
    cls = load_implementation(REGISTRY.directory(task), manifest.implementations.eager, "cpu")
    torch.manual_seed(0)
    with bind(components or eager_classes(REGISTRY, REGISTRY.closure(task), "cpu")):
        module = cls(**init)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if "norm" in name:
                p.normal_(1.0 if name.endswith("weight") else 0.0, 0.1)
    return module.double().eval()


def vjepa2_config(head_dim: int, heads: int, grid: int):
    from transformers import VJEPA2Config

    config = VJEPA2Config(hidden_size=heads * head_dim, num_attention_heads=heads, crop_size=16 * grid,
                          patch_size=16, frames_per_clip=8, tubelet_size=2)
    config._attn_implementation = "sdpa"
    return config


def test_spacetime_attention_equals_transformers_vjepa2_rope_attention_in_float64():
    vjepa2 = pytest.importorskip("transformers.models.vjepa2.modeling_vjepa2")
    ours = eager_module("spacetime_attention", hidden_size=80, num_attention_heads=4, grid_size=3, qkv_bias=True)
    theirs = vjepa2.VJEPA2RopeAttention(vjepa2_config(20, 4, 3), hidden_size=80, num_attention_heads=4).double()
    theirs.load_state_dict(ours.state_dict())
    x = randn((2, 36, 80), seed=20, scale=1.5)
    torch.testing.assert_close(ours(x), theirs(x)[0], rtol=1e-10, atol=1e-10)


def test_vjepa2_block_equals_transformers_vjepa2_layer_in_float64():
    vjepa2 = pytest.importorskip("transformers.models.vjepa2.modeling_vjepa2")
    ours = eager_module("vjepa2_block", hidden_size=66, num_attention_heads=3, mlp_ratio=48 / 11, grid_size=3,
                        layer_norm_eps=1e-6)
    theirs = vjepa2.VJEPA2Layer(vjepa2_config(22, 3, 3), hidden_size=66, num_attention_heads=3, mlp_ratio=48 / 11)
    theirs.double().load_state_dict(ours.state_dict())  # the same keys: norm1, attention.*, norm2, mlp.fc1, mlp.fc2
    x = randn((1, 27, 66), seed=21)
    torch.testing.assert_close(ours(x), theirs(x)[0], rtol=1e-10, atol=1e-10)


def test_whisper_encoder_layer_equals_transformers_in_float64():
    whisper = pytest.importorskip("transformers.models.whisper.modeling_whisper")
    from transformers import WhisperConfig

    config = WhisperConfig(d_model=48, encoder_attention_heads=3, encoder_ffn_dim=100)
    config._attn_implementation = "sdpa"
    ours = eager_module("whisper_encoder_layer", d_model=48, encoder_attention_heads=3, encoder_ffn_dim=100)
    theirs = whisper.WhisperEncoderLayer(config).double().eval()
    theirs.load_state_dict(ours.state_dict())  # the same keys: self_attn.{q,k,v,out}_proj, layer norms, fc1, fc2
    x = randn((2, 37, 48), seed=22)
    torch.testing.assert_close(ours(x), theirs(x, attention_mask=None), rtol=1e-10, atol=1e-10)


def test_flux_rope_leaves_text_tokens_and_rotates_image_pairs_by_row_and_column_angles():
    ours = eager_module("dit_attention", query_dim=64, heads=1, dim_head=128, eps=1e-6, text_seq_len=3, height=5,
                        width=4)
    x = randn((1, 23, 1, 128), seed=23)
    out = ours.rotate(x)
    torch.testing.assert_close(out[:, :3], x[:, :3], rtol=0, atol=0)  # text tokens sit at position (0, 0, 0)
    token, row, col = 3 + 2 * 4 + 3, 2, 3  # image token at (0, 2, 3)
    z = torch.complex(x[0, token, 0, 0::2], x[0, token, 0, 1::2])
    pos = torch.cat([torch.zeros(8), torch.full((28,), float(row)), torch.full((28,), float(col))]).double()
    freqs = torch.cat([10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d) for d in (16, 56, 56)])
    turned = z * torch.polar(torch.ones_like(pos), pos * freqs)
    torch.testing.assert_close(out[0, token, 0, 0::2], turned.real, rtol=0, atol=1e-6)  # fp32 table
    torch.testing.assert_close(out[0, token, 0, 1::2], turned.imag, rtol=0, atol=1e-6)
    assert ours.to(torch.bfloat16).rope_cos.dtype == torch.float32 and "rope_cos" not in ours.state_dict()


class WrongLayerNormScaleShift(torch.nn.Module):
    """A deliberately wrong modulation: ignores scale (same interface, no parameters)."""

    def __init__(self, hidden_size: int, eps: float = 1e-6, elementwise_affine: bool = False) -> None:
        super().__init__()
        self.eps = eps

    def forward(self, x, shift, scale):
        return (F.layer_norm(x.double(), x.shape[-1:], eps=self.eps) + shift).to(x.dtype)


class NoRope(torch.nn.Module):
    """A deliberately wrong rope_3d: returns q and k unrotated."""

    def __init__(self, head_dim: int, grid_size: int) -> None:
        super().__init__()

    def forward(self, q, k, position_ids):
        return q, k


@pytest.mark.parametrize("task, swap, init, inputs", [
    ("dit_block", {"modulated_layer_norm": WrongLayerNormScaleShift},
     dict(dim=128, num_attention_heads=1, attention_head_dim=128, mlp_ratio=2.0, text_seq_len=5, height=4, width=6),
     lambda: (randn((2, 29, 128), seed=24), randn((2, 128), seed=25))),
    ("vjepa2_block", {"rope_3d": NoRope},
     dict(hidden_size=96, num_attention_heads=4, mlp_ratio=4.0, grid_size=5, layer_norm_eps=1e-6),
     lambda: (randn((2, 50, 96), seed=26),)),
], ids=["dit_block <- modulated_layer_norm", "vjepa2_block <- rope_3d (two levels down)"])
def test_swapping_one_l1_class_changes_what_the_l3_task_computes(task, swap, init, inputs):
    components = eager_classes(REGISTRY, REGISTRY.closure(task), "cpu")
    args = inputs()
    with torch.no_grad():
        base = eager_module(task, components, **init)(*args)
        wrong = eager_module(task, {**components, **swap}, **init)(*args)
    assert base.shape == wrong.shape
    assert (base - wrong).abs().max() > 0.1


# -------------------------------------------------------------- reference candidate: adaln_modulation (L2)


def test_adaln_modulation_candidate_matches_the_float64_oracle_with_the_task_state_dict():
    """The L2 candidate loads the eager module's state dict and returns the same five tensors, within the task's
    bf16 tolerance (its projection is rounded to bf16 before the fused norm, as the composed module's is)."""
    cand = load("agents/reference/L2/adaln_modulation.py")
    atol, rtol = REGISTRY.get("adaln_modulation").tolerance["bfloat16"].atol, 1.6e-2
    for dim, batch, seq in [(72, 2, 13), (40, 3, 1)]:
        oracle = eager_module("adaln_modulation", embedding_dim=dim, norm_eps=1e-6)
        module = cand.AdaLayerNormZero(dim, 1e-6).to(torch.bfloat16)
        module.load_state_dict({k: v.to(torch.bfloat16) for k, v in oracle.state_dict().items()})
        x, emb = randn((batch, seq, dim), torch.bfloat16, dim, mean=0.5), randn((batch, dim), torch.bfloat16, seq)
        with torch.no_grad():
            got = module(x, emb)
            state = {k: v.to(torch.bfloat16).double() for k, v in oracle.state_dict().items()}
            oracle.load_state_dict(state)  # the same bf16 weights, in float64
            want = oracle(x.double(), emb.double())
        assert len(got) == len(want) == 5
        for g, w in zip(got, want):
            assert g.dtype == torch.bfloat16 and g.shape == w.shape
            err = (g.double() - w).abs()
            assert (err <= atol + rtol * w.abs()).all(), f"max error {err.max().item():.3g}"


# ------------------------------------------------------------- reference candidate: timestep_embedding

eager_ts = load("tasks/L1/timestep_embedding/timestep_embedding.py")
cand_ts = load("agents/reference/L1/timestep_embedding.py")


@FAST
@given(n=st.integers(1, 9), channels=st.integers(4, 300), flip=st.booleans(), shift=st.sampled_from([0, 1]),
       scale=st.sampled_from([1, 2]), seed=st.integers(0, 2**16))
def test_timestep_embedding_candidate_matches_float64_oracle(n, channels, flip, shift, scale, seed):
    """bf16 rows for diffusion timesteps in [0, 1000]; the fp32 angle of t * freq alone is off by up to ~1e-4 there,
    so fp32 outputs are checked on t in [0, 1], where the float32 tolerance holds."""
    g = torch.Generator().manual_seed(seed)
    for dtype, high in ((torch.bfloat16, 1000.0), (torch.float32, 1.0)):
        t = (torch.rand(n, generator=g, dtype=torch.float64) * high).to(dtype)
        before = t.clone()
        got = cand_ts.Timesteps(channels, flip, shift, scale)(t)
        assert torch.equal(t, before)
        assert_matches_oracle(got, eager_ts.Timesteps(channels, flip, shift, scale)(t.double()), dtype)


@pytest.mark.parametrize("channels, flip, shift, scale, n", [(33, False, 1, 1, 5), (64, True, 0, 2, 3),
                                                             (256, True, 0, 1, 12), (320, True, 0, 1, 2)])
def test_timestep_embedding_candidate_on_task_shapes(channels, flip, shift, scale, n):
    t = (torch.rand(n, generator=torch.Generator().manual_seed(n), dtype=torch.float64) * 1000).to(torch.bfloat16)
    got = cand_ts.Timesteps(channels, flip, shift, scale)(t)
    assert_matches_oracle(got, eager_ts.Timesteps(channels, flip, shift, scale)(t.double()), torch.bfloat16)
    if channels % 2:
        assert (got[:, -1] == 0).all()


# ------------------------------------------------------------------------- reference candidate: rope_3d

eager_rope = load("tasks/L1/rope_3d/rope_3d.py")
cand_rope = load("agents/reference/L1/rope_3d.py")


def check_rope_3d(q: torch.Tensor, k: torch.Tensor, grid: int, ids: torch.Tensor | None = None) -> None:
    """Candidate vs the eager module in float64 on both outputs; q, k and ids untouched."""
    head_dim = q.shape[-1]
    ids = torch.arange(q.shape[1]) if ids is None else ids
    saved = [t.clone() for t in (q, k, ids)]
    got = cand_rope.VJEPA2RotaryEmbedding3D(head_dim, grid)(q, k, ids)
    want = eager_rope.VJEPA2RotaryEmbedding3D(head_dim, grid)(q.double(), k.double(), ids)
    assert all(torch.equal(t, s) for t, s in zip((q, k, ids), saved))
    for g, w in zip(got, want):
        assert_matches_oracle(g, w, q.dtype)


@FAST
@given(batch=st.integers(1, 2), grid=st.integers(2, 4), frames=st.integers(1, 3), heads=st.integers(1, 4),
       head_dim=st.integers(6, 96), dtype=st.sampled_from([torch.float32, torch.bfloat16]), seed=st.integers(0, 2**16))
def test_rope_3d_candidate_matches_float64_oracle(batch, grid, frames, heads, head_dim, dtype, seed):
    shape = (batch, frames * grid * grid, heads, head_dim)
    check_rope_3d(randn(shape, dtype, seed), randn(shape, dtype, seed + 1), grid)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rope_3d_candidate_on_the_task_cpu_cases(dtype):
    check_rope_3d(randn((2, 45, 3, 20), dtype, 30), randn((2, 45, 3, 20), dtype, 31), grid=3)
    check_rope_3d(randn((1, 64, 2, 24), dtype, 32), randn((1, 64, 2, 24), dtype, 33), grid=4)


def test_rope_3d_candidate_reads_strided_heads_and_arbitrary_token_ids():
    """q and k as views of one fused qkv projection, and a masked subset of token ids (V-JEPA 2's context tokens)."""
    qkv = randn((2, 18, 3, 2, 64), torch.bfloat16, 34)  # [batch, tokens, (q, k, v), heads, head_dim]
    q, k = qkv[:, :, 0], qkv[:, :, 1]
    assert not q.is_contiguous()
    check_rope_3d(q, k, grid=4, ids=torch.tensor([0, 1, 5, 6, 7, 15, 16, 17, 20, 31, 33, 40, 41, 47, 50, 55, 60, 63]))
