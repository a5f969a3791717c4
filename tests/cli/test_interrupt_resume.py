"""Ctrl-C during `localeval evaluate`: exit 130 with what was finished written, and a rerun that reuses it."""

import json
import signal
import subprocess
import sys
import time

import pytest
from conftest import EXAMPLE_DATA, write_jsonl


def finished_calls(path) -> int:
    """Whole entries in the judge call cache (a line cut short by the interruption is not one)."""
    if not path.exists():
        return 0
    return sum(1 for line in path.read_text(encoding="utf-8").split("\n") if line.endswith("}"))


@pytest.mark.slow
def test_ctrl_c_exits_130_and_the_rerun_resumes_from_the_finished_calls(tmp_path):
    data = write_jsonl(
        tmp_path / "data.jsonl",
        [json.loads(line) for line in EXAMPLE_DATA.read_text(encoding="utf-8").splitlines()[:3]],
    )
    out = tmp_path / "results"
    command = [
        sys.executable,
        "-m",
        "localeval.cli",
        "evaluate",
        str(data),
        "--metrics",
        "faithfulness",
        "--judge",
        "smollm2-135m",
        "--out",
        str(out),
        "--n-ctx",
        "4096",
        "--threads",
        "2",
    ]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    calls = out / "judge_calls.jsonl"
    # Ctrl-C's own disposition, even when the tests themselves run in the background (which ignores SIGINT).
    run = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    give_up = time.monotonic() + 600  # a guard against a hang, not a timing assertion
    while finished_calls(calls) < 1:
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < give_up, "no judge call finished"
        time.sleep(0.05)
    run.send_signal(signal.SIGINT)
    stdout, stderr = run.communicate(timeout=600)
    assert run.returncode == 130, stderr
    assert "Interrupted. Rerun the same command to resume from the finished judge calls." in stderr
    assert "Traceback" not in stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert summary["metrics"]["faithfulness"]["nan_reasons"].get("interrupted", 0) >= 1
    done = finished_calls(calls)

    rerun = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    assert rerun.returncode == 0, rerun.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is False
    assert "interrupted" not in summary["metrics"]["faithfulness"]["nan_reasons"]
    assert summary["judge"]["cached_calls"] == done >= 1
    assert summary["metrics"]["faithfulness"]["count"] + summary["metrics"]["faithfulness"]["nan_count"] == 3
