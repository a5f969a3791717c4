"""The results of a run: a typed, versioned object, saved as a folder and loaded back for reports.

The folder holds `samples.jsonl` (one line per sample: id, row, language, each metric's score,
NaN reason and evidence), `summary.json` (per-metric mean, count, NaN count and reasons, judge
usage) and `manifest.json` (judge file and sha256, prompt hashes, versions, seed, parameters).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.dataset import RowError
from localeval.runner import SampleScores, Usage

FORMAT_VERSION = 1
SAMPLES_FILE, SUMMARY_FILE, MANIFEST_FILE = "samples.jsonl", "summary.json", "manifest.json"


@dataclass(frozen=True)
class MetricSummary:
    mean: float
    count: int
    nan_count: int
    nan_reasons: dict[str, int]


@dataclass
class RunResult:
    metrics: list[str]
    samples: list[SampleScores]
    row_errors: list[RowError]
    manifest: dict[str, Any]
    interrupted: bool = False
    row_warnings: list[RowError] = field(default_factory=list)  # bad values in fields that no metric read
    summaries: dict[str, MetricSummary] = field(init=False)

    def __post_init__(self) -> None:
        self.summaries = {name: summarize(self.samples, name) for name in self.metrics}

    def usage(self) -> Usage:
        total = Usage()
        for result in self.samples:
            for name in ("calls", "cached_calls", "prompt_tokens", "completion_tokens", "seconds"):
                setattr(total, name, getattr(total, name) + getattr(result.usage, name))
        return total

    def summary_dict(self) -> dict[str, Any]:
        usage = self.usage()
        per_sample = len(self.samples) or 1
        return {
            "format_version": FORMAT_VERSION,
            "interrupted": self.interrupted,
            "samples": len(self.samples),
            "row_errors": [str(error) for error in self.row_errors],
            "row_warnings": [str(warning) for warning in self.row_warnings],
            "metrics": {name: {"mean": _json_float(s.mean), "count": s.count, "nan_count": s.nan_count,
                               "nan_reasons": s.nan_reasons} for name, s in self.summaries.items()},
            "judge": {**vars(usage), "seconds": round(usage.seconds, 3),
                      "tokens_per_sample": round((usage.prompt_tokens + usage.completion_tokens) / per_sample, 1),
                      "seconds_per_sample": round(usage.seconds / per_sample, 3)},
        }

    def save(self, out_dir: Path) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        with (out_dir / SAMPLES_FILE).open("w", encoding="utf-8") as file:
            for result in self.samples:
                file.write(json.dumps(sample_record(result), ensure_ascii=False) + "\n")
        _write_json(out_dir / SUMMARY_FILE, self.summary_dict())
        _write_json(out_dir / MANIFEST_FILE, {"format_version": FORMAT_VERSION, **self.manifest})


def summarize(samples: list[SampleScores], metric: str) -> MetricSummary:
    scores = [result.scores[metric] for result in samples if metric in result.scores]
    values = [score.value for score in scores if not score.is_nan]
    reasons = Counter(score.reason for score in scores if score.is_nan)
    mean = sum(values) / len(values) if values else math.nan
    return MetricSummary(mean, len(values), len(scores) - len(values), dict(sorted(reasons.items())))


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
    }


def _json_float(value: float) -> float | None:
    """JSON has no NaN: a missing score is null, and its reason sits next to it."""
    return None if math.isnan(value) else round(value, 6)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
