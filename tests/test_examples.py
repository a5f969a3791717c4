"""The bundled examples (README: English, Japanese and Chinese samples with every field) load as they are."""

from pathlib import Path

import pytest

from localeval.dataset import read_dataset
from localeval.evaluation import sample_language
from localeval.samples import FIELDS

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize(("name", "lang", "rows"), [
    ("rag_sample.jsonl", "en", 6), ("rag_sample_ja.jsonl", "ja", 3), ("rag_sample_zh.jsonl", "zh", 3)])
def test_example_reads_cleanly_in_its_language_with_every_field(name, lang, rows):
    dataset = read_dataset(EXAMPLES / name)
    assert (dataset.row_errors, dataset.row_warnings) == ([], [])
    assert [sample_language(sample) for sample in dataset.samples] == [lang] * rows
    assert [sample.missing(FIELDS) for sample in dataset.samples] == [[]] * rows


def test_every_example_file_is_tested():
    assert sorted(path.name for path in EXAMPLES.iterdir()) == [
        "rag_sample.jsonl", "rag_sample_ja.jsonl", "rag_sample_zh.jsonl"]
