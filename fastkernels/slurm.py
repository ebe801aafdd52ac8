"""Slurm placement by hardware profile: which partition, constraint, gres and limits a job of a profile asks for.

Used by the `hydra/launcher=fastkernels_slurm` plugin (hydra_plugins/fastkernels_launcher); kept here, free of
submitit, so it can be read and tested without the optional launcher installed.
"""

from __future__ import annotations

from typing import Any, Sequence

import yaml

from fastkernels.config import CONF_DIR, ConfigError, SlurmPlacement


def hardware_of(overrides: Sequence[str], default: str) -> str:
    for override in overrides:
        key, _, value = override.partition("=")
        if key.lstrip("+~") == "hardware":
            return value
    return default


def placement(hardware: str, overrides: Sequence[str]) -> SlurmPlacement:
    """The profile's `slurm:` block with the job's `hardware.slurm.<key>=` overrides applied."""
    if hardware == "auto":
        raise ConfigError("hydra/launcher=fastkernels_slurm needs a concrete hardware profile (hardware=h100, ...): "
                          "`auto` cannot say which nodes to ask for")
    path = CONF_DIR / "hardware" / f"{hardware}.yaml"
    if not path.exists():
        raise ConfigError(f"hardware={hardware}: no profile {path}")
    block = dict((yaml.safe_load(path.read_text()) or {}).get("slurm") or {})
    for override in overrides:
        key, _, value = override.partition("=")
        if key.startswith("hardware.slurm."):
            block[key.removeprefix("hardware.slurm.")] = yaml.safe_load(value)
    try:
        return SlurmPlacement.model_validate(block)
    except Exception as error:  # noqa: BLE001 - one line naming the file
        raise ConfigError(f"{path}: slurm: {str(error).splitlines()[-1].strip()}") from None


def slurm_params(place: SlurmPlacement) -> dict[str, Any]:
    """submitit's parameter names for a placement: one task, one GPU (when the profile asks for one)."""
    params: dict[str, Any] = {"timeout_min": place.timeout_min, "cpus_per_task": place.cpus_per_task,
                              "mem_gb": place.mem_gb, "tasks_per_node": 1, "nodes": 1}
    if place.partition:
        params["partition"] = place.partition
    if place.constraint:
        params["constraint"] = place.constraint
    if place.gres:
        params["gres"] = place.gres
    return params
