"""Tests for the context metrics' programs, driven by hand: no judge, the step outputs are given."""

from __future__ import annotations

import pytest
from programs import NO_CLAIM, brief, finish, per_sentence, view

from localeval.data.samples import Sample
from localeval.metrics import METRICS
from localeval.metrics.context_entity_recall import context_entity_recall
from localeval.metrics.context_precision import context_precision, context_utilization
from localeval.metrics.context_recall import context_recall
from localeval.metrics.context_relevancy import context_relevancy
from localeval.steps import Call
from localeval.steps.entities import Entities
from localeval.steps.relevance import SentenceVerdicts
from localeval.steps.verdicts import SupportVerdict, Verdict

QUESTION = "What is the capital of France?"
RESPONSE = "Paris is the capital."
REFERENCE = "Paris is the capital of France. It has 2.1 million people."


def sample(contexts: tuple[str, ...], reference: str = REFERENCE) -> Sample:
    return Sample("q1", 1, user_input=QUESTION, response=RESPONSE, reference=reference, retrieved_contexts=contexts)


def verdicts(*flags: int) -> list[Verdict]:
    return [Verdict(reason=f"r{i}", verdict=v) for i, v in enumerate(flags, start=1)]


@pytest.mark.parametrize(
    ("declared", "name", "required", "steps"),
    [
        (
            context_precision,
            "context_precision",
            ("user_input", "retrieved_contexts", "reference"),
            ("context_usefulness",),
        ),
        (
            context_utilization,
            "context_utilization",
            ("user_input", "retrieved_contexts", "response"),
            ("context_usefulness",),
        ),
        (
            context_recall,
            "context_recall",
            ("user_input", "retrieved_contexts", "reference"),
            ("statements", "answer_claim", "stated_claim", "statement_support"),
        ),
        (context_relevancy, "context_relevancy", ("user_input", "retrieved_contexts"), ("sentence_relevance",)),
        (context_entity_recall, "context_entity_recall", ("reference", "retrieved_contexts"), ("entities",)),
    ],
)
def test_declarations(declared, name, required, steps):
    assert METRICS[name] is declared
    assert (declared.name, declared.required, declared.steps, declared.models, declared.score_range) == (
        name,
        required,
        steps,
        ("judge",),
        (0.0, 1.0),
    )


# --- context_precision / context_utilization ---------------------------------------------------------------


def usefulness(answer: str, context: str) -> Call:
    return Call("context_usefulness", (("answer", answer), ("context", context), ("user_input", QUESTION)))


@pytest.mark.parametrize(("declared", "answer"), [(context_precision, REFERENCE), (context_utilization, RESPONSE)])
def test_one_usefulness_call_per_nonblank_context_with_the_right_answer(declared, answer):
    program = declared.compute(sample(("Paris is in France.", "  ", "Lyon is big.")))
    assert next(program) == [usefulness(answer, "Paris is in France."), usefulness(answer, "Lyon is big.")]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ((1, 0, 1), (1 / 1 + 2 / 3) / 2),
        ((0, 1, 1), (1 / 2 + 2 / 3) / 2),
        ((1, 1, 0), (1 / 1 + 2 / 2) / 2),
        ((0, 0, 1), (1 / 3) / 1),
        ((0, 0, 0), 0.0),
    ],
)
def test_average_precision_over_ranks(flags, expected):
    program = context_precision.compute(sample(("c1", "c2", "c3")))
    assert len(next(program)) == 3
    assert finish(program, verdicts(*flags)).value == pytest.approx(expected)


def test_blank_context_keeps_its_rank_and_is_not_useful():
    program = context_utilization.compute(sample(("Paris is in France.", "", "France's capital is Paris.")))
    assert len(next(program)) == 2
    # ranks 1, 3 useful; rank 2 blank -> flags [1, 0, 1] -> (1/1 + 2/3) / 2 = 0.8333...
    assert view(finish(program, verdicts(1, 1))) == (
        (1 / 1 + 2 / 3) / 2,
        None,
        {
            "contexts": [
                {"rank": 1, "verdict": 1, "p": 1.0, "reason": "r1"},
                {"rank": 2, "verdict": 0, "p": 0.0, "reason": "blank context"},
                {"rank": 3, "verdict": 1, "p": 1.0, "reason": "r2"},
            ]
        },
    )


def test_usefulness_counts_with_the_judges_probability():
    program = context_precision.compute(sample(("c1", "c2")))
    next(program)
    score = finish(
        program, [Verdict(reason="r1", verdict=0, probability=0.2), Verdict(reason="r2", verdict=1, probability=0.8)]
    )
    # expected useful so far: 0.2, then 1.0; (0.2 * 0.2 / 1 + 0.8 * 1.0 / 2) / 1.0 = 0.44
    assert score.value == pytest.approx(0.44)
    assert [c["p"] for c in score.evidence["contexts"]] == [0.2, 0.8]


@pytest.mark.parametrize("declared", [context_precision, context_utilization])
@pytest.mark.parametrize("contexts", [(), ("",), (" ", "\n\t")])
def test_all_blank_contexts_are_nan_without_a_call(declared, contexts):
    assert view(finish(declared.compute(sample(contexts)), None)) == ("NaN", "empty_contexts", {})


# --- context_recall ----------------------------------------------------------------------------------------


def test_recall_checks_each_reference_statement_against_the_nonblank_contexts():
    contexts = ("", "Paris is the capital of France.", "  ")
    program = context_recall.compute(sample(contexts))
    assert next(program) == [
        Call("statements", (("sentence", sentence), ("text", REFERENCE), ("user_input", QUESTION)))
        for sentence in ("Paris is the capital of France.", "It has 2.1 million people.")
    ]
    calls = program.send(
        per_sentence(
            ["Paris is the capital of France."], ["Paris has 2.1 million people.", "Paris is the capital of France."]
        )
    )
    only = ("retrieved_contexts", ("Paris is the capital of France.",))
    assert calls == [
        Call("statement_support", (only, ("statement", "Paris is the capital of France."))),
        Call("statement_support", (only, ("statement", "Paris has 2.1 million people."))),
    ]
    verdicts = [SupportVerdict(verdict=1), SupportVerdict(verdict=0)]
    assert brief(finish(program, verdicts), "reference_statements") == (
        0.5,
        None,
        [("Paris is the capital of France.", 1), ("Paris has 2.1 million people.", 0)],
    )


def test_recall_without_statements_is_nan():
    program = context_recall.compute(sample(("Paris is in France.",)))
    next(program)
    assert [call.step for call in program.send(per_sentence([" "], []))] == ["stated_claim"]
    assert view(finish(program, [NO_CLAIM])) == ("NaN", "no_statements", {})


@pytest.mark.parametrize("contexts", [(), ("", "  ")])
def test_recall_with_empty_contexts_is_nan_without_a_call(contexts):
    assert view(finish(context_recall.compute(sample(contexts)), None)) == ("NaN", "empty_contexts", {})


# --- context_relevancy -------------------------------------------------------------------------------------


def test_relevancy_marks_code_split_sentences_including_japanese():
    contexts = (
        "Paris is the capital of France. It is large! The Seine flows through it.",
        " ",
        "パリはフランスの首都です。人口は約二百万人です。",
    )
    program = context_relevancy.compute(sample(contexts))
    assert next(program) == [
        Call(
            "sentence_relevance",
            (
                ("sentences", ("Paris is the capital of France.", "It is large!", "The Seine flows through it.")),
                ("user_input", QUESTION),
            ),
        ),
        Call(
            "sentence_relevance",
            (("sentences", ("パリはフランスの首都です。", "人口は約二百万人です。")), ("user_input", QUESTION)),
        ),
    ]
    score = finish(program, [SentenceVerdicts(verdicts=[1, 0, 0]), SentenceVerdicts(verdicts=[1, 1])])
    # 3 marked of 5 sentences
    assert view(score) == (
        3 / 5,
        None,
        {
            "extracted": ["Paris is the capital of France.", "パリはフランスの首都です。", "人口は約二百万人です。"],
            "sentences": 5,
            "note": "superseded by context_precision",
        },
    )


def test_relevancy_counts_each_sentence_by_the_judges_p_where_it_has_one():
    program = context_relevancy.compute(sample(("One. Two. Three.",)))
    next(program)
    score = finish(program, [SentenceVerdicts(verdicts=[1, 0, 0], probabilities=[0.9, 0.3, 0.0])])
    # the expected share marked: (0.9 + 0.3 + 0.0) / 3; the extracted sentences are still the marked ones
    assert (score.value, score.evidence["extracted"]) == (pytest.approx(0.4), ["One."])


def test_relevancy_with_nothing_marked_scores_zero():
    program = context_relevancy.compute(sample(("One. Two.",)))
    next(program)
    score = finish(program, [SentenceVerdicts(verdicts=[0, 0])])
    assert (score.value, score.evidence["extracted"], score.evidence["sentences"]) == (0.0, [], 2)


@pytest.mark.parametrize("contexts", [(), ("", "\n")])
def test_relevancy_with_empty_contexts_is_nan(contexts):
    assert view(finish(context_relevancy.compute(sample(contexts)), None)) == ("NaN", "empty_contexts", {})


# --- context_entity_recall ---------------------------------------------------------------------------------


def entity_calls(reference: str, context_text: str) -> list[Call]:
    return [Call("entities", (("text", reference),)), Call("entities", (("text", context_text),))]


def test_entity_calls_are_reference_then_nonblank_contexts_joined():
    program = context_entity_recall.compute(sample(("Paris is in France.", "  ", "It hosted the 2024 Olympics.")))
    assert next(program) == entity_calls(REFERENCE, "Paris is in France.\n\nIt hosted the 2024 Olympics.")


def test_entities_match_after_nfkc_and_case():
    reference = "２０２４年の五輪はＰＡＲＩＳで開かれた。"
    program = context_entity_recall.compute(sample(("Tokyo hosted in 2021.",), reference=reference))
    next(program)
    ref, ctx = Entities(entities=["２０２４年", "ＰＡＲＩＳ", "五輪"]), Entities(entities=["2024年", "paris", "Tokyo"])
    # "２０２４年" ~ "2024年" and "ＰＡＲＩＳ" ~ "paris"; "五輪" is missing -> 2/3
    assert view(finish(program, [ref, ctx])) == (
        2 / 3,
        None,
        {"reference_entities": ["２０２４年", "ＰＡＲＩＳ", "五輪"], "context_entities": ["2024年", "paris", "Tokyo"]},
    )


def test_entity_found_verbatim_in_the_context_text_counts():
    program = context_entity_recall.compute(sample(("The capital, Paris, has 2.1 million people.",)))
    next(program)
    # "Paris" is only in the text (listed as "Paris, France"); "Lyon" is nowhere -> 1/2
    score = finish(program, [Entities(entities=["Paris", "Lyon"]), Entities(entities=["Paris, France"])])
    assert score.value == 0.5


def test_reference_without_entities_is_nan_with_evidence():
    program = context_entity_recall.compute(sample(("Paris is in France.",)))
    next(program)
    assert view(finish(program, [Entities(entities=[" "]), Entities(entities=["Paris"])])) == (
        "NaN",
        "no_entities",
        {"reference_entities": [" "], "context_entities": ["Paris"]},
    )


@pytest.mark.parametrize("contexts", [(), ("", "   ")])
def test_entity_recall_with_empty_contexts_is_nan(contexts):
    assert view(finish(context_entity_recall.compute(sample(contexts)), None)) == ("NaN", "empty_contexts", {})
