"""Tests for the answer_completeness metric's program, driven by hand: no judge runs, outputs are given."""

from __future__ import annotations

import math

import pytest
from programs import finish

from localeval.data.samples import Sample
from localeval.metrics import METRICS
from localeval.metrics.answer_completeness import answer_completeness, distinct
from localeval.metrics.context_relevancy import SENTENCES_PER_CALL
from localeval.steps import Call
from localeval.steps.completeness import QuestionParts
from localeval.steps.relevance import SentenceVerdicts
from localeval.steps.verdicts import Verdict

QUESTION = "When was PharmaCann founded and where is it based?"
FIRST, SECOND = "PharmaCann was founded in 2014.", "It is a leading pharmaceutical company."
RESPONSE = f"{FIRST} {SECOND}"
FOUNDED, BASED = "When was PharmaCann founded?", "Where is PharmaCann based?"


def run(parts: list[str], verdicts: list[Verdict], marks: list[int] = (1, 1), response: str = RESPONSE):
    program = answer_completeness.compute(Sample("q1", 1, user_input=QUESTION, response=response))
    assert next(program) == Call.of("question_parts", user_input=QUESTION)
    calls = program.send(QuestionParts(parts=parts))
    return calls, finish(program, [*verdicts, SentenceVerdicts(verdicts=list(marks))])


def test_declaration():
    assert METRICS["answer_completeness"] is answer_completeness
    assert (answer_completeness.required, answer_completeness.steps, answer_completeness.models) == (
        ("user_input", "response"),
        ("question_parts", "part_answered", "response_focus"),
        ("judge",),
    )


def test_each_part_is_judged_in_its_own_call_and_the_sentences_in_one():
    calls, _ = run([FOUNDED, BASED], [Verdict(reason="a", verdict=1), Verdict(reason="b", verdict=0)])
    assert calls == [
        *(Call.of("part_answered", user_input=QUESTION, part=part, response=RESPONSE) for part in (FOUNDED, BASED)),
        Call.of("response_focus", user_input=QUESTION, sentences=[FIRST, SECOND]),
    ]


def test_coverage_is_the_mean_probability_that_a_part_is_answered():
    # (0.9 + 0.2) / 2 = 0.55: the expected share of the two parts that the response answers; both sentences
    # stay on the question, so focus is 1.
    _, score = run(
        [FOUNDED, BASED],
        [
            Verdict(reason="says 2014", verdict=1, probability=0.9),
            Verdict(reason="no place", verdict=0, probability=0.2),
        ],
    )
    assert score.value == pytest.approx(0.55)
    assert score.evidence == {
        "coverage": 0.55,
        "focus": 1.0,
        "off_question": [],
        "parts": [
            {"part": FOUNDED, "answered": 0.9, "verdict": 1, "reason": "says 2014"},
            {"part": BASED, "answered": 0.2, "verdict": 0, "reason": "no place"},
        ],
    }


def test_a_sentence_off_the_question_scales_the_score_by_the_share_on_it():
    # coverage (1.0 + 0.5) / 2 = 0.75, focus 1 of 2 sentences = 0.5: 0.75 × 0.5 = 0.375.
    _, score = run(
        [FOUNDED, BASED],
        [Verdict(reason="a", verdict=1, probability=1.0), Verdict(reason="b", verdict=1, probability=0.5)],
        marks=[1, 0],
    )
    assert score.value == pytest.approx(0.375)
    assert (score.evidence["coverage"], score.evidence["focus"], score.evidence["off_question"]) == (
        0.75,
        0.5,
        [SECOND],
    )


def test_without_a_probability_the_verdict_counts():
    _, score = run(
        [FOUNDED, BASED, "Who founded it?"],
        [Verdict(reason="a", verdict=1), Verdict(reason="b", verdict=0), Verdict(reason="c", verdict=1)],
    )
    assert score.value == pytest.approx(2 / 3)


def test_a_repeated_part_is_judged_once():
    calls, score = run(
        [FOUNDED, " when was pharmacann  FOUNDED? ", BASED],
        [Verdict(reason="a", verdict=1, probability=1.0), Verdict(reason="b", verdict=0, probability=0.0)],
    )
    assert [call.input_dict()["part"] for call in calls[:-1]] == [FOUNDED, BASED]
    assert score.value == 0.5


def test_a_long_response_is_marked_in_groups():
    response = " ".join(f"Sentence number {i} is here." for i in range(SENTENCES_PER_CALL + 6))
    program = answer_completeness.compute(Sample("q1", 1, user_input=QUESTION, response=response))
    next(program)
    calls = program.send(QuestionParts(parts=[FOUNDED]))
    assert [len(call.input_dict()["sentences"]) for call in calls[1:]] == [SENTENCES_PER_CALL, 6]
    score = finish(
        program,
        [
            Verdict(reason="a", verdict=1, probability=1.0),
            SentenceVerdicts(verdicts=[1] * SENTENCES_PER_CALL),
            SentenceVerdicts(verdicts=[0] * 6),
        ],
    )
    assert score.evidence["focus"] == round(SENTENCES_PER_CALL / (SENTENCES_PER_CALL + 6), 4)


def test_blank_parts_only_give_nan():
    program = answer_completeness.compute(Sample("q1", 1, user_input=QUESTION, response=RESPONSE))
    next(program)
    score = finish(program, QuestionParts(parts=["  "]))
    assert math.isnan(score.value) and score.reason == "no_question_parts"


def test_distinct_keeps_the_first_spelling_in_order():
    assert distinct(["Ｗｈｏ？", "b", "who?", "", "B "]) == ["Ｗｈｏ？", "b"]


def test_focus_is_the_mean_probability_that_a_sentence_is_on_the_question():
    # coverage 1.0; focus (0.98 + 0.44) / 2 = 0.71; a sentence with P below 0.5 is listed as off the question.
    program = answer_completeness.compute(Sample("q1", 1, user_input=QUESTION, response=RESPONSE))
    next(program)
    program.send(QuestionParts(parts=[FOUNDED]))
    score = finish(
        program,
        [
            Verdict(reason="a", verdict=1, probability=1.0),
            SentenceVerdicts(verdicts=[1, 1], probabilities=[0.98, 0.44]),
        ],
    )
    assert score.value == pytest.approx(0.71)
    assert (score.evidence["focus"], score.evidence["off_question"]) == (0.71, [SECOND])
