"""Vision, video and audio models: their configs, and what each task's cases take from them.

Whisper, V-JEPA 2, SigLIP and DINOv2 come from transformers' config classes (class defaults only for V-JEPA 2
ViT-L, which VJEPA2Config documents as its default; the others get their checkpoint's config.json values). FLUX.1,
SDXL, HunyuanVideo, DiT and PixArt-alpha are diffusers (or original-code) models transformers has no class for:
`Published` records hold their config.json values, named after diffusers' fields, with the file they come from.
Values that are code rather than config (an eps hard-coded in a diffusers block) are module constants below.
See tests/case_shapes.py for the rules.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from transformers import Dinov2Config, VJEPA2Config, WhisperConfig

import shapes_multimodal_encoders
import shapes_world_models
from case_shapes import Family, Published
from fastkernels.manifest import Case

VISION = Family("vision-video-audio")
# Architectures another family's module already builds, registered here too under the same case-name prefixes.
for shared in (shapes_world_models.vjepa2_vitl_fpc64_256, shapes_world_models.vjepa2_vitg_fpc64_384,
              shapes_multimodal_encoders.siglip_so400m):
    VISION.architecture(shared.__name__)(shared)

# diffusers' AdaLayerNormZero / AdaLayerNormZeroSingle (FLUX, HunyuanVideo) and facebookresearch/DiT's DiTBlock all
# normalise with LayerNorm(hidden, elementwise_affine=False, eps=1e-6) before modulating.
ADALN_NORM_EPS = 1e-6
ADALN_NORM_AFFINE = False
# diffusers' FluxSingleTransformerBlock builds FluxAttention(eps=1e-6): the eps of its per-head q/k RMSNorm.
FLUX_QK_NORM_EPS = 1e-6
# FluxPipeline's default image side when a case names none: default_sample_size 128 x vae_scale_factor 8.
FLUX_PIPELINE_DEFAULT_PX = 1024
# FLUX (diffusers' CombinedTimestepGuidanceTextProjEmbeddings.time_proj) and DiT (facebookresearch/DiT's
# TimestepEmbedder, frequency_embedding_size 256) embed timesteps as [cos | sin] of exp(-ln(1e4) i / 128) t.
DIT_TIME_PROJ = {"num_channels": 256, "flip_sin_to_cos": True, "downscale_freq_shift": 0}
# diffusers Timesteps' default scale, which none of these models' callers override.
TIMESTEPS_SCALE = 1
# diffusers' ResnetBlock2D: affine GroupNorms, 3x3 biased convs (padding 1); Downsample2D's conv is also 3x3 (stride
# 2), and Upsample2D interpolates (nearest) by 2 before its conv.
RESNET_GROUP_NORM_AFFINE = True
RESNET_CONV_KERNEL = 3
CONV_BIAS = True
DOWNSAMPLE_STRIDE = 2
UPSAMPLE_SCALE_FACTOR = 2.0
# UNet2DConditionModel's time embedding (what every ResnetBlock2D's time_emb_proj reads) is 4 x block_out_channels[0]
# wide when config.json leaves time_embedding_dim unset, as SDXL's does.
UNET_TIME_EMBED_MULTIPLE = 4
# diffusers' VAE Decoder builds its UpDecoderBlock2D resnets with resnet_eps=1e-6 (config.json has no eps).
VAE_DECODER_RESNET_EPS = 1e-6
# diffusers PatchEmbed's defaults, kept by DiT's and PixArt's transformers: no LayerNorm, flattened tokens.
PATCH_EMBED_LAYER_NORM = False
PATCH_EMBED_FLATTEN = True
# transformers' WhisperEncoder: conv1 = Conv1d(mel, d_model, 3, padding=1), conv2 = Conv1d(d_model, d_model, 3,
# stride=2, padding=1), both biased; its nn.LayerNorm(d_model) keeps torch's default eps.
WHISPER_CONV_KERNEL = 3
WHISPER_CONV_PADDING = 1
WHISPER_CONV2_STRIDE = 2
WHISPER_LAYER_NORM_EPS = 1e-5
# nn.LayerNorm's default: the encoders' LayerNorms have weight and bias.
LAYER_NORM_AFFINE = True
# facebook/dinov2-large preprocessor_config.json crop_size (config.json's image_size 518 sizes the position table).
DINOV2_CROP_SIZE = 224
# Frame sizes (height, width) that video case names stand for: 16:9 at 544p per HunyuanVideo's README table, and
# HunyuanVideo 1.5's 480p 16:9 bucket (bucket_hw_base_size 640, stride 16, as HunyuanVideo15Pipeline picks it).
VIDEO_FRAME_SIZES = {"544p": (544, 960), "480p": (480, 848)}


@VISION.architecture("whisper_large_v3")
def whisper_large_v3() -> WhisperConfig:
    """openai/whisper-large-v3 config.json (WhisperConfig's defaults are whisper-tiny)."""
    return WhisperConfig(vocab_size=51866, num_mel_bins=128, d_model=1280, encoder_layers=32, decoder_layers=32,
                         encoder_attention_heads=20, decoder_attention_heads=20, encoder_ffn_dim=5120,
                         decoder_ffn_dim=5120, max_source_positions=1500, max_target_positions=448)


@VISION.architecture("whisper_small")
def whisper_small() -> WhisperConfig:
    """openai/whisper-small config.json."""
    return WhisperConfig(vocab_size=51865, num_mel_bins=80, d_model=768, encoder_layers=12, decoder_layers=12,
                         encoder_attention_heads=12, decoder_attention_heads=12, encoder_ffn_dim=3072,
                         decoder_ffn_dim=3072, max_source_positions=1500, max_target_positions=448)


@VISION.architecture("dinov2_large")
def dinov2_large() -> Dinov2Config:
    """facebook/dinov2-large config.json (Dinov2Config's defaults are dinov2-base)."""
    return Dinov2Config(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, image_size=518, patch_size=14,
                        layer_norm_eps=1e-6)


def flux(source: str, max_sequence_length: int) -> Published:
    """FLUX.1 [dev] and [schnell] share one transformer and VAE config; only the T5 length differs."""
    return Published(source, class_name="FluxTransformer2DModel", num_attention_heads=24, attention_head_dim=128,
                     in_channels=64, mlp_ratio=4.0, vae_block_out_channels=[128, 256, 512, 512], vae_latent_channels=16,
                     max_sequence_length=max_sequence_length)


@VISION.architecture("flux1_dev")
def flux1_dev() -> Published:
    """black-forest-labs/FLUX.1-dev (guidance-distilled; T5 prompts of 512 tokens)."""
    return flux("black-forest-labs/FLUX.1-dev transformer/config.json and vae/config.json; mlp_ratio 4.0 from "
                "black-forest-labs/flux src/flux/util.py; T5 max_length 512 from its src/flux/cli.py", 512)


@VISION.architecture("flux1_schnell")
def flux1_schnell() -> Published:
    """black-forest-labs/FLUX.1-schnell (timestep-distilled; T5 prompts of 256 tokens)."""
    return flux("black-forest-labs/FLUX.1-schnell transformer/config.json and vae/config.json; mlp_ratio 4.0 from "
                "black-forest-labs/flux src/flux/util.py; T5 max_length 256 for flux-schnell from its src/flux/cli.py",
                256)


@VISION.architecture("hunyuanvideo")
def hunyuanvideo() -> Published:
    """hunyuanvideo-community/HunyuanVideo, the diffusers port of tencent/HunyuanVideo."""
    return Published("hunyuanvideo-community/HunyuanVideo transformer/config.json and vae/config.json",
                     class_name="HunyuanVideoTransformer3DModel", num_attention_heads=24, attention_head_dim=128,
                     in_channels=16, patch_size=2, patch_size_t=1, vae_spatial_compression_ratio=8,
                     vae_temporal_compression_ratio=4)


@VISION.architecture("hunyuanvideo15")
def hunyuanvideo15() -> Published:
    """HunyuanVideo 1.5 at 480p (hunyuanvideo-community/HunyuanVideo-1.5-480p_t2v)."""
    return Published("diffusers HunyuanVideo15Transformer3DModel and AutoencoderKLHunyuanVideo15 __init__ defaults "
                     "(transformer_hunyuan_video15.py, autoencoder_kl_hunyuanvideo15.py), the 480p checkpoints' config",
                     class_name="HunyuanVideo15Transformer3DModel", num_attention_heads=16, attention_head_dim=128,
                     in_channels=65, patch_size=1, patch_size_t=1, vae_spatial_compression_ratio=16,
                     vae_temporal_compression_ratio=4)


@VISION.architecture("sdxl")
def sdxl() -> Published:
    """stabilityai/stable-diffusion-xl-base-1.0's UNet; attention_head_dim is, as diffusers' UNet2DConditionModel
    reads it, the head count of each block."""
    return Published("stabilityai/stable-diffusion-xl-base-1.0 unet/config.json", class_name="UNet2DConditionModel",
                     in_channels=4, block_out_channels=[320, 640, 1280], attention_head_dim=[5, 10, 20],
                     layers_per_block=2, norm_num_groups=32, norm_eps=1e-5, conv_in_kernel=3, downsample_padding=1,
                     flip_sin_to_cos=True, freq_shift=0, addition_time_embed_dim=256, sample_size=128)


@VISION.architecture("sdxl_vae")
def sdxl_vae() -> Published:
    """stabilityai/sdxl-vae, SDXL's AutoencoderKL."""
    return Published("stabilityai/sdxl-vae config.json", class_name="AutoencoderKL", latent_channels=4,
                     block_out_channels=[128, 256, 512, 512], layers_per_block=2, norm_num_groups=32, sample_size=1024)


@VISION.architecture("dit_xl2")
def dit_xl2() -> Published:
    """facebook/DiT-XL-2-256, DiT-XL/2 for 256x256 images (the 512 checkpoint is dit_xl2_512px)."""
    return Published("facebook/DiT-XL-2-256 transformer/config.json (facebookresearch/DiT's DiT-XL/2, input_size 32)",
                     class_name="Transformer2DModel", sample_size=32, patch_size=2, in_channels=4,
                     num_attention_heads=16, attention_head_dim=72)


@VISION.architecture("dit_xl2_512px")
def dit_xl2_512px() -> Published:
    """facebook/DiT-XL-2-512, DiT-XL/2 for 512x512 images."""
    return Published("facebook/DiT-XL-2-512 transformer/config.json", class_name="Transformer2DModel",
                     sample_size=64, patch_size=2, in_channels=4, num_attention_heads=16, attention_head_dim=72)


@VISION.architecture("pixart_alpha")
def pixart_alpha() -> Published:
    """PixArt-alpha/PixArt-XL-2-1024-MS."""
    return Published("PixArt-alpha/PixArt-XL-2-1024-MS transformer/config.json", class_name="Transformer2DModel",
                     sample_size=128, patch_size=2, in_channels=4, num_attention_heads=16, attention_head_dim=72)


def stated(case: Case, pattern: str) -> re.Match[str] | None:
    """A workload choice the case's name states (image count, resolution, frames), found by `pattern`."""
    return re.search(pattern, case.name)


def count_in_name(case: Case) -> int:
    """The trailing count of images or clips in a name such as `..._64_images` or `..._16`."""
    return int(stated(case, r"_(\d+)(?:_images?)?$").group(1))


def stage_of(case: Case) -> str:
    """The part of the model a case names right after its architecture key (`sdxl_up_...` -> `up`)."""
    key, _ = VISION.architecture_of(case.name)
    return case.name.removeprefix(key + "_").split("_")[0]


def grid_level(case: Case, full_side: int) -> int:
    """How many 2x downsamplings the case's `HxW` grid lies below `full_side` (square grids only)."""
    height, width = map(int, stated(case, r"(\d+)x(\d+)(?:_b\d+)?$").groups())
    assert height == width, case.name
    return round(math.log2(full_side / height))


def inner_dim(config: Any) -> int:
    return config.num_attention_heads * config.attention_head_dim


def flux_grid_side(config: Any, case: Case) -> int:
    """Side of FLUX's packed latent grid: pixels / VAE downsampling / the 2x2 packing of latent channels."""
    pixels = stated(case, r"_(\d+)px")
    vae_factor = 2 ** (len(config.vae_block_out_channels) - 1)
    packing = math.isqrt(config.in_channels // config.vae_latent_channels)
    return (int(pixels.group(1)) if pixels else FLUX_PIPELINE_DEFAULT_PX) // (vae_factor * packing)


def flux_joint_tokens(config: Any, case: Case) -> int:
    """FLUX's single-stream blocks run T5 tokens and image tokens as one sequence."""
    return config.max_sequence_length + flux_grid_side(config, case) ** 2


def video_latents(config: Any, case: Case) -> tuple[int, int, int]:
    """Latent (frames, height, width) of the video the case names: a causal VAE keeps the first frame and compresses
    the rest in time."""
    frames = int(stated(case, r"_(\d+)f$").group(1))
    height, width = VIDEO_FRAME_SIZES[stated(case, r"_(\d+p)_").group(1)]
    spatial, temporal = config.vae_spatial_compression_ratio, config.vae_temporal_compression_ratio
    return (frames - 1) // temporal + 1, height // spatial, width // spatial


def video_tokens(config: Any, case: Case) -> int:
    frames, height, width = video_latents(config, case)
    return (frames // config.patch_size_t) * (height // config.patch_size) * (width // config.patch_size)


def dit_tokens(config: Any, case: Case) -> int:
    """The image or video tokens one DiT block of this architecture normalises."""
    if config.class_name == "FluxTransformer2DModel":
        return flux_joint_tokens(config, case)
    if config.class_name == "Transformer2DModel":
        return (config.sample_size // config.patch_size) ** 2
    return video_tokens(config, case)


def vjepa2_grid(config: VJEPA2Config) -> tuple[int, int, int]:
    """Tubelets per clip: frames_per_clip / tubelet_size by (crop_size / patch_size)^2."""
    side = config.crop_size // config.patch_size
    return config.frames_per_clip // config.tubelet_size, side, side


@dataclass(frozen=True)
class UNetSite:
    """A module of a diffusers UNet or VAE decoder: the channels it takes and gives, and its grid side."""

    in_channels: int
    out_channels: int
    side: int


def sdxl_site(unet: Published, case: Case) -> UNetSite:
    """The module a case names by stage and grid: conv_in; the first ResnetBlock2D of a down block, the mid block or
    an up block (whose input concatenates the previous block's output with the skip); or a down block's
    Downsample2D / an up block's Upsample2D, which keep the block's output channels."""
    stage, channels = stage_of(case), unet.block_out_channels
    level = grid_level(case, unet.sample_size)
    side = unet.sample_size >> level
    if stage == "conv":
        return UNetSite(unet.in_channels, channels[0], unet.sample_size)
    if stage == "down":
        return UNetSite(channels[max(level - 1, 0)], channels[level], side)
    if stage == "downsample":
        return UNetSite(channels[level], channels[level], side)
    if stage == "mid":
        return UNetSite(channels[-1], channels[-1], side)
    assert stage == "up", case.name
    up_block, reversed_channels = len(channels) - 1 - level, channels[::-1]
    previous = reversed_channels[max(up_block - 1, 0)]
    return UNetSite(previous + reversed_channels[up_block], reversed_channels[up_block], side)


def vae_decoder_site(vae: Published, case: Case) -> UNetSite:
    """A decoder up block's resnets after its first, or its Upsample2D: they work at the block's output channels.
    The decoder starts at sample_size / 2^(blocks - 1) and doubles the grid after every up block but the last."""
    latent_side = vae.sample_size >> (len(vae.block_out_channels) - 1)
    up_block = -grid_level(case, latent_side)
    channels = vae.block_out_channels[::-1][up_block]
    return UNetSite(channels, channels, latent_side << up_block)


def is_vae(config: Any) -> bool:
    return getattr(config, "class_name", None) == "AutoencoderKL"


@VISION.derives("adaln_modulation")
def adaln_modulation(config: Published, case: Case) -> dict[str, Any]:
    """FLUX's double-stream blocks modulate the image tokens (norm1) and the T5 tokens (norm1_context) apart."""
    if config.class_name == "FluxTransformer2DModel":
        seq = config.max_sequence_length if stage_of(case) == "text" else flux_grid_side(config, case) ** 2
    else:
        seq = video_tokens(config, case)
    return {"embedding_dim": inner_dim(config), "norm_eps": ADALN_NORM_EPS, "seq": seq}


@VISION.derives("modulated_layer_norm")
def modulated_layer_norm(config: Published, case: Case) -> dict[str, Any]:
    return {"hidden_size": inner_dim(config), "eps": ADALN_NORM_EPS, "elementwise_affine": ADALN_NORM_AFFINE,
            "seq": dit_tokens(config, case)}


def flux_single_layout(config: Published, case: Case) -> dict[str, Any]:
    """The joint sequence FLUX's single-stream blocks see: T5 tokens, then the packed latent grid."""
    side = flux_grid_side(config, case)
    return {"text_seq_len": config.max_sequence_length, "height": side, "width": side}


@VISION.derives("dit_attention")
def dit_attention(config: Published, case: Case) -> dict[str, Any]:
    """FluxSingleTransformerBlock.attn = FluxAttention(query_dim=dim, heads, dim_head, eps=1e-6, pre_only=True)."""
    return flux_single_layout(config, case) | {"query_dim": inner_dim(config), "heads": config.num_attention_heads,
                                               "dim_head": config.attention_head_dim, "eps": FLUX_QK_NORM_EPS}


@VISION.derives("dit_block")
def dit_block(config: Published, case: Case) -> dict[str, Any]:
    return flux_single_layout(config, case) | {"dim": inner_dim(config),
                                               "num_attention_heads": config.num_attention_heads,
                                               "attention_head_dim": config.attention_head_dim,
                                               "mlp_ratio": config.mlp_ratio}


@VISION.derives("encoder_attention")
def encoder_attention(config: Any, case: Case) -> dict[str, Any]:
    """Heads, head width and the sequence each model attends over (SDXL: the transformer of the case's grid)."""
    if isinstance(config, WhisperConfig):
        heads, width, seq = config.encoder_attention_heads, config.d_model, config.max_source_positions
    elif isinstance(config, VJEPA2Config):
        heads, width, seq = config.num_attention_heads, config.hidden_size, math.prod(vjepa2_grid(config))
    elif config.class_name == "UNet2DConditionModel":
        level = grid_level(case, config.sample_size)
        heads, width = config.attention_head_dim[level], config.block_out_channels[level]
        seq = (config.sample_size >> level) ** 2
    else:
        heads, width, seq = config.num_attention_heads, inner_dim(config), flux_joint_tokens(config, case)
    return {"num_heads": heads, "head_dim": width // heads, "seq": seq}


@VISION.derives("conv3d_patch_embed")
def conv3d_patch_embed(config: Any, case: Case) -> dict[str, Any]:
    """V-JEPA 2's tubelet Conv3d over a full clip, or HunyuanVideo's patchify of the VAE latents."""
    if isinstance(config, VJEPA2Config):
        patch = [config.tubelet_size, config.patch_size, config.patch_size]
        return {"patch_size": patch, "in_chans": config.in_chans, "embed_dim": config.hidden_size,
                "frames": config.frames_per_clip, "height": config.crop_size, "width": config.crop_size}
    frames, height, width = video_latents(config, case)
    return {"patch_size": [config.patch_size_t, config.patch_size, config.patch_size], "in_chans": config.in_channels,
            "embed_dim": inner_dim(config), "frames": frames, "height": height, "width": width}


@VISION.derives("patch_embed")
def patch_embed(config: Published, case: Case) -> dict[str, Any]:
    """Transformer2DModel's PatchEmbed over its sample_size latent; interpolation_scale is unset in these configs, so
    diffusers takes max(sample_size // 64, 1)."""
    return {"height": config.sample_size, "width": config.sample_size, "patch_size": config.patch_size,
            "in_channels": config.in_channels, "embed_dim": inner_dim(config), "layer_norm": PATCH_EMBED_LAYER_NORM,
            "flatten": PATCH_EMBED_FLATTEN, "bias": CONV_BIAS, "interpolation_scale": max(config.sample_size // 64, 1)}


@VISION.derives("timestep_embedding")
def timestep_embedding(config: Published, case: Case) -> dict[str, Any]:
    """SDXL's time_proj embeds the timestep in block_out_channels[0] channels and its add_time_proj the size and
    crop conditioning in addition_time_embed_dim; FLUX and DiT use DIT_TIME_PROJ."""
    if config.class_name != "UNet2DConditionModel":
        return DIT_TIME_PROJ | {"scale": TIMESTEPS_SCALE}
    channels = config.addition_time_embed_dim if stage_of(case) == "add" else config.block_out_channels[0]
    return {"num_channels": channels, "flip_sin_to_cos": config.flip_sin_to_cos,
            "downscale_freq_shift": config.freq_shift, "scale": TIMESTEPS_SCALE}


@VISION.derives("conv2d")
def conv2d(config: Published, case: Case) -> dict[str, Any]:
    """conv_in (conv_in_kernel), a ResnetBlock2D's conv1 or a Downsample2D (stride 2, downsample_padding)."""
    site = vae_decoder_site(config, case) if is_vae(config) else sdxl_site(config, case)
    stage = stage_of(case)
    kernel = config.conv_in_kernel if stage == "conv" else RESNET_CONV_KERNEL
    stride, padding = (DOWNSAMPLE_STRIDE, config.downsample_padding) if stage == "downsample" else (1, kernel // 2)
    return {"in_channels": site.in_channels, "out_channels": site.out_channels, "kernel_size": kernel,
            "stride": stride, "padding": padding, "bias": CONV_BIAS, "height": site.side, "width": site.side}


@VISION.derives("group_norm")
def group_norm(config: Published, case: Case) -> dict[str, Any]:
    """A ResnetBlock2D's norm1, over its input channels."""
    if is_vae(config):
        site, eps = vae_decoder_site(config, case), VAE_DECODER_RESNET_EPS
    else:
        site, eps = sdxl_site(config, case), config.norm_eps
    return {"num_groups": config.norm_num_groups, "num_channels": site.in_channels, "eps": eps,
            "affine": RESNET_GROUP_NORM_AFFINE, "height": site.side, "width": site.side}


@VISION.derives("resnet_block_2d")
def resnet_block_2d(config: Published, case: Case) -> dict[str, Any]:
    site = sdxl_site(config, case)
    return {"in_channels": site.in_channels, "out_channels": site.out_channels,
            "temb_channels": UNET_TIME_EMBED_MULTIPLE * config.block_out_channels[0], "groups": config.norm_num_groups,
            "eps": config.norm_eps, "height": site.side, "width": site.side}


@VISION.derives("upsample_nearest2d")
def upsample_nearest2d(config: Published, case: Case) -> dict[str, Any]:
    site = vae_decoder_site(config, case) if is_vae(config) else sdxl_site(config, case)
    return {"size": None, "scale_factor": UPSAMPLE_SCALE_FACTOR, "channels": site.out_channels,
            "height": site.side, "width": site.side}


@VISION.derives("layer_norm")
def layer_norm(config: Any, case: Case) -> dict[str, Any]:
    """Tokens of the images or clips the case names: SigLIP's patches, DINOv2's patches of its processor's crop plus
    CLS, Whisper's encoder positions."""
    if isinstance(config, WhisperConfig):
        width, eps, per_item = config.d_model, WHISPER_LAYER_NORM_EPS, config.max_source_positions
    elif isinstance(config, Dinov2Config):
        width, eps = config.hidden_size, config.layer_norm_eps
        per_item = (DINOV2_CROP_SIZE // config.patch_size) ** 2 + 1
    else:
        width, eps = config.hidden_size, config.layer_norm_eps
        per_item = (config.image_size // config.patch_size) ** 2
    return {"normalized_shape": width, "eps": eps, "elementwise_affine": LAYER_NORM_AFFINE,
            "tokens": count_in_name(case) * per_item}


@VISION.derives("conv1d")
def conv1d(config: WhisperConfig, case: Case) -> dict[str, Any]:
    """WhisperEncoder.conv1 (mel bins -> d_model) or conv2 (stride 2), both over the 30 s input of
    2 * max_source_positions mel frames."""
    first = stated(case, r"_conv1_") is not None
    return {"in_channels": config.num_mel_bins if first else config.d_model, "out_channels": config.d_model,
            "kernel_size": WHISPER_CONV_KERNEL, "stride": 1 if first else WHISPER_CONV2_STRIDE,
            "padding": WHISPER_CONV_PADDING, "bias": CONV_BIAS,
            "length": WHISPER_CONV2_STRIDE * config.max_source_positions}


@VISION.derives("whisper_conv_frontend")
def whisper_conv_frontend(config: WhisperConfig, case: Case) -> dict[str, Any]:
    return {"num_mel_bins": config.num_mel_bins, "d_model": config.d_model,
            "max_source_positions": config.max_source_positions}


@VISION.derives("whisper_encoder_layer")
def whisper_encoder_layer(config: WhisperConfig, case: Case) -> dict[str, Any]:
    return {"d_model": config.d_model, "encoder_attention_heads": config.encoder_attention_heads,
            "encoder_ffn_dim": config.encoder_ffn_dim, "seq": config.max_source_positions}
