"""Each metric's measured agreement with people, per language, beside its model-free floor on the same rows.

The cards are data (cards.json, written by `benchmarks/metaeval.py cards` and `benchmarks/critiques.py --write`).
They decide the default suite: a metric runs by default only in the languages where its card validates it, and
every report marks a score whose metric is not validated in its sample's language.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from localeval.metrics.base import METRICS
from localeval.steps.prompts import LANGUAGES

CARDS_FILE = Path(__file__).resolve().parent / "cards.json"
# A metric that is itself a rule with no model has no floor to beat; its interval's low end must reach this
# instead: the lowest agreement the Ragas paper reports for its own metrics with GPT-3.5 (context relevance 0.70).
AGREEMENT_BAR = 0.70


@dataclass(frozen=True)
class Figure:
    """An agreement figure with its 95% bootstrap interval."""

    value: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.value:.2f} ({self.low:.2f}–{self.high:.2f})"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Figure:
        return cls(float(data["value"]), float(data["low"]), float(data["high"]))

    def to_json(self) -> dict[str, float]:
        return {"value": round(self.value, 4), "low": round(self.low, 4), "high": round(self.high, 4)}


@dataclass(frozen=True)
class Card:
    """One metric in one language, measured against human labels: what, on which rows, with which judge."""

    metric: str
    lang: str
    measure: str  # "AUROC" (labels ranked by the score) or "pairs won" (the preferred side scores higher; a tie half)
    agreement: Figure
    floor: Figure | None  # the model-free floor on the same rows; None for a metric that is itself such a rule
    floor_name: str  # what the floor is ("question words in the response"), or "" without one
    rows: int
    data: str  # the labelled set, its split and what a row is
    judge: str | None  # the judge it was measured with; None for a metric without one
    command: str
    # A target the metric misses whatever its agreement, as the card states it ("flags 12% of ordinary answers,
    # target at most 5%"); "" where it has none or meets them. A flag that is wrong too often is no use ranked well.
    missed_target: str = ""

    @property
    def validated(self) -> bool:
        """Beats its floor beyond the noise of its rows: the whole interval above it (a rule: above the bar)."""
        if self.missed_target:
            return False
        if self.floor is None:
            return self.agreement.low >= AGREEMENT_BAR
        return self.agreement.low > self.floor.value

    @property
    def status(self) -> str:
        if self.validated:
            return "validated"
        if self.missed_target:
            return self.missed_target
        return "not above its floor" if self.floor is not None else f"not above the bar {AGREEMENT_BAR:.2f}"

    def summary(self) -> str:
        """`pairs won 0.95 (0.91–0.99), floor 0.74`: the figure a table shows beside the metric."""
        floor = f", floor {self.floor.value:.2f}" if self.floor is not None else f", no floor (bar {AGREEMENT_BAR:.2f})"
        return f"{self.measure} {self.agreement}{floor}"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Card:
        floor = data.get("floor")
        return cls(
            metric=data["metric"],
            lang=data["lang"],
            measure=data["measure"],
            agreement=Figure.from_json(data["agreement"]),
            floor=Figure.from_json(floor) if floor else None,
            floor_name=data.get("floor_name", ""),
            rows=int(data["rows"]),
            data=data["data"],
            judge=data.get("judge"),
            command=data["command"],
            missed_target=data.get("missed_target", ""),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "lang": self.lang,
            "measure": self.measure,
            "agreement": self.agreement.to_json(),
            "floor": self.floor.to_json() if self.floor else None,
            "floor_name": self.floor_name,
            "rows": self.rows,
            "data": self.data,
            "judge": self.judge,
            "command": self.command,
            **({"missed_target": self.missed_target} if self.missed_target else {}),
        }


def cards() -> dict[tuple[str, str], Card]:
    """Every card, by (metric, language)."""
    return _read(CARDS_FILE)


@cache
def _read(path: Path) -> dict[tuple[str, str], Card]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {(card.metric, card.lang): card for card in map(Card.from_json, data["cards"])}


def card_for(metric: str, lang: str) -> Card | None:
    return cards().get((metric, lang))


def validated_in(metric: str, langs: Iterable[str]) -> frozenset[str]:
    """The languages among `langs` where the metric's card validates it."""
    return frozenset(lang for lang in langs if (card := card_for(metric, lang)) is not None and card.validated)


def status(metric: str, lang: str) -> str:
    """`validated`, `not above its floor`, `not above the bar 0.70` or `not measured`."""
    card = card_for(metric, lang)
    return card.status if card else "not measured"


def describe(metric: str, langs: Iterable[str]) -> str:
    """`en validated: pairs won 0.94 (0.89–0.98), floor 0.74; ja not measured`: each language's card in one line."""
    parts = []
    for lang in langs:
        card = card_for(metric, lang)
        parts.append(f"{lang} {card.status}: {card.summary()}" if card else f"{lang} not measured")
    return "; ".join(parts)


def validation_mark(metric: str, langs: Iterable[str]) -> str:
    """What a report prints beside a metric's score: `yes`, `no: not measured`, or per language where they differ."""
    found = {lang: status(metric, lang) for lang in sorted(set(langs))}
    if len(set(found.values())) == 1:
        (only,) = set(found.values())
        return "yes" if only == "validated" else f"no: {only}"
    return "; ".join(f"{lang} yes" if s == "validated" else f"{lang} no: {s}" for lang, s in found.items())


def measured_with_other_judges(metrics: Iterable[str], langs: Iterable[str], judge: str | None) -> set[str]:
    """The judges that the cards of these metrics in these languages were measured with, where not `judge`."""
    found = (card_for(metric, lang) for metric in metrics for lang in set(langs))
    return {card.judge for card in found if card and card.judge and card.judge != judge}


def markdown_table() -> str:
    """The cards as docs/validation.md shows them (`benchmarks/metaeval.py cards` prints the same)."""
    lines = [
        "| metric | language | agreement (95% interval) | floor, no model (95% interval) | rows | labelled data "
        "| judge | validated |",
        "|---|---|---|---|---:|---|---|---|",
    ]
    for card in sorted(cards().values(), key=lambda card: (card.metric, card.lang)):
        floor = f"{card.floor}: {card.floor_name}" if card.floor else f"none, a rule itself (bar {AGREEMENT_BAR:.2f})"
        validated = "**yes**" if card.validated else f"no: {card.status}"
        lines.append(
            f"| `{card.metric}` | {card.lang} | {card.measure} {card.agreement} | {floor} | {card.rows} | {card.data} "
            f"| {card.judge or 'none'} | {validated} |"
        )
    for metric, langs in unmeasured():
        lines.append(f"| `{metric}` | {', '.join(langs)} | not measured | | | | | no: not measured |")
    return "\n".join(lines)


def unmeasured() -> list[tuple[str, list[str]]]:
    """Each metric that calls the judge, with the languages where it has no card: what the table must not hide."""
    missing = [
        (name, [lang for lang in LANGUAGES if card_for(name, lang) is None])
        for name, declared in sorted(METRICS.items())
        if "judge" in declared.models
    ]
    return [(name, langs) for name, langs in missing if langs]


def update_cards(found: Iterable[Card]) -> None:
    """The shipped cards file with these cards in place of the same metric and language, the others kept: each
    benchmark writes the cards it measures."""
    found = list(found)
    replaced = {(card.metric, card.lang) for card in found}
    write_cards([card for key, card in cards().items() if key not in replaced] + found)


def write_cards(found: Iterable[Card], path: Path | None = None) -> None:
    """The cards file, sorted by metric and language so that a regenerated file diffs cleanly."""
    ordered = sorted(found, key=lambda card: (card.metric, card.lang))
    text = json.dumps({"format": 1, "cards": [card.to_json() for card in ordered]}, indent=2, ensure_ascii=False)
    (path or CARDS_FILE).write_text(text + "\n", encoding="utf-8")
    _read.cache_clear()
