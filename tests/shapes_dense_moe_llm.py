"""Dense and MoE LLMs: their configs from transformers' config classes, and what each task's cases take from them.

Values passed to a config class are the checkpoint's published `config.json` values; a class called with no
arguments is one whose defaults transformers documents as that checkpoint's (Mixtral-8x7B, Qwen1.5-MoE-A2.7B,
Qwen3-30B-A3B, Gemma-7B). Several classes name a checkpoint whose values their defaults do not hold (LlamaConfig's
are Llama-2-7B's; DeepseekV2Config names V2-Lite but holds a 4096-wide model; Gemma3TextConfig names gemma-3-4b-it
but holds a 2304-wide one), so those get the published values. See tests/case_shapes.py for the rules.
"""

from __future__ import annotations

import re
from typing import Any

from transformers import (
    DeepseekV2Config,
    DeepseekV3Config,
    Gemma2Config,
    Gemma3TextConfig,
    GemmaConfig,
    LlamaConfig,
    MistralConfig,
    MixtralConfig,
    Qwen2Config,
    Qwen2MoeConfig,
    Qwen3MoeConfig,
)

from case_shapes import Family
from fastkernels.manifest import Case

LLM = Family("dense-moe-llm")

# vLLM's default KV-cache block size (CacheConfig.block_size), a serving choice rather than a model's.
VLLM_BLOCK_SIZE = 16
# Mixtral's router softmaxes over its top-2 logits, which is the full softmax renormalized over the top 2; vLLM's
# Mixtral calls fused_topk with renormalize=True. MixtralConfig has no norm_topk_prob to read it from.
MIXTRAL_RENORMALIZES = True


@LLM.architecture("llama31_8b")
def llama31_8b() -> LlamaConfig:
    """meta-llama/Llama-3.1-8B config.json."""
    return LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                       num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=131072,
                       rms_norm_eps=1e-5, hidden_act="silu",
                       rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                        "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                        "original_max_position_embeddings": 8192})


@LLM.architecture("llama32_1b")
def llama32_1b() -> LlamaConfig:
    """meta-llama/Llama-3.2-1B config.json."""
    return LlamaConfig(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                       num_attention_heads=32, num_key_value_heads=8, head_dim=64, max_position_embeddings=131072,
                       rms_norm_eps=1e-5, hidden_act="silu",
                       rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0,
                                        "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                        "original_max_position_embeddings": 8192})


@LLM.architecture("mistral_7b")
def mistral_7b() -> MistralConfig:
    """mistralai/Mistral-7B-v0.1 config.json (MistralConfig's defaults differ in context length and rope)."""
    return MistralConfig(vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_attention_heads=32,
                         num_key_value_heads=8, max_position_embeddings=32768, rms_norm_eps=1e-5,
                         sliding_window=4096, rope_parameters={"rope_type": "default", "rope_theta": 10000.0})


@LLM.architecture("mixtral_8x7b")
def mixtral_8x7b() -> MixtralConfig:
    """mistralai/Mixtral-8x7B-v0.1: MixtralConfig's defaults."""
    return MixtralConfig()


@LLM.architecture("qwen2_7b")
def qwen2_7b() -> Qwen2Config:
    """Qwen/Qwen2-7B config.json (Qwen2Config names it, but its defaults are a 4096-wide model)."""
    return Qwen2Config(vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                       num_attention_heads=28, num_key_value_heads=4, max_position_embeddings=131072,
                       rms_norm_eps=1e-6, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})


@LLM.architecture("gemma_7b")
def gemma_7b() -> GemmaConfig:
    """google/gemma-7b: GemmaConfig's defaults."""
    return GemmaConfig()


@LLM.architecture("gemma2_9b")
def gemma2_9b() -> Gemma2Config:
    """google/gemma-2-9b config.json."""
    return Gemma2Config(vocab_size=256000, hidden_size=3584, intermediate_size=14336, num_hidden_layers=42,
                        num_attention_heads=16, num_key_value_heads=8, head_dim=256,
                        hidden_activation="gelu_pytorch_tanh", query_pre_attn_scalar=256, sliding_window=4096)


@LLM.architecture("gemma_3_4b")
def gemma_3_4b() -> Gemma3TextConfig:
    """google/gemma-3-4b-it config.json's text_config."""
    return Gemma3TextConfig(vocab_size=262208, hidden_size=2560, intermediate_size=10240, num_hidden_layers=34,
                            num_attention_heads=8, num_key_value_heads=4, head_dim=256, query_pre_attn_scalar=256,
                            sliding_window=1024)


@LLM.architecture("qwen2_moe")
@LLM.architecture("qwen1.5_moe_a2.7b")
def qwen15_moe_a27b() -> Qwen2MoeConfig:
    """Qwen/Qwen1.5-MoE-A2.7B: Qwen2MoeConfig's defaults (cases name it `qwen2_moe` after the class too)."""
    return Qwen2MoeConfig()


@LLM.architecture("qwen3_moe_30b_a3b")
def qwen3_moe_30b_a3b() -> Qwen3MoeConfig:
    """Qwen/Qwen3-30B-A3B(-Base): Qwen3MoeConfig's defaults."""
    return Qwen3MoeConfig()


@LLM.architecture("deepseek_v2_lite")
def deepseek_v2_lite() -> DeepseekV2Config:
    """deepseek-ai/DeepSeek-V2-Lite config.json."""
    return DeepseekV2Config(vocab_size=102400, hidden_size=2048, intermediate_size=10944, moe_intermediate_size=1408,
                            num_hidden_layers=27, num_attention_heads=16, num_key_value_heads=16, n_routed_experts=64,
                            n_shared_experts=2, num_experts_per_tok=6, routed_scaling_factor=1.0, kv_lora_rank=512,
                            q_lora_rank=None, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
                            first_k_dense_replace=1, norm_topk_prob=False, topk_method="greedy")


@LLM.architecture("deepseek_v3")
def deepseek_v3() -> DeepseekV3Config:
    """deepseek-ai/DeepSeek-V3 config.json, its fp8 quantization_config included."""
    return DeepseekV3Config(vocab_size=129280, hidden_size=7168, intermediate_size=18432, moe_intermediate_size=2048,
                            num_hidden_layers=61, num_attention_heads=128, num_key_value_heads=128,
                            n_routed_experts=256, n_shared_experts=1, num_experts_per_tok=8, n_group=8, topk_group=4,
                            routed_scaling_factor=2.5, norm_topk_prob=True, first_k_dense_replace=3,
                            quantization_config={"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                                                 "weight_block_size": [128, 128]})


def rope_theta(config: Any) -> float:
    """transformers 5 keeps rope_theta in rope_parameters; 4.x kept it on the config."""
    parameters = getattr(config, "rope_parameters", None) or {}
    return float(parameters.get("rope_theta", getattr(config, "rope_theta", 0.0)))


def head_dim(config: Any) -> int:
    return getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads


@LLM.derives("causal_attention")
def attention_heads(config: Any, case: Case) -> dict[str, Any]:
    return {"num_heads": config.num_attention_heads, "num_kv_heads": config.num_key_value_heads,
            "head_dim": head_dim(config)}


@LLM.derives("rms_norm")
def rms_norm(config: Any, case: Case) -> dict[str, Any]:
    return {"hidden_size": config.hidden_size, "eps": config.rms_norm_eps}


@LLM.derives("silu_and_mul")
def silu_and_mul(config: Any, case: Case) -> dict[str, Any]:
    assert config.hidden_act == "silu"
    return {"d": config.intermediate_size}


def experts(config: Any) -> int:
    """The routed experts' count under each config class's own name for it."""
    for name in ("num_local_experts", "num_experts", "n_routed_experts"):
        if getattr(config, name, None):
            return getattr(config, name)
    raise AttributeError(f"{type(config).__name__} names no expert count")


def expert_width(config: Any) -> int:
    """An expert's intermediate size: moe_intermediate_size where the config has one, else intermediate_size."""
    return getattr(config, "moe_intermediate_size", None) or config.intermediate_size


def gelu_approximation(config: Any) -> str:
    activation = getattr(config, "hidden_activation", None) or config.hidden_act
    return {"gelu_pytorch_tanh": "tanh", "gelu": "none"}[activation]


@LLM.derives("sliding_window_attention")
def sliding_window_heads(config: Any, case: Case) -> dict[str, Any]:
    return {**attention_heads(config, case), "sliding_window": config.sliding_window}


@LLM.derives("paged_decode_attention")
def paged_heads(config: Any, case: Case) -> dict[str, Any]:
    return {**attention_heads(config, case), "block_size": VLLM_BLOCK_SIZE}


@LLM.derives("embedding")
def embedding(config: Any, case: Case) -> dict[str, Any]:
    return {"num_embeddings": config.vocab_size, "embedding_dim": config.hidden_size}


@LLM.derives("gelu_and_mul")
def gelu_and_mul(config: Any, case: Case) -> dict[str, Any]:
    return {"d": config.intermediate_size, "approximate": gelu_approximation(config)}


@LLM.derives("linear")
def linear(config: Any, case: Case) -> dict[str, Any]:
    """The projection named after the architecture key (`llama31_8b_qkv_decode_1` is the fused q/k/v one)."""
    projection = re.match(r"llama31_8b_(qkv|gate_up|o|down)_", case.name).group(1)
    hidden, inner = config.hidden_size, config.intermediate_size
    qkv = (config.num_attention_heads + 2 * config.num_key_value_heads) * head_dim(config)
    in_features, out_features = {"qkv": (hidden, qkv), "gate_up": (hidden, 2 * inner),
                                 "o": (config.num_attention_heads * head_dim(config), hidden),
                                 "down": (inner, hidden)}[projection]
    return {"in_features": in_features, "out_features": out_features, "bias": config.attention_bias}


@LLM.derives("rotary_embedding")
def rotary_embedding(config: Any, case: Case) -> dict[str, Any]:
    """vLLM's get_rope arguments for a Llama-style model: the whole head rotated, neox-style halves."""
    return {"num_heads": config.num_attention_heads, "num_kv_heads": config.num_key_value_heads,
            "head_size": head_dim(config), "rotary_dim": head_dim(config),
            "max_position_embeddings": config.max_position_embeddings, "base": rope_theta(config),
            "is_neox_style": True}


@LLM.derives("llama3_rope")
def llama3_rope(config: Any, case: Case) -> dict[str, Any]:
    scaling = config.rope_parameters
    assert scaling["rope_type"] == "llama3"
    return {**rotary_embedding(config, case), "scaling_factor": scaling["factor"],
            "low_freq_factor": scaling["low_freq_factor"], "high_freq_factor": scaling["high_freq_factor"],
            "orig_max_position": scaling["original_max_position_embeddings"]}


@LLM.derives("llama_mlp")
def llama_mlp(config: Any, case: Case) -> dict[str, Any]:
    return {"hidden_size": config.hidden_size, "intermediate_size": config.intermediate_size}


@LLM.derives("llama_attention")
def llama_attention(config: Any, case: Case) -> dict[str, Any]:
    return {"hidden_size": config.hidden_size, "num_heads": config.num_attention_heads,
            "num_kv_heads": config.num_key_value_heads, "rope_theta": rope_theta(config),
            "max_position_embeddings": config.max_position_embeddings}


@LLM.derives("mistral_attention")
def mistral_attention(config: Any, case: Case) -> dict[str, Any]:
    return {**llama_attention(config, case), "sliding_window": config.sliding_window}


@LLM.derives("llama_decoder_layer")
def llama_decoder_layer(config: Any, case: Case) -> dict[str, Any]:
    return {**llama_attention(config, case), "intermediate_size": config.intermediate_size,
            "rms_norm_eps": config.rms_norm_eps}


@LLM.derives("moe_experts")
def moe_experts(config: Any, case: Case) -> dict[str, Any]:
    return {"num_experts": experts(config), "top_k": config.num_experts_per_tok, "hidden_size": config.hidden_size,
            "intermediate_size": expert_width(config)}


@LLM.derives("mixtral_moe")
def mixtral_moe(config: Any, case: Case) -> dict[str, Any]:
    return moe_experts(config, case)


@LLM.derives("deepseek_moe")
def deepseek_moe(config: Any, case: Case) -> dict[str, Any]:
    return {"num_experts": experts(config), "top_k": config.num_experts_per_tok, "hidden_size": config.hidden_size,
            "moe_intermediate_size": config.moe_intermediate_size, "n_shared_experts": config.n_shared_experts,
            "routed_scaling_factor": config.routed_scaling_factor}


@LLM.derives("topk_routing")
def topk_routing(config: Any, case: Case) -> dict[str, Any]:
    renormalize = getattr(config, "norm_topk_prob", MIXTRAL_RENORMALIZES)
    return {"num_experts": experts(config), "top_k": config.num_experts_per_tok, "renormalize": renormalize}


@LLM.derives("softmax")
def softmax(config: Any, case: Case) -> dict[str, Any]:
    """LM-head logits are vocabulary wide, a router's are as wide as its experts."""
    return {"n": config.vocab_size if "_logits_" in case.name else experts(config)}


@LLM.derives("per_token_group_quant_fp8")
def per_token_group_quant_fp8(config: Any, case: Case) -> dict[str, Any]:
    """DeepSeek-V3's fp8 activations: one scale per token per weight-block width of channels, ahead of the GEMM
    whose input is `hidden` wide; the routed experts' down projection sees each token num_experts_per_tok times."""
    group_size = config.quantization_config["weight_block_size"][1]
    site, tokens = re.match(r"deepseek_v3_(hidden|moe_down|dense_down)_\w+?_(\d+)", case.name).groups()
    hidden = {"hidden": config.hidden_size, "moe_down": config.moe_intermediate_size,
              "dense_down": config.intermediate_size}[site]
    expected = {"hidden": hidden, "group_size": group_size, "use_ue8m0": case.name.endswith("_ue8m0")}
    if site == "moe_down":
        expected["tokens"] = int(tokens) * config.num_experts_per_tok
    return expected
