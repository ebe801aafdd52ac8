#!/usr/bin/env bash
# Creates .venv (if missing) and installs fastkernels with its test, scale-out, image-checking and cudnn-frontend
# extras. Idempotent: a second run installs nothing new. torch is pinned first so pip does not pull a different build
# through another package. Once every install has succeeded, .venv/.setup-key holds a hash of what decides them (this
# script, pyproject.toml, the python and the torch pin); a run that finds the same key skips pip and only checks the
# imports: 3 s instead of 15 s for each of the two later runs in .ci/run (2-core development machine, 2026-12-07,
# `time bash scripts/setup.sh` with the venv in place).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
torch_pin="torch==${FASTKERNELS_TORCH:-2.13.0}"
ready() {
  .venv/bin/python -c "import torch, triton, hydra, fastkernels
print('fastkernels ready: torch', torch.__version__, 'triton', triton.__version__)"
}
install() {  # pip install quietly, without its note about ignored options; pip's own exit status
  local status=0
  .venv/bin/python -m pip install -q --disable-pip-version-check "$@" 2> >(grep -v "is ignored" >&2) || status=$?
  return "$status"
}
key=$(cat scripts/setup.sh pyproject.toml <(echo "$torch_pin $("$python" --version 2>&1)") | sha256sum | cut -c1-16)
if [ -x .venv/bin/python ] && [ "$(cat .venv/.setup-key 2>/dev/null)" = "$key" ] && ready 2>/dev/null; then
  exit 0
fi
[ -x .venv/bin/python ] || "$python" -m venv .venv
rm -f .venv/.setup-key
installed=yes
install --upgrade pip || installed=no
install "$torch_pin" || installed=no
install -e ".[test,scale,images,cudnn]" || installed=no
ready
[ "$installed" = no ] || echo "$key" > .venv/.setup-key
