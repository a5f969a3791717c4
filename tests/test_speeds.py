"""Judge speeds: measured after a run, stored per judge and machine, and the named defaults."""

import json

import pytest

from localeval.judge.estimate import Speeds
from localeval.judge.protocol import JudgeConfig, JudgeTimings
from localeval.judge.speeds import (
    SPEEDS_FILE,
    SpeedKey,
    default_speeds,
    measured,
    remember,
    speeds_for,
)
from localeval.results.manifest import JudgeRecord
from localeval.run.judges import LoadedJudge, remember_speeds

QWEN05 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
KEY = SpeedKey(QWEN05, 0, 2, "Some CPU @ 2.0GHz")


def test_prompt_speed_is_llama_cpps_and_generation_takes_the_rest_of_the_time():
    # 1000 prompt tokens in 4 s; 300 tokens generated in the other 14 - 4 = 10 s
    assert measured(JudgeTimings(1000, 4.0, 300, 14.0)) == Speeds(250.0, 30.0)


@pytest.mark.parametrize(
    "timings",
    [
        JudgeTimings(10, 0.1, 300, 5.0),
        JudgeTimings(1000, 4.0, 10, 5.0),
        JudgeTimings(1000, 0.0, 300, 5.0),
        JudgeTimings(1000, 4.0, 300, 3.0),
    ],
)
def test_a_run_too_small_to_tell_measures_nothing(timings):
    assert measured(timings) is None


def test_stored_speeds_are_found_under_their_key(tmp_path):
    path = tmp_path / SPEEDS_FILE
    remember(KEY, Speeds(250.0, 30.0), path)
    known = speeds_for(KEY, 491400064, path)
    assert known.speeds == Speeds(250.0, 30.0)
    assert known.source.startswith("measured in this machine's last run of this judge (")


def test_a_later_run_replaces_the_figures(tmp_path):
    path = tmp_path / SPEEDS_FILE
    remember(KEY, Speeds(250.0, 30.0), path)
    remember(KEY, Speeds(200.0, 20.0), path)
    assert speeds_for(KEY, 491400064, path).speeds == Speeds(200.0, 20.0)
    assert len(json.loads(path.read_text())["entries"]) == 1


def test_the_same_judge_on_the_same_cpu_with_other_threads_is_the_nearest(tmp_path):
    path = tmp_path / SPEEDS_FILE
    remember(SpeedKey(QWEN05, 0, 4, KEY.cpu), Speeds(400.0, 50.0), path)
    remember(SpeedKey(QWEN05, 0, 2, "Another CPU"), Speeds(1.0, 1.0), path)
    known = speeds_for(KEY, 491400064, path)
    assert known.speeds == Speeds(400.0, 50.0)
    assert "with 4 threads and 0 GPU layers" in known.source and "this run: 2 threads, 0 GPU layers" in known.source


def test_without_stored_figures_a_known_judge_gets_its_named_defaults(tmp_path):
    known = speeds_for(KEY, 491400064, tmp_path / SPEEDS_FILE)
    assert known.speeds == Speeds(280.0, 59.0)
    assert known.source == (
        "default speeds for Qwen2.5-Coder-0.5B Q4_K_M on a 2-core CPU, 2 threads (no run of this judge stored here yet)"
    )


def test_an_unknown_judge_gets_the_default_judges_figures_scaled_by_file_size():
    known = default_speeds("0" * 64, 1117320768 * 2)  # twice the 1.5B judge's file
    assert known.speeds == Speeds(72.5, 16.5)
    assert "scaled by file size for this judge (2.23 GB against 1.12 GB; no run" in known.source


def test_a_much_smaller_unknown_judge_is_not_assumed_much_faster():
    known = default_speeds("0" * 64, 1117320768 // 10)
    assert known.speeds == Speeds(290.0, 66.0)  # twice the 1.5B judge's figures, not ten times
    assert "(0.11 GB against 1.12 GB, at most 2 times as fast; no run of it stored here yet)" in known.source


def test_defaults_for_a_gpu_run_say_that_they_are_cpu_figures(tmp_path):
    known = speeds_for(SpeedKey(QWEN05, -1, 2, KEY.cpu), 491400064, tmp_path / SPEEDS_FILE)
    assert known.source.endswith("; CPU figures, though this run offloads layers to the GPU")


def test_a_damaged_file_holds_no_figures(tmp_path):
    path = tmp_path / SPEEDS_FILE
    path.write_text("{not json", encoding="utf-8")
    assert speeds_for(KEY, 491400064, path).speeds == Speeds(280.0, 59.0)
    remember(KEY, Speeds(250.0, 30.0), path)  # and is replaced by the next run's
    assert speeds_for(KEY, 491400064, path).speeds == Speeds(250.0, 30.0)


def test_an_unwritable_cache_costs_the_run_nothing(tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be", encoding="utf-8")
    remember(KEY, Speeds(250.0, 30.0), blocker / SPEEDS_FILE)  # no exception
    assert blocker.read_text(encoding="utf-8") == "a file where the cache folder should be"


class _Judge:
    def timings(self):
        return JudgeTimings(1000, 4.0, 300, 14.0)


def test_a_run_stores_its_speeds_in_the_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALEVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr("localeval.judge.speeds.cpu", lambda: type("CPU", (), {"model": KEY.cpu})())
    manifest = JudgeRecord("qwen05", QWEN05, "", "", {"n_gpu_layers": 0, "n_threads": 2})
    remember_speeds(LoadedJudge(_Judge(), JudgeConfig(), QWEN05, manifest))
    assert speeds_for(KEY, 491400064, tmp_path / SPEEDS_FILE).speeds == Speeds(250.0, 30.0)


def test_a_run_that_decoded_calls_together_stores_no_speeds(tmp_path, monkeypatch):
    """llama.cpp counts a batch's decode steps as prompt tokens: such a run's split would be wrong."""
    monkeypatch.setenv("LOCALEVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr("localeval.judge.speeds.cpu", lambda: type("CPU", (), {"model": KEY.cpu})())
    manifest = JudgeRecord("qwen05", QWEN05, "", "", {"n_gpu_layers": 0, "n_threads": 2})
    remember_speeds(LoadedJudge(_Judge(), JudgeConfig(batch_decode=4), QWEN05, manifest))
    assert not (tmp_path / SPEEDS_FILE).exists()
