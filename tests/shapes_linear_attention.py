"""Linear attention and state-space models: their configs, and what each task's cases take from them.

Transformers config classes hold Mamba, FalconMamba, Mamba2, Jamba and Qwen3-Next. Only JambaConfig is called with no
arguments: its defaults are documented as ai21labs/Jamba-v0.1 and equal that config.json. MambaConfig, Mamba2Config,
FalconMambaConfig and Qwen3NextConfig name a checkpoint in their docstrings whose values their defaults do not hold
(MambaConfig's are a 768-wide model, Mamba2Config's are Mamba-Codestral's, Qwen3NextConfig's intermediate_size and
context differ), so those get the checkpoint's published values. GLA, RetNet and RWKV-7 have no transformers config
class; their values are `Published` records of the fla-hub checkpoints (FLA's config classes). See
tests/case_shapes.py for the rules.
"""

from __future__ import annotations

from typing import Any

from transformers import FalconMambaConfig, JambaConfig, Mamba2Config, MambaConfig, Qwen3NextConfig

from case_shapes import Family, Published
from fastkernels.manifest import Case

LINEAR = Family("linear-attention")

# Values the model code fixes rather than its config:
# mamba_ssm's Mamba and Mamba2 (and transformers' MambaMixer, Mamba2Mixer) always call their scans with softplus(dt).
MAMBA_DT_SOFTPLUS = True
# Qwen3NextGatedDeltaNet builds its conv1d with bias=False and calls the delta rule with use_qk_l2norm_in_kernel=True.
QWEN3_NEXT_CONV_BIAS = False
QWEN3_NEXT_QK_L2NORM = True
# FLA's GLABlock does not pass these to GatedLinearAttention, so fla-hub's GLA models run the layer's defaults.
FLA_GLA_GATE_LOW_RANK_DIM = 16
FLA_GLA_GATE_LOGIT_NORMALIZER = 16
# Length of the cos/sin table of tasks/L2/multiscale_retention (its default). FLA's RotaryEmbedding grows its table
# to the sequence at hand, so no config value sets it (the layer never reads RetNetConfig.max_position_embeddings).
RETENTION_ROTARY_TABLE_POSITIONS = 8192
# tasks/L2/mamba_mixer's default rms_norm_eps: Mamba-1 has no dt/B/C norms (vLLM passes None), so the value is unused.
MAMBA_MIXER_UNUSED_RMS_EPS = 1e-6


def mamba_ssm_mamba(d_model: int, n_layer: int) -> MambaConfig:
    """A state-spaces/mamba-* config.json gives d_model and n_layer; the mixer keeps mamba_ssm Mamba's defaults
    (d_state 16, d_conv 4, expand 2, dt_rank "auto" = ceil(d_model / 16), conv bias, no proj bias), norm eps 1e-5."""
    return MambaConfig(hidden_size=d_model, num_hidden_layers=n_layer, vocab_size=50280,  # 50277 padded to 8
                       state_size=16, conv_kernel=4, expand=2, time_step_rank="auto", use_conv_bias=True,
                       use_bias=False, layer_norm_epsilon=1e-5, tie_word_embeddings=True)


def mamba_ssm_mamba2(d_model: int, n_layer: int) -> Mamba2Config:
    """A state-spaces/mamba2-* config.json gives d_model and n_layer (ssm_cfg {"layer": "Mamba2"}); the mixer keeps
    mamba_ssm Mamba2's defaults (d_state 128, d_conv 4, expand 2, headdim 64 -> nheads = expand * d_model / headdim,
    ngroups 1, chunk_size 256, conv bias, gated RMSNorm eps 1e-5)."""
    expand, headdim = 2, 64
    return Mamba2Config(hidden_size=d_model, num_hidden_layers=n_layer, vocab_size=50288,  # 50277 padded to 16
                        expand=expand, head_dim=headdim, num_heads=expand * d_model // headdim, n_groups=1,
                        state_size=128, conv_kernel=4, chunk_size=256, use_conv_bias=True, use_bias=False,
                        layer_norm_epsilon=1e-5, tie_word_embeddings=True)


@LINEAR.architecture("mamba_130m")
def mamba_130m() -> MambaConfig:
    """state-spaces/mamba-130m: d_model 768, n_layer 24."""
    return mamba_ssm_mamba(768, 24)


@LINEAR.architecture("mamba_2p8b")
def mamba_2p8b() -> MambaConfig:
    """state-spaces/mamba-2.8b: d_model 2560, n_layer 64."""
    return mamba_ssm_mamba(2560, 64)


@LINEAR.architecture("falcon_mamba_7b")
def falcon_mamba_7b() -> FalconMambaConfig:
    """tiiuae/falcon-mamba-7b config.json (its expand 16 is stale; intermediate_size 8192 is what the weights have,
    and FalconMambaConfig keeps a passed intermediate_size)."""
    return FalconMambaConfig(hidden_size=4096, intermediate_size=8192, expand=16, num_hidden_layers=64,
                             vocab_size=65024, state_size=16, conv_kernel=4, time_step_rank=256, use_conv_bias=True,
                             use_bias=False, layer_norm_epsilon=1e-5, mixer_rms_eps=1e-6, tie_word_embeddings=False)


@LINEAR.architecture("mamba2_130m")
def mamba2_130m() -> Mamba2Config:
    """state-spaces/mamba2-130m: d_model 768, n_layer 24."""
    return mamba_ssm_mamba2(768, 24)


@LINEAR.architecture("mamba2_1p3b")
def mamba2_1p3b() -> Mamba2Config:
    """state-spaces/mamba2-1.3b: d_model 2048, n_layer 48."""
    return mamba_ssm_mamba2(2048, 48)


@LINEAR.architecture("mamba2_2p7b")
def mamba2_2p7b() -> Mamba2Config:
    """state-spaces/mamba2-2.7b: d_model 2560, n_layer 64."""
    return mamba_ssm_mamba2(2560, 64)


@LINEAR.architecture("mamba_codestral_7b")
def mamba_codestral_7b() -> Mamba2Config:
    """mistralai/Mamba-Codestral-7B-v0.1 config.json (Mamba2Config's defaults hold these values, but its docstring
    names state-spaces/mamba2-2.8b)."""
    return Mamba2Config(hidden_size=4096, num_hidden_layers=64, vocab_size=32768, expand=2, head_dim=64,
                        num_heads=128, n_groups=8, state_size=128, conv_kernel=4, chunk_size=256, use_conv_bias=True,
                        use_bias=False, layer_norm_epsilon=1e-5, time_step_rank=256, tie_word_embeddings=False)


@LINEAR.architecture("jamba_v01")
def jamba_v01() -> JambaConfig:
    """ai21labs/Jamba-v0.1: JambaConfig's documented defaults."""
    return JambaConfig()


@LINEAR.architecture("qwen3_next_80b")
def qwen3_next_80b() -> Qwen3NextConfig:
    """Qwen/Qwen3-Next-80B-A3B-Instruct config.json."""
    return Qwen3NextConfig(vocab_size=151936, hidden_size=2048, intermediate_size=5120, num_hidden_layers=48,
                           num_attention_heads=16, num_key_value_heads=2, head_dim=256, hidden_act="silu",
                           max_position_embeddings=262144, rms_norm_eps=1e-6, full_attention_interval=4,
                           linear_conv_kernel_dim=4, linear_key_head_dim=128, linear_value_head_dim=128,
                           linear_num_key_heads=16, linear_num_value_heads=32, num_experts=512, num_experts_per_tok=10,
                           moe_intermediate_size=512, shared_expert_intermediate_size=512,
                           rope_parameters={"rope_type": "default", "rope_theta": 10000000.0,
                                            "partial_rotary_factor": 0.25})


@LINEAR.architecture("gla_1p3b")
def gla_1p3b() -> Published:
    """fla-hub/gla-1.3B-100B, an FLA GLAConfig (no transformers class)."""
    return Published(source="https://huggingface.co/fla-hub/gla-1.3B-100B/blob/main/config.json (FLA "
                            "fla/models/gla/configuration_gla.py GLAConfig)",
                     hidden_size=2048, num_hidden_layers=24, num_heads=4, expand_k=0.5, expand_v=1, attn_mode="chunk",
                     use_short_conv=False, use_output_gate=True, hidden_act="swish", fuse_norm=True, norm_eps=1e-6)


@LINEAR.architecture("retnet_1p3b")
def retnet_1p3b() -> Published:
    """fla-hub/retnet-1.3B-100B, an FLA RetNetConfig (no transformers class)."""
    return Published(source="https://huggingface.co/fla-hub/retnet-1.3B-100B/blob/main/config.json (FLA "
                            "fla/models/retnet/configuration_retnet.py RetNetConfig)",
                     hidden_size=2048, num_hidden_layers=24, num_heads=8, expand_k=1, expand_v=2, attn_mode="chunk",
                     use_short_conv=False, use_output_gate=True, hidden_act="swish", fuse_norm=True, norm_eps=1e-6)


@LINEAR.architecture("rwkv7_world_2p9b")
def rwkv7_world_2p9b() -> Published:
    """RWKV-7 World 2.9B; transformers' RwkvConfig is RWKV-4, so FLA's RWKV7Config values are recorded."""
    return Published(source="https://huggingface.co/fla-hub/rwkv7-2.9B-world/blob/main/config.json (FLA RWKV7Config; "
                            "BlinkDL RWKV-x070-World-2.9B: n_layer 32, n_embd 2560, head_size 64)",
                     hidden_size=2560, num_hidden_layers=32, head_dim=64, vocab_size=65536)


def mamba1_mixer(config: Any) -> dict[str, Any]:
    """The Mamba-1 mixer of Mamba, FalconMamba (weightless dt/B/C RMS norms, as vLLM's use_rms_norm) or Jamba
    (dt/B/C RMS norms with weights), in tasks/L2/mamba_mixer's names."""
    if isinstance(config, JambaConfig):
        return {"hidden_size": config.hidden_size, "intermediate_size": config.mamba_expand * config.hidden_size,
                "state_size": config.mamba_d_state, "conv_kernel": config.mamba_d_conv,
                "time_step_rank": config.mamba_dt_rank, "use_conv_bias": config.mamba_conv_bias,
                "use_rms_norm": True, "rms_norm_has_weight": True, "rms_norm_eps": config.rms_norm_eps}
    falcon = isinstance(config, FalconMambaConfig)
    return {"hidden_size": config.hidden_size, "intermediate_size": config.intermediate_size,
            "state_size": config.state_size, "conv_kernel": config.conv_kernel,
            "time_step_rank": config.time_step_rank, "use_conv_bias": config.use_conv_bias,
            "use_rms_norm": falcon, "rms_norm_has_weight": not falcon,
            "rms_norm_eps": config.mixer_rms_eps if falcon else MAMBA_MIXER_UNUSED_RMS_EPS}


def gated_delta_heads(config: Qwen3NextConfig) -> dict[str, int]:
    return {"num_k_heads": config.linear_num_key_heads, "num_v_heads": config.linear_num_value_heads,
            "head_k_dim": config.linear_key_head_dim, "head_v_dim": config.linear_value_head_dim}


def fla_heads(config: Published) -> dict[str, int]:
    """Per-head key and value widths of FLA's GLA and retention layers (key_dim = hidden_size * expand_k)."""
    assert config.attn_mode == "chunk" and config.use_output_gate and not config.use_short_conv
    return {"heads": config.num_heads, "head_k_dim": int(config.hidden_size * config.expand_k) // config.num_heads,
            "head_v_dim": int(config.hidden_size * config.expand_v) // config.num_heads}


@LINEAR.derives("causal_conv1d")
def causal_conv1d(config: Any, case: Case) -> dict[str, Any]:
    """The conv in front of each model's scan: over x (Mamba, Jamba), x | B | C (Mamba2) or q | k | v (Qwen3-Next)."""
    if isinstance(config, Qwen3NextConfig):
        heads = gated_delta_heads(config)
        dim = 2 * heads["num_k_heads"] * heads["head_k_dim"] + heads["num_v_heads"] * heads["head_v_dim"]
        return {"dim": dim, "width": config.linear_conv_kernel_dim, "bias": QWEN3_NEXT_CONV_BIAS,
                "activation": config.hidden_act}
    if isinstance(config, Mamba2Config):
        # Mamba2Mixer's conv_dim; Mamba2Config checks that expand * hidden_size = num_heads * head_dim.
        dim = config.expand * config.hidden_size + 2 * config.n_groups * config.state_size
        return {"dim": dim, "width": config.conv_kernel, "bias": config.use_conv_bias, "activation": config.hidden_act}
    mixer = mamba1_mixer(config)
    return {"dim": mixer["intermediate_size"], "width": mixer["conv_kernel"], "bias": mixer["use_conv_bias"],
            "activation": config.hidden_act}


@LINEAR.derives("selective_scan")
def selective_scan(config: Any, case: Case) -> dict[str, Any]:
    mixer = mamba1_mixer(config)
    return {"dim": mixer["intermediate_size"], "dstate": mixer["state_size"], "delta_softplus": MAMBA_DT_SOFTPLUS}


@LINEAR.derives("mamba_mixer")
def mamba_mixer(config: Any, case: Case) -> dict[str, Any]:
    return mamba1_mixer(config)


@LINEAR.derives("mamba_block")
def mamba_block(config: MambaConfig | FalconMambaConfig, case: Case) -> dict[str, Any]:
    """vLLM's MambaDecoderLayer: an RMSNorm of layer_norm_epsilon, then the mixer, given FalconMambaConfig's
    mixer_rms_eps for its weightless dt/B/C norms (None for Mamba, which has none)."""
    mixer = mamba1_mixer(config)
    del mixer["use_rms_norm"], mixer["rms_norm_has_weight"], mixer["rms_norm_eps"]
    return {**mixer, "layer_norm_epsilon": config.layer_norm_epsilon,
            "mixer_rms_eps": getattr(config, "mixer_rms_eps", None)}


@LINEAR.derives("jamba_mamba_layer")
def jamba_mamba_layer(config: JambaConfig, case: Case) -> dict[str, Any]:
    """A Jamba layer with a Mamba mixer and the dense SwiGLU MLP of intermediate_size."""
    return {"hidden_size": config.hidden_size, "mamba_intermediate_size": config.mamba_expand * config.hidden_size,
            "mamba_d_state": config.mamba_d_state, "mamba_d_conv": config.mamba_d_conv,
            "mamba_dt_rank": config.mamba_dt_rank, "mamba_conv_bias": config.mamba_conv_bias,
            "intermediate_size": config.intermediate_size, "rms_norm_eps": config.rms_norm_eps}


@LINEAR.derives("mamba2_ssd")
def mamba2_ssd(config: Mamba2Config, case: Case) -> dict[str, Any]:
    return {"nheads": config.num_heads, "headdim": config.head_dim, "ngroups": config.n_groups,
            "dstate": config.state_size, "chunk_size": config.chunk_size, "dt_softplus": MAMBA_DT_SOFTPLUS}


@LINEAR.derives("mamba2_mixer")
def mamba2_mixer(config: Mamba2Config, case: Case) -> dict[str, Any]:
    """tasks/L2/mamba2_mixer models one B/C group and a conv with bias, so a config with others is not its model."""
    assert config.n_groups == 1 and config.use_conv_bias
    return {"hidden_size": config.hidden_size, "num_heads": config.num_heads, "head_dim": config.head_dim,
            "state_size": config.state_size, "conv_kernel": config.conv_kernel, "chunk_size": config.chunk_size,
            "layer_norm_epsilon": config.layer_norm_epsilon}


@LINEAR.derives("gated_delta_rule", "gated_delta_rule_decode")
def gated_delta_rule(config: Qwen3NextConfig, case: Case) -> dict[str, Any]:
    return {**gated_delta_heads(config), "use_qk_l2norm": QWEN3_NEXT_QK_L2NORM}


@LINEAR.derives("gated_deltanet")
def gated_deltanet(config: Qwen3NextConfig, case: Case) -> dict[str, Any]:
    return {"hidden_size": config.hidden_size, **gated_delta_heads(config),
            "conv_kernel": config.linear_conv_kernel_dim, "rms_norm_eps": config.rms_norm_eps}


@LINEAR.derives("gla_chunk", "retention")
def fla_chunk(config: Published, case: Case) -> dict[str, Any]:
    return fla_heads(config)


@LINEAR.derives("gla_attention")
def gla_attention(config: Published, case: Case) -> dict[str, Any]:
    """GLABlock's GatedLinearAttention with the fused norm and swish output gate the task models."""
    fla_heads(config)
    assert config.hidden_act == "swish" and config.fuse_norm
    return {"hidden_size": config.hidden_size, "num_heads": config.num_heads, "expand_k": config.expand_k,
            "expand_v": config.expand_v, "gate_low_rank_dim": FLA_GLA_GATE_LOW_RANK_DIM,
            "gate_logit_normalizer": FLA_GLA_GATE_LOGIT_NORMALIZER, "norm_eps": config.norm_eps}


@LINEAR.derives("multiscale_retention")
def multiscale_retention(config: Published, case: Case) -> dict[str, Any]:
    """RetNetBlock's MultiScaleRetention with the fused norm and swish output gate the task models."""
    fla_heads(config)
    assert config.hidden_act == "swish" and config.fuse_norm
    return {"hidden_size": config.hidden_size, "num_heads": config.num_heads, "expand_k": config.expand_k,
            "expand_v": config.expand_v, "norm_eps": config.norm_eps,
            "max_position_embeddings": RETENTION_ROTARY_TABLE_POSITIONS}


@LINEAR.derives("rwkv7_wkv")
def rwkv7_wkv(config: Published, case: Case) -> dict[str, Any]:
    """RWKV7Config leaves num_heads unset, so the layer has hidden_size / head_dim heads."""
    return {"heads": config.hidden_size // config.head_dim, "head_dim": config.head_dim}
