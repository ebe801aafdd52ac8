#!/usr/bin/env bash
# Adds SGLang (the library of two production baselines: paged_decode_attention's Triton decode kernel, mamba2_ssd's
# Triton SSD kernels) and what importing its kernels pulls in to the device tool's carried wheels (.whl/, installed
# there by scripts/device-env.sh).
# SGLang's wheel is 39 MB, 44 MB of it unpacked being Rust extensions of its server that importing
# sglang.kernels never loads: they are dropped (and their RECORD lines), as are its diffusion server
# (sglang/multimodal_gen), model files, tests and benchmarks, which its kernels never import; about 12 MB is left.
# Its kernels' import chain (sglang/__init__ and sglang.srt.utils) needs the packages below; the device image has
# torch, triton, transformers and their dependencies, and .whl/ already holds pydantic. apache-tvm-ffi (the version
# SGLang pins) is what its JIT-compiled CUDA kernels (sglang.kernels.jit: nvcc and ninja, both in the device image)
# are built against and loaded through. Python 3.12 wheels, as the device runs.
# Checked 2026-12-02 here (Python 3.11): with the Rust extensions removed, sglang.kernels.ops.attention imports
# and its decode kernel matches the float64 oracle under the Triton interpreter (tests/test_sglang_adapters.py).
# Usage: bash scripts/pack-sglang.sh [DEST]   (DEST defaults to .whl)
set -euo pipefail
dest=${1:-.whl}
mkdir -p "$dest"
version=0.5.23
imports=(orjson pybase64 starlette msgspec pyzmq ipython traitlets apache-tvm-ffi==0.1.11
  dill)  # dill: the fused-MoE kernels' import chain (sglang.srt.configs) needs it (moe_experts/sglang.py)
# The device image holds these at versions SGLang's kernels import with (every module the adapters import, and every
# tasks/*/*/sglang*.py, imported OK without them on an H100 on 2026-12-07:
# docs/results/h100-2026-12-07-fifty-first/slim-check.log), so the carry leaves them out (11.5 MB); a CPU machine
# that lacks them (scripts/sglang_cpu_check.py) gets them with FK_SGLANG_IMAGE_HELD=download.
image_held=(psutil pillow pygments aiohttp multidict yarl propcache aiohappyeyeballs aiosignal frozenlist einops)
[ "${FK_SGLANG_IMAGE_HELD:-}" = download ] && imports+=("${image_held[@]}")
download() {
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_34_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$dest" "$@" 2>&1 | grep -v '^WARNING: Location' || true
}
if ! ls "$dest"/sglang-"$version"-*.whl >/dev/null 2>&1; then
  download "sglang==$version"
  python3 scripts/trim_wheel.py "$(ls "$dest"/sglang-"$version"-*.whl)" --drop-suffix .so \
    --drop-prefix sglang/multimodal_gen/ --drop-prefix sglang/srt/models/ --drop-prefix sglang/test/ \
    --drop-prefix sglang/benchmark/
fi
for package in "${imports[@]}"; do
  name=${package%%==*}
  ls "$dest" | grep -qi "^${name//-/_}-" || download "$package"
done
du -sh "$dest"
