#!/usr/bin/env bash
# Packs everything a device call left under $OUT into one archive, $OUT/out.tgz, and removes the rest. Why: the
# device tool brings back at most 8 files, at most 2 folders down; on 2026-12-07 a call of three steps left 16 files
# and a whole step's archive (its rows and worker logs) stayed behind. The CUDA extensions device-chain.sh copies to
# $OUT/.../ext/ (*.so, 16 MB) are left out unless FK_PACK_EXT=1: they build again in under a minute.
# Usage: the device command's last step, `bash scripts/pack-out.sh`; here, `tar xzf FILES_AT/out.tgz -C DIR`.
set -euo pipefail
out=${OUT:?OUT names the device call\'s output folder}
cd "$out"
[ ! -e out.tgz ] || { echo "pack-out.sh: $out/out.tgz exists already" >&2; exit 2; }
exclude=(--exclude='*.so')
[ "${FK_PACK_EXT:-0}" = 1 ] && exclude=()
archive=$(mktemp /tmp/fk-out.XXXXXX)
tar czf "$archive" "${exclude[@]}" .
find . -mindepth 1 -delete
mv "$archive" out.tgz
echo "pack-out.sh: $(tar tzf out.tgz | grep -vc '/$') files in $out/out.tgz ($(du -h out.tgz | cut -f1))"
