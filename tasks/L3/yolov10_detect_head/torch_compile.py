"""V10DetectLevel as the composed production path builds it (yolov10_detect_head.py over the first production
lower-level classes), its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on an
ultralytics model runs: each batch norm and SiLU fused into one pass after its cuDNN convolution, as in conv_bn_act's
Inductor path, and the two branches' concatenation written in place."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("yolov10_detect_head.py"), namespace="tasks.yolov10_detect_head")

V10DetectLevel = compiled(_composed.V10DetectLevel)
