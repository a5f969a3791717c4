"""`localeval calibrate` end to end with the real SmolLM2-135M judge (plumbing: its verdicts mean nothing)."""

import json

from click.testing import CliRunner
from conftest import write_jsonl

from localeval.calibration import Calibration
from localeval.cli import main

ROWS = [
    {"user_input": "How tall is the Eiffel Tower?", "response": "It is 330 metres tall.",
     "retrieved_contexts": ["The Eiffel Tower is 330 metres tall."], "faithful": True},
    {"user_input": "How tall is the Eiffel Tower?", "response": "It is 512 metres tall and made of gold.",
     "retrieved_contexts": ["The Eiffel Tower is 330 metres tall."], "faithful": False},
    {"user_input": "Where is Lyon?", "response": "Lyon is in France.",
     "retrieved_contexts": ["Lyon is a city in France."], "faithful": True},
    {"user_input": "Where is Lyon?", "response": "Lyon is in Peru, near the sea.",
     "retrieved_contexts": ["Lyon is a city in France."], "faithful": False},
]


def test_calibrate_fits_writes_and_reports(tmp_path):
    labelled = write_jsonl(tmp_path / "labels.jsonl", ROWS)
    out = tmp_path / "mine.json"
    result = CliRunner().invoke(main, ["calibrate", str(labelled), "--out", str(out), "--judge", "smollm2-135m",
                                       "--folds", "2", "--n-ctx", "4096", "--threads", "2"])
    assert result.exit_code == 0, result.output
    assert "4 rows scored, 0 not; 4 response labels, 2 unfaithful" in result.output
    assert "AUROC (response level, 2-fold cross-validated by row): combined " in result.output
    calibration = Calibration.load(out)
    assert calibration.name == "mine"
    assert calibration.fitted_on.startswith("labels.jsonl: 4 rows (response-level labels), judge smollm2-135m sha256 ")
    assert set(calibration.weights) == {"judge_logit", "coverage", "evidence_coverage", "sentence_coverage",
                                        "uncovered_number"}
    assert json.loads(out.read_text())["agreement"]["labels"] == 4
    assert (tmp_path / "mine-results" / "faithfulness" / "samples.jsonl").exists()

    evaluated = CliRunner().invoke(main, ["evaluate", str(labelled), "--metrics", "faithfulness", "--judge",
                                          "smollm2-135m", "--calibration", str(out), "--out", str(tmp_path / "run"),
                                          "--n-ctx", "4096", "--threads", "2"])
    assert evaluated.exit_code == 0, evaluated.output
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["calibration"]["en"]["name"] == "mine"
    assert manifest["calibration"]["en"]["fitted_on"] == calibration.fitted_on


def test_a_file_without_labels_is_a_clear_error(tmp_path):
    labelled = write_jsonl(tmp_path / "labels.jsonl", [{k: v for k, v in ROWS[0].items() if k != "faithful"}])
    result = CliRunner().invoke(main, ["calibrate", str(labelled), "--out", str(tmp_path / "c.json")])
    assert result.exit_code == 1
    assert "labels.jsonl, line 1: no label: give `faithful` (true/false), `sentence_labels` or `keyword_labels`" \
        in result.output
