"""The task library as a spec: every manifest loads and follows the house rules, broken manifests fail on one line,
every implementation that runs on CPU matches the float64 oracle on every CPU case, and higher-level tasks are
exactly their components (swap one and the output changes).

CPU only. Implementations marked `devices: [cuda]` or needing a library that is not installed are skipped here
(the worker checks them the same way on the GPU).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
import yaml
from torch import nn

from fastkernels.build import build, eager_classes, oracle_inputs, production_classes, reference_state
from fastkernels.composition import bind
from fastkernels.config import CONF_DIR, TASKS_DIR, Tolerance
from fastkernels.correctness import flatten, judge, unchanged
from fastkernels.implementations import (
    ImplementationUnavailable,
    ImportRaised,
    check_interface,
    import_file,
    load_implementation,
    missing_requirements,
)
from fastkernels.inputs import generator, make_inputs, stream_seed
from fastkernels.manifest import ManifestError
from fastkernels.registry import Registry

REGISTRY = Registry()
SEED = 0
ROUNDS = 3
DEFAULT_TOLERANCE = {
    dtype: Tolerance(**values)
    for dtype, values in yaml.safe_load((CONF_DIR / "harness" / "default.yaml").read_text())["tolerance"].items()
}
CPU_CASES = [
    pytest.param(name, case.name, id=f"{name}/{case.name}")
    for name in REGISTRY.names
    for case in REGISTRY.get(name).cases
    if case.tier == "cpu"
]


def clone(inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {name: tensor.clone() for name, tensor in inputs.items()}


def round_inputs(task: str, case, r: int) -> dict[str, torch.Tensor]:
    manifest = REGISTRY.get(task)
    return make_inputs(manifest, case, "cpu", generator("cpu", stream_seed(SEED, task, case.name, "round", r)))


def tolerance(task: str, dtype: str) -> Tolerance:
    return REGISTRY.get(task).tolerance.get(dtype) or DEFAULT_TOLERANCE[dtype]


def bitwise_equal(a, b) -> bool:
    return all(x.dtype == y.dtype and x.shape == y.shape and torch.equal(x, y) for x, y in zip(flatten(a), flatten(b)))


# ------------------------------------------------------------------------------------------- manifests


def test_the_library_covers_every_family_at_levels_1_and_2_and_five_at_level_3():
    """Issue 4's floor: 45 L1, 25 L2 and 10 L3 tasks; all eight families at L1 and L2, five or more at L3."""
    from fastkernels.manifest import FAMILIES

    counts = {level: [REGISTRY.get(n) for n in REGISTRY.names if REGISTRY.level_of(n) == level] for level in (1, 2, 3)}
    assert len(counts[1]) >= 45 and len(counts[2]) >= 25 and len(counts[3]) >= 10
    for level, wanted in ((1, len(FAMILIES)), (2, len(FAMILIES)), (3, 5)):
        covered = {family for manifest in counts[level] for family in manifest.families}
        assert len(covered) >= wanted, f"L{level} covers {sorted(covered)}"


def test_the_library_holds_the_tasks_of_levels_1_to_3():
    expected = {
        1: {"rms_norm", "silu_and_mul", "rotary_embedding", "linear", "causal_attention", "embedding"},
        2: {"llama_mlp", "llama_attention"},
        3: {"llama_decoder_layer"},
    }
    for level, names in expected.items():
        assert names <= {name for name in REGISTRY.names if REGISTRY.level_of(name) == level}


@pytest.mark.parametrize("task", REGISTRY.names)
def test_every_manifest_loads_and_follows_the_house_rules(task):
    manifest = REGISTRY.get(task)
    tiers = [case.tier for case in manifest.cases]
    assert tiers.count("cpu") == 2, "two small CPU cases per task"
    assert 1 <= tiers.count("gpu") <= 5, "up to five GPU cases per task"
    for case in manifest.cases:
        if case.tier == "gpu":
            assert case.dtype == "bfloat16"
            named = [arch for arch in manifest.architectures if arch.lower() in case.source.lower()]
            assert named, f"{case.name}: say which published config (one of the task's architectures) the shape is from"
    implementations = manifest.implementations
    assert implementations.production, "at least one production implementation"
    assert all(impl.provenance for impl in (implementations.eager, *implementations.production))
    if manifest.level >= 2:
        assert manifest.components, "higher levels are built from lower-level tasks"
        composed, *others = implementations.production
        assert (composed.name, composed.source) == ("composed", implementations.eager.source), \
            "a higher level's first production path is its eager module over the production components"
        assert all(impl.name.startswith("torch_compile") for impl in others), \
            "after it only Inductor over the composed module (a torch.compile of the whole block)"
        assert REGISTRY.closure(task)  # every component resolves, lower levels only (Registry.get checks levels)


@pytest.mark.parametrize("task", REGISTRY.names)
def test_every_implementation_file_has_the_interface_and_the_state_dict_of_the_eager_module(task):
    """Also the GPU-only adapters, wherever their imports work on this machine."""
    manifest = REGISTRY.get(task)
    directory = REGISTRY.directory(task)
    case = next(case for case in manifest.cases if case.tier == "cpu")
    components = eager_classes(REGISTRY, REGISTRY.closure(task), "cpu")
    eager = load_implementation(directory, manifest.implementations.eager, "cpu")
    check_interface(eager, manifest)
    with bind(components):
        keys = set(eager(**case.init).state_dict())
    for impl in manifest.implementations.production:
        if missing_requirements(impl.model_copy(update={"devices": ["cpu"]}), "cpu"):
            continue  # e.g. liger_kernel is not installed here
        path, _, class_name = impl.source.partition(":")
        cls = getattr(import_file(directory / path, f"test_tasks.{task}"), class_name)
        check_interface(cls, manifest)
        with bind(components):
            assert set(cls(**case.init).state_dict()) == keys, impl.name


# ------------------------------------------------------------------------------------- broken manifests


def write_task(root: Path, level: int, name: str, data: dict) -> Path:
    path = root / f"L{level}" / name / "task.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def valid_manifest(name: str) -> dict:
    data = yaml.safe_load((TASKS_DIR / "L1" / "silu_and_mul" / "task.yaml").read_text())
    return {**data, "name": name}


def break_missing_key(data):
    del data["mirrors"]


def break_unknown_key(data):
    data["flops_per_byte"] = 3


def break_wrong_type(data):
    data["cases"][0]["dims"]["tokens"] = "seven"


def break_mirrors_with_a_note(data):
    data["mirrors"]["symbol"] = "SiluAndMul (forward_native)"


def break_output_tolerance(data):
    data["output_tolerance"] = {1: {"bf16": {"atol": 0.1, "rtol": 0.0}}}


def break_expression(data):
    data["inputs"]["x"]["shape"] = ["tokens", "2 * width"]


@pytest.mark.parametrize("mutate, key, words", [
    (break_missing_key, "mirrors", "required"),
    (break_unknown_key, "flops_per_byte", "not permitted"),
    (break_wrong_type, "cases.0.dims.tokens", "integer"),
    (break_expression, "cases.0", "unknown name 'width'"),
    (break_mirrors_with_a_note, "mirrors.symbol", "pattern"),
    (break_output_tolerance, "output_tolerance.1.bf16", "not a dtype"),
], ids=["missing key", "unknown key", "wrong type", "bad expression", "note in mirrors", "output tolerance dtype"])
def test_a_broken_manifest_is_one_line_naming_file_and_key(tmp_path, mutate, key, words):
    data = valid_manifest("broken")
    mutate(data)
    path = write_task(tmp_path, 1, "broken", data)
    with pytest.raises(ManifestError) as error:
        Registry(tmp_path).get("broken")
    message = str(error.value)
    assert "\n" not in message
    assert str(path) in message and key in message and words in message


def test_a_component_of_the_same_level_is_refused(tmp_path):
    write_task(tmp_path, 1, "silu_and_mul", valid_manifest("silu_and_mul"))
    path = write_task(tmp_path, 1, "fused", {**valid_manifest("fused"), "components": ["silu_and_mul"]})
    with pytest.raises(ManifestError) as error:
        Registry(tmp_path).get("fused")
    message = str(error.value)
    assert "\n" not in message
    assert str(path) in message and "components" in message and "not below 1" in message


# ------------------------------------------------------------------------- correctness against the oracle


@pytest.mark.parametrize("task, case_name", CPU_CASES)
def test_every_cpu_implementation_matches_the_float64_oracle(task, case_name):
    """Eager and every production implementation available on CPU, over fresh inputs each round, 100% of elements
    within the task's tolerance; inputs the task does not let it mutate stay bitwise unchanged."""
    manifest = REGISTRY.get(task)
    case = manifest.case(case_name)
    directory = REGISTRY.directory(task)
    closure = REGISTRY.closure(task)
    eager_components = eager_classes(REGISTRY, closure, "cpu")
    production_components = production_classes(REGISTRY, closure, "cpu")
    eager = load_implementation(directory, manifest.implementations.eager, "cpu")
    implementations = {"eager": (eager, eager_components)}
    for impl in manifest.implementations.production:
        try:
            implementations[impl.name] = (load_implementation(directory, impl, "cpu"), production_components)
        except ImportRaised:  # a run would go on without it; here an adapter that does not import is a defect
            raise
        except ImplementationUnavailable:
            continue
    state = reference_state(manifest, case, eager, eager_components, "cpu", SEED)
    tol = tolerance(task, case.dtype)
    with torch.no_grad():
        oracle = build(eager, case, eager_components, state, "cpu", "oracle", torch.float64)
        template = build(eager, case, eager_components, state, "cpu", "eager")
        modules = {name: build(cls, case, comps, state, "cpu", name) for name, (cls, comps) in implementations.items()}
        for r in range(ROUNDS):
            inputs = round_inputs(task, case, r)
            reference = oracle(**oracle_inputs(clone(inputs)))
            expected = template(**clone(inputs))
            for out, want in zip(flatten(reference), flatten(expected)):
                if want.is_floating_point():
                    assert out.dtype == torch.float64, "the eager module must compute in float64 when given it"
            for name, module in modules.items():
                given = clone(inputs)
                verdict = judge(module(**given), expected, reference, tol.atol, tol.rtol,
                                manifest.output_tolerances(case.dtype))
                assert verdict.passed, f"{name}, round {r}: {verdict.reason}"
                assert not unchanged(inputs, given, manifest.mutates), f"{name}, round {r}"


# ------------------------------------------------------------------------------- the oracles themselves


def test_causal_attention_oracle_equals_unchunked_attention_in_float64():
    """The eager module chunks query rows (600 rows: two chunks of 512); PyTorch's SDPA math in float64 agrees."""
    manifest = REGISTRY.get("causal_attention")
    eager = load_implementation(REGISTRY.directory("causal_attention"), manifest.implementations.eager, "cpu")
    for case_name in ("cpu_mha_chunked", "cpu_gqa_small"):
        case = manifest.case(case_name)
        module = eager(**case.init)
        q, k, v = oracle_inputs(round_inputs("causal_attention", case, 0)).values()
        group = q.shape[2] // k.shape[2]
        expected = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2).repeat_interleave(group, 1), v.transpose(1, 2).repeat_interleave(group, 1),
            is_causal=True,
        ).transpose(1, 2)
        torch.testing.assert_close(module(q, k, v), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case_name", ["cpu_neox_gqa", "cpu_gptj_partial"])
def test_rotary_oracle_is_a_complex_rotation_of_channel_pairs(case_name):
    """Pair (i, i + rotary_dim/2) (neox) or (2i, 2i+1) (GPT-J) is multiplied by e^(i * pos * base^(-2i/rotary_dim));
    channels past rotary_dim pass through."""
    manifest = REGISTRY.get("rotary_embedding")
    case = manifest.case(case_name)
    eager = load_implementation(REGISTRY.directory("rotary_embedding"), manifest.implementations.eager, "cpu")
    module = eager(**case.init).to(torch.float64)
    positions, query, key = oracle_inputs(round_inputs("rotary_embedding", case, 0)).values()
    head, rot, half = case.init["head_size"], case.init["rotary_dim"], case.init["rotary_dim"] // 2
    inv_freq = 1.0 / (case.init["base"] ** (torch.arange(0, rot, 2, dtype=torch.float32) / rot))
    angles = torch.outer(positions.to(torch.float32), inv_freq)  # fp32 angles: the task's table
    turn = torch.polar(torch.ones_like(angles), angles).to(torch.complex128)[:, None, :]

    def rotate(x):
        x = x.view(x.shape[0], -1, head)
        pairs = (x[..., :half], x[..., half:rot]) if case.init["is_neox_style"] else (x[..., 0:rot:2], x[..., 1:rot:2])
        z = torch.complex(*pairs) * turn
        out = x.clone()
        if case.init["is_neox_style"]:
            out[..., :half], out[..., half:rot] = z.real, z.imag
        else:
            out[..., 0:rot:2], out[..., 1:rot:2] = z.real, z.imag
        return out.flatten(1)

    got_q, got_k = module(positions, query, key)
    torch.testing.assert_close(got_q, rotate(query), rtol=1e-6, atol=1e-6)  # cos/sin of fp32 angles: fp32-exact
    torch.testing.assert_close(got_k, rotate(key), rtol=1e-6, atol=1e-6)


def test_rotary_table_stays_fp32_in_a_bf16_module_and_is_the_same_in_every_implementation():
    manifest = REGISTRY.get("rotary_embedding")
    case = manifest.case("cpu_neox_gqa")
    directory = REGISTRY.directory("rotary_embedding")
    tables = []
    for impl in (manifest.implementations.eager, *manifest.implementations.production):
        if missing_requirements(impl.model_copy(update={"devices": ["cpu"]}), "cpu"):
            continue
        path, _, class_name = impl.source.partition(":")
        cls = getattr(import_file(directory / path, "test_tasks.rotary_embedding"), class_name)
        module = cls(**case.init).to(torch.bfloat16)
        assert module.cos_sin_cache.dtype == torch.float32, impl.name
        assert "cos_sin_cache" not in module.state_dict()
        assert module.to(torch.float64).cos_sin_cache.dtype == torch.float64
        tables.append(module.cos_sin_cache)
    assert all(torch.equal(table, tables[0]) for table in tables)


# ------------------------------------------------------------------------------------------- composition


class ZeroSiluAndMul(nn.Module):
    """A deliberately wrong activation: zeros of the right shape and dtype."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.new_zeros(*x.shape[:-1], x.shape[-1] // 2)


def doubled(rms_norm: type) -> type:
    """A deliberately wrong RMSNorm: the eager one, output scaled by 2 (same weights, same state dict)."""

    class RMSNormTimes2(rms_norm):
        def forward(self, x, residual=None):
            out = super().forward(x, residual)
            return out * 2 if residual is None else (out[0] * 2, out[1])

    return RMSNormTimes2


class DecoderLayerFixture:
    """llama_decoder_layer's residual CPU case: eager classes, reference weights, one input set."""

    def __init__(self) -> None:
        self.manifest = REGISTRY.get("llama_decoder_layer")
        self.case = self.manifest.case("cpu_residual_mqa")
        self.eager = load_implementation(
            REGISTRY.directory("llama_decoder_layer"), self.manifest.implementations.eager, "cpu"
        )
        self.components = eager_classes(REGISTRY, REGISTRY.closure("llama_decoder_layer"), "cpu")
        self.state = reference_state(self.manifest, self.case, self.eager, self.components, "cpu", SEED)
        self.inputs = round_inputs("llama_decoder_layer", self.case, 0)

    def run(self, components: dict[str, type], dtype: torch.dtype | None = None):
        module = build(self.eager, self.case, components, self.state, "cpu", "test", dtype)
        inputs = clone(self.inputs) if dtype is None else oracle_inputs(clone(self.inputs))
        with torch.no_grad():
            return module(**inputs)

    def sub_state(self, prefix: str) -> dict[str, torch.Tensor]:
        return {k[len(prefix) + 1:]: v for k, v in self.state.items() if k.startswith(prefix + ".")}


@pytest.fixture(scope="module")
def decoder() -> DecoderLayerFixture:
    return DecoderLayerFixture()


def test_decoder_layer_with_eager_bindings_is_exactly_its_components_run_in_turn(decoder):
    init = decoder.case.init
    with bind(decoder.components):
        parts = {
            "input_layernorm": decoder.components["rms_norm"](init["hidden_size"], eps=init["rms_norm_eps"]),
            "self_attn": decoder.components["llama_attention"](
                init["hidden_size"], init["num_heads"], init["num_kv_heads"], init["rope_theta"],
                init["max_position_embeddings"]),
            "post_attention_layernorm": decoder.components["rms_norm"](init["hidden_size"], eps=init["rms_norm_eps"]),
            "mlp": decoder.components["llama_mlp"](init["hidden_size"], init["intermediate_size"]),
        }
    for prefix, part in parts.items():
        part.to(torch.bfloat16).load_state_dict(decoder.sub_state(prefix))
    positions, hidden, residual = decoder.inputs.values()
    with torch.no_grad():
        h, residual = parts["input_layernorm"](hidden, residual)
        h = parts["self_attn"](positions, h)
        h, residual = parts["post_attention_layernorm"](h, residual)
        h = parts["mlp"](h)
    layer = decoder.run(decoder.components)
    assert bitwise_equal(layer, (h, residual))
    assert bitwise_equal(decoder.run(dict(decoder.components)), layer)  # and it is deterministic


def test_swapping_one_l1_class_changes_what_the_decoder_layer_computes(decoder):
    base = decoder.run(decoder.components)
    oracle = decoder.run(decoder.components, torch.float64)
    tol = tolerance("llama_decoder_layer", decoder.case.dtype)
    assert judge(base, base, oracle, tol.atol, tol.rtol).passed

    zero_act = decoder.run({**decoder.components, "silu_and_mul": ZeroSiluAndMul})
    assert bool((zero_act[0] == 0).all()) and not bitwise_equal(zero_act[0], base[0])  # the MLP output, two levels down
    assert bitwise_equal(zero_act[1], base[1])  # the residual does not go through the MLP
    assert not judge(zero_act, base, oracle, tol.atol, tol.rtol).passed

    double_norm = decoder.run({**decoder.components, "rms_norm": doubled(decoder.components["rms_norm"])})
    assert not bitwise_equal(double_norm[0], base[0])
    assert not judge(double_norm, base, oracle, tol.atol, tol.rtol).passed


def test_swapping_an_l1_class_into_an_l2_task_reaches_its_output():
    manifest = REGISTRY.get("llama_mlp")
    case = manifest.case("cpu_odd")
    eager = load_implementation(REGISTRY.directory("llama_mlp"), manifest.implementations.eager, "cpu")
    components = eager_classes(REGISTRY, REGISTRY.closure("llama_mlp"), "cpu")
    state = reference_state(manifest, case, eager, components, "cpu", SEED)
    inputs = round_inputs("llama_mlp", case, 0)
    with torch.no_grad():
        base = build(eager, case, components, state, "cpu", "eager")(**clone(inputs))
        wrong = build(eager, case, {**components, "silu_and_mul": ZeroSiluAndMul}, state, "cpu", "wrong")(**clone(inputs))
    assert bool((wrong == 0).all()) and base.abs().max() > 0.1


def test_cpu_cases_are_small():
    """Every CPU case's inputs and weights together stay far below what a second of CPU time handles."""
    for name in REGISTRY.names:
        manifest = REGISTRY.get(name)
        for case in manifest.cases:
            if case.tier != "cpu":
                continue
            inputs = make_inputs(manifest, case, "cpu", generator("cpu", 0))
            assert sum(t.numel() for t in inputs.values()) < 200_000, f"{name}/{case.name}"
            assert math.prod(case.dims.values() or [1]) < 100_000, f"{name}/{case.name}"
