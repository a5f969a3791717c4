"""P(supported): the calibration's factors, its file format, and which calibration a run uses for which judge."""

import json
import math

import pytest

from localeval.errors import ConfigError
from localeval.grounding.calibration import (
    JUDGE_ONLY,
    SHIPPED,
    UNCALIBRATED,
    Calibration,
    CalibrationFile,
    Factor,
    JudgeIdentity,
    Signals,
    choose_calibrations,
    shipped_files,
)

JUDGE = JudgeIdentity("qwen", "a" * 64, "t" * 64)
OTHER = JudgeIdentity("bigger", "b" * 64, "t" * 64)
ADDITIVE = Calibration(
    "hand", "additive", (Factor({"judge_logit": 2.0, "coverage": 1.0, "uncovered_number": -1.5}, -0.5),)
)
BOTH = Calibration("both", "both", (Factor({"judge_logit": 1.0}, 0.0), Factor({"coverage": 6.0}, -3.0)))


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z))


def a_file(path=None, judge=JUDGE, prompt="p-ja", evidence=0) -> CalibrationFile:
    return CalibrationFile(judge, evidence, {"ja": BOTH}, {"ja": prompt}, path)


def test_features_of_a_statement():
    features = Signals(
        judge_p=0.8, coverage=0.5, evidence_coverage=0.25, sentence_coverage=0.75, uncovered_numbers=2
    ).features()
    assert features == {
        "judge_logit": pytest.approx(math.log(4)),
        "coverage": 0.5,
        "evidence_coverage": 0.25,
        "sentence_coverage": 0.75,
        "uncovered_number": 1.0,
    }


def test_a_certain_judge_gives_a_bounded_feature():
    assert Signals(1.0, 1, 1, 1, 0).features()["judge_logit"] == 8.0
    assert Signals(0.0, 1, 1, 1, 0).features()["judge_logit"] == -8.0


def test_without_factors_p_is_the_judge_probability():
    assert JUDGE_ONLY.p_supported(Signals(0.37, 0.0, 0.0, 0.0, 3)) == 0.37


def test_additive_p_is_the_logistic_of_the_weighted_signals():
    z = -0.5 + 2.0 * math.log(0.8 / 0.2) + 1.0 * 0.5 - 1.5 * 1.0
    assert ADDITIVE.p_supported(Signals(0.8, 0.5, 0.0, 0.0, 1)) == pytest.approx(sigmoid(z))


def test_both_multiplies_the_judge_and_the_grounding_so_either_vetoes():
    # judge 0.8, fully covered: sigmoid(log 4) * sigmoid(3) = 0.8 * 0.9526
    assert BOTH.p_supported(Signals(0.8, 1.0, 1.0, 1.0, 0)) == pytest.approx(0.8 * sigmoid(3.0))
    assert BOTH.p_supported(Signals(0.02, 1.0, 1.0, 1.0, 0)) < 0.05  # a confident no, every word covered
    assert BOTH.p_supported(Signals(0.999, 0.0, 0.0, 0.0, 0)) < 0.05  # a sure judge, no word covered


def test_a_calibration_file_round_trips(tmp_path):
    calibration = Calibration("qwen-ja", "both", BOTH.factors, "jhars_dev.jsonl, 180 rows", {"labels": 9})
    written = CalibrationFile(JUDGE, 3, {"ja": calibration}, {"ja": "p-ja"})
    written.save(tmp_path / "qwen.json")
    read = CalibrationFile.load(tmp_path / "qwen.json")
    assert (read.judge, read.evidence_sentences, read.languages, read.support_prompts) == (
        JUDGE,
        3,
        {"ja": calibration},
        {"ja": "p-ja"},
    )
    data = json.loads((tmp_path / "qwen.json").read_text())
    assert data["judge"] == {"name": "qwen", "sha256": "a" * 64, "chat_template_sha256": "t" * 64}
    assert data["languages"]["ja"]["support_prompt_sha256"] == "p-ja"


def test_unknown_features_old_files_and_broken_files_are_clear_errors(tmp_path):
    with pytest.raises(ConfigError, match="unknown features: length"):
        Calibration("x", "additive", (Factor({"length": 1.0}),))
    with pytest.raises(ConfigError, match="unknown form 'sum'"):
        Calibration("x", "sum")
    (tmp_path / "old.json").write_text(json.dumps({"name": "ja-dev", "weights": {"coverage": 1.0}, "bias": 0}))
    with pytest.raises(
        ConfigError,
        match="older localeval, which did not record the judge it was fitted with. "
        "Fit it again with `localeval calibrate",
    ):
        CalibrationFile.load(tmp_path / "old.json")
    (tmp_path / "bad.json").write_text('{"judge": {}}')
    with pytest.raises(ConfigError, match=r"bad.json is not a localeval calibration file \(KeyError"):
        CalibrationFile.load(tmp_path / "bad.json")
    with pytest.raises(ConfigError, match="Cannot read calibration .*missing.json: No such file"):
        CalibrationFile.load(tmp_path / "missing.json")


def test_a_shipped_calibration_applies_only_to_its_own_judge_prompt_and_setting():
    shipped = [a_file("qwen.json")]
    same = choose_calibrations(["ja"], JUDGE, {"ja": "p-ja"}, 0, shipped=shipped)
    assert same.calibrations() == {"ja": BOTH} and same.notice is None and not same.warnings
    assert same.languages["ja"].manifest()["file"] == "qwen.json"
    for judge, prompt, evidence in ((OTHER, "p-ja", 0), (JUDGE, "edited", 0), (JUDGE, "p-ja", 3), (None, "p-ja", 0)):
        other = choose_calibrations(["ja"], judge, {"ja": prompt}, evidence, shipped=shipped)
        assert other.calibrations() == {"ja": JUDGE_ONLY}
        assert other.notice is not None and "in ja: P(supported) there is the judge's own probability" in other.notice
        assert other.languages["ja"].manifest()["file"] is None
    bigger = choose_calibrations(["ja", "zh"], OTHER, {"ja": "p-ja", "zh": "p-zh"}, 0, shipped=shipped)
    assert bigger.notice == (
        "No calibration for the judge bigger in ja, zh: P(supported) there is the judge's own "
        "probability. `localeval calibrate LABELLED.jsonl --judge bigger --out DIR` fits one on "
        "your labels."
    )


def test_a_forced_calibration_applies_where_it_covers_and_warns_of_each_mismatch():
    forced = a_file(path="mine.json", prompt="old-prompt", evidence=3)
    choice = choose_calibrations(["ja", "en"], OTHER, {"ja": "p-ja", "en": "p-en"}, 0, forced=forced)
    assert choice.calibrations() == {"ja": BOTH, "en": JUDGE_ONLY}
    assert choice.warnings == [
        "mine.json was fitted with the judge qwen (sha256 aaaaaaaaaaaa), not bigger (sha256 bbbbbbbbbbbb): its "
        "weights were learned on another judge's P.",
        "mine.json was fitted with another ja statement_support prompt than this run's.",
        "mine.json was fitted with evidence_sentences=3, this run uses 0.",
    ]
    assert "in en:" in choice.notice
    matching = choose_calibrations(["ja"], JUDGE, {"ja": "p-ja"}, 0, forced=a_file(path="mine.json"))
    assert matching.warnings == [] and matching.notice is None


def test_uncalibrated_is_the_judge_everywhere_without_a_notice():
    choice = choose_calibrations(["ja", "zh"], JUDGE, {}, 0, forced=UNCALIBRATED)
    assert choice.calibrations() == {"ja": JUDGE_ONLY, "zh": JUDGE_ONLY} and choice.notice is None


def test_every_shipped_file_names_its_judge_and_keeps_the_signs():
    files = shipped_files()
    assert [f.path.parent for f in files] == [SHIPPED] * len(files)
    for file in files:
        assert file.judge is not None and len(file.judge.sha256) == 64
        for calibration in file.languages.values():
            for factor in calibration.factors:
                for name, weight in factor.weights.items():
                    assert weight <= 0 if name == "uncovered_number" else weight >= 0, (file.path, name)


@pytest.mark.parametrize("path", sorted(SHIPPED.glob("*.json")), ids=lambda path: path.name)
def test_a_shipped_calibration_is_strict_json(path):
    """No NaN or Infinity, which Python writes by default and other JSON readers refuse."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{path.name} holds {constant}")

    json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)
