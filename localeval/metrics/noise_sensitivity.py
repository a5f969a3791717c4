"""Noise sensitivity: how often the response repeats a wrong claim that a retrieved context put there.

A context is relevant when it supports at least one of the reference's statements (P ≥ 0.5). A
response statement is wrong with probability 1 − P(the reference supports it), and a context carries
it with P(the context supports it); the shares are expected values (see scoring.noise_shares).
Lower is better.
"""

from __future__ import annotations

from localeval.data.samples import Sample
from localeval.metrics.base import MetricProgram, Score, metric
from localeval.metrics.claims import CLAIM_STEPS, claims_of_both, judged, nonblank
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.metrics.scoring import noise_shares

_FIELDS = ("user_input", "response", "reference", "retrieved_contexts")
_STEPS = CLAIM_STEPS


def _noise(sample: Sample, options: MetricOptions, which: str) -> MetricProgram:
    contexts = nonblank(sample.retrieved_contexts)
    if not contexts:
        return Score.nan("empty_contexts")
    claims, reference_claims = yield from claims_of_both(sample)
    if not claims:
        return Score.nan("no_statements")
    # One round: each claim against the reference, then each context against every reference claim
    # (is the context relevant?) and against every response claim (does it carry the claim?).
    checks = (
        [([sample.text("reference")], c) for c in claims]
        + [([context], c) for context in contexts for c in reference_claims]
        + [([context], c) for context in contexts for c in claims]
    )
    supports = yield from judged(checks, options)
    correct, grounding = (
        supports[: len(claims)],
        supports[len(claims) : len(claims) + len(contexts) * len(reference_claims)],
    )
    carrying = supports[len(claims) + len(grounding) :]
    relevant = [
        any(s.p >= 0.5 for s in grounding[i * len(reference_claims) : (i + 1) * len(reference_claims)])
        for i in range(len(contexts))
    ]
    carried = [[carrying[i * len(claims) + j].p for i in range(len(contexts))] for j in range(len(claims))]
    shares = noise_shares([1 - s.p for s in correct], relevant, carried)
    evidence = {
        "response_statements": [s.row for s in correct],
        "relevant_contexts": [i + 1 for i, r in enumerate(relevant) if r],
        "carried_by_context": [[round(p, 6) for p in row] for row in carried],
    }
    return Score(shares[which], evidence=evidence)


@metric("noise_sensitivity_relevant", required=_FIELDS, steps=_STEPS, models=("judge",))
def noise_sensitivity_relevant(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Share of response statements that are wrong yet supported by a relevant context (lower is better)."""
    return (yield from _noise(sample, options, "relevant"))


@metric("noise_sensitivity_irrelevant", required=_FIELDS, steps=_STEPS, models=("judge",))
def noise_sensitivity_irrelevant(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Share of response statements that are wrong and supported only by irrelevant contexts (lower is better)."""
    return (yield from _noise(sample, options, "irrelevant"))
