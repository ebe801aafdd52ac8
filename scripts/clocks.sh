#!/usr/bin/env bash
# =====================================================================================================================
#  NEVER RUN THIS ON A SHARED MACHINE.
#  Locking clocks changes the GPU for every process and every user until it is restored, and needs root.
#  Use it only on a machine you own, and always `restore` when you are done (or after a run was killed).
# =====================================================================================================================
#  scripts/clocks.sh lock <graphics_mhz> <memory_mhz> [gpu]   lock graphics and memory clocks (nvidia-smi -lgc/-lmc)
#  scripts/clocks.sh restore [gpu]                            undo both locks (nvidia-smi -rgc/-rmc)
#  scripts/clocks.sh show [gpu]                               current SM/memory clocks and active clock-event reasons
#  [gpu] is an nvidia-smi index or UUID (default 0). Example (H200): scripts/clocks.sh lock 1980 3201 0
set -euo pipefail

usage() { sed -n '7,10p' "$0" | sed 's/^#  //' >&2; exit 2; }
[[ "${1:-}" =~ ^(lock|restore|show)$ ]] || usage
command -v nvidia-smi >/dev/null || { echo "clocks.sh: nvidia-smi not found" >&2; exit 1; }

case "${1:-}" in
  lock)
    [[ $# -ge 3 && "$2" =~ ^[0-9]+$ && "$3" =~ ^[0-9]+$ ]] || usage
    gpu="${4:-0}"
    nvidia-smi -i "$gpu" -lgc "$2,$2"
    nvidia-smi -i "$gpu" -lmc "$3,$3" || { echo "clocks.sh: memory lock failed; restoring graphics" >&2
                                           nvidia-smi -i "$gpu" -rgc; exit 1; }
    ;;
  restore)
    gpu="${2:-0}"
    status=0
    nvidia-smi -i "$gpu" -rgc || status=1
    nvidia-smi -i "$gpu" -rmc || status=1
    exit "$status"
    ;;
  show)
    nvidia-smi -i "${2:-0}" --query-gpu=clocks.sm,clocks.mem,clocks_event_reasons.active --format=csv
    ;;
  *) usage ;;
esac
