"""Tests for localeval.results.outcome: which NaN scores count as the judge's failures, and where a run fails."""

from __future__ import annotations

from localeval.data.samples import Sample
from localeval.metrics import METRICS, Score
from localeval.reasons import JUDGE_FAILURES
from localeval.results.manifest import RunManifest
from localeval.results.outcome import JUDGE_FAILURE_LIMIT, judge_failures
from localeval.results.run_result import RunResult
from localeval.results.sample_scores import SampleScores

JUDGED, FREE = METRICS["rubric_score"], METRICS["exact_match"]


def run(*rubric_scores: Score) -> RunResult:
    samples = [
        SampleScores(Sample(str(i), i), "en", {JUDGED.name: score, FREE.name: Score(1.0)})
        for i, score in enumerate(rubric_scores, start=1)
    ]
    return RunResult([JUDGED.name, FREE.name], samples, [], RunManifest.from_json({}))


def test_every_failure_code_of_a_step_counts():
    assert set(JUDGE_FAILURES) == {
        "context_overflow",
        "judge_truncated",
        "judge_unparseable",
        "judge_invalid",
        "judge_timeout",
        "judge_error",
    }
    failures = judge_failures(run(*(Score.nan(reason) for reason in JUDGE_FAILURES)), [JUDGED, FREE])
    assert (failures.failed, failures.judged, failures.share) == (6, 6, 1.0)
    assert failures.reasons == dict.fromkeys(sorted(JUDGE_FAILURES), 1)


def test_nan_for_the_data_counts_on_neither_side_and_model_free_scores_not_at_all():
    failures = judge_failures(
        run(Score.nan("judge_error"), Score(4.0), Score.nan("missing_field:response"), Score.nan("interrupted")),
        [JUDGED, FREE],
    )
    assert (failures.failed, failures.judged) == (1, 2)


def test_a_run_fails_only_past_the_limit():
    assert JUDGE_FAILURE_LIMIT == 0.5
    half = judge_failures(run(Score.nan("judge_error"), Score(4.0)), [JUDGED, FREE])
    assert half.share == 0.5 and not half.too_many
    most = judge_failures(run(Score.nan("judge_error"), Score.nan("judge_timeout"), Score(4.0)), [JUDGED, FREE])
    assert most.too_many
    assert most.describe().startswith(
        "the judge failed on 2 of 3 judge-based scores (67%: judge_error ×1, "
        "judge_timeout ×1), more than the 50% a run may lose"
    )


def test_a_run_without_judge_scores_never_fails_on_the_judge():
    failures = judge_failures(run(Score.nan("missing_field:response")), [JUDGED, FREE])
    assert (failures.failed, failures.judged, failures.share, failures.too_many) == (0, 0, 0.0, False)
