"""The scoring math: small pure functions, unit-tested on hand-computed cases.

NaN means "nothing to score"; the caller attaches the reason code.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from localeval.text import normalize


def fraction(hits: int, total: int) -> float:
    """hits / total; NaN when there is nothing to count."""
    return hits / total if total else math.nan


def average_precision(verdicts: Sequence[int]) -> float:
    """Σ_k precision@k · v_k / (number of useful items), over ranks k = 1..n; 0 when none is useful."""
    useful = 0
    total = 0.0
    for rank, verdict in enumerate(verdicts, start=1):
        if verdict:
            useful += 1
            total += useful / rank
    if not verdicts:
        return math.nan
    return total / useful if useful else 0.0


def f_beta(tp: int, fp: int, fn: int, beta: float = 1.0) -> float:
    """F-beta from counts; NaN when there is nothing at all, 0 when nothing is right."""
    if tp + fp + fn == 0:
        return math.nan
    b2 = beta * beta
    return (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp)


def weighted_mean(values: Sequence[float], weights: Sequence[float]) -> float:
    """Σ w·v / Σ w; NaN if any value is NaN or the weights sum to zero."""
    if len(values) != len(weights):
        raise ValueError("values and weights differ in length")
    total = sum(weights)
    if total == 0 or any(math.isnan(v) for v in values):
        return math.nan
    return sum(v * w for v, w in zip(values, weights)) / total


def apply_threshold(value: float, threshold: float | None) -> float:
    """1.0 at or above the threshold, else 0.0; unchanged without a threshold or for NaN."""
    if threshold is None or math.isnan(value):
        return value
    return 1.0 if value >= threshold else 0.0


def majority(votes: Sequence[int]) -> int:
    """The verdict most votes agree on (1 or 0); strictness is odd, so there is no tie."""
    if not votes:
        raise ValueError("no votes")
    return 1 if 2 * sum(votes) > len(votes) else 0


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else math.nan


def entity_recall(reference_entities: Iterable[str], context_entities: Iterable[str], context_text: str = "") -> float:
    """Share of the reference's entities found in the contexts, compared after NFKC, case and space normalisation.

    An entity counts as found when the contexts' entity list has it, or when it appears verbatim in the
    contexts' text (a small judge often lists "Paris, France" where the reference says "Paris").
    """
    wanted = {normalize(e) for e in reference_entities if normalize(e)}
    if not wanted:
        return math.nan
    found = {normalize(e) for e in context_entities}
    text = normalize(context_text)
    return sum(1 for e in wanted if e in found or (text and e in text)) / len(wanted)
