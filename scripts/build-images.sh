#!/usr/bin/env bash
# Builds the pinned fastkernels images (containers/) and prints each one's size.
#
#   scripts/build-images.sh [cu128|cpu|all] [--engine docker|podman|apptainer] [--from-docker] [--base REF]
#                           [--wheels DIR]
#   scripts/build-images.sh digests          the registry's current digests of the pinned base tags (to refresh pins)
#   scripts/build-images.sh debian-base      a stand-in for the CPU line's base built from Debian's archive (podman)
#
#   docker      docker build -f containers/Dockerfile.<line> -t fastkernels:<line> .   (needs a running Docker engine)
#   podman      podman build, the same Dockerfile and tags (rootless or not; no daemon)
#   apptainer   apptainer build containers/fastkernels_<line>.sif containers/fastkernels.def (Apptainer >= 1.2)
#   --from-docker  with --engine apptainer: convert the Docker image already built (docker-daemon://fastkernels:<line>)
#   --base REF  build on REF instead of the Dockerfile's digest-pinned base (the image's base.name label says which)
#   --wheels DIR   podman only: install the lock from DIR (scripts/pack-wheels.sh <lock> DIR) with no index, so the
#               build needs no PyPI or PyTorch index; the wheels are still checked against the lock's hashes
#
# Where no container registry is reachable (this project's workplace, 2026-11-30), the pinned bases cannot be pulled:
#   scripts/build-images.sh debian-base && scripts/pack-wheels.sh cpu /tmp/wh-cpu &&
#   scripts/build-images.sh cpu --engine podman --base localhost/debian-python:3.11-bookworm --wheels /tmp/wh-cpu
# builds the CPU line on Debian bookworm's own Python 3.11 (debootstrap from deb.debian.org), not on the pinned
# python:3.11-slim-bookworm. The GPU line has no such stand-in: its lock needs Python 3.12 (no Debian release has it)
# and its base carries the CUDA user-space libraries.
#
# Image names follow the hardware profiles' container_image (fastkernels:cu128 for h100/h200/a100/b200, fastkernels:cpu
# for cpu); `python -m fastkernels runner=container` picks them by that name (apptainer: containers/<name>_<tag>.sif).
# FASTKERNELS_GIT_COMMIT (default: git rev-parse HEAD) is baked in, so env.json names the commit without a .git.
set -euo pipefail
cd "$(dirname "$0")/.."

base_of() { sed -n 's/^ARG BASE=//p' "containers/Dockerfile.$1"; }
if [[ "${1:-}" == digests ]]; then
  for line in cu128 cpu; do
    ref=$(base_of "$line"); tag=${ref%@*}
    echo "$line: pinned ${ref#*@}"
    echo "$line: current $(docker buildx imagetools inspect "$tag" --format '{{json .Manifest.Digest}}' 2>&1 | tr -d '"')"
  done
  exit 0
fi

if [[ "${1:-}" == debian-base ]]; then
  # Debian bookworm (minbase) with python3.11, its venv module and `python`: what Dockerfile.cpu needs of its base.
  stand_in=localhost/debian-python:3.11-bookworm
  command -v debootstrap >/dev/null && command -v podman >/dev/null \
    || { echo "build-images.sh: debian-base needs debootstrap and podman (apt-get install debootstrap podman)" >&2; exit 1; }
  rootfs=$(mktemp -d)
  trap 'rm -rf "$rootfs"' EXIT
  debootstrap --variant=minbase --include=python3,python3-venv,python-is-python3,ca-certificates bookworm "$rootfs" \
    "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >/dev/null
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb
  tar -C "$rootfs" -c . | podman import --change 'CMD ["python3"]' - "$stand_in" >/dev/null
  echo "$stand_in: $(podman image inspect --format '{{.Size}}' "$stand_in" | awk '{printf "%d MiB", $1 / 1048576}')"
  exit 0
fi

line=${1:-all}; shift || true
engine=docker; from_docker=0; base=""; wheels=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --engine) engine=$2; shift 2 ;;
    --from-docker) from_docker=1; shift ;;
    --base) base=$2; shift 2 ;;
    --wheels) wheels=$(cd "$2" && pwd); shift 2 ;;
    *) echo "build-images.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -z "$wheels" || $engine == podman ]] || { echo "build-images.sh: --wheels needs --engine podman (build-time mounts)" >&2; exit 2; }
case "$line" in cu128|cpu) lines=("$line") ;; all) lines=(cu128 cpu) ;;
  *) echo "build-images.sh: no image line $line (cu128, cpu, all)" >&2; exit 2 ;; esac
commit=${FASTKERNELS_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
[[ -z "$(git status --porcelain 2>/dev/null)" ]] || echo "build-images.sh: warning: the tree has uncommitted changes; the image says $commit" >&2

for line in "${lines[@]}"; do
  lock=$([[ $line == cpu ]] && echo cpu || echo "gpu-$line")
  if [[ $engine == docker || $engine == podman ]]; then
    if [[ $engine == docker ]]; then
      docker info >/dev/null 2>&1 || { echo "build-images.sh: no Docker engine answers (docker info failed)" >&2; exit 1; }
    else
      command -v podman >/dev/null || { echo "build-images.sh: podman not found (apt-get install podman)" >&2; exit 1; }
    fi
    args=(-f "containers/Dockerfile.$line" -t "fastkernels:$line" --build-arg "FASTKERNELS_GIT_COMMIT=$commit")
    [[ -z "$base" ]] || args+=(--build-arg "BASE=$base")
    if [[ -n "$wheels" ]]; then
      conf=$(mktemp)
      trap 'rm -f "$conf"' EXIT
      printf '[global]\nno-index = true\nfind-links = /wheels\n' > "$conf"
      args+=(-v "$wheels:/wheels:ro" -v "$conf:/etc/pip.conf:ro")
    fi
    "$engine" build "${args[@]}" .
    bytes=$("$engine" image inspect --format '{{.Size}}' "fastkernels:$line")
    echo "fastkernels:$line: $(( bytes / 1048576 )) MiB ($("$engine" image inspect --format '{{.Id}}' "fastkernels:$line"))"
  elif [[ $engine == apptainer ]]; then
    app=$(command -v apptainer || command -v singularity) || { echo "build-images.sh: apptainer not found" >&2; exit 1; }
    sif="containers/fastkernels_$line.sif"
    if (( from_docker )); then
      "$app" build --force "$sif" "docker-daemon://fastkernels:$line"
    else
      args=(--build-arg "LINE=$lock" --build-arg "FASTKERNELS_GIT_COMMIT=$commit" --build-arg "BASE=$(base_of "$line")")
      [[ $line == cpu ]] && args+=(--build-arg "APT_PACKAGES=g++")
      "$app" build --force "${args[@]}" "$sif" containers/fastkernels.def
    fi
    echo "$sif: $(du -m "$sif" | cut -f1) MiB (sha256 $(sha256sum "$sif" | cut -c1-16)...)"
  else
    echo "build-images.sh: unknown engine $engine (docker, podman, apptainer)" >&2; exit 2
  fi
done
