"""Read a RAG dataset (JSONL, JSON, CSV, Parquet or a `datasets` folder) into Samples, reporting each bad row
instead of stopping."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from localeval.data.samples import (
    ALIASES,
    EXTRA_TEXT_FIELDS,
    FIELDS,
    TEXT_FIELDS,
    Sample,
)
from localeval.errors import ConfigError, DatasetError
from localeval.models.gguf_file import file_sha256

FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet"}
ARROW_FOLDER = "arrow"  # a Hugging Face `datasets` folder written by save_to_disk: Arrow stream files
_TABLE_FORMATS = ("parquet", ARROW_FOLDER)  # read with pyarrow, a batch of rows at a time
_ARROW_BATCH = 1024
MAP_TARGETS = FIELDS + ("id",)
CHECKED_FIELDS = FIELDS + EXTRA_TEXT_FIELDS  # the per-row fields whose values are checked
_DELIMITERS = ",;\t|"  # CSV separators tried in turn, the first whose header names a known column wins
_ID_LISTS = ("retrieved_context_ids", "reference_context_ids")
_ALIAS, _CANONICAL, _MAPPED = 0, 1, 2
_ROW_ERROR_TEXT = re.compile(
    r"(?P<unit>line|record|row) (?P<row>\d+)(?: \(id (?P<id>.*?)\))?: "
    r"(?:(?P<field>[A-Za-z_][\w.\-]*): )?(?P<problem>.*)",
    re.DOTALL,
)
_KINDS = {
    type(None): "null",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "an object",
}
_TARGETS = f"valid targets: {', '.join(MAP_TARGETS)}"


@dataclass(frozen=True)
class RowError:
    """One bad row, kept so the rest of the file still loads and every row can be fixed in one pass."""

    row: int
    id: str | None
    field: str | None
    problem: str
    unit: str = dataclasses.field(default="line", compare=False)  # not `field`: the attribute above hides it

    def __str__(self) -> str:
        where = f"{self.unit} {self.row}" + (f" (id {self.id})" if self.id is not None else "")
        return f"{where}: " + (f"{self.field}: " if self.field else "") + self.problem

    @classmethod
    def parse(cls, text: str) -> RowError:
        """Read back what `str()` wrote (summary.json keeps row problems as text)."""
        if not (match := _ROW_ERROR_TEXT.match(text)):
            return cls(0, None, None, text)
        return cls(int(match["row"]), match["id"], match["field"], match["problem"], match["unit"])


@dataclass(frozen=True, slots=True)
class RowRef:
    """A good row as a run needs it before reading the row again: where it is, its id, and which fields it has."""

    row: int
    id: str
    fields: frozenset[str]


@dataclass(frozen=True)
class Dataset:
    """A checked file: where its good rows are (`rows`), and its bad rows as RowErrors.

    The samples themselves are read again from the file on each iteration, so that a run over a large
    JSONL or CSV file never holds all its rows (a .json file is one document, parsed whole each time).
    `row_warnings` are bad values in fields that nothing checked for: their rows are kept, without those values.
    """

    path: Path
    format: str
    rows: tuple[RowRef, ...]
    row_errors: list[RowError]
    row_warnings: list[RowError] = field(default_factory=list)
    field_map: Mapping[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Sample]:
        """The good rows' samples in file order, read again from the file."""
        refs = iter(self.rows)
        wanted = next(refs, None)
        for row, record in _records(self.path, self.format, self.field_map):
            if wanted is None:
                return
            if row != wanted.row:
                continue
            sample = _sample_of(row, record, self.field_map, self.format)
            if sample is None or sample.id != wanted.id:
                raise DatasetError(f"{self.path} changed while it was being evaluated ({_unit(self.format)} {row})")
            yield sample
            wanted = next(refs, None)
        if wanted is not None:
            raise DatasetError(
                f"{self.path} changed while it was being evaluated (it has no "
                f"{_unit(self.format)} {wanted.row} any more)"
            )

    @property
    def samples(self) -> list[Sample]:
        """Every good row's sample, held in memory: for small files and tests; a run iterates instead."""
        return list(self)

    def present_fields(self) -> set[str]:
        """The fields that at least one good row has."""
        return set().union(*{ref.fields for ref in self.rows})

    def checked_for(self, fields: Collection[str]) -> Dataset:
        """Rows with a bad value in one of `fields` become row errors; bad values in other fields stay warnings."""
        bad_rows = {warning.row for warning in self.row_warnings if warning.field in fields}
        if not bad_rows:
            return self
        errors = sorted(self.row_errors + [w for w in self.row_warnings if w.row in bad_rows], key=lambda e: e.row)
        return replace(
            self,
            rows=tuple(ref for ref in self.rows if ref.row not in bad_rows),
            row_errors=errors,
            row_warnings=[w for w in self.row_warnings if w.row not in bad_rows],
        )


class _Problem(ValueError):
    """A per-row problem; caught per field so that one bad value never hides the others."""


def read_dataset(
    path: str | Path, field_map: Mapping[str, str] | None = None, checked: Collection[str] = CHECKED_FIELDS
) -> Dataset:
    """Check every row; whole-file problems raise DatasetError, row problems are listed.

    A bad value in a `checked` field costs its row (a row error); in any other field it is a row warning.
    """
    path = Path(path)
    mapping = _check_map(dict(field_map or {}))
    fmt = _check_file(path)
    scanned = _scan(_records(path, fmt, mapping), mapping, fmt)
    if scanned.count == 0:
        raise DatasetError(f"{path} contains no rows" + (" (only a header)" if fmt == "csv" else ""))
    _check_sources(path, mapping, scanned.columns)
    return Dataset(path, fmt, tuple(scanned.rows), scanned.errors, scanned.warnings, mapping).checked_for(checked)


def parse_field_map(items: Iterable[str]) -> dict[str, str]:
    """Turn repeated `--map source=target` options into a rename table, rejecting anything ambiguous."""
    mapping: dict[str, str] = {}
    for item in items:
        source, eq, target = (part.strip() for part in item.rpartition("="))
        if not eq or not source or not target:
            raise ConfigError(f"--map {item!r}: expected source=target, e.g. question_text=user_input; {_TARGETS}")
        if mapping.get(source, target) != target:
            raise ConfigError(f"--map {item!r}: '{source}' is already mapped to {mapping[source]}")
        mapping[source] = target
    return _check_map(mapping)


def _check_map(mapping: dict[str, str]) -> dict[str, str]:
    """Refuse unknown targets and two sources for one target, since either would silently lose data."""
    sources: dict[str, str] = {}
    for source, target in mapping.items():
        if target not in MAP_TARGETS:
            hint = f" ('{target}' is an old name; use {ALIASES[target]})" if target in ALIASES else ""
            raise ConfigError(f"--map '{source}={target}': unknown target '{target}'{hint}; {_TARGETS}")
        if target in sources:
            raise ConfigError(f"--map: both '{sources[target]}' and '{source}' map to {target}; keep one")
        sources[target] = source
    return mapping


def _check_sources(path: Path, mapping: Mapping[str, str], columns: Iterable[str]) -> None:
    """A --map source that no row has would rename nothing, silently."""
    columns = list(columns)
    if missing := [source for source in mapping if source not in columns]:
        shown = ", ".join(map(repr, columns[:30])) + (f" and {len(columns) - 30} more" if len(columns) > 30 else "")
        raise ConfigError(
            f"--map '{missing[0]}={mapping[missing[0]]}': {path} has no column '{missing[0]}'; "
            f"its columns are {shown or 'none'}"
        )


def _check_file(path: Path) -> str:
    """The file's format, once its path and extension are right and it is non-blank UTF-8 (BOM allowed)."""
    if not path.exists():
        raise DatasetError(f"dataset file not found: {path}")
    if path.is_dir():
        _arrow_files(path)  # refuses any folder but a saved `datasets` one
        return ARROW_FOLDER
    if path.suffix.lower() not in FORMATS:
        shown = f"'{path.suffix}'" if path.suffix else "no extension"
        raise DatasetError(
            f"{path}: unsupported file type ({shown}); use .jsonl, .ndjson, .json, .csv or .parquet, "
            "or a folder saved by datasets' save_to_disk"
        )
    fmt = FORMATS[path.suffix.lower()]
    if fmt not in _TABLE_FORMATS and not any(line.strip() for line in _lines(path)):
        raise DatasetError(f"{path} is empty")
    return fmt


def dataset_sha256(path: Path) -> str:
    """What a dataset's content hashes to: its file's sha256, or for a `datasets` folder that of its Arrow files."""
    if not path.is_dir():
        return file_sha256(path)
    digest = hashlib.sha256()
    for file in _arrow_files(path):
        digest.update(f"{file.name}:{file_sha256(file)}\n".encode())
    return digest.hexdigest()


def _arrow_files(folder: Path) -> list[Path]:
    """The Arrow files of a folder that datasets' save_to_disk wrote (state.json lists them, in order)."""
    if (folder / "dataset_dict.json").is_file():
        splits = sorted(child.name for child in folder.iterdir() if (child / "state.json").is_file())
        raise DatasetError(
            f"{folder} holds several splits ({', '.join(splits) or 'none found'}): give one split's "
            f"folder, e.g. {folder / (splits[0] if splits else 'train')}"
        )
    try:
        state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
        files = [folder / entry["filename"] for entry in state["_data_files"]]
    except FileNotFoundError:
        raise DatasetError(
            f"{folder} is a folder, not a dataset file (a folder must be one that datasets' "
            "save_to_disk wrote, with a state.json)"
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise DatasetError(f"{folder / 'state.json'} is not a datasets state file ({error})") from None
    if missing := [file.name for file in files if not file.is_file()]:
        raise DatasetError(f"{folder}: the Arrow files its state.json lists are missing: {', '.join(missing)}")
    return files


def _lines(path: Path) -> Iterator[str]:
    """The file's lines, split on "\\n" only (U+2028 and friends may sit inside JSON strings), each decoded.

    A character never spans a newline in UTF-8, so decoding line by line finds every bad byte, with its line.
    """
    try:
        with path.open("rb") as file:
            for number, raw in enumerate(file, start=1):
                try:
                    yield raw.decode("utf-8-sig" if number == 1 else "utf-8")
                except UnicodeDecodeError as error:
                    raise DatasetError(
                        f"{path} is not UTF-8 text (byte 0x{error.object[error.start]:02x} on line {number})"
                    ) from None
    except OSError as error:
        raise DatasetError(f"cannot read {path}: {error.strerror or error}") from None


def _unit(fmt: str) -> str:
    """What a row number counts: lines of the file, or items of a .json list or a table."""
    return "row" if fmt in ("json", *_TABLE_FORMATS) else "line"


def _records(path: Path, fmt: str, mapping: Mapping[str, str]) -> Iterator[tuple[int, Any]]:
    """Each record with its row number, read as the file is read (a .json file is parsed whole)."""
    if fmt == "jsonl":
        return _jsonl_records(_lines(path))
    if fmt == "json":
        return _json_records(path, "".join(_lines(path)))
    if fmt in _TABLE_FORMATS:
        return enumerate(_table_rows(path, fmt), start=1)
    return _csv_records(path, mapping)


def _table_rows(path: Path, fmt: str) -> Iterator[dict[str, Any]]:
    """A Parquet file's or a `datasets` folder's rows as dicts (a null is a missing value), a batch at a time."""
    try:
        import pyarrow.ipc
        import pyarrow.parquet
    except ImportError:
        raise DatasetError(f"reading {path} needs pyarrow: pip install 'localeval[parquet]'") from None
    try:
        if fmt == "parquet":
            batches = pyarrow.parquet.ParquetFile(path).iter_batches(batch_size=_ARROW_BATCH)
            yield from (row for batch in batches for row in batch.to_pylist())
            return
        for file in _arrow_files(path):
            with pyarrow.ipc.open_stream(file) as reader:
                yield from (row for batch in reader for row in batch.to_pylist())
    except (OSError, pyarrow.ArrowException) as error:
        raise DatasetError(f"cannot read {path}: {error}") from None


def _jsonl_records(lines: Iterable[str]) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                yield number, json.loads(line.removesuffix("\n"))
            except json.JSONDecodeError as error:
                yield number, _Problem(f"not valid JSON: {error.msg} (column {error.colno})")


def _json_records(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """A .json file must be one list of objects; stray non-objects inside it are left as row errors."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        hint = " (one object per line? name the file .jsonl)" if error.msg == "Extra data" else ""
        where = f"line {error.lineno}, column {error.colno}"
        raise DatasetError(f"{path} is not valid JSON: {error.msg} at {where}{hint}") from None
    if not isinstance(data, list) or (data and not any(isinstance(item, dict) for item in data)):
        got = _kind(data) if not isinstance(data, list) else "a list with no objects"
        raise DatasetError(f"{path} must contain a list of objects (one per sample), got {got}")
    return enumerate(data, start=1)


def _csv_records(path: Path, mapping: Mapping[str, str]) -> Iterator[tuple[int, Any]]:
    """Pair each data row with the header, checking the header first because every row depends on it."""
    rows = _csv_rows(path, _delimiter(path, mapping))
    first = next(rows, None)
    if first is None:
        raise DatasetError(f"{path} has no header row")
    header = [name.strip() for name in first[1]]
    for name in header:
        if header.count(name) > 1:
            raise DatasetError(f"{path}: column '{name}' appears more than once in the header")
    if not any(_target(name, mapping)[0] in FIELDS for name in header):
        known = ", ".join(FIELDS + tuple(ALIASES))
        raise DatasetError(
            f"{path} has no header naming a known column (first line: {_show(','.join(header))}); "
            f"known columns: {known}; add a header row, or rename columns with --map source=target"
        )
    for line, cells in rows:
        if any(cells[len(header) :]):
            yield line, _Problem(f"has {len(cells)} cells but the header has {len(header)} columns")
        else:
            yield line, dict(zip(header, cells))


def _delimiter(path: Path, mapping: Mapping[str, str]) -> str:
    """The separator whose first record names a known column (a semicolon CSV is common); else a comma."""
    for delimiter in _DELIMITERS:
        try:
            header = next((cells for cells in csv.reader(_lines(path), delimiter=delimiter) if any(cells)), [])
        except csv.Error:
            continue
        if any(_target(name.strip(), mapping)[0] in FIELDS for name in header):
            return delimiter
    return ","


def _csv_rows(path: Path, delimiter: str = ",") -> Iterator[tuple[int, list[str]]]:
    """Non-blank records with the file line each starts on, so errors point at the right line."""
    old_limit = csv.field_size_limit(2**31 - 1)
    reader = csv.reader(_lines(path), delimiter=delimiter, strict=True)
    start = 1
    try:
        for cells in reader:
            if any(cells):
                yield start, cells
            start = reader.line_num + 1
    except csv.Error as error:
        hint = " (a quote that is never closed?)" if "end of data" in str(error) else ""
        raise DatasetError(f"{path} is not valid CSV in the record starting at line {start}: {error}{hint}") from None
    finally:
        csv.field_size_limit(old_limit)


@dataclass
class _Scanned:
    """Every record read: rows with a problem of their own are errors; rows with only bad values are warnings."""

    rows: list[RowRef] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)
    warnings: list[RowError] = field(default_factory=list)
    columns: dict[str, None] = field(default_factory=dict)  # every key of every row, in order of appearance
    count: int = 0


def _scan(records: Iterable[tuple[int, Any]], mapping: Mapping[str, str], fmt: str) -> _Scanned:
    """Check row by row, keeping only where each good row is; a bad row becomes RowErrors, never stopping the rest.

    A row whose only problems are bad field values is kept without those values, its problems as warnings:
    whether they cost the row depends on the fields the run reads (Dataset.checked_for).
    """
    scanned, unit = _Scanned(), _unit(fmt)
    seen: dict[str, int] = {}
    field_sets: dict[frozenset[str], frozenset[str]] = {}  # one object per combination, not one per row
    for row, record in records:
        scanned.count += 1
        if isinstance(record, dict):
            scanned.columns.update(dict.fromkeys(record))
        given_id, values, extra, problems = _parse_row(record, mapping, fmt == "csv")
        sample_id = given_id or str(row)
        first = seen.setdefault(sample_id, row) if isinstance(record, dict) else row
        if first != row:
            note = f" (this {unit} has no id, so its {unit} number is used)" if given_id is None else ""
            problems.append(("id", f"duplicate id '{sample_id}'{note}, first used at {unit} {first}"))
        found = [RowError(row, given_id, name, text, unit) for name, text in problems]
        if _costs_the_row(problems):
            scanned.errors.extend(found)
        else:
            scanned.warnings.extend(found)
            sample = Sample(id=sample_id, row=row, extra=extra, **values)
            present = frozenset(name for name in FIELDS if sample.has(name))
            scanned.rows.append(RowRef(row, sample_id, field_sets.setdefault(present, present)))
    return scanned


def _sample_of(row: int, record: Any, mapping: Mapping[str, str], fmt: str) -> Sample | None:
    """A good row's Sample, built again when a run reads the row (None if the row is bad after all)."""
    given_id, values, extra, problems = _parse_row(record, mapping, fmt == "csv")
    if _costs_the_row(problems):
        return None
    return Sample(id=given_id or str(row), row=row, extra=extra, **values)


def _costs_the_row(problems: list[tuple[str | None, str]]) -> bool:
    """A problem of the row itself (not an object, no known field) or of its id; bad values only cost fields."""
    return any(name is None or name == "id" for name, _ in problems)


def _parse_row(
    record: Any, mapping: Mapping[str, str], is_csv: bool
) -> tuple[str | None, dict[str, Any], dict[str, Any], list[tuple[str | None, str]]]:
    """Check every field of one row, collecting all its problems so they can be fixed together."""
    if not isinstance(record, dict):
        problem = str(record) if isinstance(record, _Problem) else f"expected a JSON object, got {_kind(record)}"
        return None, {}, {}, [(None, problem)]
    groups, extra = _group(record, mapping)
    values: dict[str, Any] = {}
    problems: list[tuple[str | None, str]] = []
    for target, entries in groups.items():
        try:
            values[target] = _value(target, _pick(entries, extra, is_csv), is_csv)
        except _Problem as problem:
            problems.append((target, str(problem)))
    for name in (name for name in EXTRA_TEXT_FIELDS if name in extra):
        try:
            _text(extra[name])
        except _Problem as problem:
            problems.append((name, str(problem)))
            del extra[name]  # never used as it is, even when the row is kept
    if not any(target in FIELDS for target in groups):
        problems.insert(0, (None, _no_fields(record)))
    return values.pop("id", None), values, extra, problems


def _value(target: str, value: Any, is_csv: bool) -> Any:
    """Check one field's type here, so that metrics never see a wrong one."""
    if value is None:
        return None
    if target == "id":
        return _id(value)
    if target in TEXT_FIELDS:
        return _text(value)
    return _list(target, _cell_array(value) if is_csv else value)


def _text(value: Any) -> str | None:
    """A text field's value; null counts as missing, anything else is the row's problem."""
    if value is None or isinstance(value, str):
        return value
    raise _Problem(f"expected a string, got {_kind(value)}")


def _target(key: str, mapping: Mapping[str, str]) -> tuple[str | None, int]:
    """Where a key goes and how strongly: --map beats a canonical name, which beats an alias."""
    if key in mapping:
        return mapping[key], _MAPPED
    if key in MAP_TARGETS:
        return key, _CANONICAL
    return ALIASES.get(key), _ALIAS


def _group(
    record: dict[str, Any], mapping: Mapping[str, str]
) -> tuple[dict[str, list[tuple[int, str, Any]]], dict[str, Any]]:
    """Collect the keys feeding each field; keys feeding none are kept as extra."""
    groups: dict[str, list[tuple[int, str, Any]]] = {}
    extra: dict[str, Any] = {}
    for key, value in record.items():
        target, rank = _target(key, mapping)
        if target is None:
            extra[key] = value
        else:
            groups.setdefault(target, []).append((rank, key, value))
    return groups, extra


def _pick(entries: list[tuple[int, str, Any]], extra: dict[str, Any], is_csv: bool) -> Any:
    """One value per field: a --map source displaces others into extra; an alias must agree with its name."""
    if any(rank == _MAPPED for rank, _, _ in entries):
        extra.update((key, value) for rank, key, value in entries if rank != _MAPPED)
        entries = [entry for entry in entries if entry[0] == _MAPPED]
    present = [(key, value) for _, key, value in entries if value is not None and not (is_csv and value == "")]
    for key, value in present[1:]:
        if value != present[0][1]:
            raise _Problem(f"'{present[0][0]}' and '{key}' are both given, with different values; keep one")
    return present[0][1] if present else None


def _id(value: Any) -> str | None:
    """Ids may be strings or integers; an empty one counts as missing."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return value or None
    raise _Problem(f"expected a string or integer, got {_kind(value)}")


def _cell_array(cell: str) -> Any:
    """A CSV list cell is a JSON array; say how to write one when it is not."""
    if not cell.strip():
        return None
    try:
        value = json.loads(cell)
    except ValueError:
        value = None
    if not isinstance(value, list):
        raise _Problem(f'not a JSON array: {_show(cell)}; write list cells like ["first", "second"]')
    return value


def _list(target: str, value: Any) -> tuple[str, ...] | None:
    """Lists hold strings only (id lists may hold integers), naming the first bad item's index."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise _Problem(f"expected a list of strings, got {_kind(value)}")
    ids = target in _ID_LISTS
    items = [str(item) if ids and isinstance(item, int) and not isinstance(item, bool) else item for item in value]
    for index, item in enumerate(items):
        if not isinstance(item, str):
            wanted = "a string or integer" if ids else "a string"
            raise _Problem(f"item at index {index} is {_kind(item)}; expected {wanted}")
    return tuple(items)


def _no_fields(record: dict[str, Any]) -> str:
    """List what the row did have, since the usual cause is a misspelt or unmapped key."""
    had = f"its keys are {', '.join(map(repr, record))}" if record else "it is empty"
    return f"no known fields ({had}); expected some of {', '.join(FIELDS)}, or use --map source=target"


def _kind(value: Any) -> str:
    """JSON's name for a value's type, as users see it in their files."""
    return _KINDS.get(type(value), type(value).__name__)


def _show(text: str, limit: int = 40) -> str:
    """Quote a user value, shortened so a long cell does not flood the message."""
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
