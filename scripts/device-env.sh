#!/usr/bin/env bash
# Source on the lent GPU machine (device tool): installs the carried wheels (.whl/) into /tmp/site and puts them and
# the project on PYTHONPATH. Pack them here first (2026-12-02: 8.9 MB with Ray set aside, 42 MB with SGLang):
#   bash ../shared/device/pack-wheels.sh .whl pydantic==2.14.4 pydantic-core annotated-types typing-inspection
#   python3 -m pip download -q --no-deps --only-binary=:all: -d .whl typing_extensions
#   python3 -m pip download -q --no-deps -d .whl mambapy==1.2.0   (selective_scan's parallel-scan baseline)
#   mkdir -p /tmp/whl-extra && mv .whl/ray-* /tmp/whl-extra/   (Ray only for scale=ray runs; FLA stays: it serves
#     retention, rwkv7_wkv, gated_delta_rule and mamba2_ssd)
#   bash scripts/pack-sglang.sh   (SGLang, trimmed, and its import chain: 33 MB more, paged_decode_attention's baseline)
#   python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 -d .whl nvidia-cudnn-frontend==1.16.0   (2.0 MB: sliding_window_attention's
#     cudnn_band baseline; it loads the libcudnn torch ships)
# then call the device tool with carry [".whl"] and a command starting `source scripts/device-env.sh`.
# Installed once per machine (a stamp names the wheel set) and under a lock: two runs sourcing this at once (one per
# GPU) made pip delete each other's files (2026-11-30).
stamp=/tmp/site/.fk-wheels-$(ls .whl | md5sum | cut -c1-12)
_fk_install_wheels() {
  [ -e "$stamp" ] || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && mkdir -p /tmp/site && touch "$stamp"; }
}
if [ ! -e "$stamp" ]; then
  if command -v flock >/dev/null; then
    ( flock 9 && _fk_install_wheels ) 9>/tmp/fk-site.lock || return 1
  else
    _fk_install_wheels || return 1
  fi
fi
export PYTHONPATH=/tmp/site:$PWD
export PYTHONUNBUFFERED=1
