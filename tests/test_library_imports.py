"""Every production implementation that needs a library imports it when its file loads, not when an instance is
built: a worker loads the baselines' files before its integrity snapshot and builds instances after it, so what a
library sets up while importing (SGLang's import chain runs to ~3000 modules) would otherwise happen inside the
window the snapshot guards and could read as the candidate's doing.

The libraries are not installed for CI, so each is stood in for by stub modules that record being imported."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from unittest import mock

import pytest
from task_library import REGISTRY

from fastkernels.implementations import import_file


class Stub(types.ModuleType):
    """Any attribute: a class for capitalised names (adapters subclass library classes), else a callable mock."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        value = type(name, (), {}) if name[:1].isupper() else mock.MagicMock(name=f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class StubLibraries(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, roots: set[str]) -> None:
        self.roots = roots
        self.imported: set[str] = set()

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return Stub(spec.name)

    def exec_module(self, module):
        module.__path__ = []
        self.imported.add(module.__name__.split(".")[0])


LIBRARY_IMPLEMENTATIONS = [
    (task, implementation)
    for task in REGISTRY.names for implementation in REGISTRY.get(task).implementations.production
    if implementation.requires and implementation.source.partition(":")[0].endswith(".py")]


@pytest.fixture
def modules_restored():
    """sys.modules as it was: the stubs and the files loaded against them must not outlive the test."""
    before = dict(sys.modules)
    yield
    for name in [name for name in sys.modules if name not in before]:
        del sys.modules[name]
    sys.modules.update(before)


@pytest.mark.parametrize("task, implementation", LIBRARY_IMPLEMENTATIONS,
                         ids=[f"{task}-{implementation.name}" for task, implementation in LIBRARY_IMPLEMENTATIONS])
def test_a_library_baseline_imports_its_library_when_its_file_loads(task, implementation, monkeypatch,
                                                                    modules_restored):
    roots = {requirement.split(".")[0] for requirement in implementation.requires}
    for name in list(sys.modules):  # the real library, where installed, and files loaded before: imported afresh
        if name.split(".")[0] in roots or name.startswith("fastkernels_loaded."):
            del sys.modules[name]
    stubs = StubLibraries(roots)
    monkeypatch.setattr(sys, "meta_path", [stubs, *sys.meta_path])
    location, _, class_name = implementation.source.partition(":")
    module = import_file(REGISTRY.directory(task) / location, namespace=f"test.library_imports.{task}")
    assert hasattr(module, class_name)
    assert stubs.imported == roots, f"{task}/{location} imports {sorted(roots - stubs.imported)} only when built"
