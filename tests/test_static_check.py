"""The static pre-check names the line and the reason for each pattern it rejects, and passes clean kernels."""

from __future__ import annotations

from pathlib import Path

from fastkernels.static_check import findings

ROOT = Path(__file__).resolve().parent.parent


def test_patching_imported_modules_is_reported_with_its_line():
    source = ("import torch\nimport torch.nn.functional as F\nF.silu = None\nsetattr(torch, 'rsqrt', None)\n"
              "type.__setattr__(torch.Tensor, 'add', None)\n")
    assert findings(source, "k.py") == [
        "k.py:3: assigns F.silu: patching an imported module changes the baseline or the timer",
        "k.py:4: setattr on torch: patching an imported module",
        "k.py:5: setattr on torch.Tensor: patching an imported module",
    ]


def test_frame_walking_and_harness_imports_are_reported():
    source = "import sys\nfrom fastkernels import timing\nsys._getframe(1)\nsys.setprofile(print)\n"
    found = findings(source, "k.py")
    assert any("imports fastkernels" in f for f in found) and any("sys._getframe" in f for f in found)
    assert "k.py:4: calls sys.setprofile: runs its code on every Python call of the process and reads every frame" \
           " (the harness's locals)" in found


def test_work_in_other_processes_is_reported():
    source = "import os\nimport subprocess\npid = os.fork()\nos.system('helper &')\n"
    found = findings(source, "k.py")
    assert [f.split(":")[1] for f in found] == ["2", "3", "4"], found
    assert all("a process the timer does not see" in f for f in found)


def test_side_streams_are_reported_unless_the_task_allows_them():
    source = "import torch\ns = torch.cuda.Stream()\n"
    assert "another stream" in findings(source, "k.py")[0]
    assert findings(source, "k.py", frozenset({"side_streams"})) == []


def test_the_shipped_reference_kernels_are_clean():
    for path in (ROOT / "agents" / "reference").rglob("*.py"):
        assert findings(path.read_text(), str(path)) == []
