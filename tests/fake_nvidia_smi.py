"""A stand-in nvidia-smi for the device scripts' tests (scripts/device-call.sh, scripts/device-tested-call.sh): it
answers the queries those scripts make for one card, with one process holding 1 GiB and 2 GiB used in all."""

from __future__ import annotations

from pathlib import Path


def fake_nvidia_smi(bin_dir: Path, card: str) -> Path:
    """Writes bin_dir/nvidia-smi answering for `card` (put bin_dir first on PATH) and returns bin_dir."""
    bin_dir.mkdir(exist_ok=True)
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"""#!/usr/bin/env bash
case "$*" in
  *--query-gpu=name,uuid*) echo "{card}, GPU-0000, 1980 MHz, 3201 MHz" ;;
  *--query-gpu=name*) echo "{card}" ;;
  *--query-gpu=uuid*) echo "GPU-0000, 1980 MHz, 3201 MHz, 35" ;;
  *--query-compute-apps*) echo "4242, 1024 MiB" ;;
  *) echo "2048 MiB" ;;
esac
""")
    smi.chmod(0o755)
    return bin_dir
