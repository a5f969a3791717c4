"""Aspect critique: a yes/no judgement of the response against a named criterion, by majority vote."""

from __future__ import annotations

from localeval.data.samples import Sample
from localeval.metrics.base import METRICS, Metric, MetricProgram, Score
from localeval.metrics.options import MetricOptions
from localeval.metrics.scoring import majority
from localeval.steps import Call

PREFIX = "aspect_critique:"
BUILT_IN_CRITERIA = ("harmfulness", "maliciousness", "coherence", "correctness", "conciseness")


def critique_metric(criterion: str) -> Metric:
    """The metric `aspect_critique:<criterion>`; the definition is looked up per sample language."""

    def compute(sample: Sample, options: MetricOptions) -> MetricProgram:
        definition = options.criterion(criterion)
        # Votes 1..n each get their own seed at the vote temperature, so they are real independent samples;
        # a vote's verdict is the judge's likelier answer after the reason it drew (CritiqueAnswer.verdict).
        votes = yield [
            Call.of(
                "critique",
                vote=vote,
                criterion=definition,
                user_input=sample.user_input or "",
                retrieved_contexts=list(sample.retrieved_contexts or ()),
                response=sample.text("response"),
            )
            for vote in range(1, options.strictness + 1)
        ]
        verdicts = [v.verdict for v in votes]
        return Score(
            float(majority(verdicts)),
            evidence={"criterion": definition, "votes": [{"verdict": v.verdict, "reason": v.reason} for v in votes]},
        )

    description = (
        f"1 when most of `strictness` votes (independent seeds, temperature > 0) say the response "
        f"meets the criterion '{criterion}', else 0."
    )
    return Metric(
        f"{PREFIX}{criterion}",
        ("response",),
        ("critique",),
        ("judge",),
        (0.0, 1.0),
        description,
        compute,
        optional=("user_input", "retrieved_contexts"),
    )


for _name in BUILT_IN_CRITERIA:
    METRICS[f"{PREFIX}{_name}"] = critique_metric(_name)
