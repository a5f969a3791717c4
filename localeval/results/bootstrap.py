"""Bootstrap intervals, seeded: of a mean (the run report and the run comparison) and of AUROCs (calibrate)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from localeval.metrics.scoring import auroc

RESAMPLES = 2000
CONFIDENCE = 0.95
_DRAWS_AT_ONCE = 250_000  # indices drawn per chunk (4 MB with the values they pick): all at once, 20,000 samples
# x 2,000 resamples would take 640 MB, and a report must cost no more memory than the run it reports


def mean_interval(
    values: np.ndarray, resamples: int = RESAMPLES, confidence: float = CONFIDENCE, seed: int = 0
) -> tuple[float, float]:
    """Percentile interval of the mean of `values` resampled with replacement; the same values give the same interval."""
    n = len(values)
    if n == 0:
        raise ValueError("no values to resample")
    if n == 1:
        return float(values[0]), float(values[0])
    rng = np.random.default_rng(seed)
    per_chunk = max(1, _DRAWS_AT_ONCE // n)
    means = np.concatenate(
        [
            values[rng.integers(0, n, size=(min(per_chunk, resamples - done), n))].mean(axis=1)
            for done in range(0, resamples, per_chunk)
        ]
    )
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class Figure:
    """An AUROC with its 95% bootstrap interval."""

    auroc: float
    low: float
    high: float

    def __str__(self) -> str:
        if math.isnan(self.auroc):
            return "n/a"
        return f"{self.auroc:.3f} ({self.low:.3f}–{self.high:.3f})"

    def as_dict(self) -> dict[str, float]:
        return {"auroc": round(self.auroc, 4), "low": round(self.low, 4), "high": round(self.high, 4)}


def auroc_intervals(
    scores: Mapping[str, Sequence[float]],
    truth: Sequence[bool],
    units: Sequence[str],
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Figure]:
    """Each scorer's AUROC with a percentile interval from resampling whole units (labels of one question
    together, since they are not independent), the same draws for every scorer so that they compare."""
    positive = np.array(truth, dtype=bool)
    unit_ids = {unit: n for n, unit in enumerate(dict.fromkeys(units))}
    unit_of = np.array([unit_ids[u] for u in units], dtype=np.int64)
    members = [np.flatnonzero(unit_of == n) for n in range(len(unit_ids))]
    rng = np.random.default_rng(seed)
    draws = (
        [np.concatenate([members[n] for n in rng.integers(0, len(members), len(members))]) for _ in range(resamples)]
        if members
        else []
    )
    tail = (1 - CONFIDENCE) / 2 * 100
    figures = {}
    for name, values in scores.items():
        array = np.array(values, dtype=np.float64)
        drawn = [a for a in (auroc(array[d], positive[d]) for d in draws) if not math.isnan(a)]
        low, high = np.percentile(drawn, [tail, 100 - tail]) if drawn else (math.nan, math.nan)
        figures[name] = Figure(auroc(array, positive), float(low), float(high))
    return figures
