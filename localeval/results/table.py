"""The terminal summary of a run, rendered from the saved result object."""

from __future__ import annotations

import math
from collections.abc import Sequence

from localeval.metrics.cards import measured_with_other_judges, validation_mark
from localeval.reasons import counted
from localeval.results.gating import GateResult
from localeval.results.run_result import RunResult


def summary_table(result: RunResult) -> str:
    """A plain-text table: one line per metric, then the judge's work and any rows that were skipped."""
    header = ("metric", "mean", "scored", "NaN", "validated", "NaN reasons")
    langs = result.manifest.languages or {"en": 0}
    rows = [header]
    for name, summary in result.summaries.items():
        rows.append(
            (
                name,
                _mean(summary.mean),
                str(summary.count),
                str(summary.nan_count),
                validation_mark(name, langs),
                counted(summary.nan_reasons),
            )
        )
    lines = align_columns(rows, rule=True) + _card_notes(result, [row[4] for row in rows[1:]])
    usage = result.usage()
    samples = result.sample_count or 1
    lines.append("")
    lines.append(
        f"{_count(result.sample_count, 'sample')}; judge: {usage.calls} calls ({usage.cached_calls} reused), "
        f"{usage.prompt_tokens + usage.completion_tokens} tokens "
        f"({(usage.prompt_tokens + usage.completion_tokens) / samples:.0f}/sample), "
        f"{usage.seconds:.1f} s ({usage.seconds / samples:.2f} s/sample)"
    )
    if result.row_errors:
        skipped = len({error.row for error in result.row_errors})
        lines.append(f"{_count(skipped, 'row')} skipped for bad values (all listed in summary.json: row_errors)")
    if result.interrupted:
        lines.append("Interrupted: scores not yet computed are NaN with reason 'interrupted'.")
    return "\n".join(lines)


def summary_markdown(result: RunResult, gates: list[GateResult] | None = None) -> str:
    """A Markdown table of the run to paste into a pull request; a Gate column when bounds were checked."""
    gate_of = {g.metric: g for g in gates or []}
    header = ["Metric", "Mean", "Scored", "NaN", "Validated"] + (["Gate"] if gate_of else [])
    rule = [":---"] + ["---:"] * 3 + [":---"] * (1 + bool(gate_of))
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(rule) + "|"]
    langs = result.manifest.languages or {"en": 0}
    for name, summary in result.summaries.items():
        cells = [f"`{name}`", _mean(summary.mean), str(summary.count), str(summary.nan_count)]
        cells.append(validation_mark(name, langs))
        if gate_of:
            gate = gate_of.get(name)
            cells.append("" if gate is None else f"{'pass' if gate.passed else '**FAIL**'}: {gate.why}")
        lines.append("| " + " | ".join(cells) + " |")
    usage = result.usage()
    lines += [
        "",
        f"{_count(result.sample_count, 'sample')}; judge: {usage.calls} calls, "
        f"{usage.prompt_tokens + usage.completion_tokens} tokens, {usage.seconds:.1f} s.",
    ]
    if result.interrupted:
        lines.append("Interrupted: scores not yet computed are NaN with reason 'interrupted'.")
    return "\n".join(lines) + "\n"


def _card_notes(result: RunResult, marks: list[str]) -> list[str]:
    """What the validated column means where a score is not validated, and whose judge the cards measured."""
    notes = []
    if any(mark != "yes" for mark in marks):
        notes.append(
            "validated: the metric's agreement with people beats its model-free floor in the samples' languages "
            "(`localeval metrics`); read the others with care."
        )
    judge = result.manifest.judge.label if result.manifest.judge else None
    if judge and (others := measured_with_other_judges(result.summaries, result.manifest.languages, judge)):
        notes.append(f"The cards were measured with {', '.join(sorted(others))}, not with this run's judge.")
    return notes


def align_columns(rows: Sequence[Sequence[str]], rule: bool = False) -> list[str]:
    """Plain-text columns, each as wide as its widest cell, two spaces apart; `rule`: dashes under the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    if rule:
        lines.insert(1, "  ".join("-" * width for width in widths))
    return lines


def _mean(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.3f}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
