"""`hydra/launcher=fastkernels_slurm`: hydra-submitit-launcher's Slurm launcher, placed by hardware profile.

A sweep such as `-m hardware=h100,a100 agent=kda,ako` becomes one Slurm job array per hardware profile, each
submitted with that profile's `slurm:` placement (fastkernels.slurm: partition, constraint, gres, time limit, CPUs,
memory; one GPU per job). Inside its job every run still resolves its profile against the GPU it was given and
refuses a mismatch (fastkernels.hardware.resolve_profile), so a job that lands on the wrong node fails instead of
scoring. Registered only where hydra-submitit-launcher (the `scale` extra) is installed.
"""

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from hydra.core.config_store import ConfigStore
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn
from omegaconf import OmegaConf

from fastkernels.slurm import hardware_of, placement, slurm_params

try:
    from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf, SlurmQueueConf
    from hydra_plugins.hydra_submitit_launcher.submitit_launcher import SlurmLauncher
except ImportError:  # the optional launcher is not installed: no fastkernels_slurm either
    SlurmLauncher = None

log = logging.getLogger(__name__)

if SlurmLauncher is not None:

    @dataclass
    class ProfileSlurmConf(SlurmQueueConf):
        _target_: str = "hydra_plugins.fastkernels_launcher.profile_slurm.ProfileSlurmLauncher"

    ConfigStore.instance().store(group="hydra/launcher", name="fastkernels_slurm", node=ProfileSlurmConf,
                                 provider="fastkernels")

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
