"""Runs the tests that call SGLang's real Triton kernels (tests/test_sglang_*.py, under the Triton interpreter) on a
CPU machine where SGLang's import chain cannot be installed whole.

Why: SGLang's kernel modules import its multimodal config code, which imports torchvision, and PyPI's torchvision does
not import beside torch's CPU build on this workplace's machines (.library/env). No test here needs vision code, so
torchvision's transforms are replaced by inert names and transformers is first imported seeing no torchvision. The
other packages are real: put the SGLang wheel unpacked and its imports (`FK_SGLANG_IMAGE_HELD=download bash
scripts/pack-sglang.sh DIR` fetches them all, plus sentencepiece, which the device image has) on PYTHONPATH. Measured
2026-12-07 on the 2-core development machine: the two real fused-MoE kernel tests pass, 1.35e-3 and 6.16e-3 from the
float64 oracle in float16 (printed).
Usage: PYTHONPATH=SGLANG_DIR:DEPS_DIR:. python scripts/sglang_cpu_check.py [-k EXPR]"""

from __future__ import annotations

import importlib.machinery
import os
import sys
import types

os.environ["TRITON_INTERPRET"] = "1"  # before anything imports triton, which reads it then

import pytest  # noqa: E402
import transformers.image_processing_utils  # noqa: E402,F401 - imported while torchvision is absent: not used


class _Inert:
    """Any attribute, any call: module-level transform pipelines that are built but never run here."""

    def __getattr__(self, name: str) -> "_Inert":
        return self

    def __call__(self, *args: object, **kwargs: object) -> "_Inert":
        return self


def _inert_attribute(name: str) -> _Inert:
    """PEP 562: every name the config code imports from torchvision; dunder lookups stay ordinary misses."""
    if name.startswith("__"):
        raise AttributeError(name)
    return _Inert()


def _stub_torchvision() -> None:
    for name in ("torchvision", "torchvision.transforms", "torchvision.transforms.functional"):
        module = types.ModuleType(name)
        module.__path__ = []
        module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        module.__getattr__ = _inert_attribute
        sys.modules[name] = module
    sys.modules["torchvision"].transforms = sys.modules["torchvision.transforms"]
    sys.modules["torchvision.transforms"].functional = sys.modules["torchvision.transforms.functional"]


if __name__ == "__main__":
    _stub_torchvision()
    sys.exit(pytest.main(["-q", "-s", "-n0", "-rs", "tests/test_sglang_fused_moe.py", "-k", "real", *sys.argv[1:]]))
