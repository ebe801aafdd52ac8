#!/usr/bin/env bash
# Builds the pinned fastkernels images (containers/) and prints each one's size.
#
#   scripts/build-images.sh [cu128|cpu|all] [--engine docker|apptainer] [--from-docker]
#   scripts/build-images.sh digests          the registry's current digests of the pinned base tags (to refresh pins)
#
#   docker      docker build -f containers/Dockerfile.<line> -t fastkernels:<line> .   (needs a running Docker engine)
#   apptainer   apptainer build containers/fastkernels_<line>.sif containers/fastkernels.def (Apptainer >= 1.2)
#   --from-docker  with --engine apptainer: convert the Docker image already built (docker-daemon://fastkernels:<line>)
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

line=${1:-all}; shift || true
engine=docker; from_docker=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --engine) engine=$2; shift 2 ;;
    --from-docker) from_docker=1; shift ;;
    *) echo "build-images.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$line" in cu128|cpu) lines=("$line") ;; all) lines=(cu128 cpu) ;;
  *) echo "build-images.sh: no image line $line (cu128, cpu, all)" >&2; exit 2 ;; esac
commit=${FASTKERNELS_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
[[ -z "$(git status --porcelain 2>/dev/null)" ]] || echo "build-images.sh: warning: the tree has uncommitted changes; the image says $commit" >&2

for line in "${lines[@]}"; do
  lock=$([[ $line == cpu ]] && echo cpu || echo "gpu-$line")
  if [[ $engine == docker ]]; then
    docker info >/dev/null 2>&1 || { echo "build-images.sh: no Docker engine answers (docker info failed)" >&2; exit 1; }
    docker build -f "containers/Dockerfile.$line" -t "fastkernels:$line" --build-arg "FASTKERNELS_GIT_COMMIT=$commit" .
    bytes=$(docker image inspect --format '{{.Size}}' "fastkernels:$line")
    echo "fastkernels:$line: $(( bytes / 1048576 )) MiB ($(docker image inspect --format '{{.Id}}' "fastkernels:$line"))"
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
    echo "build-images.sh: unknown engine $engine (docker, apptainer)" >&2; exit 2
  fi
done
