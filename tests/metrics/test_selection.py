"""Tests for localeval.metrics.selection: the aspect_critique group, the default suite of validated metrics and
explicit requests."""

from __future__ import annotations

import pytest
from conftest import card

from localeval.data.samples import Sample
from localeval.errors import ConfigError
from localeval.metrics.cards import status
from localeval.metrics.options import MetricOptions
from localeval.metrics.selection import choose_metrics, expand, known_metrics

CRITIQUES = [
    f"aspect_critique:{c}" for c in ("harmfulness", "maliciousness", "coherence", "correctness", "conciseness")
]


def names(choice) -> list[str]:
    return [metric.name for metric in choice.chosen]


def test_expand_replaces_the_group_with_built_ins_and_user_criteria():
    assert expand(["faithfulness", "aspect_critique", "bleu"]) == ["faithfulness", *CRITIQUES, "bleu"]
    assert expand(["aspect_critique"], ["politeness", "coherence"]) == [*CRITIQUES, "aspect_critique:politeness"]
    # Repeats are dropped where they come again: coherence keeps its first place.
    assert expand(["bleu", "aspect_critique:coherence", "aspect_critique", "bleu"]) == [
        "bleu",
        "aspect_critique:coherence",
        *(c for c in CRITIQUES if c != "aspect_critique:coherence"),
    ]


@pytest.fixture
def validated(shelf):
    """faithfulness and context_recall validated in en, answer_relevancy not above its floor there, grounding_coverage
    validated in ja, a critique in en and ja."""
    shelf(
        card("faithfulness", "en"),
        card("context_recall", "en"),
        card("answer_relevancy", "en", validated=False),
        card("grounding_coverage", "ja", judge=None),
        card("aspect_critique:harmfulness", "en"),
        card("aspect_critique:harmfulness", "ja"),
    )


CONTEXT_FIELDS = {"user_input", "response", "retrieved_contexts"}


def test_the_default_suite_is_what_is_validated_in_the_datas_language(validated):
    choice = choose_metrics(None, CONTEXT_FIELDS | {"reference"}, langs={"en"})
    assert names(choice) == ["faithfulness", "context_recall", "aspect_critique:harmfulness"]
    assert choice.skipped == {}
    assert choice.unvalidated["answer_relevancy"] == "en not above its floor: AUROC 0.90 (0.70–0.95), floor 0.80"
    assert choice.unvalidated["bleu"] == "en not measured"
    assert set(choice.unvalidated) == set(known_metrics()) - set(names(choice))


def test_a_validated_metric_the_data_cannot_feed_is_skipped_with_the_field_it_lacks(validated):
    choice = choose_metrics(None, CONTEXT_FIELDS, langs={"en"})
    assert names(choice) == ["faithfulness", "aspect_critique:harmfulness"]
    assert choice.skipped == {"context_recall": "the dataset has no reference"}


def test_in_several_languages_a_metric_scores_only_the_samples_of_those_it_is_validated_in(validated):
    choice = choose_metrics(None, CONTEXT_FIELDS, langs={"en", "ja"})
    assert names(choice) == ["faithfulness", "aspect_critique:harmfulness", "grounding_coverage"]
    assert choice.unvalidated["answer_relevancy"] == (
        "en not above its floor: AUROC 0.90 (0.70–0.95), floor 0.80; ja not measured"
    )
    by_name = {metric.name: metric for metric in choice.chosen}
    tokyo = Sample(
        "t", 1, user_input="東京は？", response="日本の首都です。", retrieved_contexts=("東京は日本の首都。",)
    )
    skipped = by_name["faithfulness"].compute(tokyo, MetricOptions(lang="ja"))
    assert (skipped.is_nan, skipped.reason) == (True, "not_validated")
    scored = by_name["grounding_coverage"].compute(tokyo, MetricOptions(lang="ja"))
    assert not scored.is_nan
    assert by_name["aspect_critique:harmfulness"] is known_metrics()["aspect_critique:harmfulness"]  # both: as it is
    assert by_name["grounding_coverage"].compute(tokyo, MetricOptions(lang="en")).reason == "not_validated"


def test_no_validated_metric_that_can_run_is_an_error_that_says_what_to_do(validated):
    with pytest.raises(ConfigError) as info:
        choose_metrics(None, CONTEXT_FIELDS, langs={"zh"})
    assert str(info.value) == (
        "No metric validated in zh can run on this dataset. Choose metrics with --metrics; "
        "`localeval metrics` shows how each was measured."
    )
    with pytest.raises(ConfigError, match=r"^No metric validated in en can run on this dataset; faithfulness: the "):
        choose_metrics(None, {"reference"}, langs={"en"})


def test_the_shipped_cards_choose_a_suite_for_english_rows_with_contexts():
    """Whatever the cards say, the default suite on the example's fields is non-empty and all validated."""
    choice = choose_metrics(None, CONTEXT_FIELDS | {"reference"}, langs={"en"})
    assert choice.chosen and all(status(metric.name, "en") == "validated" for metric in choice.chosen)


def test_explicit_request():
    # Not filtered by the fields: faithfulness runs (NaN where a row lacks them) since another metric can run.
    choice = choose_metrics(["bleu", "aspect_critique", "faithfulness"], {"response"})
    assert names(choice) == ["bleu", *CRITIQUES, "faithfulness"]
    assert choice.skipped == {}


def test_explicit_request_that_no_row_can_feed_raises():
    with pytest.raises(ConfigError) as info:
        choose_metrics(["bleu", "faithfulness"], {"user_input", "response"})
    assert str(info.value) == (
        "No chosen metric can run on this dataset (bleu: the dataset has no reference; "
        "faithfulness: the dataset has no retrieved_contexts); every score would be NaN."
    )


def test_an_empty_request_is_an_error_not_the_default_suite():
    """`--metrics ""` or `--metrics ","`: nothing asked for must not run nothing, nor everything."""
    with pytest.raises(ConfigError, match=r"^--metrics names no metric: give metric names separated by commas"):
        choose_metrics((), {"user_input", "response", "retrieved_contexts"})


@pytest.mark.parametrize("requested", [["faithfulness", "nope"], ["aspect_critique:politeness"]])
def test_unknown_metric_raises(requested):
    with pytest.raises(ConfigError, match=f"Unknown metric\\(s\\): {requested[-1]}"):
        choose_metrics(requested, {"response"})


def test_user_criterion_is_known_only_when_given():
    choice = choose_metrics(["aspect_critique:politeness"], {"response"}, ["politeness"])
    assert names(choice) == ["aspect_critique:politeness"]
    assert choice.chosen[0].steps == ("critique",)
