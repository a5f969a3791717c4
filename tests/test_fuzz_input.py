"""Malformed datasets, generated: the reader and the CLI never raise a traceback, every bad row is named by its
line and field, and every good row is still read and scored.

Run with `--hypothesis-show-statistics` to see how many cases each property tried.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localeval.cli import main
from localeval.data.dataset import read_dataset
from localeval.errors import ConfigError, DatasetError

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
TEXT_FIELDS = ("user_input", "response", "reference")
LIST_FIELDS = ("retrieved_contexts", "reference_contexts")
CLI_METRICS = "exact_match,grounding_coverage"  # model-free; together they read these fields:
CLI_READS = ("response", "reference", "retrieved_contexts")

# Text that survives any format: letters (Latin, Japanese, Chinese), digits, punctuation that CSV and JSON
# must escape, and line breaks inside a value.
words = st.text(alphabet=st.sampled_from("abcXYZ019 日本語の文中文字,;\"'\n\t|{}[]\\"), min_size=1, max_size=30)
texts = words.filter(lambda text: text.strip() != "")
wrong_for_text = st.one_of(
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.lists(texts, max_size=2),
    st.dictionaries(texts, texts, max_size=2),
)
wrong_for_list = st.one_of(
    st.integers(),
    st.booleans(),
    st.dictionaries(texts, texts, max_size=2),
    st.lists(st.integers(), min_size=1, max_size=2),
    st.lists(st.lists(texts, min_size=1, max_size=2), min_size=1, max_size=2),
)


@st.composite
def good_rows(draw) -> dict:
    row = {name: draw(texts) for name in TEXT_FIELDS}
    row.update({name: draw(st.lists(texts, min_size=1, max_size=3)) for name in LIST_FIELDS})
    for name in draw(st.sets(st.sampled_from(TEXT_FIELDS + LIST_FIELDS), max_size=2)):
        row[name] = None  # null is a missing value, not an error
    return row


@dataclass(frozen=True)
class Row:
    """One generated line: the object written (or raw text), and the field the reader must blame, if any."""

    record: dict | None
    raw: str | None = None
    bad_field: str | None = None  # "" for a row-level problem (not JSON, not an object)

    @property
    def is_bad(self) -> bool:
        return self.bad_field is not None

    def line(self) -> str:
        return self.raw if self.raw is not None else json.dumps(self.record, ensure_ascii=False)


@st.composite
def rows(draw) -> Row:
    base = draw(good_rows())
    kind = draw(st.sampled_from(["good", "good", "wrong_text", "wrong_list", "not_json", "not_object"]))
    if kind == "wrong_text":
        name = draw(st.sampled_from(TEXT_FIELDS))
        return Row({**base, name: draw(wrong_for_text)}, bad_field=name)
    if kind == "wrong_list":
        name = draw(st.sampled_from(LIST_FIELDS))
        return Row({**base, name: draw(wrong_for_list)}, bad_field=name)
    if kind == "not_json":
        return Row(
            None,
            raw=draw(
                st.sampled_from(
                    ['{"response": "unclosed', "{'single': 'quotes'}", "[1, 2", 'response = "x"', '{"a": 1,}']
                )
            ),
            bad_field="",
        )
    if kind == "not_object":
        return Row(
            None, raw=json.dumps(draw(st.one_of(st.integers(), texts, st.lists(texts, max_size=2)))), bad_field=""
        )
    return Row(base)


@dataclass(frozen=True)
class JsonlFile:
    rows: list[Row]
    text: str
    bom: bool
    blank_lines: bool  # a blank line after each row

    def data(self) -> bytes:
        return ("\ufeff" if self.bom else "").encode() + self.text.encode("utf-8")


@st.composite
def jsonl_files(draw) -> JsonlFile:
    """Ids on every row (some repeated), LF or CRLF, blank lines, a BOM, and maybe a truncated last line."""
    generated = draw(st.lists(rows(), min_size=1, max_size=8))
    numbered: list[Row] = []
    used: list[str] = []
    for index, row in enumerate(generated):
        if row.record is None:
            numbered.append(row)
            continue
        repeat = used and not row.is_bad and draw(st.booleans()) and draw(st.booleans())
        row_id = draw(st.sampled_from(used)) if repeat else f"r{index}"
        numbered.append(
            Row({"id": row_id, **row.record}, bad_field="id" if repeat and not row.is_bad else row.bad_field)
        )
        used.append(row_id)
    if draw(st.booleans()) and numbered[-1].raw is None:  # the last line cut short, as by a full disk
        whole = numbered[-1].line()
        numbered[-1] = Row(None, raw=whole[: draw(st.integers(1, len(whole) - 1))], bad_field="")
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    blank_lines = draw(st.booleans())
    text = (newline * (1 + blank_lines)).join(row.line() for row in numbered) + draw(st.sampled_from(["", newline]))
    return JsonlFile(numbered, text, bom=draw(st.booleans()), blank_lines=blank_lines)


def expected(file: JsonlFile) -> tuple[list[str], dict[int, str]]:
    """Good ids in order, and each bad row's line number with the field to blame."""
    good, bad = [], {}
    for index, row in enumerate(file.rows):
        line = 1 + index * (1 + file.blank_lines)
        if row.is_bad:
            bad[line] = row.bad_field
        else:
            good.append(row.record["id"])
    return good, bad


@pytest.mark.slow
@SETTINGS
@given(jsonl_files())
def test_jsonl_reader_keeps_good_rows_and_names_each_bad_line_and_field(tmp_path_factory, file: JsonlFile):
    path = tmp_path_factory.mktemp("fuzz") / "data.jsonl"
    path.write_bytes(file.data())
    good, bad = expected(file)
    dataset = read_dataset(path)
    assert [sample.id for sample in dataset.samples] == good
    blamed = {(error.row, error.field or "") for error in dataset.row_errors}
    for line, field in bad.items():
        assert (line, field) in blamed, (line, field, [str(e) for e in dataset.row_errors])
        assert any(str(e).startswith(f"line {line}") for e in dataset.row_errors if e.row == line)
    assert {row for row, _ in blamed} == set(bad)


@st.composite
def csv_files(draw) -> tuple[str, list[dict]]:
    """Cells with embedded newlines, quotes and separators; list fields as JSON arrays; maybe CRLF."""
    good = draw(st.lists(good_rows(), min_size=1, max_size=5))
    buffer = io.StringIO()
    columns = ["id", *TEXT_FIELDS, *LIST_FIELDS]
    writer = csv.writer(buffer, lineterminator=draw(st.sampled_from(["\n", "\r\n"])))
    writer.writerow(columns)
    for index, row in enumerate(good):
        cells = {
            "id": f"r{index}",
            **{name: "" if row[name] is None else row[name] for name in TEXT_FIELDS},
            **{name: "" if row[name] is None else json.dumps(row[name], ensure_ascii=False) for name in LIST_FIELDS},
        }
        writer.writerow([cells[name] for name in columns])
    return buffer.getvalue(), good


@pytest.mark.slow
@SETTINGS
@given(csv_files())
def test_csv_with_quotes_and_newlines_in_cells_reads_back_every_value(tmp_path_factory, generated):
    text, good = generated
    path = tmp_path_factory.mktemp("fuzz") / "data.csv"
    path.write_text(text, encoding="utf-8", newline="")
    dataset = read_dataset(path)
    assert not dataset.row_errors and not dataset.row_warnings
    assert len(dataset.samples) == len(good)
    for sample, row in zip(dataset.samples, good):
        for name in TEXT_FIELDS:
            assert getattr(sample, name) == (row[name] or None)  # an empty CSV cell is a missing value
        for name in LIST_FIELDS:
            assert getattr(sample, name) == (tuple(row[name]) if row[name] is not None else None)


@st.composite
def damaged_files(draw) -> tuple[str, bytes]:
    """A valid file in any format with bytes flipped, inserted or cut, or plain random bytes."""
    suffix = draw(st.sampled_from([".jsonl", ".json", ".csv"]))
    if draw(st.integers(0, 4)) == 0:
        return suffix, draw(st.binary(max_size=200))
    file = draw(jsonl_files())
    data = bytearray(
        {
            ".jsonl": file.data(),
            ".json": json.dumps([r.record for r in file.rows if r.record]).encode(),
            ".csv": draw(csv_files())[0].encode(),
        }[suffix]
    )
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["flip", "insert", "cut"]))
        if action == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=4))
        elif action == "cut":
            del data[at : at + draw(st.integers(1, 20))]
        elif at < len(data):
            data[at] = draw(st.integers(0, 255))
    return suffix, bytes(data)


@pytest.mark.slow
@SETTINGS
@given(damaged_files())
def test_damaged_files_give_a_dataset_error_or_row_errors_never_a_traceback(tmp_path_factory, damaged):
    suffix, data = damaged
    path = tmp_path_factory.mktemp("fuzz") / f"data{suffix}"
    path.write_bytes(data)
    try:
        dataset = read_dataset(path)
    except (DatasetError, ConfigError) as error:
        assert str(error).strip()
        return
    unit = "row" if suffix == ".json" else "line"
    for error in dataset.row_errors + dataset.row_warnings:
        assert str(error).startswith(f"{unit} {error.row}"), str(error)


def test_huge_values_are_read_whole(tmp_path: Path):
    huge = "長い文脈。" * 400_000  # 2,000,000 characters, 6 MB of UTF-8
    path = tmp_path / "data.jsonl"
    path.write_text(
        json.dumps({"id": "big", "response": huge, "retrieved_contexts": [huge, "short"]}, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    (sample,) = read_dataset(path).samples
    assert sample.response == huge and sample.retrieved_contexts == (huge, "short")


@pytest.mark.slow
@settings(SETTINGS, max_examples=60)
@given(jsonl_files())
def test_the_cli_scores_every_good_row_and_reports_every_bad_one(tmp_path_factory, file: JsonlFile):
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "data.jsonl").write_bytes(file.data())
    result = CliRunner().invoke(
        main, ["evaluate", str(folder / "data.jsonl"), "--out", str(folder / "out"), "--metrics", CLI_METRICS]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    good, bad = expected(file)
    # Bad values in a field no chosen metric reads cost nothing but a warning: the row is still scored.
    unread = {line for line, field in bad.items() if field in TEXT_FIELDS + LIST_FIELDS and field not in CLI_READS}
    kept = [
        r.record
        for r in file.rows
        if not r.is_bad or r.bad_field in TEXT_FIELDS + LIST_FIELDS and r.bad_field not in CLI_READS
    ]
    present = {name for record in kept for name in CLI_READS if record[name] is not None}
    if "response" not in present or not present & {"reference", "retrieved_contexts"}:
        assert result.exit_code == 1, result.output  # no row left, or no metric with its fields: refused
        assert len([line for line in result.stderr.splitlines() if line.startswith("Error: ")]) == 1
        return
    assert result.exit_code == 0, result.output
    samples = [json.loads(line) for line in (folder / "out" / "samples.jsonl").open(encoding="utf-8")]
    assert sorted(s["id"] for s in samples) == sorted(record["id"] for record in kept)
    summary = json.loads((folder / "out" / "summary.json").read_text(encoding="utf-8"))
    errors, warnings = (set(map(line_of, summary[key])) for key in ("row_errors", "row_warnings"))
    assert errors == set(bad) - unread
    assert warnings == unread


def line_of(message: str) -> int:
    """The line number a row message starts with: "line 3 (id r2): response: expected a string, ..."."""
    unit, number = message.split(" ", 2)[:2]
    assert unit == "line", message
    return int(number.rstrip(":"))
