"""Tests for localeval.results.run_result (summary, saved folder) and localeval.results.table (the terminal table)."""

from __future__ import annotations

import json
import math

import pytest
from conftest import card

from localeval.data.dataset import RowError
from localeval.data.samples import Sample
from localeval.errors import ConfigError
from localeval.metrics import Score
from localeval.results.manifest import JudgeRecord, RunManifest
from localeval.results.run_result import (
    FORMAT_VERSION,
    MetricSummary,
    RunResult,
    Tally,
    load_results,
    sample_record,
)
from localeval.results.sample_scores import SampleScores, Usage
from localeval.results.table import summary_table

EVIDENCE = {
    "statements": [
        {"statement": "Paris is in France.", "verdict": 1, "reason": "Stated."},
        {"statement": "Paris is big.", "verdict": 0, "reason": "Not mentioned."},
        {"statement": "Paris is old.", "verdict": 1, "reason": "Stated."},
    ]
}
ROW_ERRORS = [
    RowError(3, "q3", "response", "expected a string, got a number"),
    RowError(4, None, None, "not valid JSON: Expecting value (column 1)"),
]
ROW_WARNINGS = [
    RowError(2, "q2", "reference_context_ids", "item at index 0 is a boolean; expected a string or integer")
]
MANIFEST = RunManifest(
    created="2025-01-02T03:04:05+00:00",
    dataset=None,
    metrics=["faithfulness", "answer_length"],
    metric_options={},
    lang="en",
    judge=JudgeRecord(None, "ab12", "from GGUF metadata", "cd34", path="/models/judge.gguf"),
    prompts={},
    versions={},
)


def scores() -> list[SampleScores]:
    return [
        SampleScores(
            Sample("q1", 1, user_input="Tell me about Paris."),
            "en",
            {"faithfulness": Score(2 / 3, evidence=EVIDENCE), "answer_length": Score(0.5)},
            Usage(calls=3, cached_calls=1, prompt_tokens=400, completion_tokens=50, seconds=2.0004),
        ),
        SampleScores(
            Sample("q2", 2),
            "en",
            {
                "faithfulness": Score.nan("judge_timeout", step="statement_support", detail="no answer after 60 s"),
                "answer_length": Score(1.0),
            },
            Usage(calls=1, cached_calls=0, prompt_tokens=200, completion_tokens=30, seconds=1.0),
        ),
        SampleScores(
            Sample("5", 5),
            "ja",
            {
                "faithfulness": Score.nan("missing_field:retrieved_contexts"),
                "answer_length": Score.nan("judge_timeout", step="statements", detail="slow"),
            },
        ),
    ]


def result(interrupted: bool = False) -> RunResult:
    return RunResult(
        ["faithfulness", "answer_length", "unused"], scores(), ROW_ERRORS, MANIFEST, interrupted, ROW_WARNINGS
    )


def as_tuple(summary: MetricSummary) -> tuple:
    return ("NaN" if math.isnan(summary.mean) else summary.mean, summary.count, summary.nan_count, summary.nan_reasons)


# --- summaries ---------------------------------------------------------------------------------


def test_summaries_skip_nan_and_count_reasons():
    summaries = result().summaries
    assert list(summaries) == ["faithfulness", "answer_length", "unused"]
    assert as_tuple(summaries["faithfulness"]) == (
        0.666667,
        1,
        2,  # the mean of scores as recorded, to 6 decimals
        {"judge_timeout": 1, "missing_field:retrieved_contexts": 1},
    )
    assert as_tuple(summaries["answer_length"]) == (0.75, 2, 1, {"judge_timeout": 1})
    assert as_tuple(summaries["unused"]) == ("NaN", 0, 0, {})


def test_nan_reasons_are_sorted_by_name():
    samples = [
        SampleScores(Sample(str(i), i), "en", {"m": Score.nan(reason)})
        for i, reason in enumerate(["metric_error", "interrupted", "metric_error", "context_overflow"])
    ]
    assert list(RunResult(["m"], samples, [], RunManifest.from_json({})).summaries["m"].nan_reasons.items()) == [
        ("context_overflow", 1),
        ("interrupted", 1),
        ("metric_error", 2),
    ]


def test_all_nan_mean_is_nan():
    samples = [SampleScores(Sample("1", 1), "en", {"m": Score.nan("no_statements")})]
    assert as_tuple(RunResult(["m"], samples, [], RunManifest.from_json({})).summaries["m"]) == (
        "NaN",
        0,
        1,
        {"no_statements": 1},
    )


def test_total_usage():
    assert result().usage() == Usage(calls=4, cached_calls=1, prompt_tokens=600, completion_tokens=80, seconds=3.0004)


def test_summary_dict():
    assert result(interrupted=True).summary_dict() == {
        "format_version": 1,
        "interrupted": True,
        "samples": 3,
        "row_errors": [
            "line 3 (id q3): response: expected a string, got a number",
            "line 4: not valid JSON: Expecting value (column 1)",
        ],
        "row_warnings": [
            "line 2 (id q2): reference_context_ids: item at index 0 is a boolean; expected a string or integer"
        ],
        "metrics": {
            "faithfulness": {
                "mean": 0.666667,
                "count": 1,
                "nan_count": 2,
                "nan_reasons": {"judge_timeout": 1, "missing_field:retrieved_contexts": 1},
            },
            "answer_length": {"mean": 0.75, "count": 2, "nan_count": 1, "nan_reasons": {"judge_timeout": 1}},
            "unused": {"mean": None, "count": 0, "nan_count": 0, "nan_reasons": {}},
        },
        "judge": {
            "calls": 4,
            "cached_calls": 1,
            "prompt_tokens": 600,
            "completion_tokens": 80,
            "seconds": 3.0,
            "tokens_per_sample": 226.7,
            "seconds_per_sample": 1.0,
        },
    }


def test_summary_dict_of_an_empty_run():
    assert RunResult([], [], [], RunManifest.from_json({})).summary_dict() == {
        "format_version": FORMAT_VERSION,
        "interrupted": False,
        "samples": 0,
        "row_errors": [],
        "row_warnings": [],
        "metrics": {},
        "judge": {
            "calls": 0,
            "cached_calls": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "seconds": 0.0,
            "tokens_per_sample": 0.0,
            "seconds_per_sample": 0.0,
        },
    }


def test_sample_record_puts_null_for_nan_with_its_reason():
    assert sample_record(scores()[1]) == {
        "id": "q2",
        "row": 2,
        "lang": "en",
        "scores": {"faithfulness": None, "answer_length": 1.0},
        "nan_reasons": {"faithfulness": "judge_timeout"},
        "evidence": {"faithfulness": {"step": "statement_support", "detail": "no answer after 60 s"}},
        "judge": {"calls": 1, "cached_calls": 0, "prompt_tokens": 200, "completion_tokens": 30, "seconds": 1.0},
    }


# --- the saved folder --------------------------------------------------------------------------


def test_save_writes_the_three_files(tmp_path):
    out = tmp_path / "run" / "nested"
    result().save(out)
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "report.html", "samples.jsonl", "summary.json"]

    lines = (out / "samples.jsonl").read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    assert lines[0] == (
        '{"id": "q1", "row": 1, "lang": "en", "scores": {"faithfulness": 0.666667, "answer_length": 0.5}, '
        '"nan_reasons": {}, "evidence": {"faithfulness": {"statements": ['
        '{"statement": "Paris is in France.", "verdict": 1, "reason": "Stated."}, '
        '{"statement": "Paris is big.", "verdict": 0, "reason": "Not mentioned."}, '
        '{"statement": "Paris is old.", "verdict": 1, "reason": "Stated."}]}}, '
        '"judge": {"calls": 3, "cached_calls": 1, "prompt_tokens": 400, "completion_tokens": 50, "seconds": 2.0}}'
    )
    assert [json.loads(line) for line in lines[1:-1]] == [
        {
            "id": "q2",
            "row": 2,
            "lang": "en",
            "scores": {"faithfulness": None, "answer_length": 1.0},
            "nan_reasons": {"faithfulness": "judge_timeout"},
            "evidence": {"faithfulness": {"step": "statement_support", "detail": "no answer after 60 s"}},
            "judge": {"calls": 1, "cached_calls": 0, "prompt_tokens": 200, "completion_tokens": 30, "seconds": 1.0},
        },
        {
            "id": "5",
            "row": 5,
            "lang": "ja",
            "scores": {"faithfulness": None, "answer_length": None},
            "nan_reasons": {"faithfulness": "missing_field:retrieved_contexts", "answer_length": "judge_timeout"},
            "evidence": {"answer_length": {"step": "statements", "detail": "slow"}},
            "judge": {"calls": 0, "cached_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0},
        },
    ]
    assert "NaN" not in (out / "samples.jsonl").read_text(encoding="utf-8")

    summary = (out / "summary.json").read_text(encoding="utf-8")
    assert summary == json.dumps(result().summary_dict(), ensure_ascii=False, indent=2) + "\n"
    assert json.loads(summary)["metrics"]["unused"]["mean"] is None
    assert json.loads(summary)["row_errors"] == [
        "line 3 (id q3): response: expected a string, got a number",
        "line 4: not valid JSON: Expecting value (column 1)",
    ]

    manifest = (out / "manifest.json").read_text(encoding="utf-8")
    assert manifest.startswith('{\n  "format_version": 1,\n  "created": "2025-01-02T03:04:05+00:00",\n')
    assert json.loads(manifest) == {
        "format_version": 1,
        "created": "2025-01-02T03:04:05+00:00",
        "dataset": None,
        "metrics": ["faithfulness", "answer_length"],
        "metric_options": {},
        "lang": "en",
        "judge": {
            "path": "/models/judge.gguf",
            "name": None,
            "sha256": "ab12",
            "size": None,
            "architecture": None,
            "chat_template": "from GGUF metadata",
            "chat_template_sha256": "cd34",
            "config": {},
        },
        "prompts": {},
        "versions": {},
        "languages": {},
    }
    assert load_results(out).manifest == MANIFEST


def test_save_keeps_non_ascii_text(tmp_path):
    sample = SampleScores(Sample("東京", 1), "ja", {"m": Score(1.0, evidence={"statement": "東京は首都です。"})})
    RunResult(["m"], [sample], [], RunManifest.from_json({"lang": "ja"})).save(tmp_path)
    assert (tmp_path / "samples.jsonl").read_text(encoding="utf-8") == (
        '{"id": "東京", "row": 1, "lang": "ja", "scores": {"m": 1.0}, "nan_reasons": {}, '
        '"evidence": {"m": {"statement": "東京は首都です。"}}, '
        '"judge": {"calls": 0, "cached_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0}}\n'
    )


def test_save_overwrites_a_previous_save(tmp_path):
    result().save(tmp_path)
    RunResult(["m"], [], [], RunManifest.from_json({})).save(tmp_path)
    assert (tmp_path / "samples.jsonl").read_text(encoding="utf-8") == ""
    assert json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))["created"] == ""


# --- the terminal table ------------------------------------------------------------------------


def test_summary_table(shelf):
    shelf(card("faithfulness", "en"))
    assert (
        summary_table(result(interrupted=True))
        == """\
metric         mean   scored  NaN  validated         NaN reasons
-------------  -----  ------  ---  ----------------  -----------------------------------------------------
faithfulness   0.667  1       2    yes               judge_timeout ×1, missing_field:retrieved_contexts ×1
answer_length  0.750  2       1    no: not measured  judge_timeout ×1
unused         —      0       0    no: not measured
validated: the metric's agreement with people beats its model-free floor in the samples' languages (`localeval metrics`); read the others with care.

3 samples; judge: 4 calls (1 reused), 680 tokens (227/sample), 3.0 s (1.00 s/sample)
2 rows skipped for bad values (all listed in summary.json: row_errors)
Interrupted: scores not yet computed are NaN with reason 'interrupted'."""
    )


def test_summary_table_marks_by_language_and_names_the_judge_the_cards_were_measured_with(shelf):
    shelf(card("faithfulness", "en", judge="qwen2.5-coder-1.5b"))
    samples = [SampleScores(Sample("1", 1), "en", {"faithfulness": Score(1.0)})]
    manifest = RunManifest.from_json({"languages": {"en": 1, "ja": 1}, "judge": {"name": "big-judge"}})
    lines = summary_table(RunResult(["faithfulness"], samples, [], manifest)).splitlines()
    assert lines[2].split(None, 4)[4] == "en yes; ja no: not measured"
    assert lines[4] == "The cards were measured with qwen2.5-coder-1.5b, not with this run's judge."


def test_summary_table_without_row_errors_or_interruption(shelf):
    shelf(card("faithfulness", "en"))
    samples = [SampleScores(Sample("1", 1), "en", {"faithfulness": Score(1.0)}, Usage(2, 0, 300, 20, 1.25))]
    assert (
        summary_table(RunResult(["faithfulness"], samples, [], RunManifest.from_json({})))
        == """\
metric        mean   scored  NaN  validated  NaN reasons
------------  -----  ------  ---  ---------  -----------
faithfulness  1.000  1       0    yes

1 sample; judge: 2 calls (0 reused), 320 tokens (320/sample), 1.2 s (1.25 s/sample)"""
    )


def test_summary_table_of_an_empty_run():
    assert (
        summary_table(RunResult([], [], [], RunManifest.from_json({})))
        == """\
metric  mean  scored  NaN  validated  NaN reasons
------  ----  ------  ---  ---------  -----------

0 samples; judge: 0 calls (0 reused), 0 tokens (0/sample), 0.0 s (0.00 s/sample)"""
    )


def test_a_tally_gives_the_same_mean_in_any_order():
    values = [0.1, 0.2, 0.3, 1 / 3, 0.7000004, 0.9999996]
    means = set()
    for order in (values, values[::-1], sorted(values, key=str)):
        tally = Tally(["m"])
        for i, value in enumerate(order):
            tally.add(SampleScores(Sample(str(i), i), "en", {"m": Score(value)}))
        means.add(tally.summary("m").mean)
    assert means == {(100000 + 200000 + 300000 + 333333 + 700000 + 1000000) / 6_000_000}


def test_a_result_that_streamed_its_samples_refuses_to_save_a_folder_without_them(tmp_path):
    tally = Tally(["m"])
    tally.add(SampleScores(Sample("a", 1), "en", {"m": Score(0.5)}))
    streamed = RunResult(["m"], [], [], RunManifest.from_json({}), tally=tally)
    assert (streamed.sample_count, streamed.summaries["m"].mean) == (1, 0.5)
    with pytest.raises(ConfigError, match="does not hold its samples"):
        streamed.save(tmp_path)
    streamed.save_summary(tmp_path)
    assert json.loads((tmp_path / "summary.json").read_text())["samples"] == 1
