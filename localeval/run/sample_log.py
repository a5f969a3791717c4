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
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import IO, Any

from localeval.results.folder import MANIFEST_FILE, SAMPLES_FILE
from localeval.results.manifest import FINGERPRINT_KEY


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
    """The results folder's samples.jsonl during a run: `reusable()` once, `append()` per finished sample, `finish()`.

    Nothing here holds more than one record: a run over 20,000 rows keeps byte offsets, not records.
    """

    def __init__(self, out: Path):
        self.path = out / SAMPLES_FILE
        self._manifest = out / MANIFEST_FILE
        self._file: IO[str] | None = None
        self._reused: dict[str, int] = {}

    def reusable(self, run_fingerprint: str, ids: Collection[str]) -> dict[str, int]:
        """The ids of an earlier run's finished records (under this fingerprint), with their offsets; the file
        keeps only those records, in the order it had them."""
        wanted = set(ids) if _fingerprint_of(self._manifest) == run_fingerprint else set()
        temporary = self.path.with_name(self.path.name + ".tmp")
        with temporary.open("wb") as kept:
            for raw in self._lines():
                record = _parse(raw)
                if _is_finished(record) and record["id"] in wanted and record["id"] not in self._reused:
                    self._reused[record["id"]] = kept.tell()
                    kept.write(raw)
        os.replace(temporary, self.path)
        return self._reused

    def reused(self, sample_id: str) -> dict[str, Any]:
        """A record that `reusable()` kept, read back from the file."""
        with self.path.open("rb") as file:
            file.seek(self._reused[sample_id])
            return json.loads(file.readline())

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

    def finish(self, order: list[str]) -> None:
        """Close the file, putting its records in `order` (the dataset's) if a resumed run appended out of it."""
        if self._file is not None:
            file, self._file = self._file, None
            file.close()  # a failed last write is an error here, not only in close()
        offsets: dict[str, int] = {}
        position = 0
        for raw in self._lines():
            offsets.setdefault(json.loads(raw)["id"], position)
            position += len(raw)
        order = [sample_id for sample_id in order if sample_id in offsets]
        if list(offsets) == order:
            return
        temporary = self.path.with_name(self.path.name + ".tmp")
        with self.path.open("rb") as source, temporary.open("wb") as ordered:
            for sample_id in order:
                source.seek(offsets[sample_id])
                ordered.write(source.readline())
            ordered.flush()
            os.fsync(ordered.fileno())
        os.replace(temporary, self.path)

    def close(self) -> None:
        """Also after a failed write: what a full disk did not take is scored again by the next run."""
        if self._file is not None:
            file, self._file = self._file, None
            try:
                file.close()
            except OSError:
                pass

    def _lines(self) -> Iterator[bytes]:
        """Whole lines only: the text after the last newline is a line that a kill cut short."""
        try:
            with self.path.open("rb") as file:
                for raw in file:
                    if raw.endswith(b"\n"):
                        yield raw
        except FileNotFoundError:
            return


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:  # a hand-edited line, or bytes that are not UTF-8
        return None


# NaN reasons that another run may not repeat: the sample is scored again.
UNFINISHED_REASONS = frozenset({"interrupted", "judge_timeout", "judge_error", "metric_error", "encoder_nan"})


def _is_finished(record: Any) -> bool:
    """A whole record (a hand-edited or foreign line is not) with no score that a rerun could still get."""
    if not (
        isinstance(record, dict)
        and isinstance(record.get("id"), str)
        and isinstance(record.get("lang"), str)
        and isinstance(record.get("scores"), dict)
        and isinstance(record.get("nan_reasons", {}), dict)
        and isinstance(record.get("evidence", {}), dict)
    ):
        return False
    return not UNFINISHED_REASONS & set(record.get("nan_reasons", {}).values())


def _fingerprint_of(manifest: Path) -> str | None:
    try:
        return json.loads(manifest.read_text(encoding="utf-8")).get(FINGERPRINT_KEY)
    except (OSError, ValueError, AttributeError):
        return None


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"
