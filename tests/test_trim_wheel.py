"""scripts/trim_wheel.py: a carried wheel loses the members it never needs and their RECORD lines, and still
installs with pip (the device installs the carried wheels with pip --target)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import trim_wheel  # noqa: E402


def make_wheel(directory: Path) -> Path:
    wheel = directory / "demo-1.0-py3-none-any.whl"
    members = {
        "demo/__init__.py": "VALUE = 1\n",
        "demo/_server.cpython-312-x86_64-linux-gnu.so": "x" * 4096,
        "demo/kernels/ops.py": "def op():\n    return 2\n",
        "demo-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
        "demo-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "\n".join(f"{name},," for name in members) + "\ndemo-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
        archive.writestr("demo-1.0.dist-info/RECORD", record)
    return wheel


def test_the_dropped_suffix_leaves_the_wheel_and_its_record_and_everything_else_stays(tmp_path):
    wheel = make_wheel(tmp_path)
    assert trim_wheel.trim(wheel, (".so",)) == (1, 4096)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        record = archive.read("demo-1.0.dist-info/RECORD").decode()
    assert not any(name.endswith(".so") for name in names)
    assert {"demo/__init__.py", "demo/kernels/ops.py", "demo-1.0.dist-info/METADATA"} <= set(names)
    assert ".so" not in record and "demo/kernels/ops.py,," in record


def test_a_dropped_prefix_takes_a_whole_directory_and_its_record_lines(tmp_path):
    wheel = make_wheel(tmp_path)
    assert trim_wheel.trim(wheel, (), ("demo/kernels/",)) == (1, len("def op():\n    return 2\n"))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        record = archive.read("demo-1.0.dist-info/RECORD").decode()
    assert "demo/kernels/ops.py" not in names and "demo/kernels/" not in record
    assert {"demo/__init__.py", "demo/_server.cpython-312-x86_64-linux-gnu.so"} <= names


def test_nothing_to_drop_is_a_one_line_error(tmp_path, capsys):
    wheel = make_wheel(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        trim_wheel.main([str(wheel)])
    assert exit_info.value.code == 2 and "nothing to drop" in capsys.readouterr().err.strip().splitlines()[-1]


def test_the_trimmed_wheel_installs_with_pip_and_imports(tmp_path):
    wheel = make_wheel(tmp_path)
    assert trim_wheel.main([str(wheel), "--drop-suffix", ".so"]) == 0
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target", str(site),
                    str(wheel)], check=True, capture_output=True, text=True, timeout=300)
    done = subprocess.run([sys.executable, "-c", "import demo.kernels.ops as o; print(o.op())"], cwd=site,
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "2", done.stderr
    assert not list(site.rglob("*.so"))


@pytest.mark.parametrize("what", ["missing", "not a zip"])
def test_a_path_that_is_no_wheel_is_a_one_line_error_naming_it(tmp_path, capsys, what):
    wheel = tmp_path / "sglang-0.5.23-cp312-cp312-manylinux_2_34_x86_64.whl"
    if what == "not a zip":
        wheel.write_text("not a wheel")
    with pytest.raises(SystemExit) as exit_info:
        trim_wheel.main([str(wheel), "--drop-suffix", ".so"])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert exit_info.value.code == 2 and str(wheel) in error and "no such wheel" in error
