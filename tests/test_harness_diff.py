"""scripts/harness_diff.py: whether a tree's harness differs from a revision's in what runs or only in its prose."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import harness_diff  # noqa: E402

MODULE = '''"""What the module is for."""

import os


def pad(us: float) -> float:
    """Why the pad is what it is."""
    # a comment
    return us * 2.0
'''
CONFIG = "# @package harness\n# how many captures\ngraph_captures: 8\ntarget_ci: 0.01\n"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with one file of each kind under HARNESS_PATHS, committed and tagged `measured`."""
    files = {"fastkernels/timing.py": MODULE, "conf/harness/default.yaml": CONFIG,
             "pyproject.toml": '[project]\nname = "fk"  # the name\nversion = "1"\n',
             "tasks/L1/softmax/README.md": "Softmax over the last dim.\n",
             "scripts/device-session.sh": "#!/usr/bin/env bash\n# steps\necho noop\n"}
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "measured")
    _git(tmp_path, "tag", "measured")
    return tmp_path


def _edit(repo: Path, relative: str, old: str, new: str) -> None:
    path = repo / relative
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new))


def test_an_unchanged_tree_has_no_differences(repo):
    assert harness_diff.differences(repo, "measured") == {}
    assert harness_diff.main(["measured", "--root", str(repo)]) == 0


def test_docstrings_comments_and_blank_lines_are_prose(repo):
    _edit(repo, "fastkernels/timing.py", '"""Why the pad is what it is."""',
          '"""A corrected reason,\n    on two lines."""')
    _edit(repo, "fastkernels/timing.py", "# a comment", "# a reworded comment\n\n")
    _edit(repo, "fastkernels/timing.py", '"""What the module is for."""', '"""What the module is really for."""')
    _edit(repo, "conf/harness/default.yaml", "# how many captures", "# how many captures,\n# reflowed")
    _edit(repo, "pyproject.toml", "# the name", "# the package's name")
    _edit(repo, "tasks/L1/softmax/README.md", "Softmax", "A softmax")
    assert harness_diff.differences(repo, "measured") == {
        "conf/harness/default.yaml": "prose", "fastkernels/timing.py": "prose", "pyproject.toml": "prose",
        "tasks/L1/softmax/README.md": "prose"}
    assert harness_diff.main(["measured", "--root", str(repo)]) == 0


@pytest.mark.parametrize("relative, old, new", [
    ("fastkernels/timing.py", "us * 2.0", "us * 2.5"),
    ("fastkernels/timing.py", "import os", "import os, sys"),
    ("conf/harness/default.yaml", "graph_captures: 8", "graph_captures: 16"),
    ("conf/harness/default.yaml", "# @package harness", "# @package _global_"),
    ("pyproject.toml", 'version = "1"', 'version = "2"'),
    ("scripts/device-session.sh", "# steps", "# the steps"),
    ("fastkernels/timing.py", "return us * 2.0", "return (us * 2.0"),
])
def test_a_change_in_what_runs_is_code(repo, relative, old, new, capsys):
    _edit(repo, relative, old, new)
    assert harness_diff.differences(repo, "measured") == {relative: "code"}
    assert harness_diff.main(["measured", "--root", str(repo)]) == 1
    assert "do not stand for this tree" in capsys.readouterr().out


MANIFEST = """name: softmax
description: Row softmax.
implementations:
  eager: {name: eager, source: "softmax.py:Softmax", provenance: "torch.softmax"}
  production:
    - {name: torch_native, source: "native.py:Softmax", provenance: "torch.softmax in fp32"}
cases:
  - {name: llama31_8b_logits_1, tier: gpu, init: {}, dims: {tokens: 1, n: 128256}, source: "Llama-3.1-8B vocab"}
"""


@pytest.mark.parametrize("old, new, kind", [
    ("Row softmax.", "Row softmax, over the last dim.", "prose"),
    ('provenance: "torch.softmax in fp32"', 'provenance: "torch.softmax, computed in fp32"', "prose"),
    ('source: "Llama-3.1-8B vocab"', 'source: "Meta Llama-3.1-8B config: vocab_size 128256"', "prose"),
    ('source: "native.py:Softmax"', 'source: "native.py:FastSoftmax"', "code"),
    ("n: 128256", "n: 128000", "code"),
])
def test_a_manifests_description_case_sources_and_provenance_are_prose(repo, old, new, kind):
    relative = "tasks/L1/softmax/task.yaml"
    (repo / relative).write_text(MANIFEST)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a manifest")
    _git(repo, "tag", "with-manifest")
    _edit(repo, relative, old, new)
    assert harness_diff.differences(repo, "with-manifest") == {relative: kind}


def test_a_docstring_the_code_reads_is_code(repo):
    _edit(repo, "fastkernels/timing.py", "# a comment", "print(pad.__doc__)")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "reads its doc")
    _git(repo, "tag", "reads-doc")
    _edit(repo, "fastkernels/timing.py", '"""Why the pad is what it is."""', '"""Another reason."""')
    assert harness_diff.differences(repo, "reads-doc") == {"fastkernels/timing.py": "code"}


def test_a_file_added_or_removed_is_code_unless_it_is_markdown_and_caches_do_not_count(repo):
    (repo / "fastkernels" / "extra.py").write_text('"""Only a docstring."""\n')
    (repo / "tasks" / "L1" / "softmax" / "README.md").unlink()
    (repo / "conf" / "harness" / "fast.yaml").write_text("graph_captures: 1\n")
    (repo / "fastkernels" / "__pycache__").mkdir()
    (repo / "fastkernels" / "__pycache__" / "timing.cpython-311.pyc").write_bytes(b"\0")
    assert harness_diff.differences(repo, "measured") == {
        "conf/harness/fast.yaml": "code", "fastkernels/extra.py": "code", "tasks/L1/softmax/README.md": "prose"}


def test_an_unknown_revision_is_a_one_line_error(repo, capsys):
    assert harness_diff.main(["no-such-tag", "--root", str(repo)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("harness_diff.py: git cannot read revision 'no-such-tag'") and "\n" not in error


def test_a_task_stands_unless_its_own_files_or_its_components_differ_in_code():
    shared, stale = harness_diff.stale_tasks(ROOT, {"tasks/L1/selective_scan/task.yaml": "code",
                                                    "tasks/L1/softmax/README.md": "prose"})
    assert shared == []
    assert set(stale) == {"selective_scan", "mamba_mixer", "mamba_block", "jamba_mamba_layer"}


def test_a_reference_candidate_belongs_to_its_task_and_shared_code_to_every_task():
    for candidate in ("agents/reference/L1/rope_3d.py", "agents/reference/L1/rope_3d/kernel.py"):
        _, stale = harness_diff.stale_tasks(ROOT, {candidate: "code"})
        assert "rope_3d" in stale and "softmax" not in stale
    shared, stale = harness_diff.stale_tasks(ROOT, {"fastkernels/timing.py": "code",
                                                    "tasks/L1/softmax/task.yaml": "code"})
    assert shared == ["fastkernels/timing.py"] and len(stale) == len(harness_diff.Registry(ROOT / "tasks").names)


def test_noop_rows_stand_whatever_changed_under_agents_and_an_agents_rows_only_for_its_own_files():
    candidate = {"agents/reference/L1/rope_3d.py": "code"}
    assert harness_diff.stale_tasks(ROOT, candidate, agent="noop")[1] == []  # noop runs no agent's files
    assert "rope_3d" in harness_diff.stale_tasks(ROOT, candidate, agent="reference")[1]
    assert harness_diff.stale_tasks(ROOT, candidate, agent="kda")[1] == []  # another agent's candidate
    task_code = {"agents/reference/L1/rope_3d.py": "code", "tasks/L1/softmax/task.yaml": "code"}
    assert "softmax" in harness_diff.stale_tasks(ROOT, task_code, agent="noop")[1]  # the task's own files still count


def test_tasks_option_names_what_to_measure_again(repo, capsys):
    _edit(repo, "fastkernels/timing.py", "us * 2.0", "us * 2.5")
    assert harness_diff.main(["measured", "--root", str(repo), "--tasks"]) == 1
    assert "shared code differs (fastkernels/timing.py): no task's rows stand" in capsys.readouterr().out


def _manifest_before(task_yaml: str, edit) -> dict[str, bytes]:
    """`before` files for stale_tasks: the task's manifest as this tree has it, edited by `edit`."""
    import yaml

    manifest = yaml.safe_load((ROOT / task_yaml).read_text())
    edit(manifest)
    return {task_yaml: yaml.safe_dump(manifest).encode()}


def _without_last_production(manifest: dict) -> None:
    manifest["implementations"]["production"].pop()


MLP = "tasks/L2/llama_mlp/task.yaml"
APPENDED = {MLP: "code", "tasks/L2/llama_mlp/torch_compile.py": "code"}
BUILT_FROM_MLP = {"llama_mlp", "llama_decoder_layer", "jamba_mamba_layer"}


def test_a_production_path_appended_to_a_task_leaves_what_is_built_from_it_standing():
    # llama_mlp's Inductor path came after `composed`, which runs everywhere: the decoder layers still bind composed
    before = _manifest_before(MLP, _without_last_production)
    assert harness_diff.stale_tasks(ROOT, APPENDED, before) == ([], ["llama_mlp"])
    assert set(harness_diff.stale_tasks(ROOT, APPENDED)[1]) == BUILT_FROM_MLP  # without `before`: conservative


@pytest.mark.parametrize("why, edit, extra", [
    ("another field changed too", lambda m: (_without_last_production(m), m["tolerance"]["bfloat16"].update(atol=1.0)),
     {}),
    ("an existing file changed", _without_last_production, {"tasks/L2/llama_mlp/llama_mlp.py": b"# before"}),
    ("inserted before the others", lambda m: m["implementations"]["production"].pop(0), {}),
    ("no earlier entry runs everywhere", lambda m: (_without_last_production(m),
                                                   m["implementations"]["production"][0].update(devices=["cuda"])), {}),
])
def test_any_other_change_reaches_what_is_built_from_the_task(why, edit, extra):
    before = _manifest_before(MLP, edit) | extra
    found = APPENDED | {relative: "code" for relative in extra}
    assert set(harness_diff.stale_tasks(ROOT, found, before)[1]) == BUILT_FROM_MLP, why


ROUTING = "tasks/L1/topk_routing/task.yaml"
BUILT_FROM_ROUTING = {"mixtral_moe", "deepseek_moe"}


def _first_two_swapped(manifest: dict) -> None:
    production = manifest["implementations"]["production"]
    production[0], production[1] = production[1], production[0]


def test_a_reordered_production_list_keeps_the_tasks_own_rows_and_not_what_is_built_from_it():
    # every production implementation is timed and the fastest serves, so the order decides only what a higher
    # level binds: mixtral_moe and deepseek_moe compose another router now
    before = _manifest_before(ROUTING, _first_two_swapped)
    assert set(harness_diff.stale_tasks(ROOT, {ROUTING: "code"}, before)[1]) == BUILT_FROM_ROUTING
    assert set(harness_diff.stale_tasks(ROOT, {ROUTING: "code"})[1]) == BUILT_FROM_ROUTING | {"topk_routing"}


@pytest.mark.parametrize("why, edit, extra", [
    ("an entry changed too", lambda m: (_first_two_swapped(m),
                                        m["implementations"]["production"][0].update(devices=["cpu"])), {}),
    ("an entry dropped", lambda m: m["implementations"]["production"].append({"name": "gone", "source": "x.py:X"}),
     {}),
    ("another field changed too", lambda m: (_first_two_swapped(m), m.update(tolerance={})), {}),
    ("a file of the task changed too", _first_two_swapped, {"tasks/L1/topk_routing/sglang.py": b"# before"}),
])
def test_a_reorder_with_any_other_change_leaves_the_tasks_own_rows_stale(why, edit, extra):
    before = _manifest_before(ROUTING, edit) | extra
    found = {ROUTING: "code"} | {relative: "code" for relative in extra}
    assert "topk_routing" in harness_diff.stale_tasks(ROOT, found, before)[1], why


def test_the_standing_harness_is_the_digest_a_clean_checkout_of_the_revision_gives():
    dirty = subprocess.run(["git", "status", "--porcelain", "--", *harness_diff.HARNESS_PATHS], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout
    if dirty:
        pytest.skip("the working tree's harness differs from HEAD (a development tree; CI's clone is clean)")
    digest, stale = harness_diff.standing_rows(ROOT, "HEAD")
    assert digest == harness_diff.harness_digest(ROOT)["harness_sha256"] and stale == frozenset()
