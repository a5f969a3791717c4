"""A results folder's files: their names, reading them back checked, and writing them whole."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from localeval.errors import ConfigError

SAMPLES_FILE, SUMMARY_FILE, MANIFEST_FILE = "samples.jsonl", "summary.json", "manifest.json"


def read_json(path: Path, required: bool = True) -> dict[str, Any]:
    """summary.json or manifest.json; a missing one is an error when `required`, else empty."""
    if not path.is_file():
        if not required:
            return {}
        raise ConfigError(f"{path.parent} is not a finished results folder: it has no {path.name}.")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ConfigError(f"{path}: not readable as JSON ({error}).") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: not a localeval {path.name}.")
    return data


def read_scores(out_dir: Path) -> dict[str, dict[str, float]]:
    """Each sample's scores, by sample id, from a results folder's samples.jsonl; NaN where a score is missing."""
    return {
        str(record["id"]): {
            name: math.nan if value is None else float(value) for name, value in record["scores"].items()
        }
        for record in sample_records(out_dir)
    }


def sample_records(out_dir: Path, cut_short: Callable[[], None] | None = None) -> Iterator[dict[str, Any]]:
    """samples.jsonl's records, read a line at a time, each checked for an id and a scores object.

    A last line with no newline after it that does not parse was cut short by a kill: with `cut_short` it is left
    out and `cut_short()` is called; without, it is an error like any other bad line.
    """
    path = out_dir / SAMPLES_FILE
    if not path.is_file():
        raise ConfigError(f"{out_dir} is not a results folder: it has no {SAMPLES_FILE}.")
    with path.open(encoding="utf-8", errors="replace") as lines:
        pending: tuple[int, str] | None = None
        for number, line in enumerate(lines, start=1):
            if line.strip():
                if pending is not None:
                    yield _sample_record(path, *pending)
                pending = (number, line)
    if pending is None:
        return
    number, line = pending
    try:
        yield _sample_record(path, number, line)
    except ConfigError:
        if cut_short is None or line.endswith("\n"):
            raise
        cut_short()


def _sample_record(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
        if not isinstance(record["scores"], dict) or record["id"] is None:
            raise TypeError("no scores object or no id")
        return record
    except (ValueError, TypeError, KeyError) as error:
        raise ConfigError(f"{path}, line {number}: not a sample record ({error}).") from None


def write_json(path: Path, data: dict[str, Any]) -> None:
    write_atomically(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def write_atomically(path: Path, text: str) -> None:
    """Replace the file whole: a crash while writing leaves the old one, never half of the new."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
