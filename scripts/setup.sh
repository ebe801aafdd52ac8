#!/usr/bin/env bash
# Creates .venv (if missing) and installs fastkernels with its test, scale-out, image-checking and cudnn-frontend
# extras. Idempotent: a second run installs nothing new. torch is pinned first so pip does not pull a different build
# through another package.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip 2>&1 | grep -v "is ignored" || true
.venv/bin/python -m pip install -q --disable-pip-version-check "torch==${FASTKERNELS_TORCH:-2.13.0}" 2>&1 | grep -v "is ignored" || true
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test,scale,images,cudnn]" 2>&1 | grep -v "is ignored" || true
.venv/bin/python -c "import torch, triton, hydra, fastkernels; print('fastkernels ready: torch', torch.__version__, 'triton', triton.__version__)"
