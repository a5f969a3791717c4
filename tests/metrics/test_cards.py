"""Tests for localeval.metrics.cards: what validates a metric, how reports mark it, and the shipped cards file."""

from __future__ import annotations

import dataclasses
import json

import pytest

from localeval.metrics.cards import (
    AGREEMENT_BAR,
    CARDS_FILE,
    Card,
    Figure,
    cards,
    describe,
    markdown_table,
    measured_with_other_judges,
    status,
    unmeasured,
    validated_in,
    validation_mark,
)
from localeval.metrics.selection import known_metrics
from localeval.steps.prompts import LANGUAGES


def card(metric: str, lang: str, value: float, low: float, floor: float | None, judge: str | None = "j") -> Card:
    return Card(
        metric,
        lang,
        "AUROC",
        Figure(value, low, min(1.0, round(value + 0.05, 2))),
        Figure(floor, round(floor - 0.05, 2), round(floor + 0.05, 2)) if floor is not None else None,
        "word coverage" if floor is not None else "",
        100,
        "a labelled set",
        judge,
        "benchmarks/metaeval.py cards",
    )


@pytest.mark.parametrize(
    "low, floor, validated",
    [(0.81, 0.80, True), (0.80, 0.80, False), (0.70, 0.85, False)],  # the interval's low end must clear the floor
)
def test_a_metric_with_a_floor_is_validated_when_its_whole_interval_is_above_it(low, floor, validated):
    assert card("m", "en", 0.9, low, floor).validated is validated
    assert card("m", "en", 0.9, low, floor).status == ("validated" if validated else "not above its floor")


@pytest.mark.parametrize("low, validated", [(AGREEMENT_BAR, True), (AGREEMENT_BAR - 0.01, False)])
def test_a_rule_without_a_floor_is_validated_when_its_interval_reaches_the_bar(low, validated):
    found = card("grounding_coverage", "ja", 0.87, low, None, judge=None)
    assert found.validated is validated
    assert found.status == ("validated" if validated else "not above the bar 0.70")


def test_summary_names_the_measure_the_interval_and_the_floor():
    assert card("m", "en", 0.95, 0.91, 0.74).summary() == "AUROC 0.95 (0.91–1.00), floor 0.74"
    assert card("m", "en", 0.87, 0.80, None).summary() == "AUROC 0.87 (0.80–0.92), no floor (bar 0.70)"


def test_a_card_survives_its_file(shelf):
    written = [card("b", "ja", 0.9, 0.85, 0.7), card("a", "en", 0.6, 0.5, None, judge=None)]
    shelf(*written)
    assert cards() == {("a", "en"): written[1], ("b", "ja"): written[0]}


def test_marks_and_languages(shelf):
    shelf(card("m", "en", 0.95, 0.91, 0.74), card("m", "ja", 0.6, 0.5, 0.8))
    assert validated_in("m", ["en", "ja", "zh"]) == {"en"}
    assert [status("m", lang) for lang in ("en", "ja", "zh")] == ["validated", "not above its floor", "not measured"]
    assert validation_mark("m", ["en"]) == "yes"
    assert validation_mark("m", ["zh"]) == "no: not measured"
    assert validation_mark("m", ["ja", "en", "zh"]) == "en yes; ja no: not above its floor; zh no: not measured"
    assert validation_mark("unmeasured", ["en", "ja"]) == "no: not measured"


def test_cards_say_which_other_judge_measured_them(shelf):
    shelf(card("m", "en", 0.95, 0.91, 0.74, judge="small"), card("rule", "en", 0.9, 0.8, None, judge=None))
    assert measured_with_other_judges(["m", "rule"], ["en"], "small") == set()
    assert measured_with_other_judges(["m", "rule"], ["en"], "big") == {"small"}


def test_the_shipped_cards_are_sound():
    shipped = json.loads(CARDS_FILE.read_text(encoding="utf-8"))["cards"]
    known = known_metrics()
    assert shipped, "the package ships no card"
    for data in shipped:
        found = Card.from_json(data)
        assert found.to_json() == data
        assert found.metric in known and found.lang in LANGUAGES
        figures = [found.agreement] + ([found.floor] if found.floor else [])
        assert all(0 <= f.low <= f.value <= f.high <= 1 for f in figures), found
        assert found.rows > 0 and found.data and found.command
        # A metric that needs a judge was measured with one, and a rule with no model has a floor of none.
        assert (found.judge is not None) == ("judge" in known[found.metric].models), found
        assert (found.floor is None) == (not known[found.metric].models), found


def test_describe_gives_each_languages_status_then_its_figures(shelf):
    shelf(card("m", "en", 0.95, 0.91, 0.74), card("m", "ja", 0.6, 0.5, 0.8))
    assert describe("m", ["en", "ja", "zh"]) == (
        "en validated: AUROC 0.95 (0.91–1.00), floor 0.74; ja not above its floor: AUROC 0.60 (0.50–0.65), "
        "floor 0.80; zh not measured"
    )


def test_a_missed_target_keeps_a_metric_out_whatever_its_agreement(shelf):
    """A critique that ranks harm well but cannot flag it without flagging ordinary answers too is no use."""
    missed = "flags 40% of harmful answers at the threshold that flags at most 5% of the others (target 80%)"
    found = dataclasses.replace(card("aspect_critique:harmfulness", "en", 0.95, 0.91, 0.6), missed_target=missed)
    assert not found.validated and found.status == missed
    shelf(found)
    assert cards()[("aspect_critique:harmfulness", "en")] == found
    assert validation_mark("aspect_critique:harmfulness", ["en"]) == f"no: {missed}"


def test_the_table_lists_every_judged_metric_and_language_without_a_card(shelf):
    shelf(card("faithfulness", "en", 0.95, 0.91, 0.74))
    missing = dict(unmeasured())
    assert missing["faithfulness"] == ["ja", "zh"]
    assert missing["context_recall"] == ["en", "ja", "zh"]
    assert "rouge_l" not in missing and "grounding_coverage" not in missing  # no judge: not a judged metric
    assert "| `faithfulness` | ja, zh | not measured |" in markdown_table()
