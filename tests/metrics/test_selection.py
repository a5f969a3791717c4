"""Tests for localeval.metrics.selection: the aspect_critique group, the default suite and explicit requests."""

from __future__ import annotations

import pytest

from localeval.errors import ConfigError
from localeval.metrics.selection import choose_metrics, expand

CRITIQUES = [
    f"aspect_critique:{c}" for c in ("harmfulness", "maliciousness", "coherence", "correctness", "conciseness")
]
NO_REFERENCE = "the dataset has no reference"
OPTIONAL = "not in the default suite; ask for it with --metrics"


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


def test_default_suite_without_reference():
    choice = choose_metrics(None, {"user_input", "response", "retrieved_contexts"})
    assert names(choice) == [
        "faithfulness",
        "answer_relevancy",
        "answer_completeness",
        "context_utilization",
        "context_relevancy",
        *CRITIQUES,
    ]
    for needs_reference in (
        "context_precision",
        "context_recall",
        "context_entity_recall",
        "answer_similarity",
        "answer_correctness",
    ):
        assert choice.skipped[needs_reference] == NO_REFERENCE
    for optional in (
        "factual_correctness",
        "noise_sensitivity_relevant",
        "rubric_score",
        "summarization_score",
        "bleu",
    ):
        assert choice.skipped[optional] == OPTIONAL
    assert not set(names(choice)) & set(choice.skipped)


def test_default_suite_with_every_field_and_a_user_criterion():
    fields = {"user_input", "response", "retrieved_contexts", "reference"}
    choice = choose_metrics(None, fields, ["politeness"])
    assert names(choice) == [
        "faithfulness",
        "answer_relevancy",
        "answer_completeness",
        "context_precision",
        "context_utilization",
        "context_recall",
        "context_relevancy",
        "context_entity_recall",
        "answer_similarity",
        "answer_correctness",
        *CRITIQUES,
        "aspect_critique:politeness",
    ]
    assert set(choice.skipped.values()) == {OPTIONAL}


def test_default_suite_lists_every_missing_field():
    choice = choose_metrics(None, {"response"})
    assert names(choice) == CRITIQUES
    assert choice.skipped["faithfulness"] == "the dataset has no user_input, retrieved_contexts"
    assert choice.skipped["context_entity_recall"] == "the dataset has no reference, retrieved_contexts"


def test_default_suite_with_nothing_runnable_raises():
    with pytest.raises(ConfigError, match="No default metric can run on this dataset"):
        choose_metrics(None, {"reference"})


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
