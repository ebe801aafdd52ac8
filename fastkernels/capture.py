"""Capturing a module's forward in a CUDA graph, for the worker's graph timing (graphs.py) and the judge's graph
oracle (oracle_graph.py), without leaving anything behind when it cannot be done: a call that synchronises with the
host is refused before any capture begins (`without_host_sync`), and a capture that fails mid-way has the device's
random generator released (`release_generator_capture`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, TypeVar

import torch

from fastkernels.plan import one_line

Inputs = dict[str, torch.Tensor]
T = TypeVar("T")


@dataclass
class Captured:
    graph: torch.cuda.CUDAGraph
    inputs: Inputs
    output: Any


def capture(module: Callable[..., Any], static: Inputs, warmup: int = 3) -> Captured | str:
    """The module's forward captured on the `static` input tensors after `warm_up`, or why it cannot be captured (a
    module that synchronises with the host is never captured)."""
    try:
        side = warmup_stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            warm_up(module, static, warmup)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            output = module(**static)
        torch.cuda.synchronize()
        return Captured(graph, static, output)
    except HostSync as error:  # no capture began: nothing to release
        torch.cuda.synchronize()
        return str(error)
    except Exception as error:  # noqa: BLE001 - not capturable is an outcome, reported in the row
        torch.cuda.synchronize()
        release_generator_capture()
        return one_line(error)


_WARMUP_STREAMS: dict[int, torch.cuda.Stream] = {}


def warmup_stream() -> torch.cuda.Stream:
    """One stream a device, for the process's life, on which every capture's warm-up calls run: the caching allocator
    keeps a stream's freed blocks for that stream only, and cuBLAS a workspace per stream it ran on (32 MiB each on
    the H200), so a new stream a capture held one more of each. After a capture that failed mid-way, `empty_cache`
    no longer gave such blocks back (H100, 2026-12-07: eight refused calls left 3.3 GiB reserved after a failed
    capture in the same process, none without one; docs/measurement.md)."""
    device = torch.cuda.current_device()
    if device not in _WARMUP_STREAMS:
        _WARMUP_STREAMS[device] = torch.cuda.Stream()
    return _WARMUP_STREAMS[device]


def warm_up(module: Callable[..., Any], static: Inputs, calls: int) -> None:
    """`calls` calls of the module before a capture, the last under `without_host_sync` (HostSync where it syncs):
    lazy initialisation (cuBLAS handles, workspaces, first compiles) stays out of the capture, and a module that
    synchronises with the host never reaches one."""
    for done in range(1, calls + 1):
        if done == calls:
            without_host_sync(lambda: module(**static))
        else:
            module(**static)


class HostSync(RuntimeError):
    """A call synchronised with the host, so a capture of it would fail. Not tried, because a capture that fails
    leaves its private memory pool reserved until the process exits, beyond `empty_cache` (torch 2.11, the device
    image's; pytorch/pytorch#190348): on the H200 (2026-12-06) a judge whose float64 MoE oracle failed its capture on
    every case held 48 GiB from the Mixtral prefill case on, and its worker, where Liger's MoE failed too, 71 GiB
    (docs/measurement.md, the forty-fourth session, gives the command)."""


SYNC_ERROR = "synchronizing CUDA operation"  # what torch raises in sync debug mode "error"


def without_host_sync(call: Callable[[], T]) -> T:
    """`call()` under torch's sync debug mode "error" (restored after): HostSync where it synchronises with the host
    (an `.item()`, a `nonzero`, a copy to the host: what a data-dependent MoE routing does), naming the operation."""
    previous = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode("error")
    try:
        return call()
    except RuntimeError as error:
        if SYNC_ERROR in str(error):
            raise HostSync(f"synchronises with the host, so no capture was tried ({one_line(error)})") from None
        raise
    finally:
        torch.cuda.set_sync_debug_mode(previous)


def release_generator_capture() -> None:
    """Clear the device RNG's capture registration that a capture failing mid-way leaves behind.

    torch ends a capture's RNG bookkeeping only when the capture ends cleanly; after one that raised (a host sync in
    Liger's MoE, 2026-11-30 on the H200) every later random op on the device raised "Offset increment outside graph
    capture encountered unexpectedly", which killed the rest of the task's cases. A clone of the generator's state
    keeps its seed and offset and drops the registration.
    """
    generator_ = torch.cuda.default_generators[torch.cuda.current_device()]
    generator_.graphsafe_set_state(generator_.clone_state())
