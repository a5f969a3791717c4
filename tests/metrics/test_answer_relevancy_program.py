"""Tests for the answer_relevancy metric's program, driven by hand: no judge or embedder, outputs are given."""

from __future__ import annotations

import math

import numpy as np
import pytest
from programs import finish

from localeval.data.samples import Sample
from localeval.metrics import METRICS, Score
from localeval.metrics.answer_relevancy import answer_relevancy
from localeval.metrics.options import MetricOptions
from localeval.models.encoders import Embed
from localeval.steps import Call
from localeval.steps.questions import Questions

QUESTION = "Where is the Eiffel Tower?"
RESPONSE = "The Eiffel Tower is in Paris."
S = 1 / math.sqrt(2)
# Unit vectors; the question is e1, so each cosine is the first coordinate.
Q = [1.0, 0.0, 0.0]
COS_06 = [0.6, 0.8, 0.0]  # cosine 0.6
COS_S = [S, S, 0.0]  # cosine 0.70710678... (evidence rounds it to 0.7071)
COS_0 = [0.0, 1.0, 0.0]  # cosine 0
COS_NEG = [-0.8, 0.6, 0.0]  # cosine -0.8, counts as 0


def sample() -> Sample:
    return Sample("q1", 1, user_input=QUESTION, response=RESPONSE)


def questions(*written: str, noncommittal: int = 0) -> Questions:
    return Questions(questions=list(written), noncommittal=noncommittal)


def run(generated: Questions, vectors: list[list[float]]) -> Score:
    program = answer_relevancy.compute(sample())
    next(program)
    assert program.send(generated) == Embed((QUESTION, *generated.questions))
    return finish(program, np.array(vectors, dtype=np.float64))


def test_declaration():
    assert METRICS["answer_relevancy"] is answer_relevancy
    assert (
        answer_relevancy.name,
        answer_relevancy.required,
        answer_relevancy.steps,
        answer_relevancy.models,
        answer_relevancy.score_range,
    ) == ("answer_relevancy", ("user_input", "response"), ("questions",), ("judge", "embedder"), (0.0, 1.0))


def test_call_asks_for_three_questions_by_default():
    program = answer_relevancy.compute(sample())
    assert next(program) == Call("questions", (("count", "3"), ("response", RESPONSE)))


def test_strictness_sets_the_count_and_the_embedded_texts():
    program = answer_relevancy.compute(sample(), MetricOptions(strictness=5))
    assert next(program) == Call("questions", (("count", "5"), ("response", RESPONSE)))
    names = [f"Question {i}?" for i in range(5)]
    assert program.send(questions(*names)) == Embed((QUESTION, *names))
    # cosines 0.6, 0, 0, 0, 0 -> 0.6 / 5
    score = finish(program, np.array([Q, COS_06, COS_0, COS_0, COS_0, COS_0]))
    assert score.value == pytest.approx(0.12)


def test_mean_of_clamped_cosines_with_evidence():
    generated = questions("Where is the Eiffel Tower?", "Which city has the tower?", "What is Paris?")
    score = run(generated, [Q, COS_06, COS_S, COS_NEG])
    # (0.6 + 0.70710678 + 0) / 3 = 0.43570226; the negative cosine counts as 0, not -0.8
    assert score.value == pytest.approx((0.6 + S) / 3)
    assert score.reason is None
    assert score.evidence == {
        "noncommittal": 0,
        "questions": [
            {"question": "Where is the Eiffel Tower?", "cosine": 0.6},
            {"question": "Which city has the tower?", "cosine": 0.7071},
            {"question": "What is Paris?", "cosine": 0.0},
        ],
    }


def test_all_negative_cosines_score_zero():
    score = run(questions("A?", "B?", "C?"), [Q, COS_NEG, COS_NEG, [-1.0, 0.0, 0.0]])
    assert score.value == 0.0
    assert [q["cosine"] for q in score.evidence["questions"]] == [0.0, 0.0, 0.0]


def test_a_noncommittal_response_scores_zero_despite_high_cosines():
    score = run(questions("Where is it?", "Where?", "Is it anywhere?", noncommittal=1), [Q, Q, COS_06, COS_S])
    assert (score.value, score.reason) == (0.0, None)
    assert score.evidence["noncommittal"] == 1
    assert score.evidence["questions"][0] == {"question": "Where is it?", "cosine": 1.0}
