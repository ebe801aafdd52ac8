"""The judge's float64 oracle, run eagerly or replayed from a CUDA graph.

Why: the recurrent tasks' oracles (selective scan, gated delta rule, GLA, retention) are PyTorch loops over thousands
of time steps, mostly host launch overhead in float64, and the timed calls' rechecks ask for one call each (5-11 s a
case). A graph replays the same kernels without the launches: on the H200 (2026-11-30, judge alone on the GPU) eager
-> graph per call was 390 -> 83 ms (selective_scan jamba_v01_prefill_1x4096), 93 -> 23 (mamba_130m_prefill_8x1024),
141 -> 45 (rwkv7_wkv), 145 -> 88 (gated_delta_rule), 168 -> 123 (mamba2_ssd), 167 -> 145 (gla_chunk), 300 -> 280
(retention: its float64 work dominates), each graph bitwise equal to eager. A graph is trusted only after its replay
matched the eager references bit for bit on every correctness round. An oracle faster than `GRAPH_MIN_MS`, one
whose host launches take under `LAUNCH_BOUND_SHARE` of its call (the device is the bottleneck: a graph cannot
shorten it and its capture costs a few calls; llama-sized float64 layers), one that cannot be captured (one that
synchronises with the host is not even tried: `capture.HostSync`), one whose replay differs anywhere, and one whose
replay is not under `KEEP_BELOW` of the eager call stay eager.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Protocol

import torch

from fastkernels.build import oracle_inputs
from fastkernels.correctness import flatten
from fastkernels.capture import HostSync, release_generator_capture, warm_up, warmup_stream
from fastkernels.plan import one_line

Inputs = dict[str, torch.Tensor]
# below this median eager call, a graph saves too little to be worth its setup (a warm-up and a capture, about two
# eager calls, and one check replay a round)
GRAPH_MIN_MS = 2.0
# a graph is tried only where the host spends at least this share of the eager call launching (the rest is the
# device catching up after the last launch)
LAUNCH_BOUND_SHARE = 0.5
# and kept only where its replay takes less than this share of the eager call
KEEP_BELOW = 0.8
# side-stream calls before the capture, so lazy initialisation (cuBLAS handles, workspaces) is not captured; the
# correctness rounds already ran the module on the current stream
WARMUP = 1
_INTS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


class Replayable(Protocol):
    """A captured oracle forward: `replay` recomputes it from its static inputs into the same output tensors."""

    def replay(self) -> Any: ...

    def release(self) -> None: ...


Capture = Callable[[Callable[..., Any], Inputs], Replayable]


class CudaGraphOracle:
    """The oracle's forward captured in a CUDA graph on `static` (tensors a replay reads by address)."""

    def __init__(self, module: Callable[..., Any], static: Inputs, warmup: int = WARMUP) -> None:
        try:
            side = warmup_stream()  # one for the judge's life
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                warm_up(module, static, warmup)
            torch.cuda.current_stream().wait_stream(side)
            torch.cuda.synchronize()
            torch.cuda.empty_cache()  # the warmup's blocks, so they and the graph's pool are not held at once
            self.graph: torch.cuda.CUDAGraph | None = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.output: Any = module(**static)
            torch.cuda.synchronize()
        except Exception as error:
            torch.cuda.synchronize()
            if not isinstance(error, HostSync):  # no capture began
                release_generator_capture()  # a capture that raised leaves the device RNG registered to it
            raise

    def replay(self) -> Any:
        assert self.graph is not None, "replay of a released graph"
        self.graph.replay()
        return self.output

    def release(self) -> None:
        """Free the graph and its memory pool: the outputs (the pool's tensors) go first, then the graph."""
        self.output = None
        if self.graph is not None:
            self.graph.reset()
            self.graph = None


def bitwise_equal(a: Any, b: Any) -> bool:
    """Same shape, dtype, device and bits (NaN equals NaN of the same bits, -0.0 differs from 0.0)."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return a is None and b is None
    if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        return False
    if a.is_complex():
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    if a.is_floating_point():
        a, b = a.view(_INTS[a.element_size()]), b.view(_INTS[b.element_size()])
    return torch.equal(a, b)


class Oracle:
    """The float64 oracle as the judge runs it. `path` is "graph" or "eager"; `reason` says why it is eager;
    `eager_ms` is the median eager call over the correctness rounds, `graph_ms` the median self-check replay."""

    def __init__(self, module: Callable[..., Any], capture: Capture | None, threshold_ms: float = GRAPH_MIN_MS,
                 cuda: bool = False, keep_below: float = KEEP_BELOW) -> None:
        self.module, self.capture, self.threshold_ms, self.cuda = module, capture, threshold_ms, cuda
        self.keep_below = keep_below
        self.path, self.reason = "eager", "not started"
        self.eager_ms: float | None = None
        self.launch_share: float | None = None  # median share of an eager call the host spent launching it
        self.graph_ms: float | None = None
        self._graph: Replayable | None = None
        self._static: Inputs = {}

    def start(self, rounds: list[Inputs]) -> list[Any]:
        """The rounds' references (eager, on clones), timed; then a graph if it pays and matches them exactly."""
        references, times, shares = [], [], []
        with torch.no_grad():
            for inputs in rounds:
                given = oracle_inputs({k: v.clone() for k, v in inputs.items()})
                elapsed, launched, output = self._timed(lambda: self.module(**given))
                references.append(output)
                times.append(elapsed)
                shares.append(launched / elapsed if elapsed > 0 else 1.0)
            self.eager_ms, self.launch_share = statistics.median(times), statistics.median(shares)
            self.reason = self._try_graph(rounds, references)
        if self.cuda:  # a discarded graph's pool, or the eager calls' blocks the graph path no longer needs
            torch.cuda.empty_cache()
        return references

    def _try_graph(self, rounds: list[Inputs], references: list[Any]) -> str:
        """Capture and self-check; the reason to stay eager, or "" once the graph path is taken."""
        if self.capture is None:
            return "CUDA graphs only on a CUDA device"
        assert self.eager_ms is not None
        if self.eager_ms < self.threshold_ms:
            return f"eager oracle {self.eager_ms:.2f} ms, under {self.threshold_ms} ms"
        assert self.launch_share is not None
        if self.launch_share < LAUNCH_BOUND_SHARE:
            return (f"eager oracle {self.eager_ms:.2f} ms is device bound (launching it takes {self.launch_share:.0%}"
                    " of the call): a graph would not shorten it")
        static = oracle_inputs({k: v.clone() for k, v in rounds[0].items()})
        try:
            graph = self.capture(self.module, static)
        except HostSync as error:
            return f"not captured: the oracle {error}"
        except Exception as error:  # noqa: BLE001 - not capturable: the oracle stays eager
            return f"capture failed: {one_line(error)}"
        times = []
        for index, (inputs, reference) in enumerate(zip(rounds, references)):
            try:
                elapsed, _, output = self._timed(lambda: self._replay(graph, static, oracle_inputs(inputs)))
                same = [bitwise_equal(a, b) for a, b in zip(flatten(output), flatten(reference), strict=True)]
            except Exception as error:  # noqa: BLE001 - a replay that fails is not trusted
                graph.release()
                return f"replay of round {index} failed: {one_line(error)}"
            if not all(same):
                graph.release()
                return f"graph replay of round {index} differs from eager in output[{same.index(False)}]"
            times.append(elapsed)
        self.graph_ms = statistics.median(times)
        if self.graph_ms >= self.keep_below * self.eager_ms:
            graph.release()
            return (f"graph replay {self.graph_ms:.2f} ms is not under {self.keep_below:g} x the eager"
                    f" {self.eager_ms:.2f} ms")
        self._graph, self._static, self.path = graph, static, "graph"
        return ""

    def __call__(self, inputs: Inputs) -> Any:
        """The oracle's output for `inputs` (on the oracle's device). From the graph, it lives in the graph's
        tensors until the next replay: use it before the next call."""
        given = oracle_inputs(inputs)
        with torch.no_grad():
            if self._graph is None or not _fits(given, self._static):
                return self.module(**given)
            return self._replay(self._graph, self._static, given)

    @staticmethod
    def _replay(graph: Replayable, static: Inputs, given: Inputs) -> Any:
        for name, tensor in given.items():
            static[name].copy_(tensor)
        return graph.replay()

    def _timed(self, call: Callable[[], Any]) -> tuple[float, float, Any]:
        """(milliseconds to the device's end, milliseconds until `call` returned on the host, result) of `call`,
        the device synchronised on both sides."""
        if self.cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        result = call()
        launched = time.perf_counter()
        if self.cuda:
            torch.cuda.synchronize()
        return 1e3 * (time.perf_counter() - start), 1e3 * (launched - start), result

    def info(self) -> dict[str, Any]:
        return {"oracle_path": self.path, "eager_oracle_ms": self.eager_ms, "graph_oracle_ms": self.graph_ms,
                "launch_share": self.launch_share, "oracle_reason": self.reason}

    def release(self) -> None:
        """Free the graph (if any) and its static inputs; the oracle is eager from here on."""
        if self._graph is not None:
            self._graph.release()
            self.reason = "graph released"
        self._graph, self._static, self.path = None, {}, "eager"


def _fits(given: Inputs, static: Inputs) -> bool:
    """Whether `given` can be written into the graph's static inputs (same names, shapes and dtypes)."""
    return given.keys() == static.keys() and all(
        t.shape == static[k].shape and t.dtype == static[k].dtype for k, t in given.items())

