"""Parquet files and `datasets` folders (save_to_disk), read with pyarrow a batch at a time, offline."""

from __future__ import annotations

import json

import datasets
import pyarrow
import pyarrow.parquet
import pytest
from click.testing import CliRunner

from localeval.cli import main
from localeval.data.dataset import RowError, dataset_sha256, read_dataset
from localeval.errors import DatasetError

ROWS = [
    {
        "id": "a",
        "question": "Where does the Rhine end?",
        "response": "In the North Sea.",
        "retrieved_contexts": ["The Rhine ends in the North Sea.", "It rises in the Alps."],
        "reference": "North Sea",
    },
    {
        "id": "b",
        "question": "Where does the Danube end?",
        "response": "In the Black Sea.",
        "retrieved_contexts": ["The Danube ends in the Black Sea."],
        "reference": None,
    },
    {"id": "c", "question": "What is 2+2?", "response": None, "retrieved_contexts": [], "reference": "4"},
]


def parquet_file(tmp_path, rows=ROWS):
    path = tmp_path / "data.parquet"
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), path, row_group_size=2)
    return path


def saved_dataset(tmp_path, rows=ROWS):
    folder = tmp_path / "saved"
    datasets.Dataset.from_list(rows).save_to_disk(str(folder))
    return folder


@pytest.mark.parametrize("make", [parquet_file, saved_dataset])
def test_rows_read_with_aliases_lists_and_nulls_as_missing(tmp_path, make):
    dataset = read_dataset(make(tmp_path))
    assert dataset.row_errors == [] and dataset.row_warnings == []
    samples = dataset.samples
    assert [(s.id, s.row) for s in samples] == [("a", 1), ("b", 2), ("c", 3)]
    assert samples[0].user_input == "Where does the Rhine end?"
    assert samples[0].retrieved_contexts == ("The Rhine ends in the North Sea.", "It rises in the Alps.")
    assert samples[1].reference is None and samples[2].response is None and samples[2].retrieved_contexts == ()


def test_a_bad_value_is_a_row_error_with_its_row_number(tmp_path):
    path = tmp_path / "typed.parquet"
    table = pyarrow.table({"id": ["a", "b"], "response": ["fine", "x"], "reference": [["not", "text"], ["y"]]})
    pyarrow.parquet.write_table(table, path)
    dataset = read_dataset(path)
    assert [str(error) for error in dataset.row_errors] == [
        "row 1 (id a): reference: expected a string, got a list",
        "row 2 (id b): reference: expected a string, got a list",
    ]
    assert RowError.parse(str(dataset.row_errors[0])) == dataset.row_errors[0]


def test_a_datasets_folder_hashes_its_arrow_files(tmp_path):
    first = dataset_sha256(saved_dataset(tmp_path / "one"))
    assert first == dataset_sha256(saved_dataset(tmp_path / "two"))
    assert first != dataset_sha256(saved_dataset(tmp_path / "three", ROWS[:2]))


def not_parquet(path):
    path.write_bytes(b"not parquet at all")
    return path


@pytest.mark.parametrize(
    "setup, message",
    [
        (
            lambda p: p.mkdir() or p,
            "is a folder, not a dataset file (a folder must be one that datasets' save_to_disk "
            "wrote, with a state.json)",
        ),
        (
            lambda p: datasets.DatasetDict({"train": datasets.Dataset.from_list(ROWS)}).save_to_disk(str(p)) or p,
            "holds several splits (train): give one split's folder, e.g.",
        ),
        (lambda p: not_parquet(p.with_suffix(".parquet")), "data.parquet: Parquet magic bytes not found"),
    ],
)
def test_bad_tables_are_a_clear_error(tmp_path, setup, message):
    path = setup(tmp_path / "data")
    with pytest.raises(DatasetError) as raised:
        read_dataset(path)
    assert message in str(raised.value)


def test_the_cli_scores_a_parquet_file_and_resumes_it(tmp_path):
    path = parquet_file(tmp_path)
    out = tmp_path / "results"
    for _ in range(2):
        result = CliRunner().invoke(main, ["evaluate", str(path), "--metrics", "exact_match", "--out", str(out)])
        assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert [(r["id"], r["scores"]["exact_match"]) for r in records] == [("a", 0.0), ("b", None), ("c", None)]
    assert "Resuming: 3 of 3 samples are already scored." in result.output
