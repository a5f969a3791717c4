"""Tests for localeval.data.dataset: every format, field naming, ids, and every row- and file-level error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.data.dataset import Dataset, RowError, parse_field_map, read_dataset
from localeval.data.samples import Sample
from localeval.errors import ConfigError, DatasetError

TARGETS = (
    "valid targets: user_input, response, reference, retrieved_contexts, reference_contexts, "
    "retrieved_context_ids, reference_context_ids, id"
)
NO_FIELDS = (
    "expected some of user_input, response, reference, retrieved_contexts, reference_contexts, "
    "retrieved_context_ids, reference_context_ids, or use --map source=target"
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    return path


def jsonl(tmp_path: Path, *rows: object, name: str = "data.jsonl") -> Path:
    return write(tmp_path, name, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def messages(dataset: Dataset) -> list[str]:
    return [str(error) for error in dataset.row_errors]


def load_error(path: Path, field_map: dict[str, str] | None = None) -> str:
    with pytest.raises(DatasetError) as info:
        read_dataset(path, field_map)
    return str(info.value)


# --- formats -----------------------------------------------------------------------------------


def test_jsonl_happy_path(tmp_path):
    row = {
        "id": "q1",
        "user_input": "What is X?",
        "response": "X is Y.",
        "reference": "Y",
        "retrieved_contexts": ["c1", "c2"],
        "reference_contexts": ["r1"],
        "retrieved_context_ids": ["d1", "d2"],
        "reference_context_ids": ["d1"],
    }
    path = jsonl(tmp_path, row, {"id": "q2", "user_input": "Why?"})
    dataset = read_dataset(str(path))
    assert dataset.path == path
    assert dataset.format == "jsonl"
    assert dataset.row_errors == []
    assert dataset.samples == [
        Sample(
            id="q1",
            row=1,
            user_input="What is X?",
            response="X is Y.",
            reference="Y",
            retrieved_contexts=("c1", "c2"),
            reference_contexts=("r1",),
            retrieved_context_ids=("d1", "d2"),
            reference_context_ids=("d1",),
        ),
        Sample(id="q2", row=2, user_input="Why?"),
    ]
    assert dataset.samples[0].extra == {}


def test_ndjson_extension_reads_as_jsonl(tmp_path):
    dataset = read_dataset(jsonl(tmp_path, {"user_input": "a"}, name="data.ndjson"))
    assert dataset.format == "jsonl"
    assert dataset.samples == [Sample(id="1", row=1, user_input="a")]


def test_extension_is_case_insensitive(tmp_path):
    dataset = read_dataset(jsonl(tmp_path, {"user_input": "a"}, name="DATA.JSONL"))
    assert dataset.format == "jsonl"


def test_json_list_happy_path(tmp_path):
    rows = [{"id": "a", "question": "Q1", "contexts": ["c"]}, {"user_input": "Q2", "response": "R2"}]
    path = write(tmp_path, "data.json", json.dumps(rows, indent=2))
    dataset = read_dataset(path)
    assert dataset.format == "json"
    assert dataset.row_errors == []
    assert dataset.samples == [
        Sample(id="a", row=1, user_input="Q1", retrieved_contexts=("c",)),
        Sample(id="2", row=2, user_input="Q2", response="R2"),
    ]


def test_csv_happy_path_with_list_cells(tmp_path):
    text = (
        "id,user_input,response,retrieved_contexts,retrieved_context_ids,note\n"
        'q1,What is X?,"X, clearly","[""first, passage"", ""second""]","[1, ""d2""]",keep me\n'
        'q2,"two\nlines",,[],,\n'
    )
    dataset = read_dataset(write(tmp_path, "data.csv", text))
    assert dataset.format == "csv"
    assert dataset.row_errors == []
    assert dataset.samples == [
        Sample(
            id="q1",
            row=2,
            user_input="What is X?",
            response="X, clearly",
            retrieved_contexts=("first, passage", "second"),
            retrieved_context_ids=("1", "d2"),
        ),
        Sample(id="q2", row=3, user_input="two\nlines", retrieved_contexts=()),
    ]
    assert dataset.samples[0].extra == {"note": "keep me"}
    assert dataset.samples[1].extra == {"note": ""}


@pytest.mark.parametrize("delimiter", [";", "\t", "|"])
def test_csv_with_another_delimiter_is_read_by_its_header(tmp_path, delimiter):
    text = f'id{delimiter}user_input{delimiter}response\nq1{delimiter}"Is it 3,5?"{delimiter}Yes, 3,5\n'
    dataset = read_dataset(write(tmp_path, "data.csv", text))
    assert dataset.row_errors == []
    assert dataset.samples == [Sample(id="q1", row=2, user_input="Is it 3,5?", response="Yes, 3,5")]


def test_csv_delimiter_is_found_through_a_field_map(tmp_path):
    path = write(tmp_path, "data.csv", "Frage;Antwort\nWas?;Das.\n")
    dataset = read_dataset(path, {"Frage": "user_input", "Antwort": "response"})
    assert dataset.samples == [Sample(id="2", row=2, user_input="Was?", response="Das.")]


def test_csv_line_numbers_follow_the_file(tmp_path):
    text = 'user_input,response\n"multi\nline",a\n\nsecond,b\n,,\nthird,c\n'
    dataset = read_dataset(write(tmp_path, "data.csv", text))
    assert [(s.row, s.id, s.user_input) for s in dataset.samples] == [
        (2, "2", "multi\nline"),
        (5, "5", "second"),
        (7, "7", "third"),
    ]


def test_crlf_line_endings(tmp_path):
    csv_path = write(tmp_path, "data.csv", "user_input,response\r\nq,r\r\n")
    jsonl_path = write(tmp_path, "data.jsonl", '{"user_input": "q"}\r\n\r\n{"user_input": "q2"}\r\n')
    assert read_dataset(csv_path).samples == [Sample(id="2", row=2, user_input="q", response="r")]
    assert read_dataset(jsonl_path).samples == [
        Sample(id="1", row=1, user_input="q"),
        Sample(id="3", row=3, user_input="q2"),
    ]


# --- field names -------------------------------------------------------------------------------


def test_aliases_map_to_canonical_names(tmp_path):
    path = jsonl(tmp_path, {"question": "Q", "answer": "A", "contexts": ["c"], "ground_truth": "G"})
    sample = read_dataset(path).samples[0]
    assert sample == Sample(id="1", row=1, user_input="Q", response="A", retrieved_contexts=("c",), reference="G")
    assert sample.extra == {}


def test_alias_and_canonical_with_same_value_is_fine(tmp_path):
    dataset = read_dataset(jsonl(tmp_path, {"question": "Q", "user_input": "Q"}))
    assert dataset.row_errors == []
    assert dataset.samples == [Sample(id="1", row=1, user_input="Q")]


def test_alias_and_canonical_conflict_is_a_row_error(tmp_path):
    path = jsonl(tmp_path, {"id": "q1", "question": "Q", "user_input": "other"}, {"user_input": "ok"})
    dataset = read_dataset(path)
    assert dataset.row_errors == [
        RowError(1, "q1", "user_input", "'question' and 'user_input' are both given, with different values; keep one")
    ]
    assert messages(dataset) == [
        "line 1 (id q1): user_input: 'question' and 'user_input' are both given, with different values; keep one"
    ]
    assert dataset.samples == [Sample(id="2", row=2, user_input="ok")]


def test_alias_null_or_empty_csv_cell_does_not_conflict(tmp_path):
    assert read_dataset(jsonl(tmp_path, {"question": None, "user_input": "Q"})).samples == [
        Sample(id="1", row=1, user_input="Q")
    ]
    csv_path = write(tmp_path, "data.csv", "question,user_input\n,Q\n")
    assert read_dataset(csv_path).samples == [Sample(id="2", row=2, user_input="Q")]


def test_field_map_renames_source_keys(tmp_path):
    path = jsonl(tmp_path, {"qid": 7, "q": "Q", "ctx": ["c"], "gold": "G"})
    field_map = {"qid": "id", "q": "user_input", "ctx": "retrieved_contexts", "gold": "reference"}
    dataset = read_dataset(path, field_map)
    assert dataset.samples == [Sample(id="7", row=1, user_input="Q", retrieved_contexts=("c",), reference="G")]
    assert dataset.samples[0].extra == {}


def test_field_map_wins_over_alias(tmp_path):
    path = jsonl(tmp_path, {"question": "the gold answer", "user_input": "Q"})
    dataset = read_dataset(path, {"question": "reference"})
    assert dataset.row_errors == []
    assert dataset.samples == [Sample(id="1", row=1, user_input="Q", reference="the gold answer")]


def test_field_map_source_displaces_other_keys_into_extra(tmp_path):
    path = jsonl(tmp_path, {"rewritten": "R", "question": "Q", "user_input": "U", "id": "x", "qid": "y"})
    dataset = read_dataset(path, {"rewritten": "user_input", "qid": "id"})
    assert dataset.row_errors == []
    assert dataset.samples == [Sample(id="y", row=1, user_input="R")]
    assert dataset.samples[0].extra == {"question": "Q", "user_input": "U", "id": "x"}


def test_field_map_in_csv_header(tmp_path):
    path = write(tmp_path, "data.csv", "Question,Answer\nQ,A\n")
    dataset = read_dataset(path, parse_field_map(["Question=user_input", "Answer=response"]))
    assert dataset.samples == [Sample(id="2", row=2, user_input="Q", response="A")]


def test_field_map_source_that_no_row_has_names_the_columns_that_exist(tmp_path):
    path = jsonl(tmp_path, {"q": "Q", "answer": "A"}, {"q": "Q2", "notes": "n"})
    with pytest.raises(ConfigError) as info:
        read_dataset(path, {"q": "user_input", "nothere": "response"})
    assert (
        str(info.value) == f"--map 'nothere=response': {path} has no column 'nothere'; its columns are 'q', "
        "'answer', 'notes'"
    )
    csv_path = write(tmp_path, "data.csv", "Question,Answer\nQ,A\n")
    with pytest.raises(ConfigError, match="has no column 'answer'; its columns are 'Question', 'Answer'$"):
        read_dataset(csv_path, {"Question": "user_input", "answer": "response"})


def test_read_dataset_rejects_a_bad_field_map(tmp_path):
    path = jsonl(tmp_path, {"user_input": "Q"})
    with pytest.raises(ConfigError, match=r"^--map 'q=query': unknown target 'query'; valid targets: "):
        read_dataset(path, {"q": "query"})


def test_unknown_keys_are_kept_in_extra_unchanged(tmp_path):
    extra = {"meta": {"source": "wiki", "tags": [1, 2]}, "score": 0.5, "flag": None, "注": "メモ"}
    dataset = read_dataset(jsonl(tmp_path, {"user_input": "Q", **extra}))
    assert dataset.samples[0].extra == extra


# --- ids ---------------------------------------------------------------------------------------


def test_ids_given_int_missing_null_and_empty(tmp_path):
    path = jsonl(
        tmp_path,
        {"id": "abc", "user_input": "a"},
        {"id": 42, "user_input": "b"},
        {"user_input": "c"},
        {"id": None, "user_input": "d"},
        {"id": "", "user_input": "e"},
    )
    dataset = read_dataset(path)
    assert dataset.row_errors == []
    assert [(s.id, s.row) for s in dataset.samples] == [("abc", 1), ("42", 2), ("3", 3), ("4", 4), ("5", 5)]


def test_csv_empty_id_cell_uses_line_number(tmp_path):
    dataset = read_dataset(write(tmp_path, "data.csv", "id,user_input\nx,a\n,b\n"))
    assert [(s.id, s.row) for s in dataset.samples] == [("x", 2), ("3", 3)]


@pytest.mark.parametrize(("value", "kind"), [(True, "a boolean"), (1.5, "a number"), (["a"], "a list")])
def test_bad_id_type_is_a_row_error(tmp_path, value, kind):
    dataset = read_dataset(jsonl(tmp_path, {"id": value, "user_input": "a"}))
    assert dataset.samples == []
    assert messages(dataset) == [f"line 1: id: expected a string or integer, got {kind}"]


def test_duplicate_id_is_an_error_for_the_later_row(tmp_path):
    rows = [{"id": "x", "user_input": "a"}, {"id": "x", "user_input": "b"}, {"id": 1, "user_input": "c"}]
    path = jsonl(tmp_path, *rows)
    dataset = read_dataset(path)
    assert [s.row for s in dataset.samples] == [1, 3]
    assert dataset.row_errors == [RowError(2, "x", "id", "duplicate id 'x', first used at line 1")]
    assert messages(dataset) == ["line 2 (id x): id: duplicate id 'x', first used at line 1"]


def test_duplicate_id_in_json_says_row(tmp_path):
    path = write(tmp_path, "data.json", json.dumps([{"id": 5, "user_input": "a"}, {"id": "5", "user_input": "b"}]))
    assert messages(read_dataset(path)) == ["row 2 (id 5): id: duplicate id '5', first used at row 1"]


def test_missing_id_clashing_with_a_given_id(tmp_path):
    path = jsonl(tmp_path, {"id": "2", "user_input": "a"}, {"user_input": "b"})
    assert messages(read_dataset(path)) == [
        "line 2: id: duplicate id '2' (this line has no id, so its line number is used), first used at line 1"
    ]


# --- per-row errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "kind"), [(3, "a number"), (["a"], "a list"), ({"a": 1}, "an object"), (False, "a boolean")]
)
def test_text_field_wrong_type(tmp_path, value, kind):
    dataset = read_dataset(jsonl(tmp_path, {"id": "q1", "user_input": "Q", "response": value}))
    assert dataset.samples == []
    assert dataset.row_errors == [RowError(1, "q1", "response", f"expected a string, got {kind}")]


@pytest.mark.parametrize(("value", "kind"), [(3, "a number"), ("one", "a string"), ({"a": "b"}, "an object")])
def test_list_field_wrong_type(tmp_path, value, kind):
    dataset = read_dataset(jsonl(tmp_path, {"id": "q7", "user_input": "Q", "retrieved_contexts": value}))
    assert messages(dataset) == [f"line 1 (id q7): retrieved_contexts: expected a list of strings, got {kind}"]


def test_list_with_a_non_string_names_the_index(tmp_path):
    dataset = read_dataset(jsonl(tmp_path, {"user_input": "Q", "reference_contexts": ["a", None, 3]}))
    assert dataset.row_errors == [RowError(1, None, "reference_contexts", "item at index 1 is null; expected a string")]


def test_context_ids_accept_ints_but_not_other_types(tmp_path):
    path = jsonl(
        tmp_path,
        {"user_input": "Q", "retrieved_context_ids": [1, "b", 3], "reference_context_ids": []},
        {"user_input": "Q", "retrieved_context_ids": [1, 2.5]},
        {"user_input": "Q", "reference_context_ids": [True]},
    )
    dataset = read_dataset(path)
    assert dataset.samples == [
        Sample(id="1", row=1, user_input="Q", retrieved_context_ids=("1", "b", "3"), reference_context_ids=())
    ]
    assert messages(dataset) == [
        "line 2: retrieved_context_ids: item at index 1 is a number; expected a string or integer",
        "line 3: reference_context_ids: item at index 0 is a boolean; expected a string or integer",
    ]


def test_rubric_must_be_text(tmp_path):
    path = jsonl(
        tmp_path,
        {"id": "a", "user_input": "Q", "rubric": "1: bad 5: good"},
        {"id": "b", "user_input": "Q", "rubric": 5},
        {"id": "c", "user_input": "Q", "rubric": None},
    )
    dataset = read_dataset(path)
    assert [s.id for s in dataset.samples] == ["a", "c"]
    assert dataset.samples[0].extra == {"rubric": "1: bad 5: good"}
    assert dataset.row_errors == [RowError(2, "b", "rubric", "expected a string, got a number")]


def test_bad_values_in_unchecked_fields_are_warnings_and_the_row_stays(tmp_path):
    path = jsonl(
        tmp_path,
        {"id": "a", "response": "R", "reference": "G", "retrieved_contexts": "not a list", "rubric": 5},
        {"id": "b", "response": 7, "reference": "G"},
        {"id": "c", "response": "R", "reference": "G"},
    )
    dataset = read_dataset(path, checked=("response", "reference"))
    assert dataset.samples == [
        Sample(id="a", row=1, response="R", reference="G"),
        Sample(id="c", row=3, response="R", reference="G"),
    ]
    assert dataset.samples[0].extra == {}  # the bad rubric is not kept for anything to use
    assert dataset.row_errors == [RowError(2, "b", "response", "expected a string, got a number")]
    assert dataset.row_warnings == [
        RowError(1, "a", "retrieved_contexts", "expected a list of strings, got a string"),
        RowError(1, "a", "rubric", "expected a string, got a number"),
    ]
    # Checking another field later costs row a, in file order, with all its problems.
    rechecked = dataset.checked_for({"rubric"})
    assert [s.id for s in rechecked.samples] == ["c"]
    assert [(e.row, e.field) for e in rechecked.row_errors] == [
        (1, "retrieved_contexts"),
        (1, "rubric"),
        (2, "response"),
    ]
    assert rechecked.row_warnings == []


def test_a_row_with_a_problem_of_its_own_is_an_error_even_when_its_bad_field_is_unchecked(tmp_path):
    path = jsonl(tmp_path, {"id": "a", "response": "R"}, {"id": "a", "response": "R", "reference_contexts": 3})
    dataset = read_dataset(path, checked=())
    assert [s.id for s in dataset.samples] == ["a"] and dataset.row_warnings == []
    assert [(e.row, e.field) for e in dataset.row_errors] == [(2, "reference_contexts"), (2, "id")]


def test_csv_list_cell_that_is_not_a_json_array(tmp_path):
    text = 'id,user_input,retrieved_contexts\nq1,Q,just some text\nq2,Q,"{""a"": 1}"\nq3,Q,"[""a"", 2]"\n'
    dataset = read_dataset(write(tmp_path, "data.csv", text))
    assert dataset.samples == []
    assert messages(dataset) == [
        """line 2 (id q1): retrieved_contexts: not a JSON array: 'just some text'; """
        """write list cells like ["first", "second"]""",
        """line 3 (id q2): retrieved_contexts: not a JSON array: '{"a": 1}'; """
        """write list cells like ["first", "second"]""",
        "line 4 (id q3): retrieved_contexts: item at index 1 is a number; expected a string",
    ]


def test_csv_long_bad_cell_is_shortened(tmp_path):
    dataset = read_dataset(write(tmp_path, "data.csv", f"user_input,retrieved_contexts\nQ,{'x' * 100}\n"))
    assert dataset.row_errors[0].problem.startswith(f"not a JSON array: '{'x' * 37}...'; ")


def test_csv_row_with_too_many_cells(tmp_path):
    dataset = read_dataset(write(tmp_path, "data.csv", "user_input,response\na,b,c\nd,e,\nf\n"))
    assert messages(dataset) == ["line 2: has 3 cells but the header has 2 columns"]
    assert dataset.samples == [
        Sample(id="3", row=3, user_input="d", response="e"),
        Sample(id="4", row=4, user_input="f"),
    ]


def test_jsonl_line_that_is_not_json_or_not_an_object(tmp_path):
    text = '{"user_input": "a"}\n{"user_input": \n[1, 2]\n"text"\n{"user_input": "b"}\n'
    dataset = read_dataset(write(tmp_path, "data.jsonl", text))
    assert [s.row for s in dataset.samples] == [1, 5]
    assert dataset.row_errors == [
        RowError(2, None, None, "not valid JSON: Expecting value (column 16)"),
        RowError(3, None, None, "expected a JSON object, got a list"),
        RowError(4, None, None, "expected a JSON object, got a string"),
    ]
    assert messages(dataset)[0] == "line 2: not valid JSON: Expecting value (column 16)"


def test_json_element_that_is_not_an_object(tmp_path):
    path = write(tmp_path, "data.json", json.dumps([{"user_input": "a"}, "oops", {"user_input": "b"}]))
    dataset = read_dataset(path)
    assert [s.row for s in dataset.samples] == [1, 3]
    assert messages(dataset) == ["row 2: expected a JSON object, got a string"]


def test_row_with_no_known_fields_lists_its_keys(tmp_path):
    dataset = read_dataset(jsonl(tmp_path, {"id": "q1", "Question": "Q", "body": "x"}, {}))
    assert messages(dataset) == [
        f"line 1 (id q1): no known fields (its keys are 'id', 'Question', 'body'); {NO_FIELDS}",
        f"line 2: no known fields (it is empty); {NO_FIELDS}",
    ]
    assert dataset.row_errors[0].field is None


def test_every_problem_in_a_row_is_reported(tmp_path):
    row = {"id": "q1", "user_input": 1, "response": "ok", "retrieved_contexts": "c"}
    dataset = read_dataset(jsonl(tmp_path, row))
    assert dataset.row_errors == [
        RowError(1, "q1", "user_input", "expected a string, got a number"),
        RowError(1, "q1", "retrieved_contexts", "expected a list of strings, got a string"),
    ]


def test_good_rows_still_load_around_bad_ones(tmp_path):
    path = jsonl(
        tmp_path,
        {"id": "a", "user_input": "ok 1"},
        {"id": "b", "user_input": ["bad"]},
        {"id": "c", "user_input": "ok 2", "retrieved_contexts": ["x"]},
        {"id": "a", "user_input": "dup"},
        {"id": "e", "response": "ok 3"},
    )
    dataset = read_dataset(path)
    assert [(s.id, s.row) for s in dataset.samples] == [("a", 1), ("c", 3), ("e", 5)]
    assert [(e.row, e.id, e.field) for e in dataset.row_errors] == [(2, "b", "user_input"), (4, "a", "id")]


def test_blank_jsonl_lines_keep_true_line_numbers(tmp_path):
    text = '\n{"user_input": "a"}\n   \n\n{"user_input": 5}\n{"user_input": "c"}\n\n'
    dataset = read_dataset(write(tmp_path, "data.jsonl", text))
    assert [(s.id, s.row) for s in dataset.samples] == [("2", 2), ("6", 6)]
    assert messages(dataset) == ["line 5: user_input: expected a string, got a number"]


def test_row_error_str_variants():
    assert str(RowError(3, "q7", "retrieved_contexts", "expected a list of strings, got a number")) == (
        "line 3 (id q7): retrieved_contexts: expected a list of strings, got a number"
    )
    assert str(RowError(3, None, None, "not valid JSON")) == "line 3: not valid JSON"
    assert str(RowError(3, "x", None, "p", unit="row")) == "row 3 (id x): p"


# --- whole-file errors -------------------------------------------------------------------------


def test_missing_file(tmp_path):
    path = tmp_path / "nope.jsonl"
    assert load_error(path) == f"dataset file not found: {path}"


def test_directory(tmp_path):
    path = tmp_path / "data.jsonl"
    path.mkdir()
    assert load_error(path) == (
        f"{path} is a folder, not a dataset file (a folder must be one that datasets' "
        "save_to_disk wrote, with a state.json)"
    )


def test_unsupported_extension(tmp_path):
    path = write(tmp_path, "data.txt", "hello")
    assert load_error(path) == (
        f"{path}: unsupported file type ('.txt'); use .jsonl, .ndjson, .json, .csv or "
        ".parquet, or a folder saved by datasets' save_to_disk"
    )
    bare = write(tmp_path, "data", "hello")
    assert load_error(bare) == (
        f"{bare}: unsupported file type (no extension); use .jsonl, .ndjson, .json, .csv or "
        ".parquet, or a folder saved by datasets' save_to_disk"
    )


def test_invalid_json_gives_line_and_column(tmp_path):
    path = write(tmp_path, "data.json", '[\n  {"user_input": "a"},\n  {"user_input" "b"}\n]\n')
    assert load_error(path) == f"{path} is not valid JSON: Expecting ':' delimiter at line 3, column 17"


def test_jsonl_content_in_a_json_file_gets_a_hint(tmp_path):
    path = write(tmp_path, "data.json", '{"user_input": "a"}\n{"user_input": "b"}\n')
    assert load_error(path) == (
        f"{path} is not valid JSON: Extra data at line 2, column 1 (one object per line? name the file .jsonl)"
    )


def test_json_that_is_not_a_list_of_objects(tmp_path):
    obj = write(tmp_path, "obj.json", '{"data": []}')
    assert load_error(obj) == f"{obj} must contain a list of objects (one per sample), got an object"
    strings = write(tmp_path, "strings.json", '["a", "b"]')
    assert load_error(strings) == (
        f"{strings} must contain a list of objects (one per sample), got a list with no objects"
    )


def test_not_utf8(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_bytes('{"user_input": "ok"}\n{"user_input": "café"}\n'.encode("latin-1"))
    assert load_error(path) == f"{path} is not UTF-8 text (byte 0xe9 on line 2)"


def test_utf16_is_not_utf8(tmp_path):
    path = tmp_path / "data.csv"
    path.write_bytes("user_input\nq\n".encode("utf-16"))
    assert load_error(path).startswith(f"{path} is not UTF-8 text (byte 0xff on line 1)")


@pytest.mark.parametrize("name", ["data.jsonl", "data.json", "data.csv"])
@pytest.mark.parametrize("content", ["", "\n \n\t\n", "\ufeff"])
def test_empty_file(tmp_path, name, content):
    path = write(tmp_path, name, content)
    assert load_error(path) == f"{path} is empty"


def test_no_rows(tmp_path):
    json_path = write(tmp_path, "data.json", "[]")
    assert load_error(json_path) == f"{json_path} contains no rows"
    csv_path = write(tmp_path, "data.csv", "user_input,response\n\n")
    assert load_error(csv_path) == f"{csv_path} contains no rows (only a header)"


def test_csv_without_a_header(tmp_path):
    path = write(tmp_path, "data.csv", "What is X?,X is Y\nWhy?,Because\n")
    assert load_error(path) == (
        f"{path} has no header naming a known column (first line: 'What is X?,X is Y'); known columns: "
        "user_input, response, reference, retrieved_contexts, reference_contexts, retrieved_context_ids, "
        "reference_context_ids, question, answer, contexts, ground_truth; "
        "add a header row, or rename columns with --map source=target"
    )
    blank = write(tmp_path, "blank.csv", ",,\n")
    assert load_error(blank) == f"{blank} has no header row"


def test_csv_duplicate_header_column(tmp_path):
    path = write(tmp_path, "data.csv", "user_input,response,response\na,b,c\n")
    assert load_error(path) == f"{path}: column 'response' appears more than once in the header"


def test_csv_unclosed_quote(tmp_path):
    path = write(tmp_path, "data.csv", 'user_input,response\na,b\nc,"never closed\nd,e\n')
    assert load_error(path) == (
        f"{path} is not valid CSV in the record starting at line 3: unexpected end of data "
        "(a quote that is never closed?)"
    )


# --- encodings ---------------------------------------------------------------------------------


def test_utf8_bom_is_accepted(tmp_path):
    row = {"id": "q1", "user_input": "Q"}
    for name, text in [
        ("data.jsonl", json.dumps(row) + "\n"),
        ("data.json", json.dumps([row])),
        ("data.csv", "id,user_input\nq1,Q\n"),
    ]:
        dataset = read_dataset(write(tmp_path, name, "\ufeff" + text))
        assert dataset.row_errors == []
        assert [(s.id, s.user_input) for s in dataset.samples] == [("q1", "Q")]


def test_japanese_and_chinese_text_is_unchanged(tmp_path):
    row = {
        "id": "問1",
        "user_input": "東京の人口は？",
        "response": "约一千四百万人。\u2028（2023年）",
        "retrieved_contexts": ["東京都の人口は約1400万人です。", "北京是中国的首都。"],
        "出典": "ウィキペディア",
    }
    from_jsonl = read_dataset(jsonl(tmp_path, row)).samples[0]
    assert (from_jsonl.id, from_jsonl.user_input) == (row["id"], row["user_input"])
    assert from_jsonl.response == row["response"]
    assert from_jsonl.retrieved_contexts == tuple(row["retrieved_contexts"])
    assert from_jsonl.extra == {"出典": "ウィキペディア"}
    cell = json.dumps(row["retrieved_contexts"], ensure_ascii=False).replace('"', '""')
    csv_path = write(tmp_path, "data.csv", f'id,user_input,retrieved_contexts\n問1,東京の人口は？,"{cell}"\n')
    from_csv = read_dataset(csv_path).samples[0]
    assert (from_csv.id, from_csv.user_input, from_csv.retrieved_contexts) == (
        "問1",
        "東京の人口は？",
        tuple(row["retrieved_contexts"]),
    )


# --- parse_field_map ---------------------------------------------------------------------------


def test_parse_field_map_good():
    assert parse_field_map([]) == {}
    items = ["q=user_input", " ctx = retrieved_contexts ", "a=b=reference", "qid=id", "q=user_input"]
    assert parse_field_map(items) == {
        "q": "user_input",
        "ctx": "retrieved_contexts",
        "a=b": "reference",
        "qid": "id",
    }


@pytest.mark.parametrize("item", ["question", "=user_input", "q=", " = "])
def test_parse_field_map_malformed(item):
    with pytest.raises(ConfigError) as info:
        parse_field_map([item])
    assert str(info.value) == f"--map {item!r}: expected source=target, e.g. question_text=user_input; {TARGETS}"


def test_parse_field_map_unknown_target():
    with pytest.raises(ConfigError) as info:
        parse_field_map(["q=query"])
    assert str(info.value) == f"--map 'q=query': unknown target 'query'; {TARGETS}"


def test_parse_field_map_old_name_as_target_gets_a_hint():
    with pytest.raises(ConfigError) as info:
        parse_field_map(["q=question"])
    assert str(info.value) == (
        f"--map 'q=question': unknown target 'question' ('question' is an old name; use user_input); {TARGETS}"
    )


def test_parse_field_map_ambiguous():
    with pytest.raises(ConfigError) as info:
        parse_field_map(["q=user_input", "q=response"])
    assert str(info.value) == "--map 'q=response': 'q' is already mapped to user_input"
    with pytest.raises(ConfigError) as info:
        parse_field_map(["a=user_input", "b=user_input"])
    assert str(info.value) == "--map: both 'a' and 'b' map to user_input; keep one"


# --- reading again instead of holding -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["data.jsonl", "data.csv", "data.json"])
def test_a_dataset_keeps_where_its_rows_are_and_reads_them_again(tmp_path, name):
    rows = [{"id": "a", "user_input": "q1", "response": "r1"}, {"id": "b", "user_input": "q2"}]
    if name == "data.csv":
        path = write(tmp_path, name, "id,user_input,response\na,q1,r1\nb,q2,\n")
    elif name == "data.json":
        path = write(tmp_path, name, json.dumps(rows))
    else:
        path = jsonl(tmp_path, *rows)
    dataset = read_dataset(path)
    assert [(ref.id, ref.fields) for ref in dataset.rows] == [("a", {"user_input", "response"}), ("b", {"user_input"})]
    assert len(dataset) == 2 and dataset.present_fields() == {"user_input", "response"}
    assert (
        list(dataset)
        == list(dataset)
        == [
            Sample("a", dataset.rows[0].row, user_input="q1", response="r1"),
            Sample("b", dataset.rows[1].row, user_input="q2"),
        ]
    )


def test_rows_that_share_their_fields_share_one_field_set(tmp_path):
    dataset = read_dataset(jsonl(tmp_path, *({"user_input": f"q{i}"} for i in range(50))))
    assert len({id(ref.fields) for ref in dataset.rows}) == 1


def test_a_file_changed_after_it_was_checked_is_refused_when_read_again(tmp_path):
    path = jsonl(tmp_path, {"id": "a", "user_input": "q"}, {"id": "b", "user_input": "q"})
    dataset = read_dataset(path)
    jsonl(tmp_path, {"id": "a", "user_input": "q"}, {"id": "c", "user_input": "q"})
    with pytest.raises(DatasetError, match=r"data.jsonl changed while it was being evaluated \(line 2\)"):
        list(dataset)
    jsonl(tmp_path, {"id": "a", "user_input": "q"})
    with pytest.raises(DatasetError, match=r"changed while it was being evaluated \(it has no line 2 any more\)"):
        list(dataset)
