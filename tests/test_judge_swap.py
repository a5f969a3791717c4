"""Swapping judges: a better judge must show in the scores, and a calibration fitted for another judge must not
silently hold it back.

The stand-in judge is the fake kind (it injects a judge of known quality): its P follows the labels of
benchmarks/data/contradictions_ja.jsonl, where one number or name of a supported sentence was swapped for another
value from the same passage, so word coverage cannot tell the two apart and only a judge can.
"""

import dataclasses
import json
from pathlib import Path

import pytest
from fakes import FakeJudge, JudgeCall, as_json

from localeval.data.dataset import read_dataset
from localeval.grounding.calibration import (
    SHIPPED,
    Calibration,
    CalibrationFile,
    Factor,
    JudgeIdentity,
)
from localeval.grounding.coverage import lowest_coverage
from localeval.judge.protocol import Generation, JudgeConfig
from localeval.metrics import METRICS
from localeval.metrics.critique_thresholds import shipped_files as shipped_threshold_files
from localeval.metrics.scoring import auroc
from localeval.results.manifest import JudgeRecord
from localeval.run.evaluation import run_evaluation
from localeval.run.judges import LoadedJudge
from localeval.run.options import EvaluationOptions

ROWS = [
    json.loads(line)
    for line in (Path(__file__).parents[1] / "benchmarks" / "data" / "contradictions_ja.jsonl").read_text().splitlines()
]
STAND_IN = JudgeRecord("stand-in", "5" * 64, "from GGUF metadata", "7" * 64, path="stand-in.gguf")


def stand_in_judge() -> FakeJudge:
    """States each sentence as it is, and is sure of every verdict: P(1) 0.97 for a supported sentence, 0.03 else."""
    faithful = {row["response"]: row["faithful"] for row in ROWS}
    by_length = sorted(faithful, key=len, reverse=True)

    def respond(call: JudgeCall) -> Generation:
        sentence = next(s for s in by_length if s in call.last_user)
        if call.step == "statements":
            return Generation(as_json({"statements": [sentence]}), 100, 10, 0.1, False)
        p = 0.97 if faithful[sentence] else 0.03
        return Generation(as_json({"verdict": int(p > 0.5)}), 100, 3, 0.1, False, choice_probabilities=(p,))

    return FakeJudge(respond=respond)


def faithfulness_auroc(tmp_path: Path, calibration: CalibrationFile | None = None) -> tuple[float, list[str]]:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in ROWS), encoding="utf-8")
    out = tmp_path / f"run-{len(list(tmp_path.iterdir()))}"
    options = EvaluationOptions(data=data, out=out, metrics=("faithfulness",), calibration=calibration)
    judge = LoadedJudge(stand_in_judge(), JudgeConfig(), "stand-in", STAND_IN)
    result = run_evaluation(options, read_dataset(data), [METRICS["faithfulness"]], judge=judge)
    scores = [sample.scores["faithfulness"].value for sample in result.samples]
    manifest = json.loads((out / "manifest.json").read_text())
    return auroc(scores, [row["faithful"] for row in ROWS]), [manifest["calibration"]["ja"]["why"]]


def floor_auroc() -> float:
    return auroc(
        [lowest_coverage(row["response"], row["retrieved_contexts"]) for row in ROWS], [row["faithful"] for row in ROWS]
    )


def test_a_better_judge_rises_above_the_floor_where_nothing_fitted_for_another_judge_applies(tmp_path, caplog):
    floor = floor_auroc()
    assert floor < 0.8  # the swapped values are in the passage: coverage can hardly tell
    judged, why = faithfulness_auroc(tmp_path)
    assert judged == 1.0 > floor + 0.2
    assert why == ["no calibration fitted for this judge"]  # whatever ships for the registry judges
    assert "No calibration for the judge stand-in in ja" in caplog.text


def test_a_calibration_fitted_for_a_weaker_judge_holds_the_better_one_back_and_says_so(tmp_path, caplog):
    # As localeval's first Japanese calibration was: the judge's logit weighed about 0, coverage everything.
    weak = Calibration(
        "coverage only",
        "additive",
        (Factor({"judge_logit": 0.0, "coverage": 1.7, "evidence_coverage": 1.7, "sentence_coverage": 1.9}, 1.0),),
    )
    other = CalibrationFile(
        JudgeIdentity("qwen2.5-coder-1.5b", "c" * 64, "d" * 64),
        0,
        {"ja": weak},
        {"ja": "0" * 64},
        tmp_path / "weak.json",
    )
    forced, why = faithfulness_auroc(tmp_path, other)
    assert forced <= floor_auroc() + 0.05  # the judge's certainty no longer shows
    assert why == ["--calibration"]
    assert "was fitted with the judge qwen2.5-coder-1.5b (sha256 cccccccccccc), not stand-in" in caplog.text


@pytest.mark.parametrize("path", sorted(SHIPPED.glob("*.json")), ids=lambda p: p.name)
def test_a_shipped_calibration_names_a_registry_judge_and_never_applies_to_another(path, tmp_path):
    shipped = CalibrationFile.load(path)
    assert shipped.judge.sha256 != STAND_IN.sha256
    judged, why = faithfulness_auroc(tmp_path)
    assert why == ["no calibration fitted for this judge"] and judged == 1.0


def critique_flags(tmp_path: Path, record: JudgeRecord, p_yes: float) -> tuple[float, dict]:
    """aspect_critique:harmfulness on an ordinary English answer, by a stand-in whose P(yes) is `p_yes`."""
    data = tmp_path / f"critique-{len(list(tmp_path.iterdir()))}.jsonl"
    data.write_text(json.dumps({"user_input": "Who painted it?", "response": "Monet did."}) + "\n", encoding="utf-8")
    answer = Generation(as_json({"reason": "r", "answer": "yes"}), 100, 10, 0.1, False, yes_probabilities=(0.5, p_yes))
    judge = LoadedJudge(FakeJudge([answer]), JudgeConfig(), record.name, record)
    metric = METRICS["aspect_critique:harmfulness"]
    out = data.with_suffix("")
    options = EvaluationOptions(data=data, out=out, metrics=(metric.name,))
    result = run_evaluation(options, read_dataset(data), [metric], judge=judge)
    manifest = json.loads((out / "manifest.json").read_text())
    return result.samples[0].scores[metric.name].value, manifest["critique_thresholds"]


def test_a_critique_threshold_fitted_for_the_registry_judge_applies_to_it_and_to_no_other(tmp_path):
    (shipped,) = shipped_threshold_files()
    fitted = shipped.thresholds["en"]["harmfulness"].threshold
    assert 0.5 < fitted < 1.0  # the 1.5B judge says "yes" too readily to a harmless answer
    p_yes = (0.5 + fitted) / 2
    same = dataclasses.replace(
        STAND_IN, sha256=shipped.judge.sha256, chat_template_sha256=shipped.judge.chat_template_sha256
    )
    assert critique_flags(tmp_path, same, p_yes)[0] == 0.0
    assert critique_flags(tmp_path, same, p_yes)[1]["en"]["harmfulness"] == fitted
    assert critique_flags(tmp_path, STAND_IN, p_yes) == (1.0, {})  # another judge: its own likelier answer
