"""Tests for the answer_completeness metric's program, driven by hand: no judge runs, outputs are given."""

from __future__ import annotations

import math

import pytest
from programs import finish

from localeval.metrics import METRICS
from localeval.metrics.answer_completeness import answer_completeness, distinct
from localeval.samples import Sample
from localeval.steps import Call
from localeval.steps.completeness import QuestionParts
from localeval.steps.verdicts import Verdict

QUESTION = "When was PharmaCann founded and where is it based?"
RESPONSE = "PharmaCann was founded in 2014."
FOUNDED, BASED = "When was PharmaCann founded?", "Where is PharmaCann based?"


def run(parts: list[str], verdicts: list[Verdict]):
    program = answer_completeness.compute(Sample("q1", 1, user_input=QUESTION, response=RESPONSE))
    assert next(program) == Call.of("question_parts", user_input=QUESTION)
    calls = program.send(QuestionParts(parts=parts))
    return calls, finish(program, verdicts)


def test_declaration():
    assert METRICS["answer_completeness"] is answer_completeness
    assert (answer_completeness.required, answer_completeness.steps, answer_completeness.models) == (
        ("user_input", "response"), ("question_parts", "part_answered"), ("judge",))


def test_each_part_is_judged_against_the_response_in_its_own_call():
    calls, _ = run([FOUNDED, BASED], [Verdict(reason="a", verdict=1), Verdict(reason="b", verdict=0)])
    assert calls == [Call.of("part_answered", user_input=QUESTION, part=part, response=RESPONSE)
                     for part in (FOUNDED, BASED)]


def test_the_score_is_the_mean_probability_that_a_part_is_answered():
    # (0.9 + 0.2) / 2 = 0.55: the expected share of the two parts that the response answers.
    _, score = run([FOUNDED, BASED], [Verdict(reason="says 2014", verdict=1, probability=0.9),
                                      Verdict(reason="no place", verdict=0, probability=0.2)])
    assert score.value == pytest.approx(0.55)
    assert score.evidence == {"parts": [
        {"part": FOUNDED, "answered": 0.9, "verdict": 1, "reason": "says 2014"},
        {"part": BASED, "answered": 0.2, "verdict": 0, "reason": "no place"}]}


def test_without_a_probability_the_verdict_counts():
    _, score = run([FOUNDED, BASED, "Who founded it?"], [Verdict(reason="a", verdict=1), Verdict(reason="b", verdict=0),
                                                         Verdict(reason="c", verdict=1)])
    assert score.value == pytest.approx(2 / 3)


def test_a_repeated_part_is_judged_once():
    calls, score = run([FOUNDED, " when was pharmacann  FOUNDED? ", BASED],
                       [Verdict(reason="a", verdict=1, probability=1.0), Verdict(reason="b", verdict=0, probability=0.0)])
    assert [call.input_dict()["part"] for call in calls] == [FOUNDED, BASED]
    assert score.value == 0.5


def test_blank_parts_only_give_nan():
    program = answer_completeness.compute(Sample("q1", 1, user_input=QUESTION, response=RESPONSE))
    next(program)
    score = finish(program, QuestionParts(parts=["  "]))
    assert math.isnan(score.value) and score.reason == "no_question_parts"


def test_distinct_keeps_the_first_spelling_in_order():
    assert distinct(["Ｗｈｏ？", "b", "who?", "", "B "]) == ["Ｗｈｏ？", "b"]
