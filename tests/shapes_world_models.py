"""World models: V-JEPA 2's configs from transformers' VJEPA2Config, and what each task's cases take from them.

VJEPA2Config's defaults are facebook/vjepa2-vitl-fpc64-256's (transformers documents them so, and its conversion
script builds that checkpoint from the same values); the ViT-H and ViT-g checkpoints pass their published values.
A clip's tokens follow from the config (frames_per_clip / tubelet_size frames of (crop_size / patch_size)^2
patches); only the number of clips, the case name's last number, is a workload choice.
See tests/case_shapes.py for the rules.
"""

from __future__ import annotations

import re
from typing import Any

from transformers import VJEPA2Config

from case_shapes import Family
from fastkernels.manifest import Case

WORLD = Family("world-models")


@WORLD.architecture("vjepa2_vitl_fpc64_256")
def vjepa2_vitl_fpc64_256() -> VJEPA2Config:
    """facebook/vjepa2-vitl-fpc64-256: the class defaults."""
    return VJEPA2Config()


@WORLD.architecture("vjepa2_vith_fpc64_256")
def vjepa2_vith_fpc64_256() -> VJEPA2Config:
    """facebook/vjepa2-vith-fpc64-256 config.json."""
    return VJEPA2Config(crop_size=256, frames_per_clip=64, hidden_size=1280, num_attention_heads=16,
                        num_hidden_layers=32, mlp_ratio=4.0)


@WORLD.architecture("vjepa2_vitg_fpc64_384")
def vjepa2_vitg_fpc64_384() -> VJEPA2Config:
    """facebook/vjepa2-vitg-fpc64-384 config.json (fc1 of int(1408 * 48 / 11) = 6144)."""
    return VJEPA2Config(crop_size=384, frames_per_clip=64, hidden_size=1408, num_attention_heads=22,
                        num_hidden_layers=40, mlp_ratio=48 / 11)


def grid_size(config: VJEPA2Config) -> int:
    """Patches along each side of a frame."""
    return config.crop_size // config.patch_size


def clip_shape(config: VJEPA2Config, case: Case) -> dict[str, int]:
    """One clip's tokens (tubelets of tubelet_size frames, each a grid_size^2 patch grid) and the case's clips."""
    match = re.search(r"_(\d+)$", case.name)
    if match is None:
        raise ValueError(f"case {case.name!r} does not end with its number of clips")
    tokens = config.frames_per_clip // config.tubelet_size * grid_size(config) ** 2
    return {"batch": int(match.group(1)), "tokens": tokens}


@WORLD.derives("rope_3d")
def rope_3d(config: VJEPA2Config, case: Case) -> dict[str, Any]:
    return {"head_dim": config.hidden_size // config.num_attention_heads, "grid_size": grid_size(config),
            "heads": config.num_attention_heads, **clip_shape(config, case)}


@WORLD.derives("spacetime_attention")
def spacetime_attention(config: VJEPA2Config, case: Case) -> dict[str, Any]:
    return {"hidden_size": config.hidden_size, "num_attention_heads": config.num_attention_heads,
            "grid_size": grid_size(config), "qkv_bias": config.qkv_bias, **clip_shape(config, case)}


@WORLD.derives("vjepa2_block")
def vjepa2_block(config: VJEPA2Config, case: Case) -> dict[str, Any]:
    assert config.hidden_act == "gelu"
    return {"hidden_size": config.hidden_size, "num_attention_heads": config.num_attention_heads,
            "mlp_ratio": config.mlp_ratio, "grid_size": grid_size(config), "layer_norm_eps": config.layer_norm_eps,
            **clip_shape(config, case)}
