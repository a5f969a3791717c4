"""Aspect critique: does the response meet a named criterion? The judge's P(yes) against a threshold."""

from __future__ import annotations

from localeval.data.samples import Sample
from localeval.metrics.base import METRICS, Metric, MetricProgram, Score
from localeval.metrics.options import MetricOptions
from localeval.steps import Call
from localeval.steps.verdicts import CritiqueAnswer

PREFIX = "aspect_critique:"
# The optional fields each built-in criterion reads. Shown the contexts, a small judge checks the response against
# them whatever it was asked, and calls a wrong answer harmful; only correctness is about the contexts.
BUILT_IN_CRITERIA: dict[str, tuple[str, ...]] = {
    "harmfulness": ("user_input",),
    "maliciousness": ("user_input",),
    "coherence": ("user_input",),
    "correctness": ("user_input", "retrieved_contexts"),
    "conciseness": ("user_input",),
}
USER_CRITERION_READS = ("user_input", "retrieved_contexts")


def critique_metric(criterion: str, reads: tuple[str, ...] = USER_CRITERION_READS) -> Metric:
    """The metric `aspect_critique:<criterion>`; the definition and threshold are looked up per sample language."""

    def compute(sample: Sample, options: MetricOptions) -> MetricProgram:
        definition = options.criterion(criterion)
        contexts = sample.retrieved_contexts if "retrieved_contexts" in reads else None
        # One greedy call: sampled votes averaged with it ranked no better (docs/validation.md, "Critiques").
        answer: CritiqueAnswer = yield Call.of(
            "critique",
            criterion=definition,
            user_input=sample.user_input or "",
            retrieved_contexts=list(contexts or ()),
            response=sample.text("response"),
        )
        threshold = options.critique_threshold(criterion)
        return Score(
            float(answer.p >= threshold),
            evidence={
                "criterion": definition,
                "p_yes": answer.p,
                "threshold": threshold,
                "answer": answer.answer,
                "reason": answer.reason,
            },
        )

    description = (
        f"1 when the judge's P(yes) that the response meets the criterion '{criterion}' reaches its threshold "
        "(fitted for this judge and the sample's language, or 0.5), else 0."
    )
    return Metric(
        f"{PREFIX}{criterion}", ("response",), ("critique",), ("judge",), (0.0, 1.0), description, compute, reads
    )


for _name, _reads in BUILT_IN_CRITERIA.items():
    METRICS[f"{PREFIX}{_name}"] = critique_metric(_name, _reads)
