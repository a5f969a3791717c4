"""Context precision and utilization: are the useful contexts ranked first?"""

from __future__ import annotations

from localeval.data.samples import Sample
from localeval.metrics.base import MetricProgram, Score, metric
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.metrics.scoring import average_precision
from localeval.steps import Call


def _ranked_usefulness(sample: Sample, answer: str) -> MetricProgram:
    """One verdict per retrieved context, in rank order; a blank context is not useful and costs no call.

    A context counts as useful with the judge's own P(1) for its verdict, so average precision is taken
    over expected counts: a doubtful verdict counts in part, and two contexts the judge is unsure about
    no longer tie with two it is sure of.
    """
    contexts = sample.texts("retrieved_contexts")
    user_input = sample.text("user_input")
    ranks = [i for i, c in enumerate(contexts) if c.strip()]
    if not ranks:
        return Score.nan("empty_contexts")
    verdicts = yield [
        Call.of("context_usefulness", user_input=user_input, answer=answer, context=contexts[i]) for i in ranks
    ]
    by_rank = dict(zip(ranks, verdicts))
    useful = [by_rank[i].p if i in by_rank else 0.0 for i in range(len(contexts))]
    evidence = [
        {"rank": i + 1, "verdict": by_rank[i].verdict, "p": round(useful[i], 4), "reason": by_rank[i].reason}
        if i in by_rank
        else {"rank": i + 1, "verdict": 0, "p": 0.0, "reason": "blank context"}
        for i in range(len(contexts))
    ]
    return Score(average_precision(useful), evidence={"contexts": evidence})


@metric(
    "context_precision",
    required=("user_input", "retrieved_contexts", "reference"),
    steps=("context_usefulness",),
    models=("judge",),
)
def context_precision(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Average precision of the contexts' usefulness for arriving at the reference, over ranks."""
    return (yield from _ranked_usefulness(sample, sample.text("reference")))


@metric(
    "context_utilization",
    required=("user_input", "retrieved_contexts", "response"),
    steps=("context_usefulness",),
    models=("judge",),
)
def context_utilization(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Average precision of the contexts' usefulness for the response, over ranks (reference-free)."""
    return (yield from _ranked_usefulness(sample, sample.text("response")))
