"""`localeval doctor` with the real small models, and with a stand-in judge check that crashes."""

import sys

import pytest
from click.testing import CliRunner
from conftest import EXAMPLE_DATA

from localeval.cli import main
from localeval.judge import check as judge_check

CRASHING_CHILD = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"]


def run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALEVAL_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.slow
def test_doctor_reports_the_build_models_embedders_and_a_generation(smollm_path):
    result = run("doctor", "--judge", "smollm2-135m", "--threads", "2")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for section in ("localeval", "CPU", "llama.cpp", "models", "embedders", "judge"):
        assert section in lines
    assert any("llama-cpp-python:" in line and "0.3." in line for line in lines)
    assert any("system info:" in line and "CPU :" in line for line in lines)
    assert any(
        line.startswith("  ok   smollm2-135m (judge):") and "sha256 match the registry" in line for line in lines
    )
    assert any(line.startswith("  ok   all-minilm-l6-v2:") and "384-d vectors" in line for line in lines)
    judge_line = next(line for line in lines if line.startswith("  ok   smollm2-135m:"))
    assert "tokens prompt in" not in judge_line and "generated" in judge_line and "in a child process" in judge_line
    curve_line = next(line for line in lines if "calls decoded together:" in line)
    assert "1: " in curve_line and "8: " in curve_line and "answer tokens/s" in curve_line
    assert "--batch-decode" in curve_line
    assert lines[-1].startswith("All checks passed")


def test_doctor_fails_with_a_clear_message_when_the_judge_crashes(monkeypatch, smollm_path):
    monkeypatch.setattr(judge_check, "CHILD_COMMAND", CRASHING_CHILD)
    result = run("doctor", "--judge", "smollm2-135m", "--no-embedders")
    assert result.exit_code == 1
    judge_line = next(line for line in result.output.splitlines() if line.startswith("  FAIL smollm2-135m:"))
    assert f"llama.cpp crashed while running the judge {smollm_path} (SIGSEGV, segmentation fault)" in judge_line
    assert "Without repacked weights it failed too: llama.cpp crashed" in judge_line
    assert "1 problem found (marked FAIL)." in result.output


def test_doctor_fails_when_the_judge_file_is_missing(tmp_path):
    missing = tmp_path / "nope.gguf"
    result = run("doctor", "--judge", str(missing), "--no-embedders")
    assert result.exit_code == 1
    assert f"  FAIL {missing}:" in result.output and f"Model file not found: {missing}" in result.output


def test_evaluate_stops_before_the_run_when_the_judge_crashes(monkeypatch, tmp_path, smollm_path):
    monkeypatch.setattr(judge_check, "CHILD_COMMAND", CRASHING_CHILD)
    out = tmp_path / "results"
    result = run(
        "evaluate", str(EXAMPLE_DATA), "--metrics", "faithfulness", "--judge", "smollm2-135m", "--out", str(out)
    )
    assert result.exit_code == 1
    assert result.output.count("Error: llama.cpp crashed while running the judge") == 1
    assert "Traceback" not in result.output
    assert not (out / "samples.jsonl").exists()
