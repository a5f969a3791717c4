"""A rerun into a results folder reuses finished samples only when nothing that decides a score has changed."""

import json
import shutil
from pathlib import Path

from click.testing import CliRunner
from conftest import write_jsonl

from localeval.results.manifest import RunManifest
from localeval.run.manifest import fingerprint_settings as _fingerprint_settings
from localeval.run.options import EvaluationOptions
from localeval.run.sample_log import fingerprint
from localeval.steps.criteria import Definitions

ROWS = [{"id": "a", "response": "Blue.", "reference": "Blue."}, {"id": "b", "response": "Red.", "reference": "Grey."}]
REUSED = "Resuming: 2 of 2 samples are already scored."


def evaluate(data: Path, out: Path, *args: str):
    from localeval.cli import main

    result = CliRunner().invoke(main, ["evaluate", str(data), "--out", str(out), "--metrics", "exact_match", *args])
    assert result.exit_code == 0, result.output
    return result


def test_the_same_command_reuses_and_gives_the_same_files(tmp_path):
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    first = evaluate(data, tmp_path / "out")
    assert "Resuming" not in first.stderr
    samples = (tmp_path / "out" / "samples.jsonl").read_text()
    assert REUSED in evaluate(data, tmp_path / "out").stderr
    assert (tmp_path / "out" / "samples.jsonl").read_text() == samples


def test_the_same_data_under_another_path_is_reused(tmp_path):
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    evaluate(data, tmp_path / "out")
    moved = tmp_path / "elsewhere" / "data.jsonl"
    moved.parent.mkdir()
    shutil.copy(data, moved)
    assert REUSED in evaluate(moved, tmp_path / "out").stderr


def test_changed_data_or_metrics_are_scored_again(tmp_path):
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    evaluate(data, tmp_path / "out")
    write_jsonl(data, [ROWS[0], {**ROWS[1], "response": "Grey."}])
    rerun = evaluate(data, tmp_path / "out")
    assert "Resuming" not in rerun.stderr
    assert [json.loads(line)["scores"]["exact_match"] for line in (tmp_path / "out" / "samples.jsonl").open()] == [
        1.0,
        1.0,
    ]
    assert "Resuming" not in evaluate(data, tmp_path / "out", "--metrics", "exact_match,chrf").stderr


def test_the_fingerprint_follows_the_judge_and_its_template_but_not_threads_or_time(tmp_path):
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    options = EvaluationOptions(data=data, out=tmp_path / "out")
    manifest = {
        "created": "2026-12-04T00:00:00+00:00",
        "dataset": {"path": str(data)},
        "metrics": ["faithfulness"],
        "prompts": {"statements": {"path": "/venv/a/statements.toml", "sha256": "p1"}},
        "judge": {"sha256": "j1", "chat_template_sha256": "t1", "config": {"n_ctx": 8192, "n_threads": 2}},
    }

    def of(**changes) -> str:
        changed = json.loads(json.dumps(manifest))
        for path, value in changes.items():
            *parents, leaf = path.split("__")
            target = changed
            for key in parents:
                target = target[key]
            target[leaf] = value
        return fingerprint(
            _fingerprint_settings(RunManifest.from_json(changed), options, {"en": Definitions({"a": "x", "b": "y"})})
        )

    same = of()
    assert of(created="2026-12-05T00:00:00+00:00") == same
    assert of(judge__config__n_threads=16) == same
    assert of(dataset__path="/elsewhere/data.jsonl") == same
    assert of(prompts__statements={"path": "/other/venv/statements.toml", "sha256": "p1"}) == same
    assert of(judge__chat_template_sha256="t2") != same
    assert of(judge__sha256="j2") != same
    assert of(judge__config__n_ctx=4096) != same
    assert of(prompts__statements={"path": "/venv/a/statements.toml", "sha256": "p2"}) != same
    reordered = fingerprint(
        _fingerprint_settings(RunManifest.from_json(manifest), options, {"en": Definitions({"b": "y", "a": "x"})})
    )
    assert reordered == same


def test_a_resumed_run_stopped_early_keeps_the_finished_samples_it_had_not_reached(tmp_path, monkeypatch):
    from localeval.metrics import METRICS
    from localeval.run import batch_scoring, evaluation, planning

    rows = [{"id": f"r{i}", "response": "Blue.", "reference": "Blue."} for i in range(6)]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    out = tmp_path / "out"
    evaluate(data, out, "--batch-size", "2")
    records = [json.loads(line) for line in (out / "samples.jsonl").open()]
    records[0] = {**records[0], "scores": {"exact_match": None}, "nan_reasons": {"exact_match": "metric_error"}}
    (out / "samples.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(batch_scoring, "run_metrics", stopped)
    options = EvaluationOptions(data=data, out=out, metrics=("exact_match",), batch_size=2)
    result = evaluation.run_evaluation(
        options, planning.load_dataset(options), [METRICS["exact_match"]], keep_samples=False
    )
    after = [json.loads(line) for line in (out / "samples.jsonl").open()]
    assert [record["id"] for record in after] == [f"r{i}" for i in range(6)]
    assert after[0]["nan_reasons"] == {"exact_match": "interrupted"}
    assert after[1:] == records[1:]  # reached or not before the stop, finished samples stay as they were
    assert (result.interrupted, result.summaries["exact_match"].count) == (True, 5)
