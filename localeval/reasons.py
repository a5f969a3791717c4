"""Every reason a score can be NaN, in one place: `Score.nan` refuses any other, and docs/evaluating.md lists each."""

from collections.abc import Mapping

MISSING_FIELD = "missing_field"  # written `missing_field:<name>`, naming the field the row lacks

# The row gives the metric nothing to score.
DATA_REASONS = (
    MISSING_FIELD,
    "empty_contexts",
    "empty_reference_contexts",
    "empty_retrieved_context_ids",
    "empty_reference_context_ids",
    "no_statements",
    "no_entities",
    "no_tokens",
    "no_question_parts",
)
# Every reason code a judge step ends with instead of an output.
JUDGE_FAILURES = (
    "context_overflow",
    "judge_truncated",
    "judge_unparseable",
    "judge_invalid",
    "judge_timeout",
    "judge_error",
)
# The embedder, a bug in a metric, Ctrl-C, or a default-suite metric in a language where it is not validated.
RUN_REASONS = ("encoder_nan", "metric_error", "interrupted", "not_validated")
NAN_REASONS = DATA_REASONS + JUDGE_FAILURES + RUN_REASONS


def counted(reasons: Mapping[str, int]) -> str:
    """`no_statements ×2, judge_timeout ×1`: NaN reasons with their counts, as every report writes them."""
    return ", ".join(f"{reason} ×{count}" for reason, count in reasons.items())


def is_nan_reason(reason: str) -> bool:
    """True for a listed reason, or `missing_field:<name>`: an unlisted one would reach reports undocumented."""
    code, _, field = reason.partition(":")
    return code in NAN_REASONS and bool(field) == (code == MISSING_FIELD)
