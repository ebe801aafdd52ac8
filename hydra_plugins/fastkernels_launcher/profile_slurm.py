"""`hydra/launcher=fastkernels_slurm`: hydra-submitit-launcher's Slurm launcher, placed by hardware profile.

A sweep such as `-m hardware=h100,a100 agent=kda,ako` becomes one Slurm job array per hardware profile, each
submitted with that profile's `slurm:` placement (partition, constraint, gres, time limit, CPUs, memory; one GPU
per job). Inside its job every run still resolves its profile against the GPU it was given and refuses a mismatch
(fastkernels.hardware.resolve_profile), so a job that lands on the wrong node fails instead of scoring.
"""


import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import yaml
from hydra.core.config_store import ConfigStore
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn
from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf, SlurmQueueConf
from omegaconf import OmegaConf
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import SlurmLauncher

from fastkernels.config import CONF_DIR, ConfigError, SlurmPlacement

log = logging.getLogger(__name__)


@dataclass
class ProfileSlurmConf(SlurmQueueConf):
    _target_: str = "hydra_plugins.fastkernels_launcher.profile_slurm.ProfileSlurmLauncher"


ConfigStore.instance().store(group="hydra/launcher", name="fastkernels_slurm", node=ProfileSlurmConf,
                             provider="fastkernels")


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


class ProfileSlurmLauncher(SlurmLauncher):
    """Submits one job array per hardware profile in the sweep (all arrays first, then waits for every job)."""

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        import submitit

        assert self.config is not None
        default = str(self.config.hydra.runtime.choices.get("hardware", "auto"))
        groups: dict[str, list[int]] = {}
        for index, overrides in enumerate(job_overrides):
            groups.setdefault(hardware_of(overrides, default), []).append(index)
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        base = {key: value for key, value in self.params.items() if key not in ("submitit_folder", "max_num_timeout")}
        submitted: dict[int, Any] = {}
        for hardware, indices in groups.items():
            params = {**base, **slurm_params(placement(hardware, job_overrides[indices[0]]))}
            executor = submitit.AutoExecutor(cluster="slurm", folder=self.params["submitit_folder"],
                                             slurm_max_num_timeout=self.params.get("max_num_timeout", 0))
            known = set(OmegaConf.structured(BaseQueueConf).keys())
            executor.update_parameters(**{k if k in known else f"slurm_{k}": v for k, v in params.items()})
            log.info("hardware=%s: %d jobs, slurm %s", hardware, len(indices), slurm_params(
                placement(hardware, job_overrides[indices[0]])))
            arguments = [(list(job_overrides[i]), "hydra.sweep.dir", initial_job_idx + i, f"job_id_for_{i}",
                          Singleton.get_state()) for i in indices]
            for index, job in zip(indices, executor.map_array(self, *zip(*arguments))):
                submitted[index] = job
        return [submitted[i].results()[0] for i in range(len(job_overrides))]
