"""The judge: a separate process that holds the float64 oracle and the reference outputs, so candidate code never can.

The worker process runs baselines and the candidate; it never computes a reference output. For each case the judge
builds the same weights and the same round inputs from the seeds (both are deterministic), runs the eager module in
float64 (the oracle) and in the case dtype (the template: what an output must look like), and keeps the results. The
worker sends it only what an implementation returned, as fresh plain-tensor copies made by the harness, and gets
back a verdict. Copies cross by reference, not by value (torch's multiprocessing reductions: CUDA IPC on a GPU,
shared memory on the host), so judging a 500 MB output costs no host round trip; the worker keeps each copy alive
until the verdict is back. Timed outputs picked for a recheck, and the CUDA-graph check, send their inputs too: the
judge computes those references fresh. On a GPU, an oracle whose eager call is slow (recurrent loops in float64,
all launch overhead) answers them by replaying a CUDA graph, trusted only once its replay matched the eager
references bit for bit on every correctness round; otherwise it stays eager (oracle_graph.py).

The judge is started before the candidate is imported, so nothing the candidate patches or leaves behind in the
worker reaches it: forked while the worker has not touched the GPU yet (no start-up cost), else spawned fresh. Its
one channel is a pipe; only verdicts come back, and the oracle's path and timings when asked (`oracle_info`). It
marks itself non-dumpable first (`close_memory`): otherwise its parent, the worker, could read the references out of
its memory through /proc/PID/mem (as the same user, not only as root).
"""

from __future__ import annotations

import multiprocessing
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import torch

from fastkernels.correctness import Verdict, flatten, judge
from fastkernels.oracle_graph import GRAPH_MIN_MS, KEEP_BELOW, Capture, CudaGraphOracle, Oracle
from fastkernels.processes import prctl
from fastkernels.recheck_ledger import RecheckLedger

Inputs = dict[str, torch.Tensor]
PR_SET_DUMPABLE = 4  # linux/prctl.h


@dataclass(frozen=True)
class JudgeSpec:
    """What the judge needs to rebuild a task's cases: everything is reproduced from the task files and seeds."""

    tasks_root: str
    task: str
    device: str
    seed: int
    correctness_rounds: int


class JudgeError(RuntimeError):
    """The judge could not serve a request (the eager module failed, the process died): a benchmark defect."""


def plain_leaves(output: Any) -> list[torch.Tensor] | Verdict:
    """The output's tensors as plain copies for the judge, or the verdict that it is not plain tensors.

    Checked here, in the worker, so that nothing but `torch.Tensor` data ever crosses to the judge (a tensor
    subclass could run code when unpickled).
    """
    leaves = flatten(output)
    copies = []
    for index, leaf in enumerate(leaves):
        where = f"output[{index}]" if len(leaves) > 1 else "output"
        if type(leaf) is not torch.Tensor:
            return Verdict(f"{where} is a {type(leaf).__name__}, not a plain torch.Tensor", None)
        if leaf.is_meta or leaf.layout is not torch.strided:
            return Verdict(f"{where} is not a materialised strided tensor", None)
        copies.append((_copy(leaf), str(leaf.device)))
    return [_Leaf(tensor, device) for tensor, device in copies]


def _copy(tensor: torch.Tensor) -> torch.Tensor:
    """A plain tensor the harness owns, on the same device: what the candidate returned can change no more."""
    copy = torch.empty_like(tensor, memory_format=torch.contiguous_format)
    copy.copy_(tensor.detach())
    return copy


class _Leaf:
    """A copy of one output tensor and the device it was on (the judge checks the device too)."""

    def __init__(self, tensor: torch.Tensor, device: str) -> None:
        self.tensor, self.device = tensor, device


class JudgeClient:
    """The worker's end: start the judge, then ask for verdicts. One judge serves every case of a task."""

    def __init__(self, spec: JudgeSpec) -> None:
        # fork copies the worker as it is (no candidate imported yet); a CUDA context would not survive it
        context = multiprocessing.get_context("spawn" if torch.cuda.is_initialized() else "fork")
        self._conn, child = context.Pipe(duplex=True)
        # the worker's end goes along so the judge can close its copy (a forked child inherits it): otherwise the
        # judge would never see end-of-file when the worker dies, and would outlive it
        self._process = context.Process(target=serve, args=(spec, child, self._conn), daemon=True,
                                        name=f"judge-{spec.task}")
        self._process.start()
        child.close()
        self._building = False

    def _send(self, *message: Any) -> None:
        try:
            self._conn.send(message)
        except (OSError, BrokenPipeError) as error:
            raise JudgeError(f"the judge process died (exit code {self._process.exitcode}): {error}") from None

    def _reply(self) -> Any:
        try:
            kind, payload = self._conn.recv()
        except (EOFError, OSError) as error:
            raise JudgeError(f"the judge process died (exit code {self._process.exitcode}): {error}") from None
        if kind == "error":
            raise JudgeError(payload)
        return payload

    def _ask(self, *message: Any) -> Any:
        self.settle()
        self._send(*message)
        return self._reply()

    def settle(self) -> None:
        """Wait for the case the judge is building (start_case does not), raising what building it raised."""
        if self._building:
            self._building = False
            self._reply()

    def start_case(
        self, case: str, atol: float, rtol: float, per_output: dict[int, tuple[float, float]] | None = None
    ) -> None:
        """Start building the case's weights, rounds, oracle outputs and template in the judge, and return at once:
        the judge builds while the worker builds its own modules. A failure surfaces at the next request.
        `per_output`: tolerances of outputs that have their own (Manifest.output_tolerances)."""
        self.settle()
        self._send("case", case, atol, rtol, per_output or {})
        self._building = True

    def judge_round(self, index: int, output: Any) -> Verdict:
        """An implementation's output on round `index` against that round's oracle output."""
        leaves = plain_leaves(output)
        return leaves if isinstance(leaves, Verdict) else self._ask("round", index, leaves)

    def judge_fresh(self, inputs: Inputs, output: Any) -> Verdict:
        """An output against a fresh oracle output for `inputs` (as they were before the call)."""
        leaves = plain_leaves(output)
        if isinstance(leaves, Verdict):
            return leaves
        return self._ask("fresh", {name: _copy(t) for name, t in inputs.items()}, leaves)

    def start_recheck_batch(self, count: int, wanted: int, classes: int) -> None:
        """A batch of `count` timed calls of the checked implementation, `wanted` of them rechecked, one of each of
        `classes` (recheck_ledger.py: the judge holds the seeds and the picks)."""
        self._ask("recheck_batch", count, wanted, classes)

    def issue_seed(self, index: int) -> int:
        """The seed timed call `index`'s inputs are refilled from, drawn by the judge."""
        return self._ask("recheck_seed", index)

    def decide(self, index: int) -> bool:
        """Whether timed call `index`, which has returned, is rechecked: decided by the judge now."""
        return self._ask("recheck_decide", index)

    def unchecked_seed(self) -> int:
        """The seed an unchecked call's inputs are refilled from (recheck_ledger.unchecked_seed)."""
        return self._ask("unchecked_seed")

    def unchecked_done(self) -> bool:
        """The round trip after an unchecked call (recheck_ledger.unchecked_done): False."""
        return self._ask("unchecked_done")

    def hand_in(self, index: int, output: Any) -> bool | Verdict:
        """A picked call's output, copied into the judge before anything else runs; the verdict that it is not plain
        tensors instead, or False where the judge refused it (not its last pick)."""
        leaves = plain_leaves(output)
        return leaves if isinstance(leaves, Verdict) else self._ask("recheck_hand_in", index, leaves)

    def verify_rechecks(self) -> tuple[int, int, list[tuple[int, int, Verdict]]]:
        """The batch's picks wanted, outputs taken, and (call, seed, verdict) of each taken output that failed."""
        return self._ask("recheck_verify")

    def record_sample(self, name: str, milliseconds: float) -> None:
        """A timed call's sample into the judge's record, unanswered (no round trip): it is sent the moment it is
        measured, so the samples a speedup is computed from can be checked against what was measured."""
        self.settle()
        self._send("timing_sample", name, milliseconds)

    def timing_record(self) -> dict[str, list[float]]:
        """The samples recorded since the last call, per implementation, in the order they were measured."""
        return self._ask("timing_record")

    def recheck_accounts(self, checked: bool) -> list[str]:
        """What did not add up in the timing phase that just ended (recheck_ledger.accounts): empty when every batch
        was verified and, where `checked`, every timed call of the checked implementation was asked about."""
        return self._ask("recheck_accounts", checked)

    def oracle_info(self) -> dict[str, Any]:
        """How the case's oracle answers fresh requests: `oracle_path` ("graph" or "eager"), `eager_oracle_ms`,
        `graph_oracle_ms` (None when eager) and `oracle_reason` (why it is eager; empty on the graph path)."""
        return self._ask("oracle_info")

    def close(self) -> None:
        try:
            self.settle()
        except JudgeError:
            pass
        try:
            self._conn.send(("close",))
        except (OSError, BrokenPipeError):
            pass
        self._process.join(timeout=10)
        if self._process.is_alive():
            self._process.kill()
        self._conn.close()


class _Case:
    """The judge's state for one case: oracle, template and round references. `capture` replaces the CUDA graph
    capture (tests); `threshold_ms`: the eager oracle call below which no graph is tried; `keep_below`: the share of
    the eager call a graph replay must stay under to be kept."""

    def __init__(
        self, spec: JudgeSpec, case_name: str, atol: float, rtol: float, per_output: dict[int, tuple[float, float]],
        capture: Capture | None = None, threshold_ms: float = GRAPH_MIN_MS, keep_below: float = KEEP_BELOW,
    ) -> None:
        from fastkernels.build import build, eager_classes, reference_state
        from fastkernels.implementations import load_implementation
        from fastkernels.inputs import generator, make_inputs, stream_seed
        from fastkernels.registry import Registry

        registry = Registry(Path(spec.tasks_root))
        manifest = registry.get(spec.task)
        case = manifest.case(case_name)
        eager = load_implementation(registry.directory(spec.task), manifest.implementations.eager, spec.device)
        components = eager_classes(registry, registry.closure(spec.task), spec.device)
        state = reference_state(manifest, case, eager, components, spec.device, spec.seed)
        self.atol, self.rtol, self.per_output = atol, rtol, per_output
        self.device = spec.device
        cuda = spec.device == "cuda"
        with torch.no_grad():
            module = build(eager, case, components, state, spec.device, "oracle", torch.float64)
            self.oracle = Oracle(module, capture or (CudaGraphOracle if cuda else None), threshold_ms, cuda,
                                 keep_below)
            rounds = []
            for r in range(spec.correctness_rounds):
                gen = generator(spec.device, stream_seed(spec.seed, manifest.name, case.name, "round", r))
                rounds.append(make_inputs(manifest, case, spec.device, gen))
            in_dtype = build(eager, case, components, state, spec.device, "eager")
            self.template = in_dtype(**{k: v.clone() for k, v in rounds[0].items()})
        self.references = self.oracle.start(rounds)  # eager on clones of the rounds; then a checked graph, or not
        self.manifest, self.case, self.like = manifest, case, rounds[0]  # what rechecked inputs are rebuilt from
        self.ledger = RecheckLedger()

    def _verdict(self, leaves: list[_Leaf], reference: Any) -> Verdict:
        output = [self._restore(leaf) for leaf in leaves]
        return judge(output, flatten(self.template), flatten(reference), self.atol, self.rtol, self.per_output)

    def _restore(self, leaf: _Leaf) -> torch.Tensor:
        """Back on the device the implementation returned it on; a wrong device is reported by `judge`."""
        return leaf.tensor.to(leaf.device) if leaf.device.startswith(("cuda", "cpu")) else leaf.tensor

    def round(self, index: int, leaves: list[_Leaf]) -> Verdict:
        return self._verdict(leaves, self.references[index])

    def fresh(self, inputs: Inputs, leaves: list[_Leaf]) -> Verdict:
        """Judged against the oracle on `inputs`; a graph's output is used here, before anything replays again."""
        reference = self.oracle({name: tensor.to(self.device) for name, tensor in inputs.items()})
        return self._verdict(leaves, reference)

    def hand_in(self, index: int, leaves: list[_Leaf]) -> bool:
        """A picked output, copied now: the worker's copy is its own to free (or to change) once this returns."""
        copies = [_Leaf(leaf.tensor.clone(), leaf.device) for leaf in leaves]
        if self.device == "cuda":
            torch.cuda.synchronize()
        return self.ledger.hand_in(index, copies)

    def verify_rechecks(self) -> tuple[int, int, list[tuple[int, int, Verdict]]]:
        """The batch's rechecks judged on inputs rebuilt from the seeds this process issued."""
        from fastkernels.inputs import generator, redrawn_inputs

        wanted, taken = self.ledger.close_batch()
        failures = []
        for pick in taken:
            inputs = redrawn_inputs(self.manifest, self.case, self.like, generator(self.device, pick.seed))
            verdict = self._verdict(pick.output, self.oracle(inputs))
            if not verdict.passed:
                failures.append((pick.index, pick.seed, verdict))
        return wanted, len(taken), failures

    def close(self) -> None:
        """Free the oracle's graph and its memory pool now, before the next case's `empty_cache`."""
        self.oracle.release()


def close_memory() -> bool:
    """Mark this process non-dumpable (Linux `prctl(PR_SET_DUMPABLE, 0)`), so that no other process of the same
    unprivileged user, the worker and the candidate code in it included, can read its /proc/PID/mem or attach a
    debugger to it: the round references the judge holds from a case's start are then out of their reach. Root
    (CAP_SYS_PTRACE) still reads it; the container's own non-root user is what keeps a candidate from being root.
    Returns whether the kernel took it (False off Linux)."""
    return prctl(PR_SET_DUMPABLE, 0)


def serve(spec: JudgeSpec, conn: Connection, worker_end: Connection | None = None) -> None:
    """The judge's loop: answer requests until `close` or until the worker goes away."""
    close_memory()  # before any case is built
    if worker_end is not None:
        worker_end.close()
    current: _Case | None = None
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        kind = message[0]
        if kind == "close":
            return
        if kind == "timing_sample":  # unanswered: the worker does not wait for it
            if current is not None:
                current.ledger.record_sample(message[1], message[2])
            continue
        try:
            if kind == "case":
                if current is not None:
                    current.close()
                current = None
                if spec.device == "cuda":
                    torch.cuda.empty_cache()
                current = _Case(spec, *message[1:])
                reply: Any = None
            elif current is None:
                raise JudgeError("no case started")
            elif kind == "round":
                reply = current.round(message[1], message[2])
            elif kind == "fresh":
                reply = current.fresh(message[1], message[2])
            elif kind == "recheck_batch":
                reply = current.ledger.start_batch(*message[1:])
            elif kind == "recheck_seed":
                reply = current.ledger.issue_seed(message[1])
            elif kind == "recheck_decide":
                reply = current.ledger.decide(message[1])
            elif kind == "unchecked_seed":
                reply = current.ledger.unchecked_seed()
            elif kind == "unchecked_done":
                reply = current.ledger.unchecked_done()
            elif kind == "recheck_hand_in":
                reply = current.hand_in(message[1], message[2])
            elif kind == "recheck_verify":
                reply = current.verify_rechecks()
            elif kind == "recheck_accounts":
                reply = current.ledger.accounts(message[1])
            elif kind == "timing_record":
                reply = current.ledger.timing_record()
            elif kind == "oracle_info":
                reply = current.oracle.info()
            else:
                raise JudgeError(f"unknown request {kind!r}")
            conn.send(("ok", reply))
        except Exception as error:  # noqa: BLE001 - reported to the worker as a benchmark defect
            last = traceback.format_exception_only(type(error), error)[-1].strip()
            conn.send(("error", f"judge: {last}"))
