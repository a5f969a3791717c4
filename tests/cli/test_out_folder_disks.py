"""The results folder on a real read-only or full file system: a clear error, and no finished work lost.

Each test mounts a small tmpfs in a mount namespace of its own (`unshare -m`, which needs root, as CI runs),
so nothing outside the test sees it, and runs the real CLI there with model-free metrics.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare"), reason="mounting a file system needs root and unshare"
)

METRICS = "chrf,rouge_l"
ROWS = 300


def write_rows(path: Path) -> Path:
    """Rows whose records fill a few kB each, so that a 64 kB disk fills up mid-run."""
    passage = " ".join(f"Station {n} lies north of the old bridge." for n in range(20))
    with path.open("w", encoding="utf-8") as file:
        for i in range(ROWS):
            file.write(
                json.dumps(
                    {
                        "id": f"r{i}",
                        "response": f"Bridge {i} is old. {passage}",
                        "reference": f"Bridge {i} crosses the river. {passage}",
                    }
                )
                + "\n"
            )
    return path


def in_namespace(tmp_path: Path, script: str) -> subprocess.CompletedProcess:
    """Run a shell script in a mount namespace of its own; $LOCALEVAL runs the CLI."""
    env = {
        "PATH": "/usr/bin:/bin:/usr/sbin:/sbin",
        "HOME": str(tmp_path),
        "LOCALEVAL": f"{sys.executable} -m localeval.cli",
    }
    return subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        timeout=600,
    )


def exits(output: str) -> list[int]:
    return [int(line.removeprefix("exit=")) for line in output.splitlines() if line.startswith("exit=")]


@pytest.mark.slow
def test_a_full_disk_mid_run_is_a_clear_error_and_the_rerun_keeps_every_finished_sample(tmp_path):
    data, disk, copy = write_rows(tmp_path / "data.jsonl"), tmp_path / "disk", tmp_path / "after"
    disk.mkdir()
    done = in_namespace(
        tmp_path,
        f"""
        mount -t tmpfs -o size=64k tmpfs {disk}
        $LOCALEVAL evaluate {data} --metrics {METRICS} --out {disk}/out --batch-size 8; echo "exit=$?"
        cp {disk}/out/samples.jsonl {tmp_path}/when-full.jsonl
        mount -o remount,size=16m {disk}
        $LOCALEVAL evaluate {data} --metrics {METRICS} --out {disk}/out --batch-size 8; echo "exit=$?"
        cp -r {disk}/out {copy}
    """,
    )
    assert exits(done.stdout) == [1, 0], done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert (
        f"Error: Could not write the results to {disk}/out: No space left on device. The work finished so far "
        f"is kept in {disk}/out/samples.jsonl: rerun the same command"
    ) in done.stderr
    kept = [line for line in (tmp_path / "when-full.jsonl").read_text().split("\n")[:-1]]
    assert 0 < len(kept) < ROWS
    assert f"Resuming: {len(kept)} of {ROWS} samples are already scored." in done.stderr

    fresh = subprocess.run(
        [
            sys.executable,
            "-m",
            "localeval.cli",
            "evaluate",
            str(data),
            "--metrics",
            METRICS,
            "--out",
            str(tmp_path / "fresh"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert fresh.returncode == 0, fresh.stderr
    resumed = (copy / "samples.jsonl").read_text().splitlines()
    assert resumed[: len(kept)] == kept  # what the full disk took is what the rerun kept, byte for byte
    assert [json.loads(line) for line in resumed] == [
        json.loads(line) for line in (tmp_path / "fresh" / "samples.jsonl").read_text().splitlines()
    ]
    assert (
        json.loads((copy / "summary.json").read_text())["metrics"]
        == json.loads((tmp_path / "fresh" / "summary.json").read_text())["metrics"]
    )


@pytest.mark.slow
def test_a_read_only_results_folder_is_refused_before_anything_runs_and_its_results_stay(tmp_path):
    data, disk = write_rows(tmp_path / "data.jsonl"), tmp_path / "disk"
    disk.mkdir()
    done = in_namespace(
        tmp_path,
        f"""
        mount -t tmpfs -o size=16m tmpfs {disk}
        $LOCALEVAL evaluate {data} --metrics {METRICS} --out {disk}/out; echo "exit=$?"
        sha256sum {disk}/out/samples.jsonl {disk}/out/summary.json > {tmp_path}/before
        mount -o remount,ro {disk}
        $LOCALEVAL evaluate {data} --metrics chrf --out {disk}/out; echo "exit=$?"
        $LOCALEVAL evaluate {data} --metrics chrf --out {disk}/new; echo "exit=$?"
        sha256sum {disk}/out/samples.jsonl {disk}/out/summary.json > {tmp_path}/after
    """,
    )
    assert exits(done.stdout) == [0, 1, 1], done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"Error: The results folder {disk}/out is on a read-only file system; choose another --out." in done.stderr
    assert f"Error: Cannot create the results folder {disk}/new: Read-only file system" in done.stderr
    assert (tmp_path / "before").read_text() == (tmp_path / "after").read_text()
