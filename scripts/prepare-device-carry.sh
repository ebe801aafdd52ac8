#!/usr/bin/env bash
# Rebuilds, in a fresh checkout, the ignored folders a device call carries: .whl/ (the wheels and sdists the device
# image lacks, packed as scripts/device-env.sh's header says) and .picks/HARDWARE.tgz (the newest committed tuning
# picks of each hardware under docs/results/). Why: .whl/ and .picks/ are not in git, and a session that starts from
# a new checkout had to redo each step by hand (2026-12-07).
# Usage: bash scripts/prepare-device-carry.sh [--picks-only]   (run from anywhere; writes into the repository)
# FK_PICKS_DIR (default .picks) is where the picks go. Afterwards it prints scripts/carry_size.py's reading of the
# carry against the device tool's 64 MiB. .whl/ is packed only when missing: remove it to pack afresh.
set -euo pipefail
cd "$(dirname "$0")/.."
picks_dir=${FK_PICKS_DIR:-.picks}
mkdir -p "$picks_dir"
for hardware in $(ls docs/results | sed -n 's/^\(h[0-9]*\)-.*/\1/p' | sort -u); do
  newest=""; newest_time=0
  for file in docs/results/"$hardware"-*/picks.tgz; do
    [ -f "$file" ] || continue
    time=$(git log -1 --format=%ct -- "$file")  # committed order: several sessions share a date
    if [ -n "$time" ] && [ "$time" -gt "$newest_time" ]; then newest=$file; newest_time=$time; fi
  done
  [ -z "$newest" ] || { cp "$newest" "$picks_dir/$hardware.tgz"; echo "picks: $picks_dir/$hardware.tgz = $newest"; }
done
[ "${1:-}" = --picks-only ] && exit 0
if [ ! -d .whl ]; then
  shared=../shared/device/pack-wheels.sh
  [ -f "$shared" ] || { echo "prepare-device-carry.sh: no $shared (the device tool's wheel packer)" >&2; exit 1; }
  bash "$shared" .whl pydantic==2.14.4 pydantic-core annotated-types typing-inspection
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform any -d .whl typing_extensions
  python3 -m pip download -q --no-deps -d .whl mambapy==1.2.0
  mkdir -p /tmp/whl-extra && mv .whl/ray-* /tmp/whl-extra/ 2>/dev/null || true  # Ray only for scale=ray runs
  bash scripts/pack-sglang.sh
  bash scripts/pack-cuda-sdists.sh
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 -d .whl nvidia-cudnn-frontend==1.16.0
fi
python3 scripts/carry_size.py .whl "$picks_dir"
