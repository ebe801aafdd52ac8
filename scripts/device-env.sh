#!/usr/bin/env bash
# Source on the lent GPU machine (device tool): installs the carried wheels (.whl/, packed by
# ../shared/device/pack-wheels.sh plus pydantic) into /tmp/site and puts them and the project on PYTHONPATH.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || return 1
export PYTHONPATH=/tmp/site:$PWD
export PYTHONUNBUFFERED=1
