"""The judge process holds the oracle: it rebuilds a case from the seeds, judges what the worker sends, and only
verdicts come back. Anything but plain tensors is refused before it crosses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from fastkernels.build import build, eager_classes, reference_state
from fastkernels.config import TASKS_DIR
from fastkernels.implementations import load_implementation
from fastkernels.inputs import generator, make_inputs, stream_seed
from fastkernels.judge import JudgeClient, JudgeError, JudgeSpec
from fastkernels.registry import Registry

SEED = 0
REGISTRY = Registry(TASKS_DIR)


@pytest.fixture(scope="module")
def judge():
    client = JudgeClient(JudgeSpec(str(TASKS_DIR), "rms_norm", "cpu", SEED, correctness_rounds=3))
    client.start_case("cpu_residual_odd", atol=1e-2, rtol=1.6e-2)
    client.settle()
    yield client
    client.close()


def round_inputs(r: int) -> dict[str, torch.Tensor]:
    """What the worker draws for round r: the same seeds the judge uses."""
    manifest = REGISTRY.get("rms_norm")
    case = manifest.case("cpu_residual_odd")
    return make_inputs(manifest, case, "cpu", generator("cpu", stream_seed(SEED, "rms_norm", case.name, "round", r)))


def eager_module() -> torch.nn.Module:
    manifest = REGISTRY.get("rms_norm")
    case = manifest.case("cpu_residual_odd")
    cls = load_implementation(REGISTRY.directory("rms_norm"), manifest.implementations.eager, "cpu")
    state = reference_state(manifest, case, cls, eager_classes(REGISTRY, [], "cpu"), "cpu", SEED)
    return build(cls, case, {}, state, "cpu", "test")


def test_a_correct_output_passes_on_its_round_and_fails_on_another(judge):
    module = eager_module()
    output = module(**round_inputs(1))
    assert judge.judge_round(1, output).passed
    assert not judge.judge_round(2, output).passed


def test_a_wrong_value_fails_with_the_place_it_is_wrong(judge):
    normed, residual = eager_module()(**round_inputs(0))
    normed[3, 7] += 1.0
    verdict = judge.judge_round(0, (normed, residual))
    assert not verdict.passed and "output[0]" in verdict.reason


def test_fresh_inputs_get_a_fresh_reference(judge):
    inputs = {name: torch.randn_like(t, dtype=torch.float32).to(t.dtype) for name, t in round_inputs(0).items()}
    output = eager_module()(**{k: v.clone() for k, v in inputs.items()})
    assert judge.judge_fresh(inputs, output).passed
    assert not judge.judge_fresh(round_inputs(0), output).passed


def test_the_oracle_says_how_it_runs(judge):
    info = judge.oracle_info()
    assert info["oracle_path"] == "eager" and info["graph_oracle_ms"] is None and info["eager_oracle_ms"] > 0
    assert info["oracle_reason"] == "CUDA graphs only on a CUDA device"


def test_a_tensor_subclass_is_refused_before_it_crosses(judge):
    class Lazy(torch.Tensor):
        def __reduce_ex__(self, protocol):  # would run in the judge if it were ever unpickled there
            raise AssertionError("crossed to the judge")

    normed, residual = eager_module()(**round_inputs(0))
    verdict = judge.judge_round(0, (normed.as_subclass(Lazy), residual))
    assert not verdict.passed and "not a plain torch.Tensor" in verdict.reason


def test_an_unknown_case_is_a_judge_error_and_the_judge_keeps_serving(judge):
    judge.start_case("nope", 1e-2, 1e-2)  # returns at once: the judge builds while the worker does
    with pytest.raises(JudgeError, match="no case 'nope'"):
        judge.settle()
    with pytest.raises(JudgeError, match="no case started"):
        judge.judge_round(0, torch.zeros(1))
    judge.start_case("cpu_residual_odd", atol=1e-2, rtol=1.6e-2)


def test_a_dead_judge_is_reported_not_waited_on():
    client = JudgeClient(JudgeSpec(str(TASKS_DIR), "rms_norm", "cpu", SEED, correctness_rounds=1))
    client._process.kill()
    client._process.join()
    with pytest.raises(JudgeError, match="died"):
        client.start_case("cpu_small", 1e-2, 1e-2)
        client.settle()
    client.close()


@pytest.mark.skipif(not hasattr(os, "fork") or os.geteuid() != 0 or not Path("/proc/self/mem").exists(),
                    reason="drops to an unprivileged user, which needs root and Linux's /proc")
def test_the_judges_memory_is_closed_to_the_worker_running_as_the_same_unprivileged_user():
    # the round references sit in the judge's memory from the start of a case; as the same non-root user (the
    # container's), the worker and the candidate code in it are its parent, and Linux lets a parent read a child's
    # /proc/PID/mem unless the child marked itself non-dumpable
    import ctypes
    import multiprocessing.popen_fork  # noqa: F401 - imported while files are still readable (see below)

    PR_SET_DUMPABLE = 4

    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # the worker's stand-in, as `nobody`
        try:
            os.close(read_end)
            os.setgid(65534)
            os.setuid(65534)
            # changing user made this process non-dumpable; a process started as that user (the container's) is not
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
            client = JudgeClient(JudgeSpec(str(TASKS_DIR), "rms_norm", "cpu", SEED, correctness_rounds=1))
            try:
                client.oracle_info()  # any answer: the judge is in its loop, past its own start-up
            except JudgeError:
                pass
            try:
                open(f"/proc/{client._process.pid}/mem", "rb").close()
                verdict = b"readable"
            except PermissionError:
                verdict = b"refused"
            client.close()
            os.write(write_end, verdict)
        except BaseException as error:  # noqa: BLE001 - reported to the test through the pipe
            os.write(write_end, f"failed: {error!r}".encode()[:200])
        finally:
            os._exit(0)
    os.close(write_end)
    os.waitpid(child, 0)
    assert os.read(read_end, 256) == b"refused"


def test_rechecked_outputs_are_judged_on_inputs_the_judge_rebuilds_from_the_seeds_it_issued(judge):
    from fastkernels.inputs import refill_inputs

    manifest = REGISTRY.get("rms_norm")
    case = manifest.case("cpu_residual_odd")
    module, inputs = eager_module(), round_inputs(0)
    judge.start_recheck_batch(4, 4, 0)  # every call picked
    first = None
    for index in range(4):
        refill_inputs(manifest, case, inputs, generator("cpu", judge.issue_seed(index)))
        output = module(**{k: v.clone() for k, v in inputs.items()})
        first = first or output
        assert judge.decide(index) and not judge.decide(index)  # each call's decision is answered once
        # calls 0 and 1 hand in their own outputs; 2 and 3 the first call's, as a candidate that skips work would
        assert judge.hand_in(index, output if index < 2 else first) is True
        assert judge.hand_in(index, output) is False  # one output a pick
    wanted, taken, failures = judge.verify_rechecks()
    assert (wanted, taken) == (4, 4) and [index for index, _, _ in failures] == [2, 3]
    assert all(not verdict.passed for _, _, verdict in failures)


def test_an_unchecked_call_gets_a_fresh_seed_and_a_no_from_the_judge_and_leaves_the_batch_alone(judge):
    judge.start_recheck_batch(1, 1, 0)
    seeds = {judge.unchecked_seed() for _ in range(3)}  # the baseline's calls: fresh entropy, no record
    assert len(seeds) == 3 and all(isinstance(seed, int) for seed in seeds)
    assert judge.unchecked_done() is False
    judge.issue_seed(0)
    assert judge.unchecked_seed() and judge.unchecked_done() is False  # between the checked call's two questions
    assert judge.decide(0)  # the one checked call, wanted once, is still the one decided
    assert judge.hand_in(0, torch.zeros(1)) is True
    assert judge.verify_rechecks()[:2] == (1, 1)


def test_a_call_not_issued_by_the_judge_is_never_picked_and_the_count_falls_short(judge):
    judge.start_recheck_batch(2, 2, 0)
    judge.issue_seed(0)
    assert not judge.decide(1)  # out of order: the seed issued was call 0's
    assert not judge.decide(0)  # the issue was voided by the ask above
    assert judge.verify_rechecks()[:2] == (2, 0)


def test_timing_samples_sent_unanswered_between_requests_come_back_in_the_order_they_were_measured(judge):
    # one-way messages on the request pipe: the answers to the requests around them stay in step
    judge.timing_record()  # whatever an earlier test left
    judge.record_sample("baseline", 0.5)
    judge.start_recheck_batch(1, 0, 0)
    judge.record_sample("candidate", 0.25)
    assert isinstance(judge.issue_seed(0), int)
    judge.record_sample("baseline", 0.75)
    assert judge.decide(0) is False
    assert judge.timing_record() == {"baseline": [0.5, 0.75], "candidate": [0.25]}
    assert judge.timing_record() == {}  # each record starts afresh
    judge.verify_rechecks()
    judge.recheck_accounts(False)


@pytest.mark.parametrize("task", ["moe_experts", "llama_mlp", "mamba_mixer"])
def test_a_finished_case_frees_every_tensor_it_held_without_the_garbage_collector(task):
    """The judge empties the allocator's cache at a case switch without collecting first, which frees a case's
    float64 oracle, references and rounds only if nothing holds them in a reference cycle. (Checked for the eager
    oracle; the CUDA graph oracle's pool is released by `close` itself.)"""
    import gc

    from fastkernels.judge import _Case

    def live_tensor_bytes() -> int:
        return sum(o.numel() * o.element_size() for o in gc.get_objects() if isinstance(o, torch.Tensor))

    manifest = Registry(Path(TASKS_DIR)).get(task)
    case_name = next(c.name for c in manifest.cases if c.tier == "cpu")
    gc.collect()
    before = live_tensor_bytes()
    gc.disable()
    try:
        case = _Case(JudgeSpec(str(TASKS_DIR), task, "cpu", 0, 3), case_name, 1e-2, 1.6e-2, {})
        assert live_tensor_bytes() > before  # it holds its oracle's weights and the rounds' references
        case.close()
        del case
        assert live_tensor_bytes() == before
    finally:
        gc.enable()
