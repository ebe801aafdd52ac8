"""Prints the hardware profile name that `hardware=auto` resolves to on this machine (conf/hardware/NAME.yaml).

Why: the device tool lends an H100 or an H200 for one-GPU work, whichever comes, and a run under `hardware=h200`
refuses an H100 (rightly: its rows would be scored against the wrong ceilings). With FK_HARDWARE=auto,
scripts/device-chain.sh asks this script once and runs every lanes file under the matching concrete profile,
restoring and saving that card's tuning picks (.picks/NAME.tgz), so a call is never wasted on a refusal.
(device-session.sh and device-lanes.sh take a concrete FK_HARDWARE: they are part of the harness digest, and a
change there would void every standing row.) Detection is the harness's own (torch, or NVML where the host's torch
has no CUDA), and a card no profile matches is the harness's one-line error, exit 1.
Usage: python scripts/device_profile.py [--device INDEX]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fastkernels.config import ConfigError, HardwareProfile  # noqa: E402
from fastkernels.container import host_device  # noqa: E402
from fastkernels.hardware import load_profiles, resolve_profile  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", type=int, default=0, help="CUDA device index, after CUDA_VISIBLE_DEVICES")
    args = parser.parse_args()
    conf = ROOT / "conf"
    auto = HardwareProfile.model_validate(yaml.safe_load((conf / "hardware" / "auto.yaml").read_text()))
    try:
        print(resolve_profile(auto, host_device(args.device), load_profiles(conf)).name)
    except ConfigError as error:
        print(f"device_profile.py: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
