#!/usr/bin/env bash
# Source on the lent GPU machine (device tool): installs the carried wheels (.whl/) into /tmp/site and puts them and
# the project on PYTHONPATH. `bash scripts/prepare-device-carry.sh` packs .whl/ here first (its steps, and the
# carry's size against the device tool's 64 MiB, are that script's); then call the device tool with carry
# [".whl", ".picks"] and a command that sources this, as scripts/device-tested-call.sh does.
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
