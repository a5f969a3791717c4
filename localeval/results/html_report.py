"""report.html: one self-contained page per results folder, built from the folder's files alone.

It reads samples.jsonl, and summary.json and manifest.json where they exist, so it works on a finished run, an
interrupted one and a folder written by an earlier version. Everything is inline: no font, script or image
comes from elsewhere, so the page opens offline. The samples are embedded as JSON (with `<`, `>` and `&`
escaped, so that text from the data cannot close the script block) and the page's script shows them a page
at a time.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import sys
from array import array
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from localeval.errors import ConfigError
from localeval.metrics.cards import card_for
from localeval.reasons import counted
from localeval.results.bootstrap import CONFIDENCE, mean_interval
from localeval.results.folder import (
    MANIFEST_FILE,
    SUMMARY_FILE,
    read_json,
    sample_records,
)
from localeval.results.manifest import RunManifest

REPORT_FILE = "report.html"
PAGE_SIZE = 200  # table rows the page renders at a time
BINS = 10
LONGEST_TEXT = 2000  # characters kept of one evidence string; a whole context would swell a big run's page
_TEMPLATE = Path(__file__).resolve().parent / "report_page.html"


@dataclass(frozen=True)
class MetricStats:
    metric: str
    mean: float
    low: float  # the bootstrap interval of the mean
    high: float
    count: int
    nan_reasons: dict[str, int]

    @property
    def nan_count(self) -> int:
        return sum(self.nan_reasons.values())


@dataclass(frozen=True)
class Histogram:
    low: float
    high: float
    counts: list[int]


@dataclass
class ResultsFolder:
    """What the page's summary needs of a results folder, held as columns (a float per sample and metric, not the
    records), so that building the page of a 20,000-sample run costs no more memory than the run did."""

    path: Path
    metrics: list[str]
    langs: list[str]  # each sample's language, in file order
    scores: dict[str, np.ndarray]  # per metric, each sample's score; NaN where it has none
    nan_reasons: dict[str, Counter[str]]
    summary: dict[str, Any] = field(default_factory=dict)  # empty when the run never got to write summary.json
    manifest: RunManifest | None = None  # None when the run never got to write manifest.json
    cut_short: bool = False  # the last line of samples.jsonl was cut by a kill and left out

    @property
    def count(self) -> int:
        return len(self.langs)


def write_html_report(out_dir: Path) -> Path:
    """Build `report.html` in a results folder from the files in it, streaming the samples into the page."""
    folder = read_results_folder(out_dir)
    path = out_dir / REPORT_FILE
    temporary = path.with_name(path.name + ".tmp")
    try:
        with temporary.open("w", encoding="utf-8") as page:
            write_page(folder, page.write)
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise ConfigError(f"Could not write {path}: {error.strerror or error}.") from None
    return path


def read_results_folder(out_dir: Path) -> ResultsFolder:
    """The scores as columns, and the summary and manifest where present; a folder without samples.jsonl is
    refused."""
    summary = read_json(out_dir / SUMMARY_FILE, required=False)
    written = read_json(out_dir / MANIFEST_FILE, required=False)
    manifest = RunManifest.from_json(written) if written else None
    named = list(summary.get("metrics", {})) or (manifest.metrics if manifest else [])
    folder = ResultsFolder(out_dir, [], [], {}, {}, summary, manifest)
    columns: dict[str, array[float]] = {}
    for metric in named:
        _add_metric(folder, columns, metric)

    def cut_short() -> None:
        folder.cut_short = True

    for record in sample_records(out_dir, cut_short):
        for metric in record["scores"]:
            if metric not in columns:
                _add_metric(folder, columns, metric)
        folder.langs.append(sys.intern(str(record.get("lang", "?"))))
        for metric, column in columns.items():
            value = record["scores"].get(metric)
            column.append(math.nan if value is None else float(value))
            if value is None:
                folder.nan_reasons[metric][record.get("nan_reasons", {}).get(metric) or "no reason recorded"] += 1
    folder.scores = {metric: np.frombuffer(column, dtype=float) for metric, column in columns.items()}
    return folder


def _add_metric(folder: ResultsFolder, columns: dict[str, array[float]], metric: str) -> None:
    """A metric met first in a later record: NaN for the samples before it (they never had it)."""
    folder.metrics.append(metric)
    columns[metric] = array("d", [math.nan] * folder.count)
    folder.nan_reasons[metric] = Counter()
    if folder.count:
        folder.nan_reasons[metric]["no reason recorded"] += folder.count


def metric_stats(metric: str, values: np.ndarray, nan_reasons: Counter[str] | None = None) -> MetricStats:
    """Mean, bootstrap interval and count of one metric's scores (NaN: no score), with the NaN reasons given."""
    scored = values[~np.isnan(values)]
    reasons = dict(sorted((nan_reasons or {}).items()))
    if not len(scored):
        return MetricStats(metric, math.nan, math.nan, math.nan, 0, reasons)
    low, high = mean_interval(scored)
    return MetricStats(metric, float(scored.mean()), low, high, len(scored), reasons)


def histogram(values: list[float], bins: int = BINS) -> Histogram:
    """Equal bins over [0, 1], widened to hold every value (rubric_score runs 1 to 5); the last bin is closed."""
    low, high = min([0.0, *values]), max([1.0, *values])
    counts = [0] * bins
    for value in values:
        counts[min(int((value - low) / (high - low) * bins), bins - 1)] += 1
    return Histogram(low, high, counts)


def histogram_svg(h: Histogram, width: int = 200, height: int = 40) -> str:
    """Bars with their range and count as a tooltip, and the axis ends written below."""
    top, bar = max(h.counts) or 1, width / len(h.counts)
    step = (h.high - h.low) / len(h.counts)
    bars = []
    for i, count in enumerate(h.counts):
        tall = round(count / top * (height - 2), 1)
        bars.append(
            f'<rect x="{i * bar + 1:.1f}" y="{height - tall}" width="{bar - 2:.1f}" height="{tall}">'
            f"<title>{_num(h.low + i * step)}–{_num(h.low + (i + 1) * step)}: {count}</title></rect>"
        )
    return (
        f'<svg class="hist" viewBox="0 0 {width} {height + 14}" width="{width}" height="{height + 14}" '
        f'role="img" aria-label="distribution">{"".join(bars)}'
        f'<line x1="0" y1="{height}" x2="{width}" y2="{height}"/>'
        f'<text x="0" y="{height + 12}">{h.low:g}</text>'
        f'<text x="{width}" y="{height + 12}" text-anchor="end">{h.high:g}</text></svg>'
    )


def embed_json(data: Any) -> str:
    """JSON that is safe inside a <script> block: `<`, `>` and `&` as \\u escapes, which JSON.parse reads back."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def report_html(folder: ResultsFolder) -> str:
    """The whole page as one string (write_html_report streams it to the file instead)."""
    parts: list[str] = []
    write_page(folder, parts.append)
    return "".join(parts)


def write_page(folder: ResultsFolder, write: Callable[[str], Any]) -> None:
    """The page: summary and charts as HTML, then the samples as data for the page's script, read again from
    samples.jsonl one at a time, then the rest of the page."""
    stats = [metric_stats(metric, folder.scores[metric], folder.nan_reasons[metric]) for metric in folder.metrics]
    parts = {
        "title": html.escape(f"localeval: {folder.path.name or folder.path}"),
        "heading": html.escape(str(folder.path)),
        "facts": _facts(folder),
        "confidence": f"{CONFIDENCE:.0%}",
        "summary": "".join(_summary_row(s, folder.scores[s.metric], sorted(set(folder.langs))) for s in stats),
        "languages": _language_split(folder),
    }
    before, after = _TEMPLATE.read_text(encoding="utf-8").split("{{data}}")
    fill = partial(re.sub, r"\{\{(\w+)\}\}", lambda match: parts[match[1]])
    write(fill(before))
    head = embed_json(
        {
            "metrics": folder.metrics,
            "page_size": PAGE_SIZE,
            "manifest": {
                "judge_usage": folder.summary.get("judge"),
                **(folder.manifest.to_json() if folder.manifest else {}),
            },
        }
    )
    write(head[:-1] + ',"samples":[')
    for number, record in enumerate(sample_records(folder.path, cut_short=lambda: None)):
        write(("," if number else "") + embed_json(_sample(record, folder.metrics)))
    write("]}")
    write(fill(after))


def _facts(folder: ResultsFolder) -> str:
    manifest, summary = folder.manifest, folder.summary
    facts = [f"{folder.count} samples"]
    if manifest and manifest.dataset:
        facts.append(f"data {manifest.dataset.path}")
    if manifest and manifest.created:
        facts.append(f"started {manifest.created}")
    judge = manifest.judge if manifest else None
    facts.append(f"judge {judge.name or judge.path}" if judge else "no judge")
    if usage := summary.get("judge"):
        facts.append(f"{usage.get('calls', 0)} judge calls, {usage.get('seconds', 0):.1f} s")
    if summary.get("row_errors"):
        facts.append(f"{len(summary['row_errors'])} bad rows skipped (summary.json: row_errors)")
    warnings = []
    if summary.get("interrupted"):
        warnings.append("Interrupted: scores not yet computed are NaN with reason 'interrupted'.")
    if not summary:
        warnings.append("No summary.json: the run did not finish; this report covers the samples it wrote.")
    if folder.cut_short:
        warnings.append("The last line of samples.jsonl was cut short and is left out.")
    return f"<p>{html.escape(' · '.join(facts))}</p>" + "".join(
        f'<p class="warning">{html.escape(w)}</p>' for w in warnings
    )


def _summary_row(s: MetricStats, values: np.ndarray, langs: list[str]) -> str:
    chart = histogram_svg(histogram(values[~np.isnan(values)].tolist())) if s.count else ""
    return (
        f"<tr><td>{html.escape(s.metric)}</td><td class='num'>{_num(s.mean)}</td>"
        f"<td class='num'>{_interval(s)}</td><td class='num'>{s.count}</td><td class='num'>{s.nan_count}</td>"
        f"<td>{html.escape(counted(s.nan_reasons))}</td><td>{_card_cell(s.metric, langs)}</td><td>{chart}</td></tr>"
    )


def _card_cell(metric: str, langs: list[str]) -> str:
    """The metric's card in each of the run's languages; what it was measured on shows on hover."""
    lines = []
    for lang in langs:
        card = card_for(metric, lang)
        if card is None:
            lines.append(f'<div class="warning">{lang}: not measured</div>')
            continue
        where = f"{card.data}; judge {card.judge or 'none'}; {card.command}"
        style = "" if card.validated else ' class="warning"'
        text = f"{lang}: {card.summary()}: {card.status}"
        lines.append(f'<div{style} title="{html.escape(where)}">{html.escape(text)}</div>')
    return "".join(lines)


def _language_split(folder: ResultsFolder) -> str:
    """A table of each metric by language; nothing for a run in one language."""
    langs = sorted(set(folder.langs))
    if len(langs) < 2:
        return ""
    lang_of = np.array(folder.langs)
    by_lang = {lang: lang_of == lang for lang in langs}
    head = "".join(f"<th>{html.escape(lang)} ({int(by_lang[lang].sum())})</th>" for lang in langs)
    rows = []
    for metric in folder.metrics:
        cells = []
        for lang in langs:
            s = metric_stats(metric, folder.scores[metric][by_lang[lang]])
            cells.append(f"<td class='num'>{_num(s.mean)} {_interval(s)} <span class='n'>n={s.count}</span></td>")
        rows.append(f"<tr><td>{html.escape(metric)}</td>{''.join(cells)}</tr>")
    return (
        f"<h2>By language</h2><table class='summary'><thead><tr><th>metric</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _sample(record: dict[str, Any], metrics: list[str]) -> dict[str, Any]:
    """What the page needs of a record: scores in metric order, NaN reasons, and the evidence with long texts cut."""
    return {
        "id": str(record.get("id")),
        "row": record.get("row"),
        "lang": record.get("lang"),
        "scores": [record["scores"].get(metric) for metric in metrics],
        "nan": record.get("nan_reasons", {}),
        "evidence": _trimmed(record.get("evidence", {})),
    }


def _trimmed(value: Any) -> Any:
    if isinstance(value, str) and len(value) > LONGEST_TEXT:
        return value[:LONGEST_TEXT] + f"… [{len(value) - LONGEST_TEXT} more characters]"
    if isinstance(value, dict):
        return {key: _trimmed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_trimmed(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _interval(s: MetricStats) -> str:
    return "" if math.isnan(s.low) else f"[{_num(s.low)}, {_num(s.high)}]"


def _num(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.3f}"
