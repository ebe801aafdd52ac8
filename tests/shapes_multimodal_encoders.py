"""Multimodal encoders: their configs from transformers' config classes, and what each task's cases take from them.

Values passed to a config class are the checkpoint's published `config.json` values; a class called with no
arguments is one whose defaults are that checkpoint's (google/siglip-base-patch16-224, facebook/convnextv2-tiny-1k-224,
Qwen2-VL's vision tower). The Qwen models are built from the sub-config classes their composite configs
(Qwen2VLConfig, Qwen2_5OmniConfig's thinker, Qwen3VLConfig) instantiate for `text_config` and `vision_config`.
Image resolution, image count, stage and batch are workload choices read back from the case name.
See tests/case_shapes.py for the rules.
"""

from __future__ import annotations

import math
import re
from typing import Any

from transformers import (
    CLIPVisionConfig,
    ConvNextV2Config,
    DINOv3ViTConfig,
    Qwen2_5OmniTextConfig,
    Qwen2_5OmniVisionEncoderConfig,
    Qwen2VLTextConfig,
    Qwen2VLVisionConfig,
    Qwen3VLTextConfig,
    Qwen3VLVisionConfig,
    SiglipVisionConfig,
    Swinv2Config,
)

import shapes_edge_detection
from case_shapes import Family
from fastkernels.manifest import Case

MULTIMODAL = Family("multimodal-encoders")
# ConvNeXt-V2 Tiny (a gelu case: its MLP activation) as the edge-detection module builds it.
MULTIMODAL.architecture("convnextv2_tiny")(shapes_edge_detection.convnextv2_tiny)

# vLLM's Qwen2 / Qwen3 attention builds its M-RoPE with get_rope's default is_neox_style=True (HF's rotate_half).
VLLM_MROPE_IS_NEOX_STYLE = True
# Qwen/Qwen2-VL-7B-Instruct preprocessor_config.json max_pixels (= 16384 * 28 * 28; transformers' Qwen2VLImageProcessor
# defaults to 28 * 28 * 1280): the largest image the published processor keeps unscaled.
QWEN2_VL_MAX_PIXELS = 12845056
# ConvNeXt's block MLP widens a stage's channels 4x (transformers ConvNextV2Layer: pwconv1 = nn.Linear(dim, 4 * dim)).
CONVNEXT_MLP_EXPANSION = 4
# transformers' ACT2FN names as torch.nn.GELU's `approximate` argument.
GELU_APPROXIMATE = {"gelu_pytorch_tanh": "tanh", "gelu": "none"}


@MULTIMODAL.architecture("siglip_so400m")
def siglip_so400m() -> SiglipVisionConfig:
    """google/siglip-so400m-patch14-384 config.json vision_config."""
    return SiglipVisionConfig(hidden_size=1152, intermediate_size=4304, num_hidden_layers=27, num_attention_heads=16,
                              image_size=384, patch_size=14)


@MULTIMODAL.architecture("siglip2_so400m_patch16_512")
def siglip2_so400m_patch16_512() -> SiglipVisionConfig:
    """google/siglip2-so400m-patch16-512 config.json vision_config: SigLIP 2's fixed-resolution checkpoints are
    published as model_type "siglip" (SiglipModel), so SiglipVisionConfig rather than the NaFlex Siglip2VisionConfig."""
    return SiglipVisionConfig(hidden_size=1152, intermediate_size=4304, num_hidden_layers=27, num_attention_heads=16,
                              image_size=512, patch_size=16)


@MULTIMODAL.architecture("siglip_base")
def siglip_base() -> SiglipVisionConfig:
    """google/siglip-base-patch16-224: its vision_config sets only patch_size 16; the rest is the class defaults."""
    return SiglipVisionConfig()


@MULTIMODAL.architecture("dinov3_vitl16")
def dinov3_vitl16() -> DINOv3ViTConfig:
    """facebook/dinov3-vitl16-pretrain-lvd1689m (transformers' convert_dinov3_vit_to_hf.py, model "vitl")."""
    return DINOv3ViTConfig(patch_size=16, hidden_size=1024, intermediate_size=4096, num_hidden_layers=24,
                           num_attention_heads=16, num_register_tokens=4, use_gated_mlp=False)


@MULTIMODAL.architecture("clip_vit_l14_336")
def clip_vit_l14_336() -> CLIPVisionConfig:
    """openai/clip-vit-large-patch14-336 config.json vision_config."""
    return CLIPVisionConfig(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24, num_attention_heads=16,
                            image_size=336, patch_size=14, projection_dim=768, hidden_act="quick_gelu")


@MULTIMODAL.architecture("qwen2_vl_7b")
def qwen2_vl_7b() -> Qwen2VLTextConfig:
    """Qwen/Qwen2-VL-7B-Instruct config.json's language model (Qwen2VLTextConfig's defaults are the 72B's, without
    mrope_section)."""
    return Qwen2VLTextConfig(vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                             num_attention_heads=28, num_key_value_heads=4, max_position_embeddings=32768,
                             rms_norm_eps=1e-6, rope_theta=1000000.0,
                             rope_scaling={"type": "mrope", "mrope_section": [16, 24, 24]})


@MULTIMODAL.architecture("qwen2_vl_72b")
def qwen2_vl_72b() -> Qwen2VLTextConfig:
    """Qwen/Qwen2-VL-72B-Instruct config.json's language model (the class defaults lack its rms_norm_eps and
    mrope_section)."""
    return Qwen2VLTextConfig(vocab_size=152064, hidden_size=8192, intermediate_size=29568, num_hidden_layers=80,
                             num_attention_heads=64, num_key_value_heads=8, max_position_embeddings=32768,
                             rms_norm_eps=1e-6, rope_theta=1000000.0,
                             rope_scaling={"type": "mrope", "mrope_section": [16, 24, 24]})


@MULTIMODAL.architecture("qwen2_vl_vision")
def qwen2_vl_vision() -> Qwen2VLVisionConfig:
    """Qwen2-VL's 675M vision tower, the same in 2B, 7B and 72B: Qwen/Qwen2-VL-7B-Instruct's vision_config sets only
    in_chans 3 and spatial_patch_size 14, so it is Qwen2VLVisionConfig's defaults."""
    return Qwen2VLVisionConfig()


@MULTIMODAL.architecture("qwen2.5_omni_7b")
def qwen2_5_omni_7b() -> Qwen2_5OmniTextConfig:
    """Qwen/Qwen2.5-Omni-7B config.json thinker_config.text_config."""
    return Qwen2_5OmniTextConfig(vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                                 num_attention_heads=28, num_key_value_heads=4, max_position_embeddings=32768,
                                 rms_norm_eps=1e-6, rope_theta=1000000.0,
                                 rope_scaling={"type": "default", "rope_type": "default",
                                               "mrope_section": [16, 24, 24]})


@MULTIMODAL.architecture("qwen2.5_omni_vision")
def qwen2_5_omni_vision() -> Qwen2_5OmniVisionEncoderConfig:
    """Qwen/Qwen2.5-Omni-7B config.json thinker_config.vision_config (the class defaults' hidden_size is 3584)."""
    return Qwen2_5OmniVisionEncoderConfig(depth=32, hidden_size=1280, intermediate_size=3420, num_heads=16,
                                          patch_size=14, spatial_merge_size=2, temporal_patch_size=2, window_size=112,
                                          out_hidden_size=3584, fullatt_block_indexes=[7, 15, 23, 31],
                                          hidden_act="silu")


@MULTIMODAL.architecture("qwen3_vl_8b")
def qwen3_vl_8b() -> Qwen3VLTextConfig:
    """Qwen/Qwen3-VL-8B-Instruct config.json text_config (the class defaults are neither it nor the 4B they name)."""
    return Qwen3VLTextConfig(vocab_size=151936, hidden_size=4096, intermediate_size=12288, num_hidden_layers=36,
                             num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                             max_position_embeddings=262144, rms_norm_eps=1e-6,
                             rope_parameters={"rope_type": "default", "rope_theta": 5000000,
                                              "mrope_interleaved": True, "mrope_section": [24, 20, 20]})


@MULTIMODAL.architecture("qwen3_vl_vision")
def qwen3_vl_vision() -> Qwen3VLVisionConfig:
    """Qwen/Qwen3-VL-8B-Instruct config.json vision_config, the tower of Qwen3-VL 8B and up (2B and 4B have a
    narrower one; the class defaults differ from it only in out_hidden_size)."""
    return Qwen3VLVisionConfig(depth=27, hidden_size=1152, intermediate_size=4304, num_heads=16, patch_size=16,
                               spatial_merge_size=2, temporal_patch_size=2, out_hidden_size=4096,
                               num_position_embeddings=2304, deepstack_visual_indexes=[8, 16, 24])


def swinv2(embed_dim: int, depths: list[int], num_heads: list[int], window_size: int, image_size: int,
           pretrained_window_sizes: list[int]) -> Swinv2Config:
    """The microsoft/swinv2-* checkpoints all use 4x4 patches and differ in these fields."""
    return Swinv2Config(embed_dim=embed_dim, depths=depths, num_heads=num_heads, window_size=window_size,
                        image_size=image_size, patch_size=4, pretrained_window_sizes=pretrained_window_sizes)


@MULTIMODAL.architecture("swinv2_tiny")
def swinv2_tiny() -> Swinv2Config:
    """microsoft/swinv2-tiny-patch4-window8-256 config.json (the class defaults have window 7 at 224)."""
    return swinv2(96, [2, 2, 6, 2], [3, 6, 12, 24], 8, 256, [0, 0, 0, 0])


@MULTIMODAL.architecture("swinv2_base")
def swinv2_base() -> Swinv2Config:
    """microsoft/swinv2-base-patch4-window16-256 config.json."""
    return swinv2(128, [2, 2, 18, 2], [4, 8, 16, 32], 16, 256, [0, 0, 0, 0])


@MULTIMODAL.architecture("swinv2_large")
def swinv2_large() -> Swinv2Config:
    """microsoft/swinv2-large-patch4-window12to24-192to384-22kto1k-ft config.json."""
    return swinv2(192, [2, 2, 18, 2], [6, 12, 24, 48], 24, 384, [12, 12, 12, 6])


def stated(case: Case, pattern: str) -> tuple[int, ...]:
    """The numbers the case name states in `pattern`: workload choices (images, resolution, stage, batch)."""
    match = re.search(pattern, case.name)
    if match is None:
        raise ValueError(f"case {case.name!r} does not state {pattern!r} in its name")
    return tuple(int(group) for group in match.groups())


def images(case: Case) -> int:
    return stated(case, r"_(\d+)_images?$")[0]


def tokens_per_image(config: Any, case: Case) -> int:
    """The sequence one image makes: patches, plus the class token (CLIP, DINOv3) and registers (DINOv3); for
    ConvNeXt, the pixels of the stage the name states."""
    if isinstance(config, ConvNextV2Config):
        stage, resolution = stated(case, r"_stage(\d+)_(\d+)_")
        return (resolution // config.patch_size // 2 ** (stage - 1)) ** 2
    if isinstance(config, DINOv3ViTConfig):
        (resolution,) = stated(case, r"_(\d+)px_")
        return (resolution // config.patch_size) ** 2 + 1 + config.num_register_tokens
    patches = (config.image_size // config.patch_size) ** 2
    return patches + 1 if isinstance(config, CLIPVisionConfig) else patches


def qwen_vision_grid(config: Any, case: Case) -> tuple[int, int, int]:
    """(temporal, rows, cols) patches of the Qwen vision tower's input: a square image the processor's smart_resize
    rounds to a multiple of patch_size * spatial_merge_size, the largest it keeps, or a video grid the name states."""
    factor = config.patch_size * config.spatial_merge_size
    if case.name.endswith("_max_pixels"):
        side = math.isqrt(QWEN2_VL_MAX_PIXELS) // factor * factor
    elif "_video_" in case.name:
        return stated(case, r"_video_(\d+)x(\d+)x(\d+)$")
    else:
        side = round(stated(case, r"_(\d+)px$")[0] / factor) * factor
    return 1, side // config.patch_size, side // config.patch_size


def is_qwen_vision(config: Any) -> bool:
    """The Qwen towers take the patches of one image or video (no image count), merged 2x2 after the encoder."""
    return hasattr(config, "spatial_merge_size")


def encoder_tokens(config: Any, case: Case) -> int:
    """Every token the encoder layer sees in the case, all images together."""
    if is_qwen_vision(config):
        return math.prod(qwen_vision_grid(config, case))
    return images(case) * tokens_per_image(config, case)


def mlp_width(config: Any, case: Case) -> int:
    """The MLP's hidden width: intermediate_size, Qwen2-VL's embed_dim * mlp_ratio, or ConvNeXt's expanded stage."""
    if isinstance(config, ConvNextV2Config):
        (stage,) = stated(case, r"_stage(\d+)_")
        return CONVNEXT_MLP_EXPANSION * config.hidden_sizes[stage - 1]
    return getattr(config, "intermediate_size", None) or config.embed_dim * config.mlp_ratio


def vision_width(config: Any) -> int:
    """Qwen2-VL names its tower's width embed_dim (its hidden_size is the merger's output); the others hidden_size."""
    return getattr(config, "embed_dim", None) or config.hidden_size


@MULTIMODAL.derives("gelu")
def gelu(config: Any, case: Case) -> dict[str, Any]:
    return {"approximate": GELU_APPROXIMATE[config.hidden_act], "tokens": encoder_tokens(config, case),
            "width": mlp_width(config, case)}


@MULTIMODAL.derives("quick_gelu")
def quick_gelu(config: Any, case: Case) -> dict[str, Any]:
    assert config.hidden_act == "quick_gelu"
    return {"tokens": encoder_tokens(config, case), "width": mlp_width(config, case)}


@MULTIMODAL.derives("siglip_mlp")
def siglip_mlp(config: Any, case: Case) -> dict[str, Any]:
    return {"hidden_size": config.hidden_size, "intermediate_size": config.intermediate_size,
            "hidden_act": config.hidden_act, "tokens": encoder_tokens(config, case)}


@MULTIMODAL.derives("vit_attention")
def vit_attention(config: Any, case: Case) -> dict[str, Any]:
    return {"hidden_size": config.hidden_size, "num_heads": config.num_attention_heads, "batch": images(case),
            "seq": tokens_per_image(config, case)}


@MULTIMODAL.derives("siglip_encoder_layer")
def siglip_encoder_layer(config: Any, case: Case) -> dict[str, Any]:
    return {**vit_attention(config, case), "intermediate_size": config.intermediate_size,
            "layer_norm_eps": config.layer_norm_eps}


@MULTIMODAL.derives("mrope")
def mrope(config: Any, case: Case) -> dict[str, Any]:
    rope = config.rope_parameters
    head_size = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return {"num_heads": config.num_attention_heads, "num_kv_heads": config.num_key_value_heads,
            "head_size": head_size, "rotary_dim": int(head_size * rope.get("partial_rotary_factor", 1.0)),
            "max_position_embeddings": config.max_position_embeddings, "base": float(rope["rope_theta"]),
            "is_neox_style": VLLM_MROPE_IS_NEOX_STYLE, "mrope_section": rope["mrope_section"],
            "mrope_interleaved": rope.get("mrope_interleaved", False)}


def qwen_vision_positions(config: Any, case: Case) -> dict[str, Any]:
    """The patches of the case's image or video and the largest row or column index the rope table must hold."""
    _, rows, cols = qwen_vision_grid(config, case)
    return {"tokens": encoder_tokens(config, case), "max_grid_size": max(rows, cols)}


@MULTIMODAL.derives("vision_rope_2d")
def vision_rope_2d(config: Any, case: Case) -> dict[str, Any]:
    return {"num_heads": config.num_heads, "head_dim": vision_width(config) // config.num_heads,
            "theta": float(config.rope_parameters["rope_theta"]), **qwen_vision_positions(config, case)}


@MULTIMODAL.derives("qwen2_vl_vision_attention")
def qwen2_vl_vision_attention(config: Any, case: Case) -> dict[str, Any]:
    return {"embed_dim": vision_width(config), "num_heads": config.num_heads, **qwen_vision_positions(config, case)}


@MULTIMODAL.derives("qwen2_vl_vision_block")
def qwen2_vl_vision_block(config: Any, case: Case) -> dict[str, Any]:
    assert config.hidden_act == "quick_gelu"
    return {**qwen2_vl_vision_attention(config, case), "mlp_ratio": config.mlp_ratio}


def swin_stage(config: Swinv2Config, case: Case) -> tuple[int, int, int]:
    """(token grid side, channels, heads) of the stage the name states at the resolution it states: each stage
    halves the grid of resolution / patch_size and doubles embed_dim."""
    stage, resolution = stated(case, r"_stage(\d+)_(\d+)_b\d+$")
    return (resolution // config.patch_size // 2 ** (stage - 1), config.embed_dim * 2 ** (stage - 1),
            config.num_heads[stage - 1])


@MULTIMODAL.derives("swin_patch_merging")
def swin_patch_merging(config: Swinv2Config, case: Case) -> dict[str, Any]:
    side, channels, _ = swin_stage(config, case)
    return {"input_height": side, "input_width": side, "dim": channels}


@MULTIMODAL.derives("swinv2_window_attention")
def swinv2_window_attention(config: Swinv2Config, case: Case) -> dict[str, Any]:
    side, channels, heads = swin_stage(config, case)
    # Swinv2Layer._compute_window_shift: a window never exceeds the stage's grid.
    window = min(config.window_size, side)
    (batch,) = stated(case, r"_b(\d+)$")
    return {"num_heads": heads, "head_dim": channels // heads, "window_size": window,
            "windows": batch * math.ceil(side / window) ** 2}
