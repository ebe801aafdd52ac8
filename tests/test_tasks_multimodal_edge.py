"""The multimodal-encoder and edge-detection tasks as a spec: their oracles are the published math (checked against
independent formulations and, where transformers ships the module, against transformers itself in float64), the
higher levels are exactly their components, and the Triton reference candidates (mrope, global_response_norm,
swinv2_window_attention, ...) match the float64 oracle on the CPU through Triton's interpreter.

TRITON_INTERPRET must be set before the candidate files are imported (their kernels are decorated at import).
"""

import os

os.environ["TRITON_INTERPRET"] = "1"

import math  # noqa: E402
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
from fastkernels.implementations import import_file, load_implementation  # noqa: E402
from fastkernels.inputs import generator, make_inputs, stream_seed  # noqa: E402
from fastkernels.registry import Registry  # noqa: E402
from task_library import judged_on_cpu_cases  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = Registry()
FAST = settings(max_examples=10, deadline=None)


def eager_class(task: str) -> type:
    return load_implementation(REGISTRY.directory(task), REGISTRY.get(task).implementations.eager, "cpu")


def task_file(task: str, file: str):
    return import_file(REGISTRY.directory(task) / file, namespace=f"tasks.{task}")


def inputs_of(task: str, case_name: str, seed: int = 0) -> dict[str, torch.Tensor]:
    manifest = REGISTRY.get(task)
    case = manifest.case(case_name)
    return make_inputs(manifest, case, "cpu", generator("cpu", stream_seed(seed, task, case_name, "round", 0)))


def randn(*shape: int, seed: int, scale: float = 1.0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * scale


# --------------------------------------------------------------------------------------------- rotary embeddings


def mrope_channel_streams(section: list[int], interleaved: bool) -> list[int]:
    """Spec: which of (t, h, w) drives frequency channel i (vLLM MRotaryEmbedding; Qwen3-VL interleaves)."""
    half = sum(section)
    if not interleaved:
        return [0] * section[0] + [1] * section[1] + [2] * section[2]
    return [1 if i % 3 == 1 and i < 3 * section[1] else 2 if i % 3 == 2 and i < 3 * section[2] else 0
            for i in range(half)]


@pytest.mark.parametrize("case_name", ["cpu_chunked_gqa", "cpu_interleaved_partial"])
def test_mrope_oracle_rotates_each_channel_pair_by_its_streams_position(case_name):
    case = REGISTRY.get("mrope").case(case_name)
    init = case.init
    module = eager_class("mrope")(**init).to(torch.float64)
    positions, query, key = oracle_inputs(inputs_of("mrope", case_name)).values()
    head, rot, half = init["head_size"], init["rotary_dim"], init["rotary_dim"] // 2
    inv_freq = 1.0 / (init["base"] ** (torch.arange(0, rot, 2, dtype=torch.float32) / rot))
    streams = torch.tensor(mrope_channel_streams(init["mrope_section"], init["mrope_interleaved"]))
    angles = positions[streams].T.to(torch.float32) * inv_freq  # [tokens, half], fp32 as the table
    turn = torch.polar(torch.ones_like(angles), angles).to(torch.complex128)[:, None, :]

    def rotate(x):
        x = x.view(x.shape[0], -1, head)
        z = torch.complex(x[..., :half], x[..., half:rot]) * turn  # the cases are neox
        return torch.cat((z.real, z.imag, x[..., rot:]), dim=-1).flatten(1)

    got_q, got_k = module(positions, query, key)
    torch.testing.assert_close(got_q, rotate(query), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(got_k, rotate(key), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("neox", [True, False])
def test_mrope_with_equal_streams_is_the_plain_rotary_embedding(interleaved, neox):
    """A text token has t = h = w: M-RoPE must then be exactly the 1-D rotary_embedding task."""
    rope = eager_class("rotary_embedding")(48, 32, 300, 10000.0, neox).to(torch.float64)
    mrope = eager_class("mrope")(48, 32, 300, 10000.0, neox, [6, 5, 5], interleaved).to(torch.float64)
    pos = torch.randint(0, 300, (9,), generator=torch.Generator().manual_seed(1))
    q, k = randn(9, 3 * 48, seed=2), randn(9, 48, seed=3)
    for got, want in zip(mrope(pos.expand(3, -1), q, k), rope(pos, q, k)):
        torch.testing.assert_close(got, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("case_name", ["cpu_chunked_gqa", "cpu_interleaved_partial"])
def test_mrope_torch_native_is_vllms_split_and_interleave_formulation_of_the_oracle(case_name):
    case = REGISTRY.get("mrope").case(case_name)
    oracle = eager_class("mrope")(**case.init).to(torch.float64)
    native = task_file("mrope", "torch_native.py").MRotaryEmbedding(**case.init).to(torch.float64)
    args = oracle_inputs(inputs_of("mrope", case_name))
    for got, want in zip(native(*args.values()), oracle(*args.values())):
        torch.testing.assert_close(got, want, rtol=0, atol=1e-12)


def test_vision_rope_matches_transformers_qwen2_vl_vision_rotary():
    """transformers Qwen2VLVisionRotaryEmbedding (axial) + apply_rotary_pos_emb_vision, in float64 on fp32 angles."""
    from transformers import Qwen2VLConfig
    from transformers.models.qwen2_vl import modeling_qwen2_vl as hf

    vision = Qwen2VLConfig().vision_config
    vision.embed_dim, vision.num_heads = 96, 4  # head_dim 24
    hf_rope = hf.Qwen2VLVisionRotaryEmbedding(vision)
    module = eager_class("vision_rope_2d")(24, 10000.0, 16).to(torch.float64)
    grid = torch.randint(0, 16, (11, 2), generator=torch.Generator().manual_seed(4))
    q, k = randn(11, 4, 24, seed=5), randn(11, 4, 24, seed=6)
    cos, sin = hf_rope(q, grid)  # position_ids [tokens, 2]: (row, col)
    want_q, want_k = hf.apply_rotary_pos_emb_vision(q, k, cos.double(), sin.double())
    got_q, got_k = module(grid, q, k)
    torch.testing.assert_close(got_q, want_q.double(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(got_k, want_k.double(), rtol=1e-6, atol=1e-6)


def test_vision_rope_rotates_row_and_column_quarters_by_the_same_frequencies():
    module = eager_class("vision_rope_2d")(16, 10000.0, 9).to(torch.float64)
    q = randn(2, 1, 16, seed=7)
    row_only = module(torch.tensor([[5, 0], [5, 0]]), q, q)[0]
    col_only = module(torch.tensor([[0, 5], [0, 5]]), q, q)[0]
    # moving the row leaves the column quarter (channels 4..8 and 12..16) alone, and vice versa
    torch.testing.assert_close(row_only[..., 4:8], q[..., 4:8])
    torch.testing.assert_close(col_only[..., :4], q[..., :4])
    swapped = torch.cat((q[..., 4:8], q[..., :4], q[..., 12:], q[..., 8:12]), dim=-1)
    col_swapped = module(torch.tensor([[0, 5], [0, 5]]), swapped, swapped)[0]
    unswap = torch.cat((col_swapped[..., 4:8], col_swapped[..., :4], col_swapped[..., 12:], col_swapped[..., 8:12]), -1)
    torch.testing.assert_close(unswap, row_only, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------------------- norms and activations


@pytest.mark.parametrize("act", ["identity", "relu", "silu", "hard_swish", "gelu"])
def test_batch_norm_act_oracle_is_inference_batch_norm_then_the_activation(act):
    module = eager_class("batch_norm_act2d")(6, eps=1e-3, act_layer=act).double().eval()
    assert set(module.state_dict()) == set(nn.BatchNorm2d(6).state_dict())
    assert module.running_mean.abs().min() > 0
    assert not torch.allclose(module.running_var, torch.ones(6, dtype=torch.float64))
    before = {k: v.clone() for k, v in module.state_dict().items()}
    x = randn(2, 6, 5, 4, seed=8)
    y = F.batch_norm(x, module.running_mean, module.running_var, module.weight, module.bias, False, 0.0, 1e-3)
    torch_act = {"identity": lambda t: t, "relu": F.relu, "silu": F.silu, "hard_swish": F.hardswish, "gelu": F.gelu}
    torch.testing.assert_close(module(x), torch_act[act](y), rtol=1e-12, atol=1e-12)
    module.train()(x)  # no statistics update, in any mode
    assert all(torch.equal(v, before[k]) for k, v in module.state_dict().items())


def test_layer_norm_2d_oracle_is_layer_norm_over_the_channels_of_each_pixel():
    module = eager_class("layer_norm_2d")(10, eps=1e-6).double()
    with torch.no_grad():
        module.weight.normal_(1, 0.1), module.bias.normal_(0, 0.1)
    x = randn(2, 10, 3, 5, seed=9)
    want = F.layer_norm(x.permute(0, 2, 3, 1), (10,), module.weight, module.bias, 1e-6).permute(0, 3, 1, 2)
    torch.testing.assert_close(module(x), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("channels_last", [True, False])
def test_global_response_norm_oracle_matches_transformers_convnextv2_grn(channels_last):
    from transformers.models.convnextv2.modeling_convnextv2 import ConvNextV2GRN

    module = eager_class("global_response_norm")(12, 1e-6, channels_last).double()
    hf = ConvNextV2GRN(12).double()
    with torch.no_grad():
        module.weight.normal_(0, 0.5), module.bias.normal_(0, 0.1)
        hf.weight.copy_(module.weight.view(1, 1, 1, -1)), hf.bias.copy_(module.bias.view(1, 1, 1, -1))
    x = randn(2, 4, 5, 12, seed=10)  # NHWC
    got = module(x) if channels_last else module(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
    torch.testing.assert_close(got, hf(x), rtol=1e-12, atol=1e-12)


def test_depthwise_conv_oracle_is_a_grouped_nn_conv2d():
    module = eager_class("depthwise_conv2d")(5, 3, 2, 1, True).double()
    conv = nn.Conv2d(5, 5, 3, 2, 1, groups=5).double()
    conv.load_state_dict(module.state_dict())
    x = randn(2, 5, 9, 8, seed=11)
    torch.testing.assert_close(module(x), conv(x), rtol=1e-12, atol=1e-12)
    # each output channel sees only its own input channel
    x2 = x.clone()
    x2[:, 2] += 1.0
    changed = (module(x2) - module(x)).abs().amax(dim=(0, 2, 3)) > 0
    assert changed.tolist() == [False, False, True, False, False]


def test_adaptive_avg_pool_uneven_bins_average_floor_to_ceil_windows():
    module = eager_class("adaptive_avg_pool2d")(3)
    x = randn(1, 2, 7, 10, seed=12)
    out = module(x)
    for i in range(3):
        for j in range(3):
            r0, r1 = (i * 7) // 3, math.ceil((i + 1) * 7 / 3)
            c0, c1 = (j * 10) // 3, math.ceil((j + 1) * 10 / 3)
            torch.testing.assert_close(out[:, :, i, j], x[:, :, r0:r1, c0:c1].mean(dim=(2, 3)))


def test_activations_are_torchs():
    x = randn(3, 50, seed=13, scale=3.0)
    torch.testing.assert_close(eager_class("hardswish")()(x), F.hardswish(x), rtol=1e-12, atol=1e-12)
    for approximate in ("none", "tanh"):
        torch.testing.assert_close(eager_class("gelu")(approximate)(x), F.gelu(x, approximate=approximate))
    torch.testing.assert_close(eager_class("quick_gelu")()(x), x * torch.sigmoid(1.702 * x), rtol=1e-12, atol=1e-12)


# -------------------------------------------------------------------------- higher levels: transformers parity


def hf_siglip_config(hidden: int, intermediate: int, heads: int):
    from transformers import SiglipVisionConfig

    config = SiglipVisionConfig(hidden_size=hidden, intermediate_size=intermediate, num_attention_heads=heads,
                                layer_norm_eps=1e-6)
    config._attn_implementation = "eager"
    return config


def siglip_state_for_hf(state: dict[str, torch.Tensor], prefix: str = "") -> dict[str, torch.Tensor]:
    """Our merged qkv_proj split back into transformers' q_proj / k_proj / v_proj."""
    out = {}
    for key, value in state.items():
        if key.startswith(prefix + "self_attn.qkv_proj."):
            kind = key.rsplit(".", 1)[1]
            for name, part in zip(("q_proj", "k_proj", "v_proj"), value.chunk(3, dim=0)):
                out[f"{prefix}self_attn.{name}.{kind}"] = part
        else:
            out[key] = value
    return out


def built_eager(task: str, case_name: str, dtype=torch.float64):
    manifest = REGISTRY.get(task)
    case = manifest.case(case_name)
    components = eager_classes(REGISTRY, REGISTRY.closure(task), "cpu")
    eager = eager_class(task)
    state = reference_state(manifest, case, eager, components, "cpu", 0)
    return build(eager, case, components, state, "cpu", "test", dtype), state, components


def test_siglip_encoder_layer_oracle_equals_transformers_siglip_encoder_layer():
    from transformers.models.siglip.modeling_siglip import SiglipEncoderLayer

    module, state, _ = built_eager("siglip_encoder_layer", "cpu_odd_heads")
    init = REGISTRY.get("siglip_encoder_layer").case("cpu_odd_heads").init
    hf = SiglipEncoderLayer(hf_siglip_config(init["hidden_size"], init["intermediate_size"], init["num_heads"]))
    hf = hf.double().eval()
    hf.load_state_dict({k: v.double() for k, v in siglip_state_for_hf(state).items()})
    (x,) = oracle_inputs(inputs_of("siglip_encoder_layer", "cpu_odd_heads")).values()
    with torch.no_grad():  # transformers' eager attention takes its softmax in fp32, hence ~1e-7, not 1e-12
        torch.testing.assert_close(module(x), hf(x, None), rtol=1e-5, atol=1e-5)


def test_convnext_block_oracle_equals_transformers_convnextv2_layer():
    from transformers import ConvNextV2Config
    from transformers.models.convnextv2.modeling_convnextv2 import ConvNextV2Layer

    module, state, _ = built_eager("convnext_block", "cpu_small")
    hf = ConvNextV2Layer(ConvNextV2Config(), 16).double().eval()
    names = {"conv_dw": "dwconv", "norm": "layernorm", "mlp.fc1": "pwconv1", "mlp.grn": "grn", "mlp.fc2": "pwconv2"}
    mapped = {}
    for key, value in state.items():
        owner, kind = key.rsplit(".", 1)
        mapped[f"{names[owner]}.{kind}"] = value.double().view(1, 1, 1, -1) if owner == "mlp.grn" else value.double()
    hf.load_state_dict(mapped)
    (x,) = oracle_inputs(inputs_of("convnext_block", "cpu_small")).values()
    with torch.no_grad():
        torch.testing.assert_close(module(x), hf(x), rtol=1e-10, atol=1e-10)


def test_swinv2_window_attention_oracle_equals_transformers_swinv2_self_attention():
    """transformers' module projects q/k/v and builds the bias from its cpb MLP; given those, the task's oracle
    must reproduce its attention output (float64, unshifted windows)."""
    from transformers import Swinv2Config
    from transformers.models.swinv2.modeling_swinv2 import Swinv2SelfAttention

    heads, head_dim, window = 3, 8, 4
    torch.manual_seed(16)
    hf = Swinv2SelfAttention(Swinv2Config(), heads * head_dim, heads, window).double().eval()
    with torch.no_grad():
        hf.logit_scale.normal_(2.3, 0.5)
    module = eager_class("swinv2_window_attention")(heads, head_dim, window).double()
    module.load_state_dict({"logit_scale": hf.logit_scale.detach()})
    hidden = randn(5, window * window, heads * head_dim, seed=17)
    with torch.no_grad():
        q, k, v = (proj(hidden).view(5, -1, heads, head_dim).transpose(1, 2) for proj in (hf.query, hf.key, hf.value))
        table = hf.continuous_position_bias_mlp(hf.relative_coords_table).view(-1, heads)
        bias = table[hf.relative_position_index.view(-1)].view(window**2, window**2, heads).permute(2, 0, 1)
        got = module(q, k, v, 16 * torch.sigmoid(bias)).transpose(1, 2).reshape(5, -1, heads * head_dim)
        torch.testing.assert_close(got, hf(hidden)[0], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case_name", ["cpu_even", "cpu_odd_padded"])
def test_swin_patch_merging_oracle_equals_transformers_swinv2_patch_merging(case_name):
    from transformers.models.swinv2.modeling_swinv2 import Swinv2PatchMerging

    module, state, _ = built_eager("swin_patch_merging", case_name)
    init = REGISTRY.get("swin_patch_merging").case(case_name).init
    resolution = (init["input_height"], init["input_width"])
    hf = Swinv2PatchMerging(resolution, init["dim"]).double().eval()
    hf.load_state_dict({k: v.double() for k, v in state.items()})
    (x,) = oracle_inputs(inputs_of("swin_patch_merging", case_name)).values()
    with torch.no_grad():
        torch.testing.assert_close(module(x), hf(x, resolution), rtol=1e-10, atol=1e-10)


def test_inverted_residual_widths_follow_timm_make_divisible_and_skip_rules():
    module_file = task_file("inverted_residual", "inverted_residual.py")
    assert [module_file.make_divisible(v) for v in (80 * 2.3, 80 * 2.5, 40 * 6.0, 16 * 4.5, 20.0)] == [184, 200, 240,
                                                                                                       72, 24]
    with bind(eager_classes(REGISTRY, REGISTRY.closure("inverted_residual"), "cpu")):
        cls = eager_class("inverted_residual")
        assert cls(80, 80, 3, 1, 2.3, "hard_swish", 1e-5).has_skip
        assert not cls(40, 80, 3, 2, 6.0, "hard_swish", 1e-5).has_skip
        assert cls(80, 80, 3, 1, 2.3, "hard_swish", 1e-5).conv_pw.out_channels == 184


def test_inverted_residual_is_exactly_its_components_run_in_turn():
    module, state, components = built_eager("inverted_residual", "cpu_skip_silu", dtype=None)
    (x,) = inputs_of("inverted_residual", "cpu_skip_silu").values()
    with torch.no_grad():
        h = module.bn1(module.conv_pw(x))
        h = module.bn2(module.conv_dw(h))
        want = module.bn3(module.conv_pwl(h)) + x
        assert torch.equal(module(x), want)


def test_yolov10_head_is_the_box_bins_then_the_class_logits():
    module, _, _ = built_eager("yolov10_detect_head", "cpu_small", dtype=None)
    init = REGISTRY.get("yolov10_detect_head").case("cpu_small").init
    (x,) = inputs_of("yolov10_detect_head", "cpu_small").values()
    with torch.no_grad():
        out = module(x)
        assert out.shape == (2, 4 * init["reg_max"] + init["nc"], 7, 9)
        assert torch.equal(out[:, : 4 * init["reg_max"]], module.cv2(x))
        assert torch.equal(out[:, 4 * init["reg_max"]:], module.cv3(x))


# ------------------------------------------------------------------------------------------ composition


class IdentityGRN(nn.Module):
    """A deliberately wrong GRN with the right state dict: returns its input."""

    def __init__(self, dim: int, eps: float = 1e-6, channels_last: bool = True) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class Identity(nn.Module):
    """A deliberately wrong activation: returns its input."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class IdentityNormAct(nn.BatchNorm2d):
    """A deliberately wrong BatchNormAct2d with the right state dict: returns its input."""

    def __init__(self, num_features: int, eps: float = 1e-5, act_layer: str = "relu") -> None:
        super().__init__(num_features, eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


@pytest.mark.parametrize("task, case_name, l1, wrong_class", [
    ("convnextv2_stage", "cpu_two_blocks", "global_response_norm", IdentityGRN),
    ("yolov10_detect_head", "cpu_small", "batch_norm_act2d", IdentityNormAct),
    ("qwen2_vl_vision_block", "cpu_small", "quick_gelu", Identity),
], ids=["grn into convnextv2_stage", "batch_norm_act2d into yolov10_detect_head", "quick_gelu into the vision block"])
def test_swapping_an_l1_changes_what_the_l3_computes(task, case_name, l1, wrong_class):
    manifest = REGISTRY.get(task)
    case = manifest.case(case_name)
    components = eager_classes(REGISTRY, REGISTRY.closure(task), "cpu")
    eager = eager_class(task)
    state = reference_state(manifest, case, eager, components, "cpu", 0)
    inputs = inputs_of(task, case.name)
    tol = manifest.tolerance["bfloat16"]
    with torch.no_grad():
        oracle = build(eager, case, components, state, "cpu", "o", torch.float64)(**oracle_inputs(inputs))
        base = build(eager, case, components, state, "cpu", "e")(**inputs)
        wrong = build(eager, case, {**components, l1: wrong_class}, state, "cpu", "w")(**inputs)
    assert judge(base, base, oracle, tol.atol, tol.rtol).passed
    assert not judge(wrong, base, oracle, tol.atol, tol.rtol).passed


# ------------------------------------------------------------------------- Triton reference candidates


cand_mrope = import_file(ROOT / "agents/reference/L1/mrope.py", namespace="candidates.L1")
cand_grn = import_file(ROOT / "agents/reference/L1/global_response_norm.py", namespace="candidates.L1")
cand_mlp = import_file(ROOT / "agents/reference/L2/siglip_mlp.py", namespace="candidates.L2")
cand_ln2d = import_file(ROOT / "agents/reference/L1/layer_norm_2d.py", namespace="candidates.L1")
cand_hardswish = import_file(ROOT / "agents/reference/L1/hardswish.py", namespace="candidates.L1")
cand_quick_gelu = import_file(ROOT / "agents/reference/L1/quick_gelu.py", namespace="candidates.L1")
cand_depthwise = import_file(ROOT / "agents/reference/L1/depthwise_conv2d.py", namespace="candidates.L1")
cand_swinv2 = import_file(ROOT / "agents/reference/L1/swinv2_window_attention.py", namespace="candidates.L1")
TOLERANCE = {torch.float32: (1e-5, 1e-5), torch.bfloat16: (1e-2, 1.6e-2)}


def assert_matches(got: torch.Tensor, oracle: torch.Tensor, dtype: torch.dtype, atol: float | None = None) -> None:
    base_atol, rtol = TOLERANCE[dtype]
    assert got.dtype == dtype and got.shape == oracle.shape
    err = (got.double() - oracle).abs()
    bad = err > (atol or base_atol) + rtol * oracle.abs()
    assert not bad.any(), f"{int(bad.sum())}/{bad.numel()} off, max error {err.max().item():.3g}"


def check_mrope(tokens: int, n_q: int, n_k: int, head: int, rot: int, section: list[int], interleaved: bool,
                neox: bool, dtype: torch.dtype, seed: int) -> None:
    init = (head, rot, 1000, 1e6, neox, section, interleaved)
    eager = eager_class("mrope")(*init).to(dtype)
    candidate = cand_mrope.MRotaryEmbedding(*init).to(dtype)
    assert candidate.state_dict().keys() == eager.state_dict().keys()
    positions = torch.randint(0, 1000, (3, tokens), generator=torch.Generator().manual_seed(seed))
    q, k = randn(tokens, n_q * head, seed=seed).to(dtype), randn(tokens, n_k * head, seed=seed + 1).to(dtype)
    oracle = eager.to(torch.float64)(positions, q.double(), k.double())
    got = candidate(positions, q.clone(), k.clone())
    for g, o in zip(got, oracle):
        assert_matches(g, o, dtype)


@pytest.mark.parametrize("case_name", ["cpu_chunked_gqa", "cpu_interleaved_partial"])
def test_mrope_candidate_matches_the_oracle_on_the_cpu_cases(case_name):
    case = REGISTRY.get("mrope").case(case_name)
    init, dims = case.init, case.dims
    for dtype in (torch.float32, torch.bfloat16):
        check_mrope(dims["tokens"], dims["num_heads"], dims["num_kv_heads"], init["head_size"], init["rotary_dim"],
                    init["mrope_section"], init["mrope_interleaved"], init["is_neox_style"], dtype, seed=3)


@FAST
@given(tokens=st.integers(1, 9), n_q=st.integers(1, 5), n_k=st.integers(1, 3), quarter=st.integers(1, 6),
       extra=st.sampled_from([0, 8]), interleaved=st.booleans(), neox=st.booleans(),
       dtype=st.sampled_from([torch.float32, torch.bfloat16]), seed=st.integers(0, 2**16))
def test_mrope_candidate_matches_the_oracle(tokens, n_q, n_k, quarter, extra, interleaved, neox, dtype, seed):
    rot = 6 * quarter  # rotary_dim / 2 = 3 * quarter, split t, h, w
    section = [quarter + (quarter > 1), quarter, quarter - (quarter > 1)]
    check_mrope(tokens, n_q, n_k, rot + extra, rot, section, interleaved, neox, dtype, seed)


def test_mrope_candidate_rotates_strided_slices_of_a_fused_qkv():
    init = (32, 32, 500, 1e6, True, [4, 6, 6], False)
    eager, candidate = eager_class("mrope")(*init), cand_mrope.MRotaryEmbedding(*init)
    qkv = randn(5, 3 * 64 + 32, seed=14).float()
    q, k = qkv[:, :64], qkv[:, 64:96]
    positions = torch.randint(0, 500, (3, 5), generator=torch.Generator().manual_seed(15))
    oracle = eager.double()(positions, q.double(), k.double())
    for g, o in zip(candidate(positions, q, k), oracle):
        assert_matches(g, o, torch.float32)


def check_grn(shape: tuple[int, ...], channels_last: bool, dtype: torch.dtype, seed: int) -> None:
    dim = shape[-1] if channels_last else shape[1]
    eager = eager_class("global_response_norm")(dim, 1e-6, channels_last)
    with torch.no_grad():
        eager.weight.copy_(randn(dim, seed=seed, scale=0.5)), eager.bias.copy_(randn(dim, seed=seed + 1, scale=0.1))
    eager = eager.to(dtype)
    candidate = cand_grn.GlobalResponseNorm(dim, 1e-6, channels_last).to(dtype)
    candidate.load_state_dict(eager.state_dict())
    x = randn(*shape, seed=seed + 2).to(dtype)
    before = x.clone()
    oracle = eager.to(torch.float64)(x.double())
    got = candidate(x)
    assert torch.equal(x, before)
    # bf16: the interpreter truncates the output (up to one ulp of |out| <= ~8, i.e. 2^-5) where a GPU rounds
    assert_matches(got, oracle, dtype, atol=None if dtype == torch.float32 else 4e-2)


@pytest.mark.parametrize("case_name", ["cpu_odd", "cpu_wide"])
def test_grn_candidate_matches_the_oracle_on_the_cpu_cases(case_name):
    case = REGISTRY.get("global_response_norm").case(case_name)
    shape = tuple(case.dims[k] for k in ("batch", "height", "width")) + (case.init["dim"],)
    for dtype in (torch.float32, torch.bfloat16):
        check_grn(shape, True, dtype, seed=4)


@FAST
@given(batch=st.integers(1, 3), height=st.integers(1, 9), width=st.integers(1, 9), dim=st.integers(1, 300),
       channels_last=st.booleans(), dtype=st.sampled_from([torch.float32, torch.bfloat16]),
       seed=st.integers(0, 2**16))
def test_grn_candidate_matches_the_oracle(batch, height, width, dim, channels_last, dtype, seed):
    shape = (batch, height, width, dim) if channels_last else (batch, dim, height, width)
    check_grn(shape, channels_last, dtype, seed)


def test_grn_candidate_loops_over_many_rows_per_image():
    check_grn((2, 40, 33, 20), True, torch.float32, seed=5)  # 1320 rows: many BLOCK_R iterations in pass 1


def check_layer_norm_2d(shape: tuple[int, int, int, int], eps: float, dtype: torch.dtype, seed: int,
                        scale: float = 1.0, shift: float = 0.0) -> None:
    channels = shape[1]
    eager = eager_class("layer_norm_2d")(channels, eps)
    with torch.no_grad():
        eager.weight.copy_(1 + randn(channels, seed=seed, scale=0.1)), eager.bias.copy_(randn(channels, seed=seed + 1))
    eager = eager.to(dtype)
    candidate = cand_ln2d.LayerNorm2d(channels, eps).to(dtype)
    candidate.load_state_dict(eager.state_dict())
    x = (randn(*shape, seed=seed + 2, scale=scale) + shift).to(dtype)
    before = x.clone()
    oracle = eager.to(torch.float64)(x.double())
    got = candidate(x)
    assert torch.equal(x, before)
    assert_matches(got, oracle, dtype)


@pytest.mark.parametrize("case_name", ["cpu_odd", "cpu_wide_channels"])
def test_layer_norm_2d_candidate_matches_the_oracle_on_the_cpu_cases(case_name):
    case = REGISTRY.get("layer_norm_2d").case(case_name)
    shape = (case.dims["batch"], case.init["num_channels"], case.dims["height"], case.dims["width"])
    for dtype in (torch.float32, torch.bfloat16):
        check_layer_norm_2d(shape, case.init["eps"], dtype, seed=7)


@FAST
@given(batch=st.integers(1, 3), channels=st.integers(1, 100), height=st.integers(1, 12), width=st.integers(1, 12),
       dtype=st.sampled_from([torch.float32, torch.bfloat16]), seed=st.integers(0, 2**16))
def test_layer_norm_2d_candidate_matches_the_oracle(batch, channels, height, width, dtype, seed):
    check_layer_norm_2d((batch, channels, height, width), 1e-6, dtype, seed)


def test_layer_norm_2d_candidate_keeps_precision_for_offset_inputs():
    """The variance is of centred values (two passes), so a large common offset does not cancel it away."""
    check_layer_norm_2d((1, 40, 3, 5), 1e-6, torch.float32, seed=8, scale=1.0, shift=30.0)


def check_siglip_mlp(tokens: int, hidden: int, intermediate: int, act: str, dtype: torch.dtype, seed: int) -> None:
    """Candidate vs. the eager module run in float64 with the same (dtype-rounded) weights, within the task's
    tolerance for bf16 (the intermediate activation is bf16, as in production) and fp32 precision for fp32."""
    components = eager_classes(REGISTRY, REGISTRY.closure("siglip_mlp"), "cpu")
    with bind(components):
        torch.manual_seed(seed)
        eager = eager_class("siglip_mlp")(hidden, intermediate, act).to(dtype)
        candidate = cand_mlp.SiglipMLP(hidden, intermediate, act).to(dtype)
    candidate.load_state_dict(eager.state_dict())
    assert candidate.state_dict().keys() == eager.state_dict().keys()
    x = randn(2, tokens, hidden, seed=seed).to(dtype)
    oracle = eager.to(torch.float64)(x.double())
    got = candidate(x)
    tol = REGISTRY.get("siglip_mlp").tolerance["bfloat16"].atol if dtype == torch.bfloat16 else None
    assert_matches(got, oracle, dtype, atol=tol)


@pytest.mark.parametrize("case_name", ["cpu_tanh_odd", "cpu_erf"])
def test_siglip_mlp_candidate_matches_the_oracle_on_the_cpu_cases(case_name):
    case = REGISTRY.get("siglip_mlp").case(case_name)
    for dtype in (torch.float32, torch.bfloat16):
        check_siglip_mlp(case.dims["tokens"], case.init["hidden_size"], case.init["intermediate_size"],
                         case.init["hidden_act"], dtype, seed=6)


@FAST
@given(tokens=st.integers(1, 70), hidden=st.integers(1, 80), intermediate=st.integers(1, 150),
       act=st.sampled_from(["gelu_pytorch_tanh", "gelu"]), dtype=st.sampled_from([torch.float32, torch.bfloat16]),
       seed=st.integers(0, 2**16))
def test_siglip_mlp_candidate_matches_the_oracle(tokens, hidden, intermediate, act, dtype, seed):
    check_siglip_mlp(tokens, hidden, intermediate, act, dtype, seed)


@FAST
@given(shape=st.lists(st.integers(1, 40), min_size=1, max_size=4),
       dtype=st.sampled_from([torch.float32, torch.bfloat16]), transposed=st.booleans(), seed=st.integers(0, 2**16))
def test_activation_candidates_match_the_oracle(shape, dtype, transposed, seed):
    """Values across both kinks of hard swish (std 3) and QuickGELU's tails; strided inputs too; x untouched."""
    x = randn(*shape, seed=seed, scale=3.0).to(dtype)
    if transposed and x.dim() > 1:
        x = x.transpose(0, -1)
    for task, candidate in (("hardswish", cand_hardswish.Hardswish()), ("quick_gelu", cand_quick_gelu.QuickGELU())):
        before = x.clone()
        got = candidate(x)
        assert torch.equal(x, before)
        assert_matches(got, eager_class(task)()(x.double()), dtype)


def check_swinv2_window_attention(windows: int, heads: int, window_size: int, head_dim: int, dtype: torch.dtype,
                                  seed: int, strided: bool = False) -> None:
    """Candidate vs. the eager module in float64 on the same (dtype-rounded) inputs, logit scales on both sides of
    the log(100) clamp; q, k, v and the bias untouched."""
    n = window_size * window_size
    eager = eager_class("swinv2_window_attention")(heads, head_dim, window_size)
    with torch.no_grad():
        eager.logit_scale.copy_(2.3 + 2.0 * randn(heads, 1, 1, seed=seed + 9))
    candidate = cand_swinv2.Swinv2WindowAttention(heads, head_dim, window_size)
    candidate.load_state_dict(eager.state_dict())
    q, k, v = (randn(windows, heads, n, head_dim, seed=seed + i).to(dtype) for i in range(3))
    bias = (16.0 * torch.rand(heads, n, n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64))
    bias = bias.to(dtype)
    if strided:  # the same values, laid out with stride(-1) != 1 and a sliced window dim
        q = q.transpose(-1, -2).contiguous().transpose(-1, -2)
        k = torch.cat([k, k]).narrow(0, windows, windows)
    before = [t.clone() for t in (q, k, v, bias)]
    with torch.no_grad():  # float32: the eager module's own float32 error, on the same inputs, sets the floor
        in_float32 = eager(q.float(), k.float(), v.float(), bias.float()) if dtype == torch.float32 else None
    oracle = eager.double()(q.double(), k.double(), v.double(), bias.double())
    got = candidate(q, k, v, bias)
    assert all(torch.equal(t, b) for t, b in zip((q, k, v, bias), before))
    # logits up to 100 (the clamped scale) + 16 (the bias) cost float32 softmax ~1e-5 (2026-12-07: the eager module
    # 9.1e-6, the kernel 1.4e-5 on 10x10 windows, 17-wide heads): at most twice the eager module's error passes too
    floor = None if in_float32 is None else 2 * (in_float32.double() - oracle).abs().max().item()
    assert_matches(got, oracle, dtype, atol=None if floor is None else max(TOLERANCE[dtype][0], floor))


def test_swinv2_window_attention_candidate_passes_its_task_on_the_cpu_cases():
    judged_on_cpu_cases("swinv2_window_attention", cand_swinv2.Swinv2WindowAttention)


@FAST
@given(windows=st.integers(1, 3), heads=st.integers(1, 3), window_size=st.integers(1, 10),
       head_dim=st.integers(1, 40), dtype=st.sampled_from([torch.float32, torch.bfloat16]),
       strided=st.booleans(), seed=st.integers(0, 2**16))
def test_swinv2_window_attention_candidate_matches_the_oracle(windows, heads, window_size, head_dim, dtype, strided,
                                                              seed):
    """Windows of up to 100 tokens, so a window spans two query blocks and two key blocks of the kernel."""
    check_swinv2_window_attention(windows, heads, window_size, head_dim, dtype, seed, strided)


def test_depthwise_conv2d_candidate_passes_its_task_on_the_cpu_cases():
    judged_on_cpu_cases("depthwise_conv2d", cand_depthwise.DepthwiseConv2d)


@FAST
@given(batch=st.integers(1, 2), channels=st.integers(1, 5), height=st.integers(1, 20), width=st.integers(1, 70),
       kernel_size=st.sampled_from([1, 3, 5, 7]), stride=st.integers(1, 2), padding=st.integers(0, 3),
       bias=st.booleans(), dtype=st.sampled_from([torch.float32, torch.bfloat16]), channels_last=st.booleans(),
       seed=st.integers(0, 2**16))
def test_depthwise_conv2d_candidate_matches_the_oracle(batch, channels, height, width, kernel_size, stride, padding,
                                                       bias, dtype, channels_last, seed):
    """Rows wider than one 64-column tile, padding up to 3, stride 2, and channels-last inputs read in place; an
    input smaller than the kernel gives the oracle's empty (or one-pixel) output."""
    torch.manual_seed(seed)
    eager = eager_class("depthwise_conv2d")(channels, kernel_size, stride, padding, bias)
    candidate = cand_depthwise.DepthwiseConv2d(channels, kernel_size, stride, padding, bias)
    candidate.load_state_dict(eager.state_dict())
    x = randn(batch, channels, height, width, seed=seed).to(dtype)
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    before = x.clone()
    if height + 2 * padding < kernel_size or width + 2 * padding < kernel_size:
        assert candidate(x).numel() == 0
        return
    oracle = eager.double()(x.double())
    got = candidate(x)
    assert torch.equal(x, before)
    assert_matches(got, oracle, dtype)
