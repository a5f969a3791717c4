import pytest

"""ruff finds no unused or undefined name, no unsorted import and no unformatted file in the package, tests, benchmarks;
mypy finds no type error in the package (settings in pyproject.toml's [tool.mypy])."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_ruff_is_clean() -> None:
    checked = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "localeval", "tests", "benchmarks", "scripts"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_ruff_format_is_clean() -> None:
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "format",
            "--check",
            "--no-cache",
            "localeval",
            "tests",
            "benchmarks",
            "scripts",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, "run `ruff format`:\n" + checked.stdout + checked.stderr


@pytest.mark.slow
def test_mypy_is_clean() -> None:
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--config-file", "pyproject.toml"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
