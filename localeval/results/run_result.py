"""The results of a run: a typed, versioned object, saved as a folder and loaded back for reports.

The folder holds `samples.jsonl` (one line per sample: id, row, language, each metric's score,
NaN reason and evidence), `summary.json` (per-metric mean, count, NaN count and reasons, judge
usage) and `manifest.json` (judge file and sha256, prompt hashes, versions, seed, parameters).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import InitVar, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localeval.data.dataset import RowError
from localeval.data.samples import FIELDS, Sample
from localeval.errors import ConfigError
from localeval.metrics import Score
from localeval.results.folder import (
    MANIFEST_FILE,
    SAMPLES_FILE,
    SUMMARY_FILE,
    read_json,
    sample_records,
    write_atomically,
    write_json,
)
from localeval.results.html_report import write_html_report
from localeval.results.manifest import FORMAT_VERSION, RunManifest
from localeval.results.sample_scores import SampleScores, Usage

if TYPE_CHECKING:
    import pandas

SCORE_DIGITS = 6  # decimals kept in samples.jsonl


@dataclass(frozen=True)
class MetricSummary:
    mean: float
    count: int
    nan_count: int
    nan_reasons: dict[str, int]


class Tally:
    """Per-metric sums, counts and NaN reasons, and the judge's usage, fed one sample at a time.

    A run that streams its samples to disk keeps this instead of the samples. Scores are summed as
    recorded in samples.jsonl (6 decimals), as integers, so the mean is the same in any order: a resumed
    run's summary equals a fresh run's.
    """

    def __init__(self, metrics: list[str]):
        self.samples = 0
        self.usage = Usage()
        self._sums = dict.fromkeys(metrics, 0)
        self._counts = dict.fromkeys(metrics, 0)
        self._reasons: dict[str, Counter[str]] = {name: Counter() for name in metrics}

    def add(self, result: SampleScores) -> None:
        self.samples += 1
        for name in _USAGE_FIELDS:
            setattr(self.usage, name, getattr(self.usage, name) + getattr(result.usage, name))
        for name, score in result.scores.items():
            if name not in self._sums:
                continue
            if score.is_nan:
                self._reasons[name][score.reason or "nan"] += 1
            else:
                self._sums[name] += round(round(score.value, SCORE_DIGITS) * 10**SCORE_DIGITS)
                self._counts[name] += 1

    def summary(self, metric: str) -> MetricSummary:
        count, reasons = self._counts[metric], self._reasons[metric]
        mean = self._sums[metric] / (count * 10**SCORE_DIGITS) if count else math.nan
        return MetricSummary(mean, count, sum(reasons.values()), dict(sorted(reasons.items())))


_USAGE_FIELDS = ("calls", "cached_calls", "prompt_tokens", "completion_tokens", "seconds")


@dataclass
class RunResult:
    """A finished (or interrupted) run. `samples` may be empty for a run that streamed them to its folder only:
    `sample_count`, the summaries and the usage always cover every sample."""

    metrics: list[str]
    samples: list[SampleScores]
    row_errors: list[RowError]
    manifest: RunManifest
    interrupted: bool = False
    row_warnings: list[RowError] = field(default_factory=list)  # bad values in fields that no metric read
    tally: InitVar[Tally | None] = None  # None: tallied from `samples`
    folder: Path | None = None  # the results folder, when the run wrote one that stays
    summaries: dict[str, MetricSummary] = field(init=False)
    _tally: Tally = field(init=False, repr=False, compare=False)

    def __post_init__(self, tally: Tally | None) -> None:
        if tally is None:
            tally = Tally(self.metrics)
            for result in self.samples:
                tally.add(result)
        self._tally = tally
        self.summaries = {name: tally.summary(name) for name in self.metrics}

    @property
    def sample_count(self) -> int:
        return self._tally.samples

    def usage(self) -> Usage:
        return replace(self._tally.usage)

    def summary_dict(self) -> dict[str, Any]:
        usage = self.usage()
        per_sample = self.sample_count or 1
        return {
            "format_version": FORMAT_VERSION,
            "interrupted": self.interrupted,
            "samples": self.sample_count,
            "row_errors": [str(error) for error in self.row_errors],
            "row_warnings": [str(warning) for warning in self.row_warnings],
            "metrics": {
                name: {
                    "mean": _json_float(s.mean),
                    "count": s.count,
                    "nan_count": s.nan_count,
                    "nan_reasons": s.nan_reasons,
                }
                for name, s in self.summaries.items()
            },
            "judge": {
                **vars(usage),
                "seconds": round(usage.seconds, 3),
                "tokens_per_sample": round((usage.prompt_tokens + usage.completion_tokens) / per_sample, 1),
                "seconds_per_sample": round(usage.seconds / per_sample, 3),
            },
        }

    def to_pandas(self) -> pandas.DataFrame:
        """One row per sample: id, language, its input fields where held, a column per metric (NaN where there is
        no score), and dicts of NaN reasons and evidence. Needs pandas (`pip install 'localeval[pandas]'`)."""
        try:
            import pandas
        except ImportError:
            raise ConfigError("to_pandas() needs pandas: pip install 'localeval[pandas]'.") from None
        self._require_samples()
        rows = []
        for result in self.samples:
            inputs = {
                name: list(value) if isinstance(value, tuple) else value
                for name in FIELDS
                if (value := getattr(result.sample, name)) is not None
            }
            rows.append(
                {
                    "id": result.sample.id,
                    "lang": result.lang,
                    **inputs,
                    **{name: result.scores[name].value if name in result.scores else math.nan for name in self.metrics},
                    "nan_reasons": {name: score.reason for name, score in result.scores.items() if score.is_nan},
                    "evidence": {name: score.evidence for name, score in result.scores.items() if score.evidence},
                }
            )
        return pandas.DataFrame(rows)

    def save(self, out_dir: str | Path) -> None:
        """The whole folder, from the samples held in memory."""
        self._require_samples()
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        lines = (json.dumps(sample_record(result), ensure_ascii=False) + "\n" for result in self.samples)
        write_atomically(out_dir / SAMPLES_FILE, "".join(lines))
        self.save_summary(out_dir)
        write_html_report(out_dir)

    def _require_samples(self) -> None:
        if len(self.samples) != self.sample_count:
            raise ConfigError(
                "This result does not hold its samples (keep_samples=False): they are in its results "
                "folder; load(folder) reads them back."
            )

    def save_summary(self, out_dir: Path) -> None:
        """summary.json and manifest.json: all a run that streamed samples.jsonl has left to write."""
        write_json(out_dir / SUMMARY_FILE, self.summary_dict())
        save_manifest(out_dir, self.manifest)


def save_manifest(out_dir: Path, manifest: RunManifest) -> None:
    write_json(out_dir / MANIFEST_FILE, manifest.to_json())


def sample_record(result: SampleScores) -> dict[str, Any]:
    sample = result.sample
    return {
        "id": sample.id,
        "row": sample.row,
        "lang": result.lang,
        "scores": {name: _json_float(score.value) for name, score in result.scores.items()},
        "nan_reasons": {name: score.reason for name, score in result.scores.items() if score.is_nan},
        "evidence": {name: score.evidence for name, score in result.scores.items() if score.evidence},
        "judge": {**vars(result.usage), "seconds": round(result.usage.seconds, 3)},
        **({"inputs_cut": result.inputs_cut} if result.inputs_cut else {}),
    }


def scores_from_record(record: dict[str, Any], sample: Sample) -> SampleScores:
    """A finished sample read back from samples.jsonl; the judge calls that produced it count as reused."""
    reasons, evidence = record.get("nan_reasons", {}), record.get("evidence", {})
    scores = {
        name: Score(math.nan if value is None else value, reasons.get(name), evidence.get(name, {}))
        for name, value in record["scores"].items()
    }
    judge = record.get("judge", {})
    return SampleScores(
        sample,
        record["lang"],
        scores,
        Usage(cached_calls=judge.get("calls", 0) + judge.get("cached_calls", 0)),
        record.get("inputs_cut", []),
    )


def load_results(out_dir: str | Path) -> RunResult:
    """A results folder read back: every sample's scores, NaN reasons and evidence, the summary's row problems
    and the manifest. The samples carry their id and row only; the inputs stay in the dataset."""
    out_dir = Path(out_dir)
    manifest, summary = read_json(out_dir / MANIFEST_FILE), read_json(out_dir / SUMMARY_FILE)
    samples = [
        scores_from_record(record, Sample(str(record["id"]), int(record.get("row", 0))))
        for record in sample_records(out_dir)
    ]
    metrics = list(manifest.get("metrics") or summary.get("metrics") or {})
    return RunResult(
        metrics,
        samples,
        [RowError.parse(text) for text in summary.get("row_errors", [])],
        RunManifest.from_json(manifest),
        interrupted=bool(summary.get("interrupted")),
        row_warnings=[RowError.parse(text) for text in summary.get("row_warnings", [])],
        folder=out_dir,
    )


def _json_float(value: float) -> float | None:
    """JSON has no NaN: a missing score is null, and its reason sits next to it."""
    return None if math.isnan(value) else round(value, SCORE_DIGITS)
