"""Fitting a calibration on labelled rows: reading labels, grouping statements, the noisy-OR fit."""

import json

import pytest

from localeval.calibrate import calibrate, fit_groups, label_groups, labelled_row, read_labelled
from localeval.calibration import fit_logistic
from localeval.errors import DatasetError

BASE = {"user_input": "q", "response": "A. B.", "retrieved_contexts": ["ctx"]}


def statement(text: str, sentence: str, judge_p: float = 0.9, coverage: float = 1.0) -> dict:
    return {"statement": text, "sentence": sentence, "judge_p": judge_p, "coverage": coverage,
            "evidence_coverage": coverage, "sentence_coverage": coverage, "uncovered_numbers": []}


def test_the_three_label_levels_and_the_metaeval_format():
    assert labelled_row({**BASE, "faithful": False}).labels == [("", False)]
    sentence = labelled_row({**BASE, "sentence_labels": [{"sentence": "A.", "faithful": True}]})
    assert (sentence.level, sentence.labels) == ("sentence", [("A.", True)])
    jhars = labelled_row({**BASE, "label": {"faithful": False, "sentence_labels": [
        {"sentence": "A.", "type": "No_hallucination"}, {"sentence": "B.", "type": "Unverifiable"},
        {"sentence": "C.", "type": "DISPUTED"}]}})
    assert (jhars.level, jhars.labels) == ("sentence", [("A.", True), ("B.", False)])
    keyword = labelled_row({**BASE, "label": {"keyword_labels": [{"keyword": "Bonn", "reasonable": False}]}})
    assert (keyword.level, keyword.labels) == ("keyword", [("Bonn", False)])


def test_bad_files_name_the_line(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({**BASE, "faithful": True}) + "\n" + json.dumps(BASE) + "\n")
    with pytest.raises(DatasetError, match=r"labels.jsonl, line 2: no label: give `faithful`"):
        read_labelled(path)
    path.write_text(json.dumps({**BASE, "faithful": True}) + "\n"
                    + json.dumps({**BASE, "sentence_labels": [{"sentence": "A.", "faithful": True}]}) + "\n")
    with pytest.raises(DatasetError, match=r"mixes label levels \(response, sentence\)"):
        read_labelled(path)
    path.write_text(json.dumps({**BASE, "retrieved_contexts": "ctx", "faithful": True}) + "\n")
    with pytest.raises(DatasetError, match="line 1: retrieved_contexts must be a list of strings"):
        read_labelled(path)


def test_each_label_covers_its_statements():
    statements = [statement("Bonn is big.", "A."), statement("Bonn is old.", "A."), statement("Rome is old.", "B.")]
    response = labelled_row({**BASE, "faithful": True})
    assert label_groups(response, statements) == [([0, 1, 2], True)]
    sentences = labelled_row({**BASE, "sentence_labels": [{"sentence": "B.", "faithful": False},
                                                          {"sentence": "Z.", "faithful": True}]})
    assert label_groups(sentences, statements) == [([2], False)]  # Z. covers no statement
    keywords = labelled_row({**BASE, "keyword_labels": [{"keyword": "bonn", "reasonable": True},
                                                        {"keyword": "Old", "reasonable": False}]})
    assert label_groups(keywords, statements) == [([0, 1], True), ([1, 2], False)]


def test_groups_of_one_are_plain_logistic_regression():
    rows = [{"coverage": c} for c in (0.1, 0.3, 0.4, 0.6, 0.7, 0.9)]
    labels = [False, True, False, True, False, True]
    expected, expected_bias = fit_logistic(rows, labels, features=("coverage",), l2=1.0)
    weights, bias = fit_groups([[row] for row in rows], [([0], label) for label in labels], names=("coverage",))
    assert weights["coverage"] == pytest.approx(expected["coverage"], abs=1e-3)
    assert bias == pytest.approx(expected_bias, abs=1e-3)


def test_an_unfaithful_group_blames_its_least_covered_statement():
    # Faithful groups are well covered; each unfaithful group mixes a covered and an uncovered statement.
    features = [[{"coverage": 0.9}], [{"coverage": 0.95}], [{"coverage": 0.9}, {"coverage": 0.2}],
                [{"coverage": 1.0}, {"coverage": 0.3}], [{"coverage": 0.85}]]
    groups = [([0], True), ([0], True), ([0, 1], False), ([0, 1], False), ([0], True)]
    weights, _ = fit_groups(features, groups, names=("coverage",), l2=0.01)
    assert weights["coverage"] > 1.0


def test_calibrate_reports_cross_validated_agreement():
    rows, per_row = [], []
    for i in range(10):
        faithful = i % 2 == 0
        rows.append(labelled_row({**BASE, "faithful": faithful}))
        per_row.append([statement("s1", "A.", 0.9), statement("s2", "B.", 0.8, 1.0 if faithful else 0.1 * i)])
    fitted = calibrate(rows, per_row, "test", "ten rows", folds=5)
    assert fitted.agreement.labels == 10 and fitted.agreement.unfaithful == 5
    assert fitted.agreement.judge == 0.5  # the judge gives every row the same P
    assert fitted.agreement.coverage == 1.0 and fitted.agreement.combined == 1.0
    assert fitted.calibration.fitted_on == "ten rows" and fitted.calibration.weights["coverage"] > 0
    assert [len(p) for p in fitted.cross_validated] == [2] * 10
