"""The bootstrap interval of a mean: one seeded function, shared by the run report and the run comparison."""

from __future__ import annotations

import numpy as np

RESAMPLES = 2000
CONFIDENCE = 0.95
_DRAWS_AT_ONCE = 250_000  # indices drawn per chunk (4 MB with the values they pick): all at once, 20,000 samples
# x 2,000 resamples would take 640 MB, and a report must cost no more memory than the run it reports


def mean_interval(values: np.ndarray, resamples: int = RESAMPLES, confidence: float = CONFIDENCE,
                  seed: int = 0) -> tuple[float, float]:
    """Percentile interval of the mean of `values` resampled with replacement; the same values give the same interval."""
    n = len(values)
    if n == 0:
        raise ValueError("no values to resample")
    if n == 1:
        return float(values[0]), float(values[0])
    rng = np.random.default_rng(seed)
    per_chunk = max(1, _DRAWS_AT_ONCE // n)
    means = np.concatenate([values[rng.integers(0, n, size=(min(per_chunk, resamples - done), n))].mean(axis=1)
                            for done in range(0, resamples, per_chunk)])
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)
