import pytest

"""A run that dies (a crash in native code, or `kill -9`): the next run says so and resumes, repeating nothing."""

import json
import signal
import subprocess
import sys
import time

from conftest import EXAMPLE_DATA

# Runs the real CLI, with the judge's generate wrapped to crash the process like a segfault in
# llama.cpp would, once CALLS_BEFORE_CRASH calls have finished.
CRASH_AFTER_CALLS = """
import os, signal, sys
from localeval.judge.gguf import GGUFJudge
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


@pytest.mark.slow
def test_a_crashed_run_resumes_and_the_rerun_points_to_doctor(tmp_path, smollm_path):
    out = tmp_path / "results"
    args = [
        "evaluate",
        str(EXAMPLE_DATA),
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
    crashed = subprocess.run(
        [sys.executable, "-c", CRASH_AFTER_CALLS, str(CALLS_BEFORE_CRASH), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert crashed.returncode == -signal.SIGSEGV, crashed.stderr
    assert len((out / "judge_calls.jsonl").read_text().splitlines()) == CALLS_BEFORE_CRASH
    assert (out / "samples.jsonl").read_text() == ""  # no sample had finished

    rerun = subprocess.run(
        [sys.executable, "-m", "localeval.cli", *args], capture_output=True, text=True, env=env, timeout=900
    )
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


def lines(path) -> list[str]:
    """Whole lines only: a line being written when the process died is not one."""
    return path.read_text(encoding="utf-8").split("\n")[:-1] if path.exists() else []


def cache_keys(path) -> list[str]:
    """The key of every whole entry in the judge call cache (the one being written at the kill is not whole)."""
    keys = []
    for line in lines(path):
        try:
            keys.append(json.loads(line)["key"])
        except json.JSONDecodeError:
            continue
    return keys


@pytest.mark.slow
def test_kill_9_mid_run_then_the_same_command_scores_each_sample_once_paying_no_call_twice(tmp_path, smollm_path):
    out = tmp_path / "results"
    command = [
        sys.executable,
        "-m",
        "localeval.cli",
        "evaluate",
        str(EXAMPLE_DATA),
        "--metrics",
        "faithfulness,exact_match",
        "--judge",
        "smollm2-135m",
        "--out",
        str(out),
        "--n-ctx",
        "4096",
        "--threads",
        "2",
        "--batch-size",
        "2",
    ]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    give_up = time.monotonic() + 600  # a guard against a hang, not a timing assertion
    while len(lines(out / "samples.jsonl")) < 2 or len(lines(out / "judge_calls.jsonl")) <= 4:
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < give_up, "the first batch never finished"
        time.sleep(0.02)
    run.kill()
    run.communicate()
    assert run.returncode == -signal.SIGKILL
    before = [json.loads(line)["id"] for line in lines(out / "samples.jsonl")]
    assert 2 <= len(before) < 6

    rerun = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    assert rerun.returncode == 0, rerun.stderr
    assert "stopped without finishing: it was killed, or the machine went down" in rerun.stderr
    assert f"Resuming: {len(before)} of 6 samples are already scored." in rerun.stderr
    records = [json.loads(line) for line in lines(out / "samples.jsonl")]
    assert [r["id"] for r in records] == ["eiffel", "insulin", "amazon", "photosynthesis", "moon-landing", "great-wall"]
    keys = cache_keys(out / "judge_calls.jsonl")
    assert len(keys) == len(set(keys)), "a judge call was paid twice"
    summary = json.loads((out / "summary.json").read_text())
    assert all(
        summary["metrics"][m]["count"] + summary["metrics"][m]["nan_count"] == 6
        for m in ("faithfulness", "exact_match")
    )
