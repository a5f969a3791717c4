"""P(supported): the logistic calibration, its file format, and fitting, on hand-computed cases."""

import json
import math

import pytest

from localeval.calibration import JUDGE_ONLY, Calibration, Signals, fit_logistic
from localeval.errors import ConfigError


def test_features_of_a_statement():
    features = Signals(judge_p=0.8, coverage=0.5, evidence_coverage=0.25, sentence_coverage=0.75,
                       uncovered_numbers=2).features()
    assert features == {"judge_logit": pytest.approx(math.log(4)), "coverage": 0.5, "evidence_coverage": 0.25,
                        "sentence_coverage": 0.75, "uncovered_number": 1.0}


def test_a_certain_judge_gives_a_bounded_feature():
    assert Signals(1.0, 1, 1, 1, 0).features()["judge_logit"] == 8.0
    assert Signals(0.0, 1, 1, 1, 0).features()["judge_logit"] == -8.0


def test_without_weights_p_is_the_judge_probability():
    assert JUDGE_ONLY.p_supported(Signals(0.37, 0.0, 0.0, 0.0, 3)) == 0.37


def test_p_is_the_logistic_of_the_weighted_signals():
    calibration = Calibration("hand", {"judge_logit": 2.0, "coverage": 1.0, "uncovered_number": -1.5}, bias=-0.5)
    z = -0.5 + 2.0 * math.log(0.8 / 0.2) + 1.0 * 0.5 - 1.5 * 1.0
    assert calibration.p_supported(Signals(0.8, 0.5, 0.0, 0.0, 1)) == pytest.approx(1 / (1 + math.exp(-z)))


def test_a_calibration_file_round_trips(tmp_path):
    calibration = Calibration("ja-dev", {"judge_logit": 0.7, "coverage": 3.1}, bias=-1.2,
                              fitted_on="jhars_dev.jsonl, 180 rows", agreement={"auroc": 0.9})
    calibration.save(tmp_path / "ja.json")
    assert Calibration.load(tmp_path / "ja.json") == calibration
    assert json.loads((tmp_path / "ja.json").read_text())["fitted_on"] == "jhars_dev.jsonl, 180 rows"


def test_unknown_features_and_broken_files_are_clear_errors(tmp_path):
    with pytest.raises(ConfigError, match="unknown features: length"):
        Calibration("x", {"length": 1.0})
    (tmp_path / "bad.json").write_text("{\"weights\": {}}")
    with pytest.raises(ConfigError, match=r"bad.json is not a localeval calibration file \(KeyError"):
        Calibration.load(tmp_path / "bad.json")
    with pytest.raises(ConfigError, match="Cannot read calibration .*missing.json: No such file"):
        Calibration.load(tmp_path / "missing.json")


def test_fitting_separable_data_orders_the_classes():
    rows = [{"coverage": c} for c in (0.1, 0.2, 0.3, 0.7, 0.8, 0.9)]
    weights, bias = fit_logistic(rows, [False, False, False, True, True, True], features=("coverage",), l2=0.1)
    assert weights["coverage"] > 0
    p = [1 / (1 + math.exp(-(bias + weights["coverage"] * r["coverage"]))) for r in rows]
    assert p == sorted(p) and p[2] < 0.5 < p[3]


def test_fitting_recovers_a_known_model():
    # Labels in exact proportion to a logistic model with weight 2 and bias -1: the fit finds it.
    rows, labels = [], []
    for x in (-1.0, 0.0, 1.0, 2.0):
        p = 1 / (1 + math.exp(-(2 * x - 1)))
        positives = round(p * 1000)
        rows += [{"coverage": x}] * 1000
        labels += [True] * positives + [False] * (1000 - positives)
    weights, bias = fit_logistic(rows, labels, features=("coverage",), l2=0.0)
    assert weights["coverage"] == pytest.approx(2.0, abs=0.02) and bias == pytest.approx(-1.0, abs=0.02)
