import pytest

"""`localeval calibrate` end to end with the real SmolLM2-135M and Qwen2.5-Coder-0.5B judges (on four rows, their
figures mean nothing: the plumbing is tested)."""

import json

from click.testing import CliRunner
from conftest import write_jsonl

from localeval.cli import main
from localeval.grounding.calibration import CalibrationFile
from localeval.models import load_registry
from localeval.steps.prompts import PromptLibrary

ROWS = [
    {
        "user_input": "How tall is the Eiffel Tower?",
        "response": "The Eiffel Tower in Paris is 330 metres tall.",
        "retrieved_contexts": ["The Eiffel Tower is 330 metres tall."],
        "faithful": True,
    },
    {
        "user_input": "How tall is the Eiffel Tower?",
        "response": "It is 512 metres tall and made of gold.",
        "retrieved_contexts": ["The Eiffel Tower is 330 metres tall."],
        "faithful": False,
    },
    {
        "user_input": "Where is Lyon?",
        "response": "Lyon is a large city in the south of France.",
        "retrieved_contexts": ["Lyon is a city in France."],
        "faithful": True,
    },
    {
        "user_input": "Where is Lyon?",
        "response": "Lyon is a small village in Peru, near the sea.",
        "retrieved_contexts": ["Lyon is a city in France."],
        "faithful": False,
    },
]


def calibrate(tmp_path, *judges: str):
    labelled = write_jsonl(tmp_path / "labels.jsonl", ROWS)
    options = [arg for judge in judges for arg in ("--judge", judge)]
    result = CliRunner().invoke(
        main,
        [
            "calibrate",
            str(labelled),
            "--out",
            str(tmp_path / "cal"),
            *options,
            "--folds",
            "2",
            "--n-ctx",
            "4096",
            "--threads",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    return labelled, result


@pytest.mark.slow
def test_calibrate_measures_judges_side_by_side_and_writes_one_file_each(tmp_path):
    labelled, result = calibrate(tmp_path, "smollm2-135m", "qwen2.5-coder-0.5b")
    assert result.output.count("4 rows scored") == 2
    table = [line for line in result.output.splitlines() if line.startswith("| en: labels.jsonl")]
    assert len(table) == 4  # each judge, by label and by response
    assert table[0].startswith("| en: labels.jsonl (response labels) | smollm2-135m | 4 (2) | ")
    assert table[1].startswith("| en: labels.jsonl (response labels) | qwen2.5-coder-0.5b | 4 (2) | ")
    registry = load_registry()
    for name in ("smollm2-135m", "qwen2.5-coder-0.5b"):
        file = CalibrationFile.load(tmp_path / "cal" / f"{name}.json")
        assert file.judge.name == name and file.judge.sha256 == registry.entries[name].sha256
        assert set(file.languages) == {"en"} and file.evidence_sentences == 0
        assert file.support_prompts["en"] == PromptLibrary().get("statement_support", "en").sha256
        assert file.languages["en"].fitted_on == f"labels.jsonl: 4 rows, judge {name}"
        assert file.languages["en"].agreement["labels"] == 4
        assert (tmp_path / "cal" / f"{name}-results" / "faithfulness" / "samples.jsonl").exists()


@pytest.mark.slow
def test_a_calibration_applies_to_its_judge_and_warns_on_another(tmp_path):
    labelled, _ = calibrate(tmp_path, "smollm2-135m")
    mine = tmp_path / "cal" / "smollm2-135m.json"
    for judge, out in (("smollm2-135m", "same"), ("qwen2.5-coder-0.5b", "other")):
        result = CliRunner().invoke(
            main,
            [
                "evaluate",
                str(labelled),
                "--metrics",
                "faithfulness",
                "--judge",
                judge,
                "--calibration",
                str(mine),
                "--out",
                str(tmp_path / out),
                "--n-ctx",
                "4096",
                "--threads",
                "2",
            ],
        )
        assert result.exit_code == 0, result.output
        manifest = json.loads((tmp_path / out / "manifest.json").read_text())
        assert manifest["calibration"]["en"]["file"] == str(mine)
        assert manifest["calibration"]["en"]["fitted_on"] == "labels.jsonl: 4 rows, judge smollm2-135m"
        warned = f"{mine} was fitted with the judge smollm2-135m" in result.output
        assert warned == (judge != "smollm2-135m"), result.output


def test_a_file_without_labels_is_a_clear_error(tmp_path):
    labelled = write_jsonl(tmp_path / "labels.jsonl", [{k: v for k, v in ROWS[0].items() if k != "faithful"}])
    result = CliRunner().invoke(main, ["calibrate", str(labelled), "--out", str(tmp_path / "c")])
    assert result.exit_code == 1
    assert (
        "labels.jsonl, line 1: no label: give `faithful` (true/false), `sentence_labels` or `keyword_labels`"
        in result.output
    )
