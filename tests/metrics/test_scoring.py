"""Tests for localeval.metrics.scoring: the scoring math on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from localeval.metrics.scoring import fraction


@pytest.mark.parametrize(
    ("hits", "total", "expected"),
    [
        (2, 3, 2 / 3),
        (0, 5, 0.0),
        (5, 5, 1.0),
        (1, 4, 0.25),
    ],
)
def test_fraction(hits, total, expected):
    assert fraction(hits, total) == expected


def test_fraction_returns_a_float():
    assert type(fraction(4, 4)) is float


@pytest.mark.parametrize("hits", [0, 3])
def test_fraction_of_nothing_is_nan(hits):
    assert math.isnan(fraction(hits, 0))
