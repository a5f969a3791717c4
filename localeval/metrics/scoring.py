"""The scoring math: small pure functions, unit-tested on hand-computed cases.

NaN means "nothing to score"; the caller attaches the reason code.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

from localeval.data.text import normalize


def fraction(hits: float, total: float) -> float:
    """hits / total; NaN when there is nothing to count."""
    return hits / total if total else math.nan


def average_precision(verdicts: Sequence[float]) -> float:
    """Σ_k precision@k · v_k / (number of useful items), over ranks k = 1..n; 0 when none is useful.

    A verdict may be a probability of being useful: the counts become expected counts, and 0/1 verdicts
    give the usual average precision.
    """
    useful = 0.0
    total = 0.0
    for rank, verdict in enumerate(verdicts, start=1):
        useful += verdict
        total += verdict * useful / rank
    if not verdicts:
        return math.nan
    return total / useful if useful else 0.0


def f_beta(tp: float, fp: float, fn: float, beta: float = 1.0) -> float:
    """F-beta from (expected) counts; NaN when there is nothing at all, 0 when nothing is right."""
    if tp + fp + fn == 0:
        return math.nan
    b2 = beta * beta
    return (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp)


def f_beta_of(precision: float, recall: float, beta: float = 1.0) -> float:
    """F-beta from precision and recall; NaN if either is NaN, 0 when both are 0."""
    if math.isnan(precision) or math.isnan(recall):
        return math.nan
    b2 = beta * beta
    denominator = b2 * precision + recall
    return (1 + b2) * precision * recall / denominator if denominator else 0.0


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


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else math.nan


def entity_recall(reference_entities: Iterable[str], context_entities: Iterable[str], context_text: str = "") -> float:
    """Share of the reference's entities found in the contexts, compared after NFKC, case and space normalisation.

    An entity counts as found when the contexts' entity list has it, or when it appears in the
    contexts' text (a small judge often lists "Paris, France" where the reference says "Paris"); in
    the text, an entity that starts or ends with a letter or digit must not sit inside a longer word
    ("US" is not in "USB"). CJK text has no spaces, so there a CJK entity matches anywhere.
    """
    wanted = {normalize(e) for e in reference_entities if normalize(e)}
    if not wanted:
        return math.nan
    found = {normalize(e) for e in context_entities}
    text = normalize(context_text)
    return sum(1 for e in wanted if e in found or _appears(e, text)) / len(wanted)


def _appears(entity: str, text: str) -> bool:
    left = r"(?<![a-z0-9])" if re.match(r"[a-z0-9]", entity) else ""
    right = r"(?![a-z0-9])" if re.search(r"[a-z0-9]$", entity) else ""
    return re.search(left + re.escape(entity) + right, text) is not None


def unit_interval(value: float) -> float:
    """A similarity clamped to [0, 1] (a negative cosine means unrelated); NaN stays NaN, never a silent 0."""
    return value if math.isnan(value) else min(1.0, max(0.0, value))


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of two token sequences: the match count behind ROUGE-L."""
    if len(a) < len(b):
        a, b = b, a  # keep the shorter sequence as the row
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rouge_l_f1(lcs: int, candidate_length: int, reference_length: int) -> float:
    """F1 of LCS precision (lcs / candidate) and recall (lcs / reference), i.e. 2·lcs / (c + r); NaN with no tokens."""
    if candidate_length + reference_length == 0:
        return math.nan
    return 2 * lcs / (candidate_length + reference_length)


def noise_shares(
    wrong: Sequence[float], relevant: Sequence[bool], carried: Sequence[Sequence[float]]
) -> dict[str, float]:
    """Expected shares of the response's claims that are wrong and carried by a relevant context, or only by others.

    `wrong[j]` is P(claim j is wrong), `relevant[i]` whether context i is relevant, and `carried[j][i]`
    P(context i supports claim j). A claim counts for "relevant" with P(wrong) times its strongest
    support among relevant contexts, and for "irrelevant" with what remains, times its strongest
    support among the others. With 0/1 inputs these are the plain shares.
    """
    if not wrong:
        return {"relevant": math.nan, "irrelevant": math.nan}
    by_relevant = by_irrelevant = 0.0
    for p_wrong, supports in zip(wrong, carried):
        from_relevant = max((p for p, r in zip(supports, relevant) if r), default=0.0)
        from_irrelevant = max((p for p, r in zip(supports, relevant) if not r), default=0.0)
        by_relevant += p_wrong * from_relevant
        by_irrelevant += p_wrong * (1 - from_relevant) * from_irrelevant
    return {"relevant": by_relevant / len(wrong), "irrelevant": by_irrelevant / len(wrong)}


def conciseness(summary_length: int, text_length: int) -> float:
    """1 - length ratio of summary to text, in [0, 1]: a summary as long as the text scores 0."""
    if text_length <= 0:
        return math.nan
    return 1.0 - min(summary_length, text_length) / text_length


def auroc(
    scores: Sequence[float] | npt.NDArray[np.float64], positives: Sequence[bool] | npt.NDArray[np.bool_]
) -> float:
    """Probability that a random positive scores above a random negative (ties count half); NaN without both.

    The Mann-Whitney U statistic from average ranks, so a bootstrap can afford thousands of them.
    """
    from scipy.stats import rankdata

    values = np.asarray(scores, dtype=np.float64)
    positive = np.asarray(positives, dtype=bool)
    if np.isnan(values).any():
        raise ValueError("auroc: a NaN score has no rank; leave its row out first")
    n_pos = int(positive.sum())
    n_neg = len(positive) - n_pos
    if not n_pos or not n_neg:
        return math.nan
    ranks = rankdata(values)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
