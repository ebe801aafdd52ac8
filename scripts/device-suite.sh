#!/usr/bin/env bash
# On the lent H200 (device tool, carry .whl): agent=noop and agent=reference over every task, then the tables.
# Usage (device tool command): bash scripts/device-suite.sh [extra hydra overrides]
set -uo pipefail
# FASTKERNELS_GIT_COMMIT may name the commit: the copied tree has no .git
source scripts/device-env.sh || exit 1
out=${OUT:-/tmp/fk-out}
mkdir -p "$out"
for agent in noop reference; do
  start=$(date +%s)
  timeout ${FK_AGENT_TIMEOUT:-280} python3 -m fastkernels hardware=h200 tasks=all agent=$agent hydra.run.dir="$out/$agent" "$@" 2>&1 | tail -16
  echo "agent=$agent wall $(( $(date +%s) - start )) s"
done
python3 -m fastkernels.report "$out/noop" "$out/reference" > "$out/tables.md"
tar czf "$out/runs.tgz" -C "$out" noop reference
rm -rf "$out/noop" "$out/reference"
cat "$out/tables.md"
