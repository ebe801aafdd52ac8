#!/usr/bin/env bash
# Packs everything a device call left under $OUT into one archive, $OUT/out.tgz, and removes the rest. Why: the
# device tool brings back at most 8 files, at most 2 folders down; on 2026-12-07 a call of three steps left 16 files
# and a whole step's archive (its rows and worker logs) stayed behind. The CUDA extensions device-chain.sh copies to
# $OUT/.../ext/ (*.so, 16 MB) are left out unless FK_PACK_EXT=1: they build again in under a minute. The tuning picks
# come back beside the archive, not in it: the picks.tgz nearest $OUT (the newest of those), which is the merged one
# device-chain.sh leaves, as $OUT/picks.tgz; deeper ones are left out (about 190 KB each, and what the merged one
# holds). Recorded results then keep one picks archive a session, not one a call.
# Usage: the device command's last step, `bash scripts/pack-out.sh`; here, `tar xzf FILES_AT/out.tgz -C DIR`, and
# FILES_AT/picks.tgz (where there is one) is the next `.picks/HARDWARE.tgz`.
set -euo pipefail
out=${OUT:?OUT names the device call\'s output folder}
cd "$out"
[ ! -e out.tgz ] || { echo "pack-out.sh: $out/out.tgz exists already" >&2; exit 2; }
exclude=(--exclude=picks.tgz)
[ "${FK_PACK_EXT:-0}" = 1 ] || exclude+=(--exclude='*.so')
picks=$(find . -name picks.tgz -type f -printf '%d %T@ %p\n' | sort -k1,1n -k2,2nr | head -1 | cut -d' ' -f3-)
archive=$(mktemp /tmp/fk-out.XXXXXX)
kept=$(mktemp /tmp/fk-picks.XXXXXX)
tar czf "$archive" "${exclude[@]}" .
[ -z "$picks" ] || mv "$picks" "$kept"
find . -mindepth 1 -delete
mv "$archive" out.tgz
if [ -n "$picks" ]; then mv "$kept" picks.tgz; else rm -f "$kept"; fi
echo "pack-out.sh: $(tar tzf out.tgz | grep -vc '/$') files in $out/out.tgz ($(du -h out.tgz | cut -f1))" \
  "${picks:+, the tuning picks of $picks as $out/picks.tgz}"
