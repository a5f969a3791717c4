"""Fitting a calibration on labelled rows: reading labels, grouping statements, the noisy-OR fit."""

import json
import math

import pytest

from localeval.errors import DatasetError
from localeval.grounding.calibration import FEATURES
from localeval.metrics.scoring import auroc
from localeval.results.agreement import (
    calibrate,
    fit_factors,
    label_groups,
    labelled_row,
    read_labelled,
)
from localeval.results.bootstrap import auroc_intervals

BASE = {"user_input": "q", "response": "A. B.", "retrieved_contexts": ["ctx"]}


def statement(text: str, sentence: str, judge_p: float = 0.9, coverage: float = 1.0) -> dict:
    return {
        "statement": text,
        "sentence": sentence,
        "judge_p": judge_p,
        "coverage": coverage,
        "evidence_coverage": coverage,
        "sentence_coverage": coverage,
        "uncovered_numbers": [],
    }


def test_the_three_label_levels_and_the_metaeval_format():
    assert labelled_row({**BASE, "faithful": False}).labels == [("", False)]
    sentence = labelled_row({**BASE, "sentence_labels": [{"sentence": "A.", "faithful": True}]})
    assert (sentence.level, sentence.labels) == ("sentence", [("A.", True)])
    jhars = labelled_row(
        {
            **BASE,
            "label": {
                "faithful": False,
                "sentence_labels": [
                    {"sentence": "A.", "type": "No_hallucination"},
                    {"sentence": "B.", "type": "Unverifiable"},
                    {"sentence": "C.", "type": "DISPUTED"},
                ],
            },
        }
    )
    assert (jhars.level, jhars.labels) == ("sentence", [("A.", True), ("B.", False)])
    keyword = labelled_row({**BASE, "label": {"keyword_labels": [{"keyword": "Bonn", "reasonable": False}]}})
    assert (keyword.level, keyword.labels) == ("keyword", [("Bonn", False)])


def test_bad_files_name_the_line(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({**BASE, "faithful": True}) + "\n" + json.dumps(BASE) + "\n")
    with pytest.raises(DatasetError, match=r"labels.jsonl, line 2: no label: give `faithful`"):
        read_labelled(path)
    path.write_text(
        json.dumps({**BASE, "faithful": True})
        + "\n"
        + json.dumps({**BASE, "sentence_labels": [{"sentence": "A.", "faithful": True}]})
        + "\n"
    )
    with pytest.raises(DatasetError, match=r"mixes label levels \(response, sentence\)"):
        read_labelled(path)
    path.write_text(json.dumps({**BASE, "retrieved_contexts": "ctx", "faithful": True}) + "\n")
    with pytest.raises(DatasetError, match="line 1: retrieved_contexts must be a list of strings"):
        read_labelled(path)


def test_each_label_covers_its_statements():
    statements = [statement("Bonn is big.", "A."), statement("Bonn is old.", "A."), statement("Rome is old.", "B.")]
    response = labelled_row({**BASE, "faithful": True})
    assert label_groups(response, statements) == [([0, 1, 2], True, "")]
    sentences = labelled_row(
        {**BASE, "sentence_labels": [{"sentence": "B.", "faithful": False}, {"sentence": "Z.", "faithful": True}]}
    )
    assert label_groups(sentences, statements) == [([2], False, "B.")]  # Z. covers no statement
    keywords = labelled_row(
        {**BASE, "keyword_labels": [{"keyword": "bonn", "reasonable": True}, {"keyword": "Old", "reasonable": False}]}
    )
    assert label_groups(keywords, statements) == [([0, 1], True, "bonn"), ([1, 2], False, "Old")]


def p_of(factors, features: dict) -> float:
    return math.prod(factor.p(features) for factor in factors)


def test_groups_of_one_recover_a_known_logistic_model():
    # Labels in exact proportion to sigmoid(2x - 1): an unpenalised fit of groups of one statement finds it.
    features, groups = [], []
    for x in (0.0, 0.25, 0.5, 0.75, 1.0):
        positives = round(1000 / (1 + math.exp(-(2 * x - 1))))
        for n in range(1000):
            features.append([{"coverage": x}])
            groups.append(([0], n < positives))
    (factor,) = fit_factors(features, groups, "additive", l2=0.0, names=("coverage",))
    assert factor.weights["coverage"] == pytest.approx(2.0, abs=0.02) and factor.bias == pytest.approx(-1.0, abs=0.02)


def test_a_weight_never_takes_the_wrong_sign():
    # Here more coverage goes with unfaithful labels: the fit may only drop coverage (weight 0), not invert it.
    features = [[{"coverage": c}] for c in (0.1, 0.2, 0.3, 0.7, 0.8, 0.9)]
    groups = [([0], label) for label in (True, True, True, False, False, False)]
    (factor,) = fit_factors(features, groups, "additive", l2=0.01, names=("coverage",))
    assert factor.weights["coverage"] == 0.0


def test_an_unfaithful_group_blames_its_least_covered_statement():
    # Faithful groups are well covered; each unfaithful group mixes a covered and an uncovered statement.
    features = [
        [{"coverage": 0.9}],
        [{"coverage": 0.95}],
        [{"coverage": 0.9}, {"coverage": 0.2}],
        [{"coverage": 1.0}, {"coverage": 0.3}],
        [{"coverage": 0.85}],
    ]
    groups = [([0], True), ([0], True), ([0, 1], False), ([0, 1], False), ([0], True)]
    (factor,) = fit_factors(features, groups, "additive", l2=0.01, names=("coverage",))
    assert factor.weights["coverage"] > 1.0


def signals(judge_p: float, coverage: float, numbers: int = 0) -> dict:
    p = min(max(judge_p, 1e-6), 1 - 1e-6)
    return {
        "judge_logit": math.log(p / (1 - p)),
        "coverage": coverage,
        "evidence_coverage": coverage,
        "sentence_coverage": coverage,
        "uncovered_number": float(numbers > 0),
    }


def test_both_lets_either_signal_veto_where_additive_cannot():
    # Two kinds of error: contradictions (covered, judge says no) and additions (uncovered, judge says yes).
    # Additions dominate, as they do in JHARS; the product still keeps a confident "no" low.
    features, groups = [], []
    for _ in range(40):
        features += [[signals(0.95, 1.0)], [signals(0.9, 0.95)]]
        groups += [([0], True), ([0], True)]
    for _ in range(30):
        features.append([signals(0.9, 0.3)])
        groups.append(([0], False))
    for _ in range(6):
        features.append([signals(0.03, 1.0)])
        groups.append(([0], False))
    both = fit_factors(features, groups, "both", l2=0.1)
    contradiction, addition, supported = signals(0.03, 1.0), signals(0.97, 0.2), signals(0.95, 1.0)
    assert p_of(both, contradiction) < 0.5 and p_of(both, addition) < 0.5 and p_of(both, supported) > 0.5
    assert set(both[0].weights) == {"judge_logit"} and set(both[1].weights) == set(FEATURES[1:])


@pytest.mark.slow
def test_calibrate_reports_cross_validated_agreement_and_ships_what_beats_both_signals():
    rows, per_row = [], []
    for i in range(10):
        faithful = i % 2 == 0
        rows.append(labelled_row({**BASE, "user_input": f"q{i}", "faithful": faithful}))
        per_row.append([statement("s1", "A.", 0.9), statement("s2", "B.", 0.8, 1.0 if faithful else 0.1 * i)])
    fitted = calibrate(rows, per_row, "test", "ten rows", folds=5)
    a = fitted.agreement
    assert (a.labels, a.unfaithful, a.responses, a.unfaithful_responses) == (10, 5, 10, 5)
    assert a.by_label["judge"].auroc == 0.5  # the judge gives every row the same P
    assert a.by_label["additive"].auroc == 1.0 and a.by_label["both"].auroc == 1.0
    assert fitted.calibration.form in ("additive", "both") and fitted.calibration.fitted_on == "ten rows"
    assert fitted.calibration.agreement["labels"] == 10
    assert [len(p) for p in fitted.cross_validated["both"]] == [2] * 10


@pytest.mark.slow
def test_where_no_combination_beats_the_better_signal_the_judge_ships():
    # The judge alone ranks perfectly, coverage says nothing: a fit can only tie it, cross-validation makes it worse.
    rows, per_row = [], []
    for i in range(12):
        faithful = i % 3 != 0
        rows.append(labelled_row({**BASE, "user_input": f"q{i}", "faithful": faithful}))
        per_row.append([statement("s", "A.", 0.6 + 0.03 * i if faithful else 0.1 + 0.03 * i, 0.5 + 0.04 * i)])
    fitted = calibrate(rows, per_row, "test", "twelve rows", folds=3)
    assert fitted.agreement.by_label["judge"].auroc == 1.0
    if max(fitted.agreement.by_label[form].auroc for form in ("additive", "both")) < 1.0:
        assert fitted.calibration.form == "judge" and fitted.calibration.factors == ()


def test_bootstrap_interval_holds_the_estimate():
    scores = {"x": [0.1, 0.4, 0.35, 0.8, 0.7, 0.2, 0.9, 0.6]}
    truth = [False, False, True, True, True, False, True, False]
    figure = auroc_intervals(scores, truth, [str(i) for i in range(8)], resamples=200)["x"]
    assert figure.auroc == auroc(scores["x"], truth) == 14 / 16  # 14 of the 16 (positive, negative) pairs in order
    assert figure.low <= figure.auroc <= figure.high
