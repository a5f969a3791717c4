"""CI gating: --fail-under, --nan-policy and --summary-md, on judge-free metrics (no model is loaded)."""

import json
import math

import pytest
from click.testing import CliRunner
from conftest import write_jsonl

from localeval.cli import main
from localeval.cli.evaluate import EXIT_BELOW_THRESHOLD
from localeval.errors import ConfigError
from localeval.results.gating import gate, parse_bounds
from localeval.results.run_result import MetricSummary

# exact_match: 1, 0, 1 -> mean 2/3; the fourth row has no reference, so its exact_match is NaN.
ROWS = [
    {"id": "a", "response": "Paris", "reference": "Paris"},
    {"id": "b", "response": "Lyon", "reference": "Paris"},
    {"id": "c", "response": "Rome", "reference": "Rome"},
    {"id": "d", "response": "Oslo"},
]


def evaluate(tmp_path, *args: str):
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    return CliRunner().invoke(
        main, ["evaluate", str(data), "--metrics", "exact_match", "--out", str(tmp_path / "out"), *args]
    )


def test_a_mean_at_or_above_its_bound_passes(tmp_path):
    result = evaluate(tmp_path, "--fail-under", "exact_match=0.6", "--nan-policy", "skip")
    assert result.exit_code == 0, result.output


def test_a_mean_below_its_bound_fails_with_its_own_exit_code_and_one_line(tmp_path):
    result = evaluate(tmp_path, "--fail-under", "exact_match=0.7", "--nan-policy", "skip")
    assert result.exit_code == EXIT_BELOW_THRESHOLD, result.output
    assert result.output.strip().splitlines()[-1] == "Below threshold: exact_match mean 0.667 < 0.7."
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["metrics"]["exact_match"]["count"] == 3


def test_nan_fails_the_gate_under_the_default_policy(tmp_path):
    result = evaluate(tmp_path, "--fail-under", "exact_match=0.1")
    assert result.exit_code == EXIT_BELOW_THRESHOLD, result.output
    assert "exact_match 1 NaN (missing_field:reference ×1) under --nan-policy fail" in result.output


def test_summary_md_is_a_markdown_table_with_the_gate(tmp_path):
    result = evaluate(
        tmp_path,
        "--fail-under",
        "exact_match=0.7",
        "--nan-policy",
        "skip",
        "--summary-md",
        str(tmp_path / "summary.md"),
    )
    assert result.exit_code == EXIT_BELOW_THRESHOLD
    lines = (tmp_path / "summary.md").read_text().splitlines()
    assert lines[:3] == [
        "| Metric | Mean | Scored | NaN | Validated | Gate |",
        "|:---|---:|---:|---:|:---|:---|",
        "| `exact_match` | 0.667 | 3 | 1 | no: not measured | **FAIL**: mean 0.667 < 0.7 |",
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--fail-under", "faithfulness=0.8"], "--fail-under names faithfulness, which this run does not compute"),
        (["--fail-under", "exact_match"], "--fail-under expects METRIC=BOUND"),
        (["--fail-under", "exact_match=high"], "--fail-under exact_match: 'high' is not a number."),
        (
            ["--fail-under", "exact_match=0.5", "--fail-under", "exact_match=0.6"],
            "--fail-under names exact_match twice.",
        ),
    ],
)
def test_a_bad_bound_is_refused_before_the_run(tmp_path, args, message):
    result = evaluate(tmp_path, *args)
    assert result.exit_code == 1 and message in result.output, result.output
    assert "Traceback" not in result.output and not (tmp_path / "out" / "samples.jsonl").exists()


def test_an_unwritable_summary_md_keeps_the_results(tmp_path):
    result = evaluate(tmp_path, "--summary-md", str(tmp_path / "no" / "such" / "dir" / "summary.md"))
    assert result.exit_code == 1 and "Cannot write --summary-md" in result.output, result.output
    assert (tmp_path / "out" / "summary.json").exists()


def test_a_metric_with_no_scores_fails_even_when_nan_is_skipped():
    empty = MetricSummary(math.nan, 0, 2, {"missing_field": 2})
    [result] = gate({"m": empty}, parse_bounds(["m=0"]), "skip")
    assert not result.passed and result.why == "no scores"


def test_parse_bounds_rejects_infinity():
    with pytest.raises(ConfigError, match="finite"):
        parse_bounds(["m=inf"])
