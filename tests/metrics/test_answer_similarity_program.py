"""Tests for the answer_similarity metric's program, driven by hand: no embedder, the similarities are given."""

from __future__ import annotations

import numpy as np
import pytest
from programs import finish

from localeval.data.samples import Sample
from localeval.metrics import METRICS, Score
from localeval.metrics.answer_similarity import answer_similarity
from localeval.metrics.options import MetricOptions
from localeval.models.encoders import Similarity

RESPONSE = "Paris is the capital of France."
REFERENCE = "France's capital is Paris."


def sample() -> Sample:
    return Sample("q1", 1, user_input="What is France's capital?", response=RESPONSE, reference=REFERENCE)


def score_for(similarity: float, options: MetricOptions = MetricOptions()) -> Score:
    program = answer_similarity.compute(sample(), options)
    assert next(program) == Similarity(((RESPONSE, REFERENCE),))
    return finish(program, np.array([similarity]))


def test_declaration():
    assert METRICS["answer_similarity"] is answer_similarity
    assert (
        answer_similarity.name,
        answer_similarity.required,
        answer_similarity.steps,
        answer_similarity.models,
        answer_similarity.score_range,
    ) == ("answer_similarity", ("response", "reference"), (), ("embedder",), (0.0, 1.0))


def test_requests_one_pair_response_then_reference():
    program = answer_similarity.compute(sample())
    request = next(program)
    assert isinstance(request, Similarity)
    assert request.pairs == (("Paris is the capital of France.", "France's capital is Paris."),)


def test_score_passes_through_with_rounded_evidence():
    score = score_for(0.8312345)
    assert (score.value, score.reason, score.evidence) == (0.8312345, None, {"similarity": 0.8312})


def test_negative_similarity_counts_as_zero():
    score = score_for(-0.25)
    assert (score.value, score.evidence) == (0.0, {"similarity": 0.0})


@pytest.mark.parametrize(("similarity", "expected"), [(0.8, 1.0), (0.95, 1.0), (0.7999, 0.0), (-0.3, 0.0)])
def test_threshold_turns_the_score_into_0_or_1(similarity, expected):
    score = score_for(similarity, MetricOptions(similarity_threshold=0.8))
    assert score.value == expected
    assert score.evidence == {"similarity": round(max(similarity, 0.0), 4)}  # evidence keeps the raw similarity
