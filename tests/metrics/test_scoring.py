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


def test_average_precision_hand_computed():
    from localeval.metrics.scoring import average_precision
    assert average_precision([1, 0, 1]) == (1 / 1 + 2 / 3) / 2
    assert average_precision([0, 1]) == 0.5
    assert average_precision([0, 0]) == 0.0
    assert average_precision([1, 1, 1]) == 1.0
    assert math.isnan(average_precision([]))


def test_f_beta_hand_computed():
    from localeval.metrics.scoring import f_beta
    assert f_beta(2, 1, 1) == 4 / 6
    assert f_beta(2, 1, 1, beta=2.0) == 5 * 2 / (5 * 2 + 4 * 1 + 1)
    assert f_beta(0, 3, 0) == 0.0
    assert math.isnan(f_beta(0, 0, 0))


def test_weighted_mean_threshold_and_majority():
    from localeval.metrics.scoring import apply_threshold, majority, weighted_mean
    assert weighted_mean([1.0, 0.5], [0.75, 0.25]) == 0.875
    assert math.isnan(weighted_mean([math.nan, 0.5], [0.75, 0.25]))
    assert apply_threshold(0.7, 0.5) == 1.0 and apply_threshold(0.4, 0.5) == 0.0 and apply_threshold(0.5, 0.5) == 1.0
    assert apply_threshold(0.4, None) == 0.4 and math.isnan(apply_threshold(math.nan, 0.5))
    assert majority([1, 0, 1]) == 1 and majority([0, 0, 1]) == 0 and majority([1]) == 1


def test_entity_recall_normalises_and_looks_in_the_context_text():
    from localeval.metrics.scoring import entity_recall
    assert entity_recall(["Paris", "１８８９", "Gustave Eiffel"], ["paris", "1889"]) == 2 / 3
    assert entity_recall(["Gustave  Eiffel"], [], "Designed by GUSTAVE EIFFEL's company.") == 1.0
    assert entity_recall(["東京", "２０２０年"], ["2020年"]) == 0.5
    assert math.isnan(entity_recall([], ["x"]))
