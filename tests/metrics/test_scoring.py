"""Tests for localeval.metrics.scoring: the scoring math on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from localeval.metrics.scoring import (
    apply_threshold,
    auroc,
    average_precision,
    conciseness,
    entity_recall,
    f_beta,
    f_beta_of,
    fraction,
    noise_shares,
    unit_interval,
    weighted_mean,
)


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
    assert average_precision([1, 0, 1]) == (1 / 1 + 2 / 3) / 2
    assert average_precision([0, 1]) == 0.5
    assert average_precision([0, 0]) == 0.0
    assert average_precision([1, 1, 1]) == 1.0
    assert math.isnan(average_precision([]))


def test_average_precision_of_probabilities_takes_expected_counts():
    # useful so far: 0.5, 1.5; (0.5 * 0.5 / 1 + 1.0 * 1.5 / 2) / 1.5 = (0.25 + 0.75) / 1.5
    assert average_precision([0.5, 1.0]) == pytest.approx(1.0 / 1.5)
    assert average_precision([0.0, 0.0]) == 0.0


def test_f_beta_hand_computed():
    assert f_beta(2, 1, 1) == 4 / 6
    assert f_beta(2, 1, 1, beta=2.0) == 5 * 2 / (5 * 2 + 4 * 1 + 1)
    assert f_beta(0, 3, 0) == 0.0
    assert math.isnan(f_beta(0, 0, 0))


def test_weighted_mean_and_threshold():
    assert weighted_mean([1.0, 0.5], [0.75, 0.25]) == 0.875
    assert math.isnan(weighted_mean([math.nan, 0.5], [0.75, 0.25]))
    assert apply_threshold(0.7, 0.5) == 1.0 and apply_threshold(0.4, 0.5) == 0.0 and apply_threshold(0.5, 0.5) == 1.0
    assert apply_threshold(0.4, None) == 0.4 and math.isnan(apply_threshold(math.nan, 0.5))


def test_entity_recall_normalises_and_looks_in_the_context_text():
    assert entity_recall(["Paris", "１８８９", "Gustave Eiffel"], ["paris", "1889"]) == 2 / 3
    assert entity_recall(["Gustave  Eiffel"], [], "Designed by GUSTAVE EIFFEL's company.") == 1.0
    assert entity_recall(["東京", "２０２０年"], ["2020年"]) == 0.5
    assert math.isnan(entity_recall([], ["x"]))


def test_noise_shares_hand_computed():
    relevant = [True, False, True]
    # claim 1: in relevant context 1; claim 2: only in irrelevant context 2; claim 3: in 2 and in relevant 3
    # (a relevant context wins); claim 4: carried by no context; claim 5 is right. Relevant 2/5, irrelevant 1/5.
    carried = [[1, 0, 0], [0, 1, 0], [0, 1, 1], [0, 0, 0], [1, 1, 1]]
    assert noise_shares([1, 1, 1, 1, 0], relevant, carried) == {"relevant": 2 / 5, "irrelevant": 1 / 5}
    assert noise_shares([0, 0], relevant, carried[:2]) == {"relevant": 0.0, "irrelevant": 0.0}
    assert all(math.isnan(v) for v in noise_shares([], relevant, []).values())


def test_noise_shares_with_probabilities():
    # One claim, P(wrong) 0.5, carried by the relevant context with 0.6 and by the irrelevant one with 0.5:
    # relevant 0.5·0.6 = 0.3; irrelevant 0.5·(1 - 0.6)·0.5 = 0.1.
    shares = noise_shares([0.5], [True, False], [[0.6, 0.5]])
    assert shares == {"relevant": pytest.approx(0.3), "irrelevant": pytest.approx(0.1)}


def test_conciseness_hand_computed():
    assert conciseness(10, 40) == 0.75  # 1 - 10/40
    assert conciseness(0, 40) == 1.0
    assert conciseness(40, 40) == 0.0
    assert conciseness(50, 40) == 0.0  # a summary longer than the text counts as the text's length
    assert math.isnan(conciseness(5, 0))


def test_f_beta_of_precision_and_recall():
    assert f_beta_of(0.5, 1 / 3) == pytest.approx(0.4)  # 2·(1/6) / (5/6)
    assert f_beta_of(0.5, 1 / 3, beta=2.0) == pytest.approx(5 / 14)  # 5·(1/6) / (4·0.5 + 1/3)
    assert f_beta_of(0.0, 0.0) == 0.0
    assert math.isnan(f_beta_of(math.nan, 1.0))


def test_unit_interval_clamps_but_keeps_nan():
    assert (unit_interval(-0.2), unit_interval(0.3), unit_interval(1.0000001)) == (0.0, 0.3, 1.0)
    assert math.isnan(unit_interval(math.nan))


def test_entity_recall_needs_word_boundaries_for_latin_and_digits_but_not_for_cjk():
    assert entity_recall(["US", "99"], [], "The USB standard from 1999.") == 0.0
    assert entity_recall(["US", "1999"], [], "Made in the US in 1999.") == 1.0
    assert entity_recall(["東京"], [], "東京都に住んでいる。") == 1.0


def test_auroc_counts_ordered_pairs_and_half_ties():
    assert auroc([0.1, 0.4, 0.35, 0.8], [False, False, True, True]) == 0.75  # 3 of 4 pairs in order
    assert auroc([1, 1, 0], [True, False, False]) == 0.75  # a tie counts half
    assert auroc([0.2, 0.9], [False, True]) == 1.0 and auroc([0.9, 0.2], [False, True]) == 0.0
    assert math.isnan(auroc([0.5, 0.6], [True, True]))  # no negatives
