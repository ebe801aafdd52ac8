"""Building a task's modules for one case: the reference weights, the float64 oracle, baselines and candidates.

All of them are constructed from the case's init args with the lower-level components bound (see composition.py)
and then load one reference state dict, so baseline, candidate and oracle compute with the same weights.
"""

from __future__ import annotations

from typing import Mapping

import torch
from torch import nn

from fastkernels.composition import bind
from fastkernels.implementations import ImplementationUnavailable, ImportRaised, load_implementation
from fastkernels.inputs import DTYPES, generator, redraw_parameters, stream_seed
from fastkernels.manifest import Case, Manifest
from fastkernels.registry import Registry


class StateMismatch(RuntimeError):
    """A module whose state dict keys or shapes differ from the task's eager module."""


def eager_classes(registry: Registry, names: list[str], device: str) -> dict[str, type]:
    return {
        name: load_implementation(registry.directory(name), registry.get(name).implementations.eager, device)
        for name in names
    }


def first_production_class(registry: Registry, name: str, device: str,
                           raised: dict[str, str] | None = None) -> tuple[str, type]:
    """The first production implementation of `name` that can run here; eager when none can. One passed over because
    its import raised goes into `raised` as `task.implementation`, so a composite's rows can say what it lacks."""
    manifest = registry.get(name)
    for implementation in manifest.implementations.production:
        try:
            return implementation.name, load_implementation(registry.directory(name), implementation, device)
        except ImportRaised as error:
            if raised is not None:
                raised[f"{name}.{implementation.name}"] = error.why
        except ImplementationUnavailable:
            continue
    eager = manifest.implementations.eager
    return eager.name, load_implementation(registry.directory(name), eager, device)


def production_classes(registry: Registry, names: list[str], device: str) -> dict[str, type]:
    return {name: first_production_class(registry, name, device)[1] for name in names}


def construct(cls: type, case: Case, components: Mapping[str, type], device: str = "cpu") -> nn.Module:
    """Instantiate `cls` with the case's init args while `components` are bound.

    Built with `device` as the default device, so a constructor's own weight initialisation runs there: a billion
    parameters initialised on the host took minutes a case (moe_experts), for weights the reference state replaces."""
    with bind(components), torch.device(device):
        module = cls(**case.init)
    if not isinstance(module, nn.Module):
        raise TypeError(f"{cls.__name__} is not a torch.nn.Module")
    return module


def reference_state(
    manifest: Manifest, case: Case, eager: type, components: Mapping[str, type], device: str, seed: int
) -> dict[str, torch.Tensor]:
    """The weights every implementation of this case loads: seeded init, redrawn parameters, case dtype."""
    torch.manual_seed(stream_seed(seed, manifest.name, case.name, "init"))
    module = construct(eager, case, components, device).to(device)
    redraw_parameters(module, manifest, generator(device, stream_seed(seed, manifest.name, case.name, "parameters")))
    module = module.to(DTYPES[case.dtype]) if DTYPES[case.dtype].is_floating_point else module
    return {key: value.detach().clone() for key, value in module.state_dict().items()}


def load_state(module: nn.Module, state: Mapping[str, torch.Tensor], who: str) -> None:
    """Load the reference weights strictly, converting dtype to the module's own; mismatches are one line."""
    own = module.state_dict()
    missing = sorted(set(state) - set(own))
    unexpected = sorted(set(own) - set(state))
    if missing or unexpected:
        raise StateMismatch(f"{who}: state dict differs from the task's: missing {missing}, unexpected {unexpected}")
    for key, value in state.items():
        if own[key].shape != value.shape:
            raise StateMismatch(f"{who}: {key} has shape {list(own[key].shape)}, the task's is {list(value.shape)}")
    converted = {key: value.to(own[key].dtype) if value.is_floating_point() else value for key, value in state.items()}
    module.load_state_dict(converted, strict=True)


def build(
    cls: type, case: Case, components: Mapping[str, type], state: Mapping[str, torch.Tensor], device: str, who: str,
    dtype: torch.dtype | None = None,
) -> nn.Module:
    """Construct, move to device and case dtype (or `dtype`), load the reference weights, eval mode."""
    module = construct(cls, case, components, device).to(device)
    target = dtype or DTYPES[case.dtype]
    if target.is_floating_point:
        module = module.to(target)
    load_state(module, state, who)
    return module.eval()


def oracle_inputs(inputs: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Float inputs upcast to float64 (integer inputs unchanged) for the oracle."""
    return {k: v.to(torch.float64) if v.is_floating_point() else v for k, v in inputs.items()}
