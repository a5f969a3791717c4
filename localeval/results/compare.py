"""Comparing two runs: per-metric mean difference over the samples both scored, with a paired-bootstrap interval.

Pairing by sample id removes the spread between samples from the interval: only how each sample's score
moved counts. The bootstrap resamples those per-sample differences with a fixed seed, so the same two
runs always give the same interval.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from localeval.errors import ConfigError
from localeval.results.bootstrap import CONFIDENCE, mean_interval
from localeval.results.folder import read_scores
from localeval.results.table import align_columns


@dataclass(frozen=True)
class MetricDifference:
    metric: str
    paired: int  # samples with a score in both runs
    unpaired: int  # shared samples left out: NaN in one run or both
    mean_a: float
    mean_b: float
    difference: float  # mean of B - A over the paired samples
    low: float
    high: float


@dataclass(frozen=True)
class Move:
    id: str
    metric: str
    a: float
    b: float


@dataclass(frozen=True)
class Comparison:
    run_a: str
    run_b: str
    shared: int
    only_a: int
    only_b: int
    metrics: list[MetricDifference]
    moves: list[Move]  # the largest |B - A| first


def compare_runs(run_a: Path, run_b: Path, top: int = 10) -> Comparison:
    """Both results folders read and compared on the metrics and sample ids they share."""
    a, b = read_scores(run_a), read_scores(run_b)
    shared = [sample_id for sample_id in a if sample_id in b]
    if not shared:
        raise ConfigError(f"{run_a} and {run_b} share no sample id, so there is nothing to pair.")
    metrics = [m for m in _metric_names(a) if m in _metric_names(b)]
    if not metrics:
        raise ConfigError(f"{run_a} and {run_b} share no metric.")
    differences, moves = [], []
    for metric in metrics:
        pairs = [
            (sample_id, a[sample_id].get(metric, math.nan), b[sample_id].get(metric, math.nan)) for sample_id in shared
        ]
        scored = [(sample_id, x, y) for sample_id, x, y in pairs if not (math.isnan(x) or math.isnan(y))]
        moves += [Move(sample_id, metric, x, y) for sample_id, x, y in scored if x != y]
        differences.append(_difference(metric, scored, len(pairs) - len(scored)))
    moves.sort(key=lambda move: (-abs(move.b - move.a), move.metric, move.id))
    return Comparison(
        str(run_a), str(run_b), len(shared), len(a) - len(shared), len(b) - len(shared), differences, moves[:top]
    )


def _metric_names(scores: dict[str, dict[str, float]]) -> list[str]:
    return list(dict.fromkeys(name for sample in scores.values() for name in sample))


def _difference(metric: str, scored: list[tuple[str, float, float]], unpaired: int) -> MetricDifference:
    if not scored:
        return MetricDifference(metric, 0, unpaired, math.nan, math.nan, math.nan, math.nan, math.nan)
    x = np.array([pair[1] for pair in scored])
    y = np.array([pair[2] for pair in scored])
    low, high = mean_interval(y - x)
    return MetricDifference(
        metric, len(scored), unpaired, float(x.mean()), float(y.mean()), float((y - x).mean()), low, high
    )


def comparison_text(comparison: Comparison) -> str:
    """The terminal report: one line per metric, then the samples that moved most."""
    c = comparison
    lines = [
        f"A: {c.run_a}",
        f"B: {c.run_b}",
        f"{c.shared} shared samples ({c.only_a} only in A, {c.only_b} only in B); "
        f"B - A with a {CONFIDENCE:.0%} paired-bootstrap interval",
        "",
    ]
    rows = [("metric", "A", "B", "B - A", "interval", "paired", "left out")]
    for d in c.metrics:
        rows.append(
            (
                d.metric,
                _num(d.mean_a),
                _num(d.mean_b),
                _num(d.difference, signed=True),
                f"[{_num(d.low, signed=True)}, {_num(d.high, signed=True)}]",
                str(d.paired),
                str(d.unpaired),
            )
        )
    lines += align_columns(rows)
    if c.moves:
        lines += ["", "Moved most:"]
        lines += align_columns(
            [("sample", "metric", "A", "B", "B - A")]
            + [(m.id, m.metric, _num(m.a), _num(m.b), _num(m.b - m.a, signed=True)) for m in c.moves]
        )
    return "\n".join(lines)


def comparison_html(comparison: Comparison) -> str:
    """The same report as one self-contained HTML page (no script, font or stylesheet from elsewhere)."""
    c = comparison
    metric_rows = "".join(
        f"<tr><td>{html.escape(d.metric)}</td><td>{_num(d.mean_a)}</td><td>{_num(d.mean_b)}</td>"
        f"<td class='{_direction(d)}'>{_num(d.difference, signed=True)}</td>"
        f"<td>[{_num(d.low, signed=True)}, {_num(d.high, signed=True)}]</td><td>{d.paired}</td><td>{d.unpaired}</td></tr>"
        for d in c.metrics
    )
    move_rows = "".join(
        f"<tr><td>{html.escape(m.id)}</td><td>{html.escape(m.metric)}</td><td>{_num(m.a)}</td><td>{_num(m.b)}</td>"
        f"<td>{_num(m.b - m.a, signed=True)}</td></tr>"
        for m in c.moves
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>localeval: B vs A</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ border-bottom: 1px solid #ddd; padding: 0.3em 0.8em; text-align: right; }}
th:first-child, td:first-child, td:nth-child(2) {{ text-align: left; }}
.up {{ color: #070; font-weight: bold; }} .down {{ color: #b00; font-weight: bold; }}
</style></head><body>
<h1>Run B against run A</h1>
<p>A: <code>{html.escape(c.run_a)}</code><br>B: <code>{html.escape(c.run_b)}</code></p>
<p>{c.shared} shared samples ({c.only_a} only in A, {c.only_b} only in B). Differences are B &minus; A over the
samples scored in both runs, with a {CONFIDENCE:.0%} paired-bootstrap interval; bold when the interval excludes 0.</p>
<table><thead><tr><th>metric</th><th>A</th><th>B</th><th>B &minus; A</th><th>interval</th><th>paired</th>
<th>left out</th></tr></thead><tbody>{metric_rows}</tbody></table>
<h2>Samples that moved most</h2>
<table><thead><tr><th>sample</th><th>metric</th><th>A</th><th>B</th><th>B &minus; A</th></tr></thead>
<tbody>{move_rows}</tbody></table>
</body></html>
"""


def _direction(d: MetricDifference) -> str:
    if math.isnan(d.low):
        return ""
    return "up" if d.low > 0 else "down" if d.high < 0 else ""


def _num(value: float, signed: bool = False) -> str:
    return "—" if math.isnan(value) else f"{value:+.3f}" if signed else f"{value:.3f}"
