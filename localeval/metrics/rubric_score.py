"""Rubric score: a 1-5 grade of the response against a rubric."""

from localeval.data.samples import RUBRIC_FIELD, Sample
from localeval.metrics.base import MetricProgram, Score, metric
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.steps import Call
from localeval.steps.criteria import REFERENCE_FREE, WITH_REFERENCE


def rubric_for(sample: Sample, options: MetricOptions) -> tuple[str, str]:
    """(where it came from, rubric text): the sample's own `rubric` column, else the built-in default."""
    own = sample.extra.get(RUBRIC_FIELD)
    if isinstance(own, str) and own.strip():
        return "sample", own
    name = WITH_REFERENCE if sample.has("reference") else REFERENCE_FREE
    return name, options.rubric(name)


@metric(
    "rubric_score",
    required=("user_input", "response"),
    steps=("rubric",),
    models=("judge",),
    score_range=(1.0, 5.0),
    optional=("reference", RUBRIC_FIELD),
)
def rubric_score(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Judge's 1-5 grade against a rubric: the sample's own `rubric`, else the with-reference or reference-free default.

    Users replace the defaults with `--rubric NAME=TEXT` or a criteria file (names reference_free, with_reference).
    """
    source, rubric = rubric_for(sample, options)
    grade = yield Call.of(
        "rubric",
        rubric=rubric,
        user_input=sample.text("user_input"),
        response=sample.text("response"),
        reference=sample.reference or "",
    )
    return Score(float(grade.score), evidence={"rubric": source, "rubric_text": rubric, "reason": grade.reason})
