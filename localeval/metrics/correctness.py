"""Answer correctness and factual correctness: the response's statements against the reference's.

TP: response statements the reference supports; FP: those it does not; FN: reference statements
the response does not support. Each is a sum of P(supported) (see claims.py), not a count of 0/1 verdicts. Every metric here makes the same calls, so they run once.
factual_correctness's recall counts on the reference's side (its statements the response
supports), so precision and recall each come from one side's own verdicts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from localeval.data.samples import Sample
from localeval.metrics.answer_similarity import similarity
from localeval.metrics.base import MetricProgram, Program, Score, metric
from localeval.metrics.claims import CLAIM_STEPS, claims_of_both, judged
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.metrics.scoring import (
    apply_threshold,
    f_beta,
    f_beta_of,
    fraction,
    unit_interval,
    weighted_mean,
)

_FIELDS = ("user_input", "response", "reference")
_STEPS = CLAIM_STEPS


@dataclass(frozen=True)
class Classified:
    """Expected TP, FP and FN: sums of P(supported), so a doubtful statement counts in part on both sides."""

    tp: float
    fp: float
    fn: float
    reference_claims: int
    evidence: dict[str, Any]

    def totals(self) -> dict[str, float]:
        return {"tp": round(self.tp, 6), "fp": round(self.fp, 6), "fn": round(self.fn, 6)}


def classify(sample: Sample, options: MetricOptions) -> Program[Classified | None]:
    """TP, FP and FN with the supports behind them; None when neither text states anything."""
    response, reference = sample.text("response"), sample.text("reference")
    claims, reference_claims = yield from claims_of_both(sample)
    if not claims and not reference_claims:
        return None
    supports = yield from judged(
        [([reference], c) for c in claims] + [([response], c) for c in reference_claims], options
    )
    claim_supports, reference_supports = supports[: len(claims)], supports[len(claims) :]
    tp = sum(s.p for s in claim_supports)
    fn = sum(1 - s.p for s in reference_supports)
    evidence = {
        "response_statements": [s.row for s in claim_supports],
        "reference_statements": [s.row for s in reference_supports],
    }
    return Classified(tp, len(claims) - tp, fn, len(reference_claims), evidence)


@metric("answer_correctness", required=_FIELDS, steps=_STEPS, models=("judge", "embedder"))
def answer_correctness(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Weighted mean of factuality (F-beta of TP/FP/FN statements) and answer similarity, weights 0.75/0.25."""
    counts = yield from classify(sample, options)
    if counts is None:
        return Score.nan("no_statements")
    factuality = f_beta(counts.tp, counts.fp, counts.fn, options.beta)
    similar = unit_interval(float((yield similarity(sample.text("response"), sample.text("reference")))[0]))
    value = weighted_mean([factuality, similar], options.correctness_weights)
    evidence = {**counts.totals(), "factuality": factuality, "similarity": round(similar, 4), **counts.evidence}
    if math.isnan(value):
        return Score.nan("encoder_nan", **evidence)
    return Score(apply_threshold(value, options.correctness_threshold), evidence=evidence)


def _factual(sample: Sample, options: MetricOptions, which: str) -> MetricProgram:
    counts = yield from classify(sample, options)
    if counts is None:
        return Score.nan("no_statements")
    precision = fraction(counts.tp, counts.tp + counts.fp)
    recall = fraction(counts.reference_claims - counts.fn, counts.reference_claims)
    value = {"f1": f_beta_of(precision, recall, options.beta), "precision": precision, "recall": recall}[which]
    evidence = {**counts.totals(), **counts.evidence}
    if math.isnan(value):  # the response (precision) or the reference (recall) states nothing
        return Score.nan("no_statements", **evidence)
    return Score(value, evidence=evidence)


@metric("factual_correctness", required=_FIELDS, steps=_STEPS, models=("judge",))
def factual_correctness(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """F-beta of claim-level precision (response claims the reference supports) and recall (the reverse).

    NaN `no_statements` when either side states nothing, since one of the two is then undefined.
    """
    return (yield from _factual(sample, options, "f1"))


@metric("factual_correctness_precision", required=_FIELDS, steps=_STEPS, models=("judge",))
def factual_correctness_precision(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Share of the response's claims that the reference supports."""
    return (yield from _factual(sample, options, "precision"))


@metric("factual_correctness_recall", required=_FIELDS, steps=_STEPS, models=("judge",))
def factual_correctness_recall(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Share of the reference's claims that the response supports."""
    return (yield from _factual(sample, options, "recall"))
