"""A run that dies in native code: the next run says so, points to the doctor, and resumes without paying twice."""

import json
import signal
import subprocess
import sys

from conftest import EXAMPLE_DATA

# Runs the real CLI, with the judge's generate wrapped to crash the process like a segfault in
# llama.cpp would, once CALLS_BEFORE_CRASH calls have finished.
CRASH_AFTER_CALLS = """
import os, signal, sys
from localeval.judge import GGUFJudge

finished = 0
generate = GGUFJudge.generate

def generate_then_crash(self, *args, **kwargs):
    global finished
    if finished == int(sys.argv[1]):
        os.kill(os.getpid(), signal.SIGSEGV)
    finished += 1
    return generate(self, *args, **kwargs)

GGUFJudge.generate = generate_then_crash
from localeval.cli import main
main(sys.argv[2:], prog_name="localeval")
"""
CALLS_BEFORE_CRASH = 4


def test_a_crashed_run_resumes_and_the_rerun_points_to_doctor(tmp_path, smollm_path):
    out = tmp_path / "results"
    args = ["evaluate", str(EXAMPLE_DATA), "--metrics", "faithfulness", "--judge", "smollm2-135m",
            "--out", str(out), "--n-ctx", "4096", "--threads", "2"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    crashed = subprocess.run([sys.executable, "-c", CRASH_AFTER_CALLS, str(CALLS_BEFORE_CRASH), *args],
                             capture_output=True, text=True, env=env, timeout=900)
    assert crashed.returncode == -signal.SIGSEGV, crashed.stderr
    assert len((out / "judge_calls.jsonl").read_text().splitlines()) == CALLS_BEFORE_CRASH
    assert not (out / "samples.jsonl").exists()

    rerun = subprocess.run([sys.executable, "-m", "localeval.cli", *args], capture_output=True, text=True,
                           env=env, timeout=900)
    assert rerun.returncode == 0, rerun.stderr
    assert f"Warning: The previous run into {out} (pid " in rerun.stderr
    assert "crashed: Segmentation fault" in rerun.stderr
    assert "`localeval doctor` checks it." in rerun.stderr
    assert f"Resuming: {CALLS_BEFORE_CRASH} judge calls are already done." in rerun.stderr
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == ["eiffel", "insulin", "amazon", "photosynthesis", "moon-landing", "great-wall"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judge"]["cached_calls"] == CALLS_BEFORE_CRASH
    assert summary["metrics"]["faithfulness"]["count"] + summary["metrics"]["faithfulness"]["nan_count"] == 6
