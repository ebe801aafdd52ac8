"""The command line: `python -m fastkernels [hydra overrides]` (see conf/config.yaml for the groups).

`python -m fastkernels list [--json] [--level N] [--category C]` lists the tasks (fastkernels/listing.py); it is
dispatched before Hydra parses argv, which would take `list` for a malformed override. The overrides are checked
first (fastkernels/overrides.py): a misspelt key or config choice is one line of error, exit status 2.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from fastkernels.config import CONF_DIR, ConfigError, RunConfig
from fastkernels.manifest import ManifestError
from fastkernels.registry import UnknownTaskError

log = logging.getLogger("fastkernels")


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
def _hydra_main(cfg: DictConfig) -> None:
    from fastkernels.pipeline import run

    run_dir = Path(HydraConfig.get().runtime.output_dir)
    try:
        config = RunConfig.from_omegaconf(cfg)
        if config.runner.name == "container":  # the same config, re-invoked inside the profile's pinned image
            from fastkernels.container import run_in_container

            run_in_container(config, run_dir, HydraConfig.get().overrides.task)
        else:
            run(config, run_dir)
    except (ConfigError, ManifestError, UnknownTaskError) as error:
        log.error("%s", error)
        print(f"fastkernels: error: {error}", file=sys.stderr)
        sys.exit(2)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "list":
        from fastkernels import listing

        sys.exit(listing.main(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "report":
        from fastkernels import report

        sys.exit(report.main(sys.argv[2:]))
    from fastkernels.overrides import check

    problem = check(sys.argv[1:])  # before Hydra, whose messages for these span several lines
    if problem is not None:
        print(f"fastkernels: error: {problem}", file=sys.stderr)
        sys.exit(2)
    try:
        _hydra_main()
    finally:  # nothing the run started outlives it (every sweep job of a multirun shares the one server)
        from fastkernels.launch import stop_fork_server

        stop_fork_server()


if __name__ == "__main__":
    main()
