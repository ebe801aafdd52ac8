"""Edge and detection models: their configs, and what each task's cases take from them.

ConvNeXt-V2 comes from transformers' ConvNextV2Config (its defaults are facebook/convnextv2-tiny-1k-224's, as the
class's docstring says; the other checkpoints get their published hidden_sizes and depths). transformers has no
config class for timm's MobileNetV3 / MobileNetV4 / EfficientNetV2 or for ultralytics' YOLOv10, so those are
`Published` records of their architecture definitions (timm's block-string arch_defs, the YOLOv10 yamls), and this
module walks them as timm's EfficientNetBuilder and ultralytics' parse_model do to get each layer's channels and
stride. A case names its layer after the architecture key (`efficientnetv2_s_head_384_b32`: the head, at 384x384);
the input resolution is read back from the name. See tests/case_shapes.py for the rules.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from transformers import ConvNextV2Config

from case_shapes import Family, Published
from fastkernels.manifest import Case

EDGE = Family("edge-detection")

# Values that transformers' modeling_convnextv2.py fixes in code rather than in ConvNextV2Config: ConvNextV2Layer's
# dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim) (bias left on), pwconv1 = nn.Linear(dim, 4 * dim),
# eps=1e-6 on the stem, downsampling and block LayerNorms (config.layer_norm_eps is only the pooled output's norm),
# ConvNextV2GRN's `+ 1e-6` on (N, H, W, C) activations, and ConvNextV2Stage's 2x2 stride-2 downsampling conv.
CONVNEXT_DW_KERNEL = 7
CONVNEXT_DW_BIAS = True
CONVNEXT_MLP_RATIO = 4
CONVNEXT_NORM_EPS = 1e-6
CONVNEXT_GRN_EPS = 1e-6
CONVNEXT_GRN_CHANNELS_LAST = True
CONVNEXT_DOWNSAMPLE_STRIDE = 2
# A classifier's global average pool (timm SelectAdaptivePool2d('avg'), HF ConvNextV2Model's mean over H and W, timm
# SqueezeExcite's x.mean((2, 3))) leaves one cell.
GLOBAL_POOL_OUTPUT_SIZE = 1
# Every conv that a BatchNorm follows is built without a bias (timm create_conv2d's default, ultralytics Conv).
CONV_BEFORE_BN_BIAS = False
# Both libraries' models take RGB images (timm in_chans=3, ultralytics DetectionModel ch=3).
RGB_CHANNELS = 3
# timm's conv_stem: create_conv2d(in_chans, stem_size, 3, stride=2); conv_head is 1x1.
TIMM_STEM_KERNEL, TIMM_STEM_STRIDE, TIMM_HEAD_KERNEL = 3, 2, 1
# timm _decode_block_str's activation overrides ('nre' and friends); other blocks use the model's act_layer.
TIMM_ACTIVATION_OPTIONS = {"nre": "relu", "nr6": "relu6", "nhs": "hard_swish", "nsw": "silu"}
# ultralytics: torch_utils.initialize_weights sets every BatchNorm2d's eps to 1e-3, Conv.default_act is nn.SiLU(),
# Detect.reg_max = 16 (DFL bins per box side); the modules whose args are [c2, k, s].
YOLO_BN_EPS = 1e-3
YOLO_ACT = "silu"
YOLO_REG_MAX = 16
YOLO_STRIDED_MODULES = ("Conv", "SCDown")


@EDGE.architecture("convnextv2_tiny")
def convnextv2_tiny() -> ConvNextV2Config:
    """facebook/convnextv2-tiny-1k-224: ConvNextV2Config's defaults."""
    return ConvNextV2Config()


@EDGE.architecture("convnextv2_nano")
def convnextv2_nano() -> ConvNextV2Config:
    """facebook/convnextv2-nano-1k-224 config.json."""
    return ConvNextV2Config(hidden_sizes=[80, 160, 320, 640], depths=[2, 2, 8, 2])


@EDGE.architecture("convnextv2_base")
def convnextv2_base() -> ConvNextV2Config:
    """facebook/convnextv2-base-22k-384 config.json."""
    return ConvNextV2Config(hidden_sizes=[128, 256, 512, 1024], depths=[3, 3, 27, 3])


@EDGE.architecture("convnextv2_large")
def convnextv2_large() -> ConvNextV2Config:
    """facebook/convnextv2-large-22k-384 config.json."""
    return ConvNextV2Config(hidden_sizes=[192, 384, 768, 1536], depths=[3, 3, 27, 3])


@EDGE.architecture("convnextv2_huge")
def convnextv2_huge() -> ConvNextV2Config:
    """facebook/convnextv2-huge-22k-512 config.json."""
    return ConvNextV2Config(hidden_sizes=[352, 704, 1408, 2816], depths=[3, 3, 27, 3])


TIMM_MOBILENETV3 = "huggingface/pytorch-image-models timm/models/mobilenetv3.py"


@EDGE.architecture("mobilenetv3_large")
def mobilenetv3_large() -> Published:
    """timm mobilenetv3_large_100 (channel multiplier 1.0, under which round_channels keeps every width)."""
    return Published(
        source=f"{TIMM_MOBILENETV3}: _gen_mobilenet_v3, the large (not minimal) arch_def; mobilenetv3_large_100",
        model_class="MobileNetV3", stem_size=16, num_features=1280, act_layer="hard_swish",
        bn_eps=1e-5,  # no bn_eps passed, so resolve_bn_args leaves nn.BatchNorm2d's default
        arch_def=[["ds_r1_k3_s1_e1_c16_nre"], ["ir_r1_k3_s2_e4_c24_nre", "ir_r1_k3_s1_e3_c24_nre"],
                  ["ir_r3_k5_s2_e3_c40_se0.25_nre"],
                  ["ir_r1_k3_s2_e6_c80", "ir_r1_k3_s1_e2.5_c80", "ir_r2_k3_s1_e2.3_c80"],
                  ["ir_r2_k3_s1_e6_c112_se0.25"], ["ir_r3_k5_s2_e6_c160_se0.25"], ["cn_r1_k1_s1_c960"]])


@EDGE.architecture("mobilenetv4_conv_small")
def mobilenetv4_conv_small() -> Published:
    """timm mobilenetv4_conv_small (channel multiplier 1.0)."""
    return Published(
        source=f"{TIMM_MOBILENETV3}: _gen_mobilenet_v4, the conv 'small' arch_def; mobilenetv4_conv_small",
        model_class="MobileNetV3", stem_size=32, num_features=1280, act_layer="relu",
        bn_eps=1e-5,  # no bn_eps passed, so resolve_bn_args leaves nn.BatchNorm2d's default
        arch_def=[["cn_r1_k3_s2_e1_c32", "cn_r1_k1_s1_e1_c32"], ["cn_r1_k3_s2_e1_c96", "cn_r1_k1_s1_e1_c64"],
                  ["uir_r1_a5_k5_s2_e3_c96", "uir_r4_a0_k3_s1_e2_c96", "uir_r1_a3_k0_s1_e4_c96"],
                  ["uir_r1_a3_k3_s2_e6_c128", "uir_r1_a5_k5_s1_e4_c128", "uir_r1_a0_k5_s1_e4_c128",
                   "uir_r1_a0_k5_s1_e3_c128", "uir_r2_a0_k3_s1_e4_c128"],
                  ["cn_r1_k1_s1_c960"]])


@EDGE.architecture("mobilenetv4_conv_medium")
def mobilenetv4_conv_medium() -> Published:
    """timm mobilenetv4_conv_medium (channel multiplier 1.0)."""
    return Published(
        source=f"{TIMM_MOBILENETV3}: _gen_mobilenet_v4, the conv 'medium' arch_def; mobilenetv4_conv_medium",
        model_class="MobileNetV3", stem_size=32, num_features=1280, act_layer="relu",
        bn_eps=1e-5,  # no bn_eps passed, so resolve_bn_args leaves nn.BatchNorm2d's default
        arch_def=[["er_r1_k3_s2_e4_c48"], ["uir_r1_a3_k5_s2_e4_c80", "uir_r1_a3_k3_s1_e2_c80"],
                  ["uir_r1_a3_k5_s2_e6_c160", "uir_r2_a3_k3_s1_e4_c160", "uir_r1_a3_k5_s1_e4_c160",
                   "uir_r1_a3_k3_s1_e4_c160", "uir_r1_a3_k0_s1_e4_c160", "uir_r1_a0_k0_s1_e2_c160",
                   "uir_r1_a3_k0_s1_e4_c160"],
                  ["uir_r1_a5_k5_s2_e6_c256", "uir_r1_a5_k5_s1_e4_c256", "uir_r2_a3_k5_s1_e4_c256",
                   "uir_r1_a0_k0_s1_e4_c256", "uir_r1_a3_k0_s1_e4_c256", "uir_r1_a3_k5_s1_e2_c256",
                   "uir_r1_a5_k5_s1_e4_c256", "uir_r2_a0_k0_s1_e4_c256", "uir_r1_a5_k0_s1_e2_c256"],
                  ["cn_r1_k1_s1_c960"]])


@EDGE.architecture("efficientnetv2_s")
def efficientnetv2_s() -> Published:
    """timm tf_efficientnetv2_s (channel and depth multipliers 1.0), the TF-ported weights."""
    return Published(
        source="huggingface/pytorch-image-models timm/models/efficientnet.py: _gen_efficientnetv2_s (rw=False) and "
               "tf_efficientnetv2_s, which passes bn_eps=BN_EPS_TF_DEFAULT (1e-3) and pad_type='same'",
        model_class="EfficientNet", stem_size=24, num_features=1280, act_layer="silu", bn_eps=1e-3,
        arch_def=[["cn_r2_k3_s1_e1_c24_skip"], ["er_r4_k3_s2_e4_c48"], ["er_r4_k3_s2_e4_c64"],
                  ["ir_r6_k3_s2_e4_c128_se0.25"], ["ir_r9_k3_s1_e6_c160_se0.25"], ["ir_r15_k3_s2_e6_c256_se0.25"]])


ULTRALYTICS_V10 = "ultralytics/ultralytics ultralytics/cfg/models/v10"
UPSAMPLE = (-1, 1, "nn.Upsample", [None, 2, "nearest"])


@EDGE.architecture("yolov10s")
def yolov10s() -> Published:
    """ultralytics yolov10s.yaml: its scale [depth, width, max_channels] and [from, repeats, module, args] layers."""
    return Published(
        source=f"{ULTRALYTICS_V10}/yolov10s.yaml", nc=80, scale=[0.33, 0.50, 1024],
        backbone=[(-1, 1, "Conv", [64, 3, 2]), (-1, 1, "Conv", [128, 3, 2]), (-1, 3, "C2f", [128, True]),
                  (-1, 1, "Conv", [256, 3, 2]), (-1, 6, "C2f", [256, True]), (-1, 1, "SCDown", [512, 3, 2]),
                  (-1, 6, "C2f", [512, True]), (-1, 1, "SCDown", [1024, 3, 2]), (-1, 3, "C2fCIB", [1024, True, True]),
                  (-1, 1, "SPPF", [1024, 5]), (-1, 1, "PSA", [1024])],
        head=[UPSAMPLE, ([-1, 6], 1, "Concat", [1]), (-1, 3, "C2f", [512]),
              UPSAMPLE, ([-1, 4], 1, "Concat", [1]), (-1, 3, "C2f", [256]),
              (-1, 1, "Conv", [256, 3, 2]), ([-1, 13], 1, "Concat", [1]), (-1, 3, "C2f", [512]),
              (-1, 1, "SCDown", [512, 3, 2]), ([-1, 10], 1, "Concat", [1]), (-1, 3, "C2fCIB", [1024, True, True]),
              ([16, 19, 22], 1, "v10Detect", ["nc"])])


@EDGE.architecture("yolov10m")
def yolov10m() -> Published:
    """ultralytics yolov10m.yaml."""
    return Published(
        source=f"{ULTRALYTICS_V10}/yolov10m.yaml", nc=80, scale=[0.67, 0.75, 768],
        backbone=[(-1, 1, "Conv", [64, 3, 2]), (-1, 1, "Conv", [128, 3, 2]), (-1, 3, "C2f", [128, True]),
                  (-1, 1, "Conv", [256, 3, 2]), (-1, 6, "C2f", [256, True]), (-1, 1, "SCDown", [512, 3, 2]),
                  (-1, 6, "C2f", [512, True]), (-1, 1, "SCDown", [1024, 3, 2]), (-1, 3, "C2fCIB", [1024, True]),
                  (-1, 1, "SPPF", [1024, 5]), (-1, 1, "PSA", [1024])],
        head=[UPSAMPLE, ([-1, 6], 1, "Concat", [1]), (-1, 3, "C2f", [512]),
              UPSAMPLE, ([-1, 4], 1, "Concat", [1]), (-1, 3, "C2f", [256]),
              (-1, 1, "Conv", [256, 3, 2]), ([-1, 13], 1, "Concat", [1]), (-1, 3, "C2fCIB", [512, True]),
              (-1, 1, "SCDown", [512, 3, 2]), ([-1, 10], 1, "Concat", [1]), (-1, 3, "C2fCIB", [1024, True]),
              ([16, 19, 22], 1, "v10Detect", ["nc"])])


@EDGE.architecture("yolov10x")
def yolov10x() -> Published:
    """ultralytics yolov10x.yaml."""
    return Published(
        source=f"{ULTRALYTICS_V10}/yolov10x.yaml", nc=80, scale=[1.00, 1.25, 512],
        backbone=[(-1, 1, "Conv", [64, 3, 2]), (-1, 1, "Conv", [128, 3, 2]), (-1, 3, "C2f", [128, True]),
                  (-1, 1, "Conv", [256, 3, 2]), (-1, 6, "C2f", [256, True]), (-1, 1, "SCDown", [512, 3, 2]),
                  (-1, 6, "C2fCIB", [512, True]), (-1, 1, "SCDown", [1024, 3, 2]), (-1, 3, "C2fCIB", [1024, True]),
                  (-1, 1, "SPPF", [1024, 5]), (-1, 1, "PSA", [1024])],
        head=[UPSAMPLE, ([-1, 6], 1, "Concat", [1]), (-1, 3, "C2fCIB", [512, True]),
              UPSAMPLE, ([-1, 4], 1, "Concat", [1]), (-1, 3, "C2f", [256]),
              (-1, 1, "Conv", [256, 3, 2]), ([-1, 13], 1, "Concat", [1]), (-1, 3, "C2fCIB", [512, True]),
              (-1, 1, "SCDown", [512, 3, 2]), ([-1, 10], 1, "Concat", [1]), (-1, 3, "C2fCIB", [1024, True]),
              ([16, 19, 22], 1, "v10Detect", ["nc"])])


def site_of(case: Case) -> tuple[str, str, int]:
    """(architecture key, the layer the case names, input resolution) of a `<key>_<layer>_<resolution>_b<batch>`."""
    key, _ = EDGE.architecture_of(case.name)
    layer, resolution = re.fullmatch(rf"{re.escape(key)}_(.+)_(\d+)_b\d+", case.name).groups()
    return key, layer, int(resolution)


def same_padding(kernel: int, stride: int = 1) -> int:
    """timm's get_padding, ((stride - 1) + (kernel - 1)) // 2: also ultralytics' autopad (kernel // 2) and
    ConvNeXt's padding=3 for the odd kernels and strides of 1 or 2 used here."""
    return ((stride - 1) + (kernel - 1)) // 2


def spatial(resolution: int, stride: int) -> dict[str, int]:
    return {"height": resolution // stride, "width": resolution // stride}


def convnext_site(config: ConvNextV2Config, layer: str) -> tuple[int, int]:
    """(1-based stage, its stride) of a ConvNeXt-V2 layer: `stageN` is stage N, `downsampleN` the N-th downsampling
    LayerNorm (on stage N's output, ahead of stage N + 1), `stem` the patchify stem's LayerNorm (stage 1's width),
    `head` the pooled last stage. A stage's stride is the stem's patch size, doubled by each later stage."""
    kind, number = re.fullmatch(r"(stem|head|stage|downsample)(\d*)", layer).groups()
    stage = {"stem": 1, "head": len(config.hidden_sizes)}.get(kind) or int(number)
    return stage, config.patch_size * CONVNEXT_DOWNSAMPLE_STRIDE ** (stage - 1)


# Which timm block a case names: (arch_def stage index, block index within the stage once repeats are expanded).
# MobileNetV3's `stage6` is arch_def[6] (timm's comments number stages so); EfficientNetV2's `stage2` and `stage5`
# count as the paper's Table 4 does (stem = stage 0), so arch_def[1] and [4]. Index 1 is a stage's first unstrided
# block, whose input already has the stage's width.
TIMM_SITES: dict[str, dict[str, tuple[int, int]]] = {
    "mobilenetv3_large": {"expand": (3, 0), "ir_s2": (3, 0), "ir_e2.3": (3, 2), "se": (4, 1), "stage6": (6, 0)},
    "mobilenetv4_conv_small": {"ir_96": (2, 1), "ir_128": (3, 4)},
    "mobilenetv4_conv_medium": {"extradw": (2, 1)},
    "efficientnetv2_s": {"fused_expand": (1, 0), "stage2": (1, 1), "ir_no_se_128": (3, 1), "stage5": (4, 1)},
}


@dataclass(frozen=True)
class TimmBlock:
    """One block as timm's EfficientNetBuilder builds it from a block string."""

    kind: str  # ir (MBConv), er (FusedMBConv), uir (MobileNetV4 UIB), cn (conv-bn-act), ds (depthwise separable)
    options: dict[str, str]
    in_chs: int
    mid_chs: int  # make_divisible(in_chs * exp_ratio): the width the expansion produces and the depthwise runs on
    out_chs: int
    kernel: int  # ir / ds / uir: the (middle) depthwise kernel; er / cn: the conv's kernel
    stride: int
    in_stride: int  # the network's stride at the block's input
    act: str

    @property
    def out_stride(self) -> int:
        return self.in_stride * self.stride


def timm_make_divisible(value: float, divisor: int = 8, round_limit: float = 0.9) -> int:
    """timm.layers.make_divisible: the nearest multiple of divisor, bumped up if that loses more than 10%."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < round_limit * value else rounded


def timm_blocks(arch: Published) -> list[list[TimmBlock]]:
    """decode_arch_def + EfficientNetBuilder: each stage's blocks, repeats expanded, only a stage's first block
    strided, each block's input the previous one's output (the stem's for the first)."""
    in_chs, in_stride, stages = arch.stem_size, TIMM_STEM_STRIDE, []
    for stage_def in arch.arch_def:
        stage: list[TimmBlock] = []
        for block in stage_def:
            kind, *ops = block.split("_")
            options = dict(re.fullmatch(r"([a-z]+)(.*)", op).groups() for op in ops)
            act = next((TIMM_ACTIVATION_OPTIONS[op] for op in ops if op in TIMM_ACTIVATION_OPTIONS), arch.act_layer)
            for _ in range(int(options["r"])):
                stride = int(options["s"]) if not stage else 1
                out_chs = int(options["c"])
                stage.append(TimmBlock(kind, options, in_chs, timm_make_divisible(in_chs * float(options.get("e", 1))),
                                       out_chs, int(options["k"]), stride, in_stride, act))
                in_chs, in_stride = out_chs, in_stride * stride
        stages.append(stage)
    return stages


def timm_block(arch: Published, key: str, layer: str) -> TimmBlock:
    stage, index = TIMM_SITES[key][layer]
    return timm_blocks(arch)[stage][index]


def timm_head(arch: Published) -> tuple[int, int, int]:
    """(conv_head input channels, the pooled channels, the head's stride). timm's EfficientNet pools after
    conv_head + bn2; MobileNetV3 (also MobileNetV4's class) pools the last block's output, then runs conv_head."""
    last = timm_blocks(arch)[-1][-1]
    pooled = arch.num_features if arch.model_class == "EfficientNet" else last.out_chs
    return last.out_chs, pooled, last.out_stride


@dataclass(frozen=True)
class YoloLayer:
    """One yaml layer after ultralytics' parse_model has scaled it."""

    module: str
    args: list[Any]
    in_chs: int  # its first input's channels (the image's for layer 0)
    out_chs: int
    in_stride: int
    out_stride: int


def ultralytics_make_divisible(value: float, divisor: int = 8) -> int:
    """ultralytics.utils.ops.make_divisible: rounded up to a multiple of divisor."""
    return math.ceil(value / divisor) * divisor


def yolo_layers(arch: Published) -> list[YoloLayer]:
    """parse_model's bookkeeping up to the Detect layer: a module's width is its first arg capped at max_channels,
    times the width multiple, rounded up to a multiple of 8; a Concat's the sum of its inputs', an Upsample's its
    input's. Conv and SCDown ([c2, k, s]) divide the resolution by s, an Upsample multiplies it by its factor."""
    _depth, width, max_channels = arch.scale
    layers: list[YoloLayer] = []
    for index, (source, _repeats, module, args) in enumerate((arch.backbone + arch.head)[:-1]):
        sources = source if isinstance(source, list) else [source]
        inputs = [layers[i if i >= 0 else index + i] for i in sources] if layers else []
        in_chs, in_stride = (inputs[0].out_chs, inputs[0].out_stride) if inputs else (RGB_CHANNELS, 1)
        if module == "Concat":
            out_chs, out_stride = sum(layer.out_chs for layer in inputs), in_stride
        elif module == "nn.Upsample":
            out_chs, out_stride = in_chs, in_stride // args[1]
        else:
            out_chs = ultralytics_make_divisible(min(args[0], max_channels) * width)
            out_stride = in_stride * (args[2] if module in YOLO_STRIDED_MODULES else 1)
        layers.append(YoloLayer(module, args, in_chs, out_chs, in_stride, out_stride))
    return layers


def yolo_layer(arch: Published, layer: str) -> YoloLayer:
    """`stem`: layer 0; `scdown`: the first SCDown; `pN` / `down_pN`: the first layer reaching P-level N (stride
    2^N), which the yaml comments mark `N-PN/2^N`."""
    layers = yolo_layers(arch)
    if layer == "stem":
        return layers[0]
    if layer == "scdown":
        return next(each for each in layers if each.module == "SCDown")
    level = int(layer.removeprefix("down_").removeprefix("p"))
    return next(each for each in layers if each.out_stride == 2 ** level)


def is_yolo(config: Any) -> bool:
    return isinstance(config, Published) and hasattr(config, "backbone")


def conv_norm_act(config: Published, case: Case) -> tuple[int, int, int, int, int, str, float]:
    """(in, out, kernel, stride, input stride, act, eps) of the conv + BN + act a case names."""
    key, layer, _ = site_of(case)
    if is_yolo(config):
        conv = yolo_layer(config, layer)
        assert conv.module == "Conv"
        return conv.in_chs, conv.out_chs, conv.args[1], conv.args[2], conv.in_stride, YOLO_ACT, YOLO_BN_EPS
    if layer == "stem":
        return RGB_CHANNELS, config.stem_size, TIMM_STEM_KERNEL, TIMM_STEM_STRIDE, 1, config.act_layer, config.bn_eps
    if layer == "head":
        in_chs, _, stride = timm_head(config)
        return in_chs, config.num_features, TIMM_HEAD_KERNEL, 1, stride, config.act_layer, config.bn_eps
    block = timm_block(config, key, layer)
    assert block.kind == "er", "a FusedMBConv's expansion conv (kernel x kernel, strided) is a conv + BN + act"
    return block.in_chs, block.mid_chs, block.kernel, block.stride, block.in_stride, block.act, config.bn_eps


@EDGE.derives("conv_bn_act")
def conv_bn_act(config: Published, case: Case) -> dict[str, Any]:
    in_chs, out_chs, kernel, stride, at, act, eps = conv_norm_act(config, case)
    return {"in_channels": in_chs, "out_channels": out_chs, "kernel_size": kernel, "stride": stride, "eps": eps,
            "act_layer": act, **spatial(site_of(case)[2], at)}


@EDGE.derives("batch_norm_act2d")
def batch_norm_act2d(config: Published, case: Case) -> dict[str, Any]:
    """The BN + act after a conv: its output's channels, at its output's resolution."""
    _, out_chs, _, stride, at, act, eps = conv_norm_act(config, case)
    return {"num_features": out_chs, "eps": eps, "act_layer": act, **spatial(site_of(case)[2], at * stride)}


@EDGE.derives("adaptive_avg_pool2d")
def adaptive_avg_pool2d(config: Any, case: Case) -> dict[str, Any]:
    """A classifier head's global pool, or (`se`) a squeeze-excite's pool of an MBConv's expanded width."""
    key, layer, resolution = site_of(case)
    if isinstance(config, ConvNextV2Config):
        stage, stride = convnext_site(config, layer)
        channels = config.hidden_sizes[stage - 1]
    elif layer == "head":
        _, channels, stride = timm_head(config)
    else:
        block = timm_block(config, key, layer)
        assert "se" in block.options
        channels, stride = block.mid_chs, block.out_stride
    return {"output_size": GLOBAL_POOL_OUTPUT_SIZE, "channels": channels, **spatial(resolution, stride)}


@EDGE.derives("hardswish")
def hardswish(config: Published, case: Case) -> dict[str, Any]:
    """The activation after a block's first conv: a cn block's conv output, an ir block's 1x1 expansion (at the
    block's input resolution)."""
    key, layer, resolution = site_of(case)
    block = timm_block(config, key, layer)
    assert block.act == "hard_swish"
    channels, stride = (block.out_chs, block.out_stride) if block.kind == "cn" else (block.mid_chs, block.in_stride)
    return {"channels": channels, **spatial(resolution, stride)}


@EDGE.derives("inverted_residual")
def inverted_residual(config: Published, case: Case) -> dict[str, Any]:
    """timm's InvertedResidual, or a MobileNetV4 UIR in its IR form (no start depthwise, `a0`)."""
    key, layer, resolution = site_of(case)
    block = timm_block(config, key, layer)
    assert block.kind == "ir" or (block.kind == "uir" and block.options["a"] == "0")
    return {"in_chs": block.in_chs, "out_chs": block.out_chs, "dw_kernel_size": block.kernel, "stride": block.stride,
            "exp_ratio": float(block.options["e"]), "act_layer": block.act, "eps": config.bn_eps,
            **spatial(resolution, block.in_stride)}


@EDGE.derives("depthwise_conv2d")
def depthwise_conv2d(config: Any, case: Case) -> dict[str, Any]:
    """ConvNeXt's 7x7 token mixer, an MBConv / UIR's middle depthwise on the expanded width, YOLOv10 SCDown's
    strided depthwise (its cv2, on the SCDown's output width)."""
    key, layer, resolution = site_of(case)
    bias = CONVNEXT_DW_BIAS if isinstance(config, ConvNextV2Config) else CONV_BEFORE_BN_BIAS
    if isinstance(config, ConvNextV2Config):
        stage, at = convnext_site(config, layer)
        channels, kernel, stride = config.hidden_sizes[stage - 1], CONVNEXT_DW_KERNEL, 1
    elif is_yolo(config):
        scdown = yolo_layer(config, layer)
        channels, kernel, stride, at = scdown.out_chs, scdown.args[1], scdown.args[2], scdown.in_stride
    else:
        block = timm_block(config, key, layer)
        channels, kernel, stride, at = block.mid_chs, block.kernel, block.stride, block.in_stride
    return {"channels": channels, "kernel_size": kernel, "stride": stride, "padding": same_padding(kernel, stride),
            "bias": bias, **spatial(resolution, at)}


def convnext_stage(config: ConvNextV2Config, case: Case) -> tuple[int, int, int]:
    """(stage, stride, input resolution) of a ConvNeXt case, its activations GELU as the module computes them."""
    assert config.hidden_act == "gelu"
    _, layer, resolution = site_of(case)
    return *convnext_site(config, layer), resolution


@EDGE.derives("convnext_block")
def convnext_block(config: ConvNextV2Config, case: Case) -> dict[str, Any]:
    stage, stride, resolution = convnext_stage(config, case)
    return {"in_chs": config.hidden_sizes[stage - 1], "kernel_size": CONVNEXT_DW_KERNEL,
            "mlp_ratio": CONVNEXT_MLP_RATIO, **spatial(resolution, stride)}


@EDGE.derives("convnextv2_stage")
def convnextv2_stage(config: ConvNextV2Config, case: Case) -> dict[str, Any]:
    """A downsampling stage (2 or later): the previous stage's width in, at the previous stage's resolution."""
    stage, stride, resolution = convnext_stage(config, case)
    return {"in_chs": config.hidden_sizes[stage - 2], "out_chs": config.hidden_sizes[stage - 1],
            "depth": config.depths[stage - 1], **spatial(resolution, stride // CONVNEXT_DOWNSAMPLE_STRIDE)}


@EDGE.derives("global_response_norm")
def global_response_norm(config: ConvNextV2Config, case: Case) -> dict[str, Any]:
    """GRN runs on a block's MLP hidden, mlp_ratio times the stage's width."""
    stage, stride, resolution = convnext_stage(config, case)
    return {"dim": CONVNEXT_MLP_RATIO * config.hidden_sizes[stage - 1], "eps": CONVNEXT_GRN_EPS,
            "channels_last": CONVNEXT_GRN_CHANNELS_LAST, **spatial(resolution, stride)}


@EDGE.derives("layer_norm_2d")
def layer_norm_2d(config: ConvNextV2Config, case: Case) -> dict[str, Any]:
    """The stem's LayerNorm (after the patchify conv) or a downsampling one (before its 2x2 conv), on that stage's
    width at its resolution."""
    stage, stride, resolution = convnext_stage(config, case)
    return {"num_channels": config.hidden_sizes[stage - 1], "eps": CONVNEXT_NORM_EPS, **spatial(resolution, stride)}


@EDGE.derives("yolov10_detect_head")
def yolov10_detect_head(config: Published, case: Case) -> dict[str, Any]:
    """v10Detect over the layers its yaml entry reads: every level's box branch is c2 = max(16, ch[0] // 4,
    4 * reg_max) wide and its class branch c3 = max(ch[0], min(nc, 100)), both from the first (P3) level's width."""
    _, layer, resolution = site_of(case)
    sources, _repeats, module, _args = config.head[-1]
    assert module == "v10Detect"
    levels = [yolo_layers(config)[source] for source in sources]
    level = next(each for each in levels if each.out_stride == 2 ** int(layer.removeprefix("p")))
    first = levels[0].out_chs
    return {"in_channels": level.out_chs, "box_channels": max(16, first // 4, 4 * YOLO_REG_MAX),
            "cls_channels": max(first, min(config.nc, 100)), "nc": config.nc, "reg_max": YOLO_REG_MAX,
            **spatial(resolution, level.out_stride)}
