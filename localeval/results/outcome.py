"""Whether a finished run did its job: a run whose judge failed on most scores must not pass as a success."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from localeval.metrics import Metric
from localeval.reasons import JUDGE_FAILURES, counted
from localeval.results.run_result import RunResult

# More than this share of the judge-based scores lost to judge failures fails the run (the CLI exits 3).
JUDGE_FAILURE_LIMIT = 0.5


@dataclass(frozen=True)
class JudgeFailures:
    """Judge-based scores lost to a judge failure, out of those that got a score or such a failure.

    Scores that are NaN for a reason of the data (a missing field, no statements, ...) count on neither side.
    """

    failed: int
    judged: int
    reasons: dict[str, int] = field(default_factory=dict)

    @property
    def share(self) -> float:
        return self.failed / self.judged if self.judged else 0.0

    @property
    def too_many(self) -> bool:
        return self.share > JUDGE_FAILURE_LIMIT

    def describe(self) -> str:
        return (
            f"the judge failed on {self.failed} of {self.judged} judge-based scores ({self.share:.0%}: "
            f"{counted(self.reasons)}), more than the {JUDGE_FAILURE_LIMIT:.0%} a run may lose; their NaN reasons and "
            f"details are in samples.jsonl, and `localeval doctor` checks the judge"
        )


def judge_failures(result: RunResult, metrics: list[Metric]) -> JudgeFailures:
    """Count, over the metrics that use the judge, the scores that a judge failure turned into NaN."""
    judged = [result.summaries[metric.name] for metric in metrics if "judge" in metric.models]
    reasons: Counter[str] = Counter()
    for summary in judged:
        reasons.update({reason: count for reason, count in summary.nan_reasons.items() if reason in JUDGE_FAILURES})
    failed = sum(reasons.values())
    scored = sum(summary.count for summary in judged)
    return JudgeFailures(failed, failed + scored, dict(sorted(reasons.items())))
