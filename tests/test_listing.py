"""`python -m fastkernels list`: the task library by level and family, as text for people and JSON for machines.

Every task appears once, under its level, with the library it mirrors; `--json` carries the same fields; `--level`
and `--category` narrow the list; a broken manifest is one line on stderr and exit status 2, as for a run.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fastkernels import listing
from fastkernels.registry import Registry

ROOT = Path(__file__).resolve().parent.parent
REGISTRY = Registry()
FIELDS = ["name", "level", "family", "families", "categories", "architectures", "mirrors", "cases", "components", "production"]
PRODUCTION_FIELDS = ["name", "source", "provenance", "requires", "devices", "importable", "missing"]


def run_list(capsys, *argv: str) -> tuple[int, str, str]:
    code = listing.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def listed_json(capsys, *argv: str) -> list[dict]:
    code, out, err = run_list(capsys, "--json", *argv)
    assert code == 0, err
    return json.loads(out)


def level_of_each_line(text: str) -> dict[str, tuple[int, str]]:
    """task name -> (level heading it sits under, its line), for every task line (indented four) of the text."""
    found: dict[str, tuple[int, str]] = {}
    level = None
    for line in text.splitlines():
        if line.startswith("L") and line.split()[0][1:].isdigit():
            level = int(line.split()[0][1:])
            continue
        first = line.split()[0] if line.startswith("    ") else ""
        if first in REGISTRY.names:
            assert first not in found, f"{first} listed twice"
            found[first] = (level, line)
    return found


def test_text_names_every_task_once_under_its_level_with_the_library_it_mirrors(capsys):
    code, out, err = run_list(capsys)
    assert code == 0 and err == ""
    lines = level_of_each_line(out)
    assert set(lines) == set(REGISTRY.names)
    for name in REGISTRY.names:
        manifest = REGISTRY.get(name)
        level, line = lines[name]
        assert level == manifest.level
        assert manifest.mirrors.library in line.split()
        assert f"{manifest.mirrors.module}.{manifest.mirrors.symbol}" in line
        for architecture in manifest.architectures:
            assert architecture in line
        for implementation in manifest.implementations.production:
            assert line.count(f"{implementation.name} (") >= 1


def test_text_groups_each_level_by_family_and_aligns_the_columns(capsys):
    _, out, _ = run_list(capsys)
    lines = out.splitlines()
    rms = lines.index(next(line for line in lines if line.startswith("    rms_norm ")))
    heading = next(line for line in reversed(lines[:rms]) if not line.startswith("    "))
    assert heading.strip() == REGISTRY.get("rms_norm").families[0]
    # Within a level the header and every task line start each column at the same offset.
    block = lines[lines.index(next(line for line in lines if line.startswith("L1 "))) + 1:]
    block = block[: block.index("")] if "" in block else block
    header = block[0]
    rows = [line for line in block[1:] if line.startswith("    ") and line.split()[0] in REGISTRY.names]
    assert header.split()[0] == "task" and len(rows) == len([n for n in REGISTRY.names if REGISTRY.level_of(n) == 1])

    def mirrors_at(line: str) -> int:
        mirrors = REGISTRY.get(line.split()[0]).mirrors
        return line.index(f" {mirrors.module}.{mirrors.symbol}") + 1

    assert {mirrors_at(line) for line in rows} == {header.index("mirrors")}


def test_text_shows_production_provenance_and_requirements_in_order(capsys):
    _, out, _ = run_list(capsys)
    line = level_of_each_line(out)["rms_norm"][1]
    assert "liger (Liger-Kernel LigerRMSNorm (Triton); needs liger_kernel, cuda)" in line
    assert line.index("liger (") < line.index("torch_fused (torch.nn.functional.rms_norm)")
    marked = "[missing liger_kernel]" in line
    assert marked == (importlib.util.find_spec("liger_kernel") is None)


def test_level_2_and_up_lines_name_their_components(capsys):
    lines = level_of_each_line(run_list(capsys)[1])
    for name in REGISTRY.names:
        components = REGISTRY.get(name).components
        if components:
            assert ", ".join(components) in lines[name][1]


def test_json_has_one_entry_per_task_with_every_field_in_a_stable_order(capsys):
    entries = listed_json(capsys)
    assert [entry["name"] for entry in entries] == sorted(
        REGISTRY.names, key=lambda n: (REGISTRY.level_of(n), REGISTRY.get(n).families[0], n)
    )
    for entry in entries:
        assert list(entry) == FIELDS
        manifest = REGISTRY.get(entry["name"])
        assert entry["level"] == manifest.level
        assert entry["family"] == manifest.families[0]
        assert entry["families"] == manifest.families
        assert entry["categories"] == manifest.categories
        assert entry["architectures"] == manifest.architectures
        assert entry["mirrors"] == manifest.mirrors.model_dump()
        assert entry["cases"] == {
            "cpu": sum(case.tier == "cpu" for case in manifest.cases),
            "gpu": sum(case.tier == "gpu" for case in manifest.cases),
        }
        assert entry["components"] == manifest.components
        assert [p["name"] for p in entry["production"]] == [p.name for p in manifest.implementations.production]
        for produced, implementation in zip(entry["production"], manifest.implementations.production):
            assert list(produced) == PRODUCTION_FIELDS
            assert produced["requires"] == implementation.requires
            assert produced["devices"] == implementation.devices
            missing = [m for m in implementation.requires if importlib.util.find_spec(m) is None]
            assert produced["missing"] == missing and produced["importable"] == (not missing)
            assert produced["provenance"] and "\n" not in produced["provenance"]


def test_level_2_lists_only_level_2_tasks_as_json_and_as_text(capsys):
    level2 = [name for name in REGISTRY.names if REGISTRY.level_of(name) == 2]
    assert level2
    assert sorted(entry["name"] for entry in listed_json(capsys, "--level", "2")) == level2
    code, out, _ = run_list(capsys, "--level", "2")
    assert code == 0
    assert set(level_of_each_line(out)) == set(level2)
    assert [line.split()[0] for line in out.splitlines() if line.startswith("L")] == ["L2"]


def test_levels_can_be_repeated_or_given_as_a_list(capsys):
    wanted = sorted(name for name in REGISTRY.names if REGISTRY.level_of(name) in (1, 3))
    for argv in (["--level", "1", "--level", "3"], ["--level", "1,3"], ["--level", "1", "3"]):
        assert sorted(entry["name"] for entry in listed_json(capsys, *argv)) == wanted, argv


def test_a_level_outside_1_to_4_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        listing.main(["--level", "7"])
    assert exit_info.value.code == 2
    assert "not a level" in capsys.readouterr().err


def test_category_keeps_tasks_with_that_category_anywhere_in_their_list(capsys):
    gemm = sorted(name for name in REGISTRY.names if "gemm" in REGISTRY.get(name).categories)
    assert len(gemm) > 1  # linear (category gemm) and L2 blocks that list gemm second
    assert sorted(entry["name"] for entry in listed_json(capsys, "--category", "gemm")) == gemm
    both = listed_json(capsys, "--category", "gemm", "--level", "2")
    assert {entry["name"] for entry in both} == {n for n in gemm if REGISTRY.level_of(n) == 2}


def test_an_unknown_category_is_one_line_naming_the_known_ones(capsys):
    code, out, err = run_list(capsys, "--category", "gem")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "'gem'" in err and "gemm" in err


def test_a_broken_manifest_is_one_line_on_stderr_and_exit_status_2(capsys, tmp_path):
    shutil.copytree(ROOT / "tasks" / "L1" / "rms_norm", tmp_path / "L1" / "rms_norm")
    assert listing.main(["--tasks-root", str(tmp_path)]) == 0
    capsys.readouterr()
    broken = tmp_path / "L1" / "broken"
    broken.mkdir()
    (broken / "task.yaml").write_text("name: broken\nlevel: 1\ncategories: [x]\nmirrors: nope\n")
    for argv in ([], ["--json"], ["--level", "2"]):
        code, out, err = run_list(capsys, "--tasks-root", str(tmp_path), *argv)
        assert code == 2 and out == ""
        assert len(err.strip().splitlines()) == 1
        assert err.startswith("fastkernels: error: ") and str(broken / "task.yaml") in err


def test_a_component_that_is_not_a_task_is_one_line_and_exit_status_2(capsys, tmp_path):
    shutil.copytree(ROOT / "tasks" / "L2" / "llama_mlp", tmp_path / "L2" / "llama_mlp")
    code, out, err = run_list(capsys, "--tasks-root", str(tmp_path))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "unknown task 'linear'" in err


CLI_PATCHED = "listing" in (ROOT / "fastkernels" / "cli.py").read_text()


@pytest.mark.skipif(not CLI_PATCHED, reason="fastkernels/cli.py does not dispatch `list` yet")
def test_python_m_fastkernels_list_runs_before_hydra_sees_argv(tmp_path):
    command = [sys.executable, "-m", "fastkernels", "list", "--json", "--level", "2"]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    names = [entry["name"] for entry in json.loads(result.stdout)]
    assert sorted(names) == sorted(name for name in REGISTRY.names if REGISTRY.level_of(name) == 2)
    assert not (tmp_path / "outputs").exists()  # Hydra never ran: no run directory was made
    text = subprocess.run([sys.executable, "-m", "fastkernels", "list"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert text.returncode == 0 and set(level_of_each_line(text.stdout)) == set(REGISTRY.names)
