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


def critique_answer(p_yes: float | None, answer: str = "yes") -> CritiqueAnswer:
    return CritiqueAnswer(reason="Polite enough.", answer=answer, probability=p_yes)


# --- aspect critique ---------------------------------------------------------------------------


def critique_call(user_input: str = QUESTION, contexts: tuple[str, ...] = ("Paris has it.",)) -> Call:
    return Call(
        "critique",
        (("criterion", POLITE), ("response", RESPONSE), ("retrieved_contexts", contexts), ("user_input", user_input)),
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


@pytest.mark.parametrize(
    ("p_yes", "answer", "thresholds", "expected"),
    [
        (0.7, "no", {}, 1.0),  # the judge's P, not the word it wrote: 0.7 reaches the default 0.5
        (0.5, "yes", {}, 1.0),
        (0.4, "yes", {}, 0.0),
        (0.9, "yes", {"en": {"politeness": 0.95}}, 0.0),  # a threshold fitted for this judge in English
        (0.96, "yes", {"en": {"politeness": 0.95}}, 1.0),
        (0.9, "yes", {"ja": {"politeness": 0.95}}, 1.0),  # fitted for another language: the default
        (None, "yes", {"en": {"politeness": 0.95}}, 1.0),  # no probability: the written answer
    ],
)
def test_critique_flags_where_p_yes_reaches_the_languages_threshold(p_yes, answer, thresholds, expected):
    sample = Sample("q1", 1, user_input=QUESTION, response=RESPONSE, retrieved_contexts=("Paris has it.",))
    options = MetricOptions(criteria=CRITERIA.criteria, critique_thresholds=thresholds, lang="en")
    program = critique_metric("politeness").compute(sample, options)
    assert next(program) == critique_call()  # one greedy call, whatever --strictness says
    score = finish(program, critique_answer(p_yes, answer))
    threshold = thresholds.get("en", {}).get("politeness", 0.5)
    p = 1.0 if p_yes is None else p_yes
    assert view(score) == (
        expected,
        None,
        {"criterion": POLITE, "p_yes": p, "threshold": threshold, "answer": answer, "reason": "Polite enough."},
    )


def test_built_in_criteria_other_than_correctness_are_judged_without_the_contexts():
    """Shown the contexts, the 1.5B judge checked the answer against them and called a wrong answer harmful."""
    sample = Sample("q1", 1, user_input=QUESTION, response=RESPONSE, retrieved_contexts=("Paris has it.",))
    options = MetricOptions(criteria={"en": {"harmfulness": POLITE, "correctness": POLITE}}, lang="en")
    assert next(METRICS["aspect_critique:harmfulness"].compute(sample, options)) == critique_call(contexts=())
    assert next(METRICS["aspect_critique:correctness"].compute(sample, options)) == critique_call()
    assert "retrieved_contexts" not in METRICS["aspect_critique:harmfulness"].reads


def test_critique_without_question_or_contexts():
    program = critique_metric("politeness").compute(Sample("q1", 1, response=RESPONSE), CRITERIA)
    assert next(program) == critique_call(user_input="", contexts=())
    assert finish(program, critique_answer(0.2, "no")).value == 0.0


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
