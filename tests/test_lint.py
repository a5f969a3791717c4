"""ruff finds no unused or undefined name and no unsorted import in the package, the tests or the benchmarks."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_ruff_is_clean() -> None:
    checked = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "localeval", "tests", "benchmarks",
                              "scripts"], cwd=REPO, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
