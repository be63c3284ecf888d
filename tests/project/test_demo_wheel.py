"""The demo works wherever the package is installed: a wheel built from this checkout, installed
into a fresh virtual environment, runs ``singletable demo`` from an empty folder.

The wheel is built from a copy of the project (``pyproject.toml``, ``README.md``, ``src/``), so
the build writes nothing into the checkout. The new environment gets the wheel, and sees the
dependencies (boto3, pydantic, moto) of the environment running the tests through a ``.pth``
file: nothing is downloaded, and the checkout itself is not on its path. (A venv created with
``--system-site-packages`` from inside a venv would see the base interpreter's packages, not
this environment's.)
"""

from __future__ import annotations

import os
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PATTERN_ROW = re.compile(r"^\[ok\] (\w+) +(GetItem|Query) +1 request ", re.MULTILINE)


def _run(command: list[str | Path], **options: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(part) for part in command],
        capture_output=True,
        text=True,
        timeout=240,
        **options,  # type: ignore[call-overload]
    )
    assert result.returncode == 0, f"{command}:\n{result.stdout}\n{result.stderr}"
    return result


def _wheel(tmp: Path) -> Path:
    project = tmp / "project"
    project.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, project / name)
    shutil.copytree(
        ROOT / "src",
        project / "src",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"),
    )
    wheels = tmp / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", wheels, project])
    (wheel,) = wheels.glob("singletable-*.whl")
    return wheel


def _venv(tmp: Path, wheel: Path) -> Path:
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv])
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / ("python.exe" if os.name == "nt" else "python")
    purelib = _run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
    ).stdout.strip()
    dependencies = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (Path(purelib) / "_test_dependencies.pth").write_text("\n".join(dependencies) + "\n")
    install = ["install", "--quiet", "--no-deps", "--no-index", wheel]
    _run([sys.executable, "-m", "pip", "--python", python, *install])
    return bindir


@pytest.mark.timeout(600)
def test_demo_runs_from_an_installed_wheel_in_an_empty_folder(tmp_path: Path) -> None:
    bindir = _venv(tmp_path, _wheel(tmp_path))
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "AWS_ENDPOINT_URL_DYNAMODB", "VIRTUAL_ENV")
    }

    where = _run(
        [bindir / "python", "-c", "import singletable; print(singletable.__file__)"],
        cwd=empty,
        env=env,
    ).stdout.strip()
    assert Path(where).is_relative_to(tmp_path / "venv"), where  # the wheel, not the checkout

    result = _run([bindir / "singletable", "demo"], cwd=empty, env=env)
    rows = dict(PATTERN_ROW.findall(result.stdout))
    assert "GetItem" in rows.values() and "Query" in rows.values(), result.stdout
    assert rows["customer"] == "GetItem" and rows["customer_orders"] == "Query"
    assert "every pattern sent what explain says" in result.stdout
    assert list(empty.iterdir()) == []
