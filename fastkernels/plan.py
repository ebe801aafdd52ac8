"""What a worker compares for one task: the baseline implementations and the candidate, resolved to classes.

Resolution happens once per task. A candidate that cannot be used at all (missing, not importing, wrong
interface) becomes a `Verdict` that every case of the task reports, and the baseline is still timed.
"""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from fastkernels.build import eager_classes, first_production_class
from fastkernels.compiled import compiled
from fastkernels.config import BaselineConfig
from fastkernels.implementations import (
    ImplementationUnavailable,
    InterfaceMismatch,
    check_interface,
    load_candidate,
    load_implementation,
)
from fastkernels.manifest import Manifest
from fastkernels.records import Status
from fastkernels.registry import Registry
from fastkernels.static_check import findings


@dataclass(frozen=True)
class Impl:
    """A class plus the lower-level classes bound while it is constructed."""

    name: str
    cls: type
    components: dict[str, type]
    component_impls: dict[str, str] = field(default_factory=dict)  # each component task's implementation name


@dataclass(frozen=True)
class Unusable:
    status: Status
    reason: str


@dataclass
class TaskPlan:
    manifest: Manifest
    eager: Impl
    baselines: list[Impl]
    unavailable: dict[str, str] = field(default_factory=dict)
    # lower-level production implementations composed without, because their import raised: `task.impl` -> why
    components_raised: dict[str, str] = field(default_factory=dict)
    candidate: Impl | Unusable | None = None  # None: noop, the chosen baseline again


# Advice torch appends to every CUDA error message: the same for every error, and it pushes the error's name and
# where it happened past the 400 characters a row keeps.
_CUDA_ADVICE = (
    re.compile(r"Search for `(\w+)' in https://docs\.nvidia\.com/\S+ for more information\."),
    re.compile(r"CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
               r"might be incorrect\."),
    re.compile(r"For debugging consider passing CUDA_LAUNCH_BLOCKING=1\.?"),
    re.compile(r"Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions\."),
)


def one_line(error: BaseException) -> str:
    """`Type: message` on one line, with the deepest frame of candidate code when there is one (torch's generic CUDA
    debugging advice dropped, the CUDA error's name kept)."""
    message = " ".join(str(error).split())
    for advice in _CUDA_ADVICE:
        message = advice.sub(lambda match: f"({match.group(1)})" if match.groups() else "", message)
    message = " ".join(message.split()) or "(no message)"
    frames = traceback.extract_tb(error.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"{type(error).__name__}: {message[:400]}{where}"


def plan_task(
    registry: Registry, task: str, device: str, baseline: BaselineConfig, candidate_dir: Path | None, mode: str,
    before_candidate: Callable[[], None] | None = None,
) -> TaskPlan:
    """Resolve baselines, then (after `before_candidate`, e.g. an integrity snapshot) the candidate."""
    manifest = registry.get(task)
    closure = registry.closure(task)
    directory = registry.directory(task)
    eager_components = eager_classes(registry, closure, device)
    components_raised: dict[str, str] = {}
    served = {name: first_production_class(registry, name, device, components_raised) for name in closure}
    production_components = {name: cls for name, (_, cls) in served.items()}
    production_names = {name: impl for name, (impl, _) in served.items()}
    eager_names = {name: registry.get(name).implementations.eager.name for name in closure}
    eager = Impl("eager", load_implementation(directory, manifest.implementations.eager, device), eager_components,
                 eager_names)
    plan = TaskPlan(manifest=manifest, eager=eager, baselines=[], components_raised=components_raised)
    if baseline.name == "eager":
        plan.baselines = [eager]
    elif baseline.name == "inductor":
        # every instance runs one compiled function (fastkernels.compiled says why)
        inductor = compiled(eager.cls, baseline.compile_mode)
        plan.baselines = [Impl("inductor", inductor, eager_components, eager_names)]
    else:
        for implementation in manifest.implementations.production:
            try:
                cls = load_implementation(directory, implementation, device)
            except ImplementationUnavailable as error:
                plan.unavailable[implementation.name] = error.why
                continue
            plan.baselines.append(Impl(implementation.name, cls, production_components, production_names))
        if not plan.baselines:
            plan.baselines = [Impl("eager", eager.cls, production_components, production_names)]
    if before_candidate is not None:
        before_candidate()
    if candidate_dir is not None:
        plan.candidate = _resolve_candidate(registry, manifest, closure, candidate_dir, mode, production_components, device)
    return plan


def candidate_path(candidate_dir: Path, manifest: Manifest) -> Path:
    return candidate_dir / f"L{manifest.level}" / f"{manifest.name}.py"


def _resolve_candidate(
    registry: Registry,
    manifest: Manifest,
    closure: list[str],
    candidate_dir: Path,
    mode: str,
    production_components: dict[str, type],
    device: str,
) -> Impl | Unusable:
    components = dict(production_components)
    swapped = []
    if mode == "composed":
        for name in closure:
            path = candidate_path(candidate_dir, registry.get(name))
            if not path.exists():
                continue
            loaded = _load(path, registry.get(name), f"component {name}: ")
            if isinstance(loaded, Unusable):
                return loaded
            components[name] = loaded
            swapped.append(name)
    own = candidate_path(candidate_dir, manifest)
    if own.exists():
        loaded = _load(own, manifest, "")
        if isinstance(loaded, Unusable):
            return loaded
        return Impl("candidate", loaded, components)
    if swapped:
        host = registry.directory(manifest.name)
        for implementation in manifest.implementations.production:
            try:
                cls = load_implementation(host, implementation, device)
            except ImplementationUnavailable:
                continue
            return Impl(f"composed({','.join(swapped)})", cls, components)
        return Impl(f"composed({','.join(swapped)})", load_implementation(
            host, manifest.implementations.eager, device), components)
    return Unusable(Status.NOT_ATTEMPTED, f"no candidate at {own}")


def _load(path: Path, manifest: Manifest, prefix: str) -> type | Unusable:
    try:
        problems = findings(path.read_text(), str(path), frozenset(manifest.allow))
    except SyntaxError:
        problems = []  # the import below reports it as a COMPILE_ERROR
    if problems:
        return Unusable(Status.REWARD_HACK, f"{prefix}static check: {'; '.join(problems[:3])}")
    try:
        cls = load_candidate(path, manifest)
    except InterfaceMismatch as error:
        return Unusable(Status.RUNTIME_ERROR, f"{prefix}interface mismatch: {error}")
    except BaseException as error:  # noqa: BLE001 - anything a candidate raises at import is its failure
        return Unusable(Status.COMPILE_ERROR, f"{prefix}{path.name} does not import: {one_line(error)}")
    try:
        check_interface(cls, manifest)
    except InterfaceMismatch as error:
        return Unusable(Status.RUNTIME_ERROR, f"{prefix}interface mismatch: {error}")
    return cls
