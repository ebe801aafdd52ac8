"""Each case's compile caches: a directory that no candidate code has seen, so no planted pick or kernel reaches a
baseline.

Inductor and Triton look up compiled kernels and autotuning picks on disk when a baseline compiles, and a baseline
compiles lazily in the worker: after the candidate's import, and after the candidate ran on the task's earlier cases.
A candidate that writes a slow pick or kernel under its baseline's cache key (computable offline on the same stack)
into a shared cache would slow that baseline, here or in any later task or run. With `harness.compile_caches=per_case`
each case's baselines compile in a fresh directory named at random when the case starts, seeded from the run's
trusted tuning picks (FASTKERNELS_TUNING_PICKS, "SHA256-PREFIX PATH", checked against its hash every time), and
removed when the case ends. Inductor then compiles in the worker's own process (compile_threads=1): its compile pool
would keep the directory it started with.
"""

from __future__ import annotations

import gc
import hashlib
import os
import secrets
import shutil
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Protocol

from fastkernels.environ import set_environment
from fastkernels.tuning_picks import restore

PICKS_ENV = "FASTKERNELS_TUNING_PICKS"
CACHE_VARIABLES = {"triton": "TRITON_CACHE_DIR", "inductor": "TORCHINDUCTOR_CACHE_DIR"}


class PicksChanged(RuntimeError):
    """The tuning picks archive is not the one the run started with."""


@dataclass(frozen=True)
class TrustedPicks:
    """The run's tuning picks archive, named by the hash prefix it had when the run started."""

    sha256_prefix: str
    path: Path

    @classmethod
    def from_environment(cls) -> TrustedPicks | None:
        """FASTKERNELS_TUNING_PICKS as scripts/device-session.sh exports it (the path resolved now, before any
        candidate code runs); None where the run has no archive."""
        value = os.environ.get(PICKS_ENV, "").strip()
        if not value:
            return None
        prefix, _, path = value.partition(" ")
        if not prefix or not path:
            raise ValueError(f"{PICKS_ENV}={value!r}: expected 'SHA256-PREFIX PATH'")
        return cls(prefix, Path(path).resolve())

    def verify(self) -> None:
        """Raise PicksChanged unless the archive still has the run's hash."""
        try:
            digest = hashlib.sha256(self.path.read_bytes()).hexdigest()
        except OSError as error:
            raise PicksChanged(f"the tuning picks archive {self.path} cannot be read: {error}") from None
        if not digest.startswith(self.sha256_prefix):
            raise PicksChanged(f"the tuning picks archive {self.path} is not the run's (sha256 {digest[:16]}, the run "
                               f"started with {self.sha256_prefix})")

    def restore_into(self, roots: dict[str, Path]) -> int:
        """Write the archive's picks into `roots`, after checking the archive still has the run's hash."""
        self.verify()
        restored, _ = restore(self.path, roots)
        return restored


class EnvironmentSetter(Protocol):
    def harness_sets_environment(self, values: dict[str, str | None]) -> None: ...


@contextmanager
def case_compile_caches(root: Path, picks: TrustedPicks | None,
                        integrity: EnvironmentSetter | None) -> Iterator[dict[str, Path]]:
    """Point Inductor's and Triton's caches at a fresh directory under `root` for one case, seeded from `picks`;
    the integrity snapshot (when given) takes the new variables as the harness's own. Afterwards the directory is
    removed and the variables are as they were."""
    # Candidate objects of the case before that sit in reference cycles die now, not during this case's compiles: a
    # finalizer (__del__, weakref.finalize) is candidate code that would otherwise run with this directory named.
    gc.collect()
    directory = root / secrets.token_hex(8)
    roots = {cache: directory / cache for cache in CACHE_VARIABLES}
    for path in roots.values():
        path.mkdir(parents=True)
    previous: dict[str, str | None] = {variable: os.environ.get(variable) for variable in CACHE_VARIABLES.values()}
    set_variables = integrity.harness_sets_environment if integrity is not None else set_environment
    try:
        if picks is not None:
            picks.restore_into(roots)
        set_variables({variable: str(roots[cache]) for cache, variable in CACHE_VARIABLES.items()})
        yield roots
    finally:
        set_variables(previous)
        shutil.rmtree(directory, ignore_errors=True)
