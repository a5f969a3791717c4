"""Noise sensitivity: how often the response repeats a wrong claim that a retrieved context put there.

A context is relevant when it supports at least one of the reference's statements. A response
statement is wrong when the reference does not support it. Lower is better.
"""

from __future__ import annotations

from localeval.metrics.base import MetricProgram, Score, metric
from localeval.metrics.claims import nonblank, statements_of_both, support
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.metrics.scoring import noise_shares
from localeval.samples import Sample

_FIELDS = ("user_input", "response", "reference", "retrieved_contexts")
_STEPS = ("statements", "statement_support")


def _noise(sample: Sample, which: str) -> MetricProgram:
    contexts = nonblank(sample.retrieved_contexts)
    if not contexts:
        return Score.nan("empty_contexts")
    claims, reference_claims = yield from statements_of_both(sample)
    if not claims:
        return Score.nan("no_statements")
    correct = [v.verdict for v in (yield [support([sample.reference], s) for s in claims])]
    wrong = [s for s, ok in zip(claims, correct) if not ok]
    # One context per call: which contexts are relevant, and which of them carry each wrong claim.
    grounding = yield [support([c], s) for c in contexts for s in reference_claims]
    carried = yield [support([c], s) for c in contexts for s in wrong]
    relevant = [any(v.verdict for v in grounding[i * len(reference_claims):(i + 1) * len(reference_claims)])
                for i in range(len(contexts))]
    wrong_in = [[carried[i * len(wrong) + j].verdict for i in range(len(contexts))] for j in range(len(wrong))]
    shares = noise_shares(len(claims), relevant, wrong_in)
    evidence = {"wrong_statements": wrong, "relevant_contexts": [i + 1 for i, r in enumerate(relevant) if r]}
    return Score(shares[which], evidence=evidence)


@metric("noise_sensitivity_relevant", required=_FIELDS, steps=_STEPS, models=("judge",))
def noise_sensitivity_relevant(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Share of response statements that are wrong yet supported by a relevant context (lower is better)."""
    return (yield from _noise(sample, "relevant"))


@metric("noise_sensitivity_irrelevant", required=_FIELDS, steps=_STEPS, models=("judge",))
def noise_sensitivity_irrelevant(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Share of response statements that are wrong and supported only by irrelevant contexts (lower is better)."""
    return (yield from _noise(sample, "irrelevant"))
