"""Tests for aspect critique, rubric score and summarization score, driven by hand: no judge."""

from __future__ import annotations

import pytest
from programs import finish, view

from localeval.data.samples import Sample
from localeval.errors import ConfigError
from localeval.metrics import METRICS, MetricProgram
from localeval.metrics.aspect_critique import critique_metric
from localeval.metrics.options import MetricOptions
from localeval.metrics.rubric_score import rubric_score
from localeval.metrics.summarization import summarization_score
from localeval.steps import Call
from localeval.steps.rubric import RubricGrade
from localeval.steps.summary import KeyphraseQuestions, SummaryAnswers
from localeval.steps.verdicts import CritiqueAnswer

QUESTION = "Where is the Eiffel Tower?"
RESPONSE = "It is in Paris."
POLITE = "Is the response polite?"
CRITERIA = MetricOptions(criteria={"en": {"politeness": POLITE}}, lang="en")
RUBRICS = {"en": {"reference_free": "RF rubric", "with_reference": "WR rubric"}}


def answers(*flags: int) -> list[CritiqueAnswer]:
    """Critique votes: 1 is "yes", 0 is "no"."""
    return [CritiqueAnswer(reason=f"v{i}", answer="yes" if flag else "no") for i, flag in enumerate(flags, start=1)]


# --- aspect critique ---------------------------------------------------------------------------


def critique_call(vote: int, user_input: str = QUESTION, contexts: tuple[str, ...] = ("Paris has it.",)) -> Call:
    return Call(
        "critique",
        (("criterion", POLITE), ("response", RESPONSE), ("retrieved_contexts", contexts), ("user_input", user_input)),
        vote,
    )


def test_critique_declaration():
    metric = critique_metric("politeness")
    assert (metric.name, metric.required, metric.steps, metric.score_range) == (
        "aspect_critique:politeness",
        ("response",),
        ("critique",),
        (0.0, 1.0),
    )
    assert METRICS["aspect_critique:harmfulness"].name == "aspect_critique:harmfulness"
    assert "aspect_critique:politeness" not in METRICS


@pytest.mark.parametrize(("flags", "expected"), [((1, 0, 1), 1.0), ((0, 0, 1), 0.0), ((0, 0, 0), 0.0)])
def test_critique_three_votes_majority(flags, expected):
    sample = Sample("q1", 1, user_input=QUESTION, response=RESPONSE, retrieved_contexts=("Paris has it.",))
    program = critique_metric("politeness").compute(sample, CRITERIA)
    assert next(program) == [critique_call(1), critique_call(2), critique_call(3)]
    score = finish(program, answers(*flags))
    assert view(score) == (
        expected,
        None,
        {"criterion": POLITE, "votes": [{"verdict": flag, "reason": f"v{i}"} for i, flag in enumerate(flags, start=1)]},
    )


def test_critique_strictness_five_without_question_or_contexts():
    options = MetricOptions(criteria=CRITERIA.criteria, strictness=5)
    program = critique_metric("politeness").compute(Sample("q1", 1, response=RESPONSE), options)
    calls = next(program)
    assert calls == [critique_call(vote, user_input="", contexts=()) for vote in (1, 2, 3, 4, 5)]
    assert finish(program, answers(1, 1, 0, 0, 0)).value == 0.0  # 2 of 5
    program = critique_metric("politeness").compute(Sample("q1", 1, response=RESPONSE), options)
    next(program)
    assert finish(program, answers(1, 0, 1, 0, 1)).value == 1.0  # 3 of 5


@pytest.mark.parametrize(("name", "lang"), [("rudeness", "en"), ("politeness", "ja")])
def test_critique_without_definition_raises(name, lang):
    options = MetricOptions(criteria=CRITERIA.criteria, lang=lang)
    program = critique_metric(name).compute(Sample("q1", 1, response=RESPONSE), options)
    with pytest.raises(ConfigError, match=f"No criterion named '{name}' for language '{lang}'"):
        next(program)


# --- rubric score ------------------------------------------------------------------------------


def rubric_call(rubric: str, reference: str = "") -> Call:
    return Call.of("rubric", rubric=rubric, user_input=QUESTION, response=RESPONSE, reference=reference)


@pytest.mark.parametrize(
    ("reference", "extra", "source", "rubric"),
    [
        (None, {}, "reference_free", "RF rubric"),
        ("  ", {}, "reference_free", "RF rubric"),
        ("Paris.", {}, "with_reference", "WR rubric"),
        ("Paris.", {"rubric": "Own rubric"}, "sample", "Own rubric"),
        (None, {"rubric": "Own rubric"}, "sample", "Own rubric"),
        ("Paris.", {"rubric": "   "}, "with_reference", "WR rubric"),
    ],
)
def test_rubric_choice_and_grade(reference, extra, source, rubric):
    sample = Sample("q1", 1, user_input=QUESTION, response=RESPONSE, reference=reference, extra=extra)
    program = rubric_score.compute(sample, MetricOptions(rubrics=RUBRICS))
    assert next(program) == rubric_call(rubric, reference or "")
    score = finish(program, RubricGrade(reason="Correct but short.", score=4))
    assert view(score) == (4.0, None, {"rubric": source, "rubric_text": rubric, "reason": "Correct but short."})
    assert type(score.value) is float


def test_rubric_declaration_and_missing_rubric():
    assert METRICS["rubric_score"] is rubric_score
    assert (rubric_score.required, rubric_score.score_range) == (("user_input", "response"), (1.0, 5.0))
    program = rubric_score.compute(Sample("q1", 1, user_input=QUESTION, response=RESPONSE), MetricOptions())
    with pytest.raises(ConfigError, match="No rubric named 'reference_free'"):
        next(program)


# --- summarization score -----------------------------------------------------------------------

C1, C2 = "Paris is in France.", "Bonn is in Germany."  # 19 characters each
TEXT = C1 + "\n\n" + C2  # 19 + 2 + 19 = 40 characters
QUESTIONS = ["Is Paris in France?", "Is Bonn in Germany?", "Is Paris a city?", "Is Bonn a city?"]
PREPARED = KeyphraseQuestions(keyphrases=["Paris", "Bonn"], questions=QUESTIONS)


def summary(response: str, contexts: tuple[str, ...] | None = (C1, " ", C2)) -> MetricProgram:
    return summarization_score.compute(Sample("q1", 1, response=response, retrieved_contexts=contexts), MetricOptions())


@pytest.mark.parametrize(
    ("response", "answers", "expected"),
    [
        ("Two towns.", [1, 0, 1, 0], 0.625),  # 0.5·(2/4) + 0.5·(1 − 10/40) = 0.25 + 0.375
        ("Two towns.", [1, 1, 1, 0], 0.75),  # 0.5·(3/4) + 0.5·0.75 = 0.375 + 0.375
        ("x" * 50, [1, 1, 1, 1], 0.5),  # longer than the text: conciseness 0; 0.5·1 + 0.5·0
    ],
)
def test_summarization_hand_computed(response, answers, expected):
    program = summary(response)
    assert next(program) == Call.of("summary_questions", text=TEXT)
    assert program.send(PREPARED) == Call.of("summary_answers", summary=response, questions=QUESTIONS)
    score = finish(program, SummaryAnswers(answers=answers))
    qa, concise = sum(answers) / 4, max(0.0, 1 - len(response) / 40)
    assert view(score) == (
        expected,
        None,
        {
            "keyphrases": ["Paris", "Bonn"],
            "qa_score": qa,
            "conciseness": concise,
            "questions": [{"question": q, "answered": a} for q, a in zip(QUESTIONS, answers)],
        },
    )


@pytest.mark.parametrize("contexts", [None, (), ("",), ("  ", "\n")])
def test_summarization_empty_contexts(contexts):
    assert view(finish(summary("Two towns.", contexts), None)) == ("NaN", "empty_contexts", {})
