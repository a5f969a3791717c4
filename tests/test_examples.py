"""The bundled examples (English, Japanese and Chinese samples with every field, docs/evaluating.md) load as is."""

import subprocess
import sys
from pathlib import Path

import pytest

from localeval.data.dataset import read_dataset
from localeval.data.samples import FIELDS
from localeval.run.planning import sample_language

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize(
    ("name", "lang", "rows"),
    [("rag_sample.jsonl", "en", 6), ("rag_sample_ja.jsonl", "ja", 3), ("rag_sample_zh.jsonl", "zh", 3)],
)
def test_example_reads_cleanly_in_its_language_with_every_field(name, lang, rows):
    dataset = read_dataset(EXAMPLES / name)
    assert (dataset.row_errors, dataset.row_warnings) == ([], [])
    assert [sample_language(sample) for sample in dataset.samples] == [lang] * rows
    assert [sample.missing(FIELDS) for sample in dataset.samples] == [[]] * rows


@pytest.mark.slow
def test_the_notebook_runs_on_the_examples_with_a_real_judge(smollm_path):
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "notebook.py"), "smollm2-135m"], capture_output=True, text=True, timeout=900
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    lines = completed.stdout.splitlines()
    for name in ("faithfulness", "answer_relevancy", "context_precision"):
        assert any(line.startswith(name) and "over 6 samples" in line for line in lines), completed.stdout
    assert [line.split()[:2] for line in lines if " ja " in line] == [
        ["fuji", "ja"],
        ["shinkansen", "ja"],
        ["soseki", "ja"],
    ]
    assert '"statements"' in completed.stdout
    assert "loaded back the same: True" in lines
    assert "Traceback" not in completed.stderr


def test_every_example_file_is_tested():
    assert sorted(path.name for path in EXAMPLES.iterdir() if path.name != "__pycache__") == [
        "notebook.py",
        "rag_sample.jsonl",
        "rag_sample_ja.jsonl",
        "rag_sample_zh.jsonl",
    ]
