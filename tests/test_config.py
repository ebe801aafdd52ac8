"""The Hydra application composes every config group into a validated RunConfig, or fails in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from fastkernels.config import CONF_DIR, ConfigError, RunConfig
from fastkernels.pipeline import candidate_dir


def composed(*overrides: str) -> RunConfig:
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return RunConfig.from_omegaconf(compose(config_name="config", overrides=list(overrides)))


def group_options(group: str) -> list[str]:
    return sorted(path.stem for path in (CONF_DIR / group).glob("*.yaml"))


def test_defaults_are_auto_hardware_smoke_tasks_reference_agent_production_baseline():
    config = composed()
    assert (config.hardware.name, config.tasks.name, config.agent.name, config.baseline.name) == (
        "auto", "smoke", "reference", "production")
    assert config.clocks.policy == "observe" and config.mode == "independent"


@pytest.mark.parametrize("profile", ["cpu", "h100", "h200", "a100", "b200"])
def test_every_hardware_profile_has_datasheet_figures(profile):
    hardware = composed(f"hardware={profile}").hardware
    assert hardware.source and hardware.container_image
    if profile != "cpu":
        assert hardware.peak_memory_bandwidth_gbs and hardware.peak_tflops["bfloat16"] > hardware.peak_tflops["float32"]
        assert hardware.clocks is not None and hardware.sm_count and hardware.l2_cache_mb and hardware.cuda_version


def test_every_group_option_composes():
    for group in ("tasks", "baseline", "harness", "clocks"):
        for option in group_options(group):
            assert getattr(composed(f"{group}={option}"), group) is not None
    for option in ("noop", "reference"):
        assert composed(f"agent={option}").agent.name == option


@pytest.mark.parametrize("agent", ["local", "kda", "ako", "claude_code", "codex", "drkernel"])
def test_agents_without_a_path_fail_in_one_line_naming_agent_path(agent):
    with pytest.raises(ConfigError) as error:
        composed(f"agent={agent}")
    assert "agent.path" in str(error.value) and "\n" not in str(error.value)


def test_paper_agents_carry_metadata_and_take_a_path(tmp_path):
    config = composed("agent=kda", f"agent.path={tmp_path}")
    assert config.agent.kind and config.agent.loop and candidate_dir(config) == tmp_path.resolve()


def test_a_missing_candidate_directory_is_a_one_line_error():
    with pytest.raises(ConfigError, match="agent.path=/no/such/dir"):
        candidate_dir(composed("agent=local", "agent.path=/no/such/dir"))


def test_reference_agent_resolves_to_the_shipped_candidate_set():
    assert candidate_dir(composed("agent=reference")) == (CONF_DIR.parent / "agents" / "reference").resolve()


def test_mistyped_harness_values_are_rejected_naming_the_key():
    with pytest.raises(ConfigError, match="harness.correctness_rounds"):
        composed("harness.correctness_rounds=2")
    with pytest.raises(ConfigError, match="harness.iterations"):
        composed("harness.iterations=many")


def test_unknown_keys_are_rejected():
    with pytest.raises(ConfigError, match="harness.warmpu"):
        composed("+harness.warmpu=3")


def test_task_selection_overrides_compose():
    config = composed("tasks=level1", "tasks.include=[rms_norm]", "tasks.exclude=[]", "tasks.categories=[normalization]")
    assert config.tasks.include == ["rms_norm"] and config.tasks.categories == ["normalization"]


def test_the_iteration_cap_is_read_per_device_unless_given():
    harness = composed().harness
    assert harness.max_iterations == "auto"
    assert (harness.iteration_cap("cuda"), harness.iteration_cap("cpu")) == (3200, 200)
    assert composed("harness.max_iterations=24").harness.iteration_cap("cuda") == 24


def test_an_iteration_cap_below_three_is_a_one_line_error():
    with pytest.raises(ConfigError, match="max_iterations"):
        composed("harness.max_iterations=2")


def test_a_largest_launch_pad_below_the_first_is_a_one_line_error():
    with pytest.raises(ConfigError, match="launch_pad_max_us .100. must be at least launch_pad_us .200.") as error:
        composed("harness.launch_pad_us=200", "harness.launch_pad_max_us=100")
    assert "\n" not in str(error.value)
