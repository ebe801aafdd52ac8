"""The task registry: finds tasks/L<level>/<name>/task.yaml, loads manifests lazily, selects and orders them.

Names are indexed from the directory tree without parsing anything; a manifest is parsed the first time it is
needed. Unknown names get a one-line error that suggests the nearest known ones.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from fastkernels.config import TASKS_DIR, TaskSelection
from fastkernels.manifest import Manifest, ManifestError, load_manifest


class UnknownTaskError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


@dataclass
class Registry:
    root: Path = TASKS_DIR
    _paths: dict[str, Path] = field(default_factory=dict, init=False)
    _loaded: dict[str, Manifest] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        for manifest_path in sorted(self.root.glob("L[0-9]/*/task.yaml")):
            name = manifest_path.parent.name
            if name in self._paths:
                raise ManifestError(f"{manifest_path}: name: task {name!r} also defined at {self._paths[name]}")
            self._paths[name] = manifest_path

    @property
    def names(self) -> list[str]:
        return sorted(self._paths)

    def level_of(self, name: str) -> int:
        return int(self.path(name).parent.parent.name[1:])

    def path(self, name: str) -> Path:
        if name not in self._paths:
            near = difflib.get_close_matches(name, self._paths, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise UnknownTaskError(f"unknown task {name!r}{hint}")
        return self._paths[name]

    def directory(self, name: str) -> Path:
        return self.path(name).parent

    def get(self, name: str) -> Manifest:
        if name not in self._loaded:
            manifest = load_manifest(self.path(name))
            for component in manifest.components:
                if self.level_of(component) >= manifest.level:
                    raise ManifestError(
                        f"{self.path(name)}: components: {component!r} is level {self.level_of(component)},"
                        f" not below {manifest.level}"
                    )
            self._loaded[name] = manifest
        return self._loaded[name]

    def select(self, selection: TaskSelection) -> list[Manifest]:
        """Tasks the selection names, lower levels first, each after the components it is built from."""
        for name in (*selection.include, *selection.exclude):
            self.path(name)
        chosen = []
        for name in self.names:
            if self.level_of(name) not in selection.levels and name not in selection.include:
                continue
            if selection.include and name not in selection.include:
                continue
            if name in selection.exclude:
                continue
            manifest = self.get(name)
            if selection.categories and not set(selection.categories) & set(manifest.categories):
                continue
            chosen.append(manifest)
        return self.in_build_order(chosen)

    def closure(self, name: str) -> list[str]:
        """Every task `name` is built from, transitively, lowest first (excluding `name`)."""
        order: list[str] = []

        def visit(task: str, stack: tuple[str, ...]) -> None:
            if task in stack:
                raise ManifestError(f"{self.path(task)}: components: cycle {' -> '.join(stack + (task,))}")
            for component in self.get(task).components:
                visit(component, stack + (task,))
                if component not in order:
                    order.append(component)

        visit(name, ())
        return order

    def in_build_order(self, manifests: list[Manifest]) -> list[Manifest]:
        rank = {}
        for manifest in manifests:
            rank[manifest.name] = (manifest.level, len(self.closure(manifest.name)), manifest.name)
        return sorted(manifests, key=lambda m: rank[m.name])


def cases_to_run(manifests: list[Manifest], tier: str, wanted: list[str]) -> list[tuple[Manifest, list[str]]]:
    """Each task with its cases of `tier`, narrowed to the names in `wanted` when it names any (tasks.cases); tasks
    left without a case drop out. A wanted name no selected task has at this tier is an error naming it, so a typo
    never silently runs nothing."""
    work = []
    for manifest in manifests:
        names = [case.name for case in manifest.cases if case.tier == tier]
        if wanted:
            names = [name for name in names if name in wanted]
        if names:
            work.append((manifest, names))
    kept = {name for _, names in work for name in names}
    for name in wanted:
        if name in kept:
            continue
        other_tier = sorted(m.name for m in manifests for case in m.cases if case.name == name)
        if other_tier:
            raise UnknownTaskError(f"tasks.cases: {name!r} is not a {tier} case ({', '.join(other_tier)} has it in"
                                   f" another tier; harness.case_tier picks the tier)")
        known = sorted({case.name for m in manifests for case in m.cases if case.tier == tier})
        near = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise UnknownTaskError(f"tasks.cases: no selected task has a {tier} case {name!r}{hint}")
    return work
