"""Same input, model, prompts and seed give the same scores (docs/evaluating.md), in two fresh runs sharing no cache."""

import json

import pytest
from click.testing import CliRunner
from conftest import EXAMPLE_DATA, write_jsonl

from localeval.cli import main

# Both decode greedily: faithfulness's statements and verdicts, and aspect_critique's one call.
METRICS = "faithfulness,aspect_critique:coherence"


def results(out) -> tuple[list[dict], dict]:
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    return records, json.loads((out / "summary.json").read_text())


def scored_twice(tmp_path, ids: tuple[str, ...], metrics: str, *run_args: tuple[str, ...]) -> list[list[tuple]]:
    """(id, scores, NaN reasons, evidence) of each sample, for one fresh run per entry of `run_args`."""
    rows = [
        row for line in EXAMPLE_DATA.read_text(encoding="utf-8").splitlines() if (row := json.loads(line))["id"] in ids
    ]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    runs = []
    for number, extra in enumerate(run_args):
        out = tmp_path / f"run-{number}"
        result = CliRunner().invoke(
            main,
            [
                "evaluate",
                str(data),
                "--metrics",
                metrics,
                "--judge",
                "smollm2-135m",
                "--out",
                str(out),
                "--n-ctx",
                "4096",
                *extra,
            ],
        )
        assert result.exit_code == 0, result.output
        records, summary = results(out)
        assert (summary["judge"]["calls"] > 0, summary["judge"]["cached_calls"]) == (True, 0)  # fresh: no cache
        runs.append([(r["id"], r["scores"], r["nan_reasons"], r["evidence"]) for r in records])
    return runs


@pytest.mark.slow
def test_two_fresh_runs_give_the_same_scores_and_evidence(tmp_path):
    first, second = scored_twice(tmp_path, ("insulin", "moon-landing"), METRICS, (), ())
    assert any(score is not None for _, scores, _, _ in first for score in scores.values())
    assert first == second


@pytest.mark.slow
def test_runs_that_differ_only_in_threads_give_the_same_scores_and_evidence(tmp_path):
    """Measured to change nothing with the default judge too (docs/evaluating.md)."""
    one, two = scored_twice(
        tmp_path, ("eiffel", "amazon"), "faithfulness,context_precision", ("--threads", "1"), ("--threads", "2")
    )
    assert one == two
