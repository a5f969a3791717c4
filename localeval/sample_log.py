"""samples.jsonl written as samples finish, so that a killed run loses nothing and its rerun repeats nothing.

A run appends each finished sample's record. A later run into the same folder reuses a record only when
the run's fingerprint matches the one in manifest.json (same data, metrics, judge file, prompts, options
and versions), the record is whole (a `kill -9` can cut the last line short), and none of its scores failed
in a way a rerun may not repeat (interrupted, a judge timeout or error, a metric error). Everything else is scored again, which the judge call cache makes cheap.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Collection
from pathlib import Path
from typing import IO, Any

from localeval.results import MANIFEST_FILE, SAMPLES_FILE, write_atomically

FINGERPRINT_KEY = "run_fingerprint"


def fingerprint(settings: dict[str, Any]) -> str:
    """A digest of everything that decides a sample's record."""
    text = json.dumps(settings, sort_keys=True, ensure_ascii=False, default=_plain)
    return hashlib.sha256(text.encode()).hexdigest()


def _plain(value: Any) -> Any:
    """Dataclasses as dicts, so that their keys are sorted too; anything else (paths) as text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    return str(value)


class SampleLog:
    """The results folder's samples.jsonl during a run: `reusable()` once, then `append()` per finished sample."""

    def __init__(self, out: Path):
        self.path = out / SAMPLES_FILE
        self._manifest = out / MANIFEST_FILE
        self._file: IO[str] | None = None

    def reusable(self, run_fingerprint: str, ids: Collection[str]) -> dict[str, dict[str, Any]]:
        """The finished records of an earlier run with this fingerprint, by id; the file keeps only those."""
        records = self._finished(ids) if _fingerprint_of(self._manifest) == run_fingerprint else {}
        write_atomically(self.path, "".join(_line(record) for record in records.values()))
        return records

    def append(self, record: dict[str, Any]) -> None:
        """Flushed at once: a killed process loses nothing that the operating system was handed."""
        if self._file is None:
            self._file = self.path.open("a", encoding="utf-8")
        self._file.write(_line(record))
        self._file.flush()

    def sync(self) -> None:
        """To the disk itself, so that a power cut loses at most the samples since the last sync."""
        if self._file is not None:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _finished(self, ids: Collection[str]) -> dict[str, dict[str, Any]]:
        wanted = set(ids)
        records: dict[str, dict[str, Any]] = {}
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").split("\n")
        except FileNotFoundError:
            return records
        for line in lines[:-1]:  # the text after the last newline is a line cut short
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if _is_finished(record) and record["id"] in wanted:
                records.setdefault(record["id"], record)
        return records


# NaN reasons that another run may not repeat: the sample is scored again.
UNFINISHED_REASONS = frozenset({"interrupted", "judge_timeout", "judge_error", "metric_error", "encoder_nan"})


def _is_finished(record: Any) -> bool:
    """A whole record (a hand-edited or foreign line is not) with no score that a rerun could still get."""
    if not (isinstance(record, dict) and isinstance(record.get("id"), str) and isinstance(record.get("lang"), str)
            and isinstance(record.get("scores"), dict) and isinstance(record.get("nan_reasons", {}), dict)
            and isinstance(record.get("evidence", {}), dict)):
        return False
    return not UNFINISHED_REASONS & set(record.get("nan_reasons", {}).values())


def _fingerprint_of(manifest: Path) -> str | None:
    try:
        return json.loads(manifest.read_text(encoding="utf-8")).get(FINGERPRINT_KEY)
    except (OSError, ValueError, AttributeError):
        return None


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"
