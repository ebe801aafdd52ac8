"""Test helper: where every GPU case's shape comes from, written as code a reader can check.

Issue #4 asks that cases be read from each architecture's transformers config class (or, where transformers has
none, from its published config values, with the source named). A manifest states a case's `init` and `dims` as
numbers with a prose `source`; this module states the same numbers a second way, derived:

- an **architecture** is a transformers config object built from its config class (the class defaults where the
  class documents them as that checkpoint's, else the checkpoint's published `config.json` values passed in), or a
  `Published` record for a model transformers does not ship (timm, ultralytics, diffusers, a paper's code), which
  names its source;
- a **derivation** per task maps (architecture, case) to the values the model feeds the module: every `init` key
  of the case and those `dims` the config fixes (a channel count, a token grid), leaving only workload choices
  (batch size, prompt length) to the manifest.

Each per-family module (`shapes_*.py`) holds a `Family`: its architectures, keyed by case-name prefix, and its
tasks' derivations. A case's architecture is the longest key of the deriving family that its name starts with
(`llama31_8b_decode_1` -> `llama31_8b`). tests/test_case_shapes.py checks every GPU case of every task.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from fastkernels.manifest import Case

Derivation = Callable[[Any, Case], dict[str, Any]]


class Published(SimpleNamespace):
    """Config values of a model transformers has no config class for; `source` says where they are published."""

    def __init__(self, source: str, **values: Any) -> None:
        if not source.strip():
            raise ValueError("a published config names its source")
        super().__init__(source=source, **values)


class Family:
    """One model family's architectures (keyed by case-name prefix) and the derivations of its tasks."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.architectures: dict[str, Callable[[], Any]] = {}
        self._built: dict[str, Any] = {}

    def architecture(self, key: str) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
        """Register a builder of architecture `key`; built lazily, once a case asks for it."""

        def register(build: Callable[[], Any]) -> Callable[[], Any]:
            if key in self.architectures:
                raise ValueError(f"{self.name}: architecture {key!r} is registered twice")
            self.architectures[key] = build
            return build

        return register

    def derives(self, *tasks: str) -> Callable[[Derivation], Derivation]:
        """Register `derive(arch, case) -> expected values` for each of `tasks`, its cases named by this family's
        architectures."""

        def register(derive: Derivation) -> Derivation:
            for task in tasks:
                if task in DERIVATIONS:
                    raise ValueError(f"task {task!r} has two derivations")
                DERIVATIONS[task] = (self, derive)
            return derive

        return register

    def architecture_of(self, case_name: str) -> tuple[str, Any]:
        """The longest key `case_name` starts with (followed by `_` or the end), and its built config."""
        keys = [key for key in self.architectures if case_name == key or case_name.startswith(key + "_")]
        if not keys:
            raise KeyError(f"case {case_name!r} names no architecture of {self.name} (keys are case-name prefixes)")
        key = max(keys, key=len)
        if key not in self._built:
            self._built[key] = self.architectures[key]()
        return key, self._built[key]


DERIVATIONS: dict[str, tuple[Family, Derivation]] = {}


def _plain(value: Any) -> Any:
    """Tuples as lists, so a derived (16, 16) equals a manifest's [16, 16]."""
    if isinstance(value, (tuple, list)):
        return [_plain(item) for item in value]
    return value


def mismatches(case: Case, expected: dict[str, Any]) -> list[str]:
    """One line per init key left underived and per derived value the manifest states otherwise."""
    stated = {**case.dims, **case.init}
    problems = [f"init[{key!r}] = {case.init[key]!r} is not derived from the architecture"
                for key in case.init if key not in expected]
    for key, value in expected.items():
        if key not in stated:
            problems.append(f"derived {key!r} = {value!r} is not in the case's init or dims")
        elif _plain(stated[key]) != _plain(value):
            problems.append(f"{key!r}: the manifest says {stated[key]!r}, the architecture gives {value!r}")
    return problems
