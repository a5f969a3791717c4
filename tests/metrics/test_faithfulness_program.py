"""Tests for the faithfulness metric's program, driven by hand: no judge, the step outputs are given."""

from __future__ import annotations

import math

import pytest
from programs import NO_CLAIM, brief, finish, per_sentence, view

from localeval.data.samples import Sample
from localeval.grounding.calibration import Calibration, Factor
from localeval.metrics import METRICS
from localeval.metrics.claims import is_short_answer
from localeval.metrics.faithfulness import faithfulness
from localeval.metrics.options import MetricOptions
from localeval.steps import Call
from localeval.steps.statements import StatedClaim, Statements
from localeval.steps.verdicts import SupportVerdict

CONTEXTS = ("Paris is the capital of France. It has 2.1 million inhabitants.",)
QUESTION = "Tell me about Paris."


def sample(
    response: str = "Paris is the capital of France. It has 2.1 million people. Hello!",
    contexts: tuple[str, ...] = CONTEXTS,
) -> Sample:
    return Sample("q1", 1, user_input=QUESTION, response=response, retrieved_contexts=contexts)


def support(statement: str, contexts: tuple[str, ...] = CONTEXTS) -> Call:
    return Call.of("statement_support", retrieved_contexts=list(contexts), statement=statement)


def test_declaration():
    assert METRICS["faithfulness"] is faithfulness
    assert (
        faithfulness.name,
        faithfulness.required,
        faithfulness.steps,
        faithfulness.models,
        faithfulness.score_range,
    ) == (
        "faithfulness",
        ("user_input", "response", "retrieved_contexts"),
        ("statements", "answer_claim", "stated_claim", "statement_support"),
        ("judge",),
        (0.0, 1.0),
    )


@pytest.mark.parametrize("contexts", [(), ("",), ("  ", "\n")])
def test_empty_contexts(contexts):
    program = faithfulness.compute(sample(contexts=contexts))
    assert view(finish(program, None)) == ("NaN", "empty_contexts", {})


def test_first_round_asks_for_the_statements_of_each_sentence():
    response = "Paris is the capital of France. It has 2.1 million people. Hello!"
    program = faithfulness.compute(sample(response))
    assert next(program) == [
        Call("statements", (("sentence", sentence), ("text", response), ("user_input", QUESTION)))
        for sentence in ("Paris is the capital of France.", "It has 2.1 million people.", "Hello!")
    ]


@pytest.mark.parametrize("groups", [[[], [], []], [["  "], [], [" "]]])
def test_no_statements(groups):
    program = faithfulness.compute(sample())
    next(program)
    assert [call.step for call in program.send(per_sentence(*groups))] == ["stated_claim"]
    assert view(finish(program, [NO_CLAIM])) == ("NaN", "no_statements", {})


def test_three_statements_with_verdicts_1_0_1():
    program = faithfulness.compute(sample())
    next(program)
    calls = program.send(
        per_sentence(
            ["Paris is the capital of France."], ["Paris has 2.1 million people.", "Its population is 2.1 million."], []
        )
    )
    assert calls == [
        support("Paris is the capital of France."),
        support("Paris has 2.1 million people."),
        support("Its population is 2.1 million."),
    ]
    score = finish(program, [SupportVerdict(verdict=1), SupportVerdict(verdict=0), SupportVerdict(verdict=1)])
    assert brief(score) == (
        2 / 3,
        None,
        [
            ("Paris is the capital of France.", 1),
            ("Paris has 2.1 million people.", 0),
            ("Its population is 2.1 million.", 1),
        ],
    )


def test_duplicate_statements_across_sentence_groups_count_once():
    program = faithfulness.compute(sample())
    next(program)
    calls = program.send(
        per_sentence(
            ["Paris is the capital of France.", "Paris is in France."],
            ["Paris is in France. ", "Paris has 2.1 million people."],
            ["Paris is the capital of France."],
        )
    )
    assert calls == [
        support("Paris is the capital of France."),
        support("Paris is in France."),
        support("Paris has 2.1 million people."),
    ]
    score = finish(program, [SupportVerdict(verdict=1), SupportVerdict(verdict=1), SupportVerdict(verdict=0)])
    assert brief(score) == (
        2 / 3,
        None,
        [("Paris is the capital of France.", 1), ("Paris is in France.", 1), ("Paris has 2.1 million people.", 0)],
    )
    assert [row["sentence"] for row in score.evidence["statements"]] == [
        "Paris is the capital of France.",
        "Paris is the capital of France.",
        "It has 2.1 million people.",
    ]


def test_a_statement_copied_from_another_sentence_is_replaced_by_the_sentence_itself():
    # The second sentence's call restates the first sentence: the second sentence is judged as it stands.
    # The third ("Hello!") is too short to claim anything, so its copied statement is simply dropped.
    program = faithfulness.compute(sample())
    next(program)
    calls = program.send(
        per_sentence(
            ["Paris is the capital of France."],
            ["Paris is the capital of France."],
            ["Paris is the capital of France."],
        )
    )
    assert calls == [support("Paris is the capital of France."), support("It has 2.1 million people.")]


def test_a_resolved_pronoun_keeps_the_statement_with_its_sentence():
    # Units paris, capital, france, 2, million: sentence 1 covers 3/5, its own sentence ("It has 2.1 million
    # people.") only 2/5, which is still OWN_SHARE: the pronoun "It" was resolved, the claim is sentence 2's.
    program = faithfulness.compute(sample())
    next(program)
    calls = program.send(per_sentence([], ["Paris, the capital of France, has 2 million."], []))
    assert calls == [support("Paris, the capital of France, has 2 million.")]


def test_blank_contexts_are_left_out_of_the_verdict_calls():
    contexts = ("", "Paris is the capital of France.", "   ", "Paris is in Europe.")
    program = faithfulness.compute(sample(response="Paris is in Europe.", contexts=contexts))
    next(program)
    calls = program.send(per_sentence(["Paris is in Europe."]))
    assert calls == [
        Call(
            "statement_support",
            (
                ("retrieved_contexts", ("Paris is the capital of France.", "Paris is in Europe.")),
                ("statement", "Paris is in Europe."),
            ),
        )
    ]
    score = finish(program, [SupportVerdict(verdict=1)])
    assert brief(score) == (1.0, None, [("Paris is in Europe.", 1)])


def test_all_statements_unsupported_scores_zero():
    program = faithfulness.compute(sample(response="パリはドイツにあります。人口は百人です。"))
    assert [call.input_dict()["sentence"] for call in next(program)] == ["パリはドイツにあります。", "人口は百人です。"]
    program.send(per_sentence(["パリはドイツにあります。"], ["パリの人口は百人です。"]))
    score = finish(program, [SupportVerdict(verdict=0), SupportVerdict(verdict=0)])
    assert brief(score) == (0.0, None, [("パリはドイツにあります。", 0), ("パリの人口は百人です。", 0)])


def test_the_score_is_the_mean_of_the_judge_probabilities_without_a_calibration():
    program = faithfulness.compute(sample())
    next(program)
    program.send(per_sentence(["Paris is the capital of France."], ["Paris has 3 million people."], []))
    score = finish(program, [SupportVerdict(verdict=1, probability=0.9), SupportVerdict(verdict=1, probability=0.6)])
    assert score.value == pytest.approx(0.75)
    first, second = score.evidence["statements"]
    assert first == {
        "statement": "Paris is the capital of France.",
        "sentence": "Paris is the capital of France.",
        "p": 0.9,
        "verdict": 1,
        "judge_p": 0.9,
        "judge_verdict": 1,
        "evidence": ["Paris is the capital of France."],
        "coverage": 1.0,
        "evidence_coverage": 1.0,
        "sentence_coverage": 1.0,
        "uncovered_numbers": [],
    }
    assert second["uncovered_numbers"] == ["3"]  # the context says 2.1 million
    assert second["evidence"] == ["Paris is the capital of France.", "It has 2.1 million inhabitants."]
    assert second["coverage"] == pytest.approx(0.5)  # paris and million, of paris, 3, million, people


def test_a_calibration_combines_the_judge_with_the_grounding_signals():
    calibration = Calibration("test", "additive", (Factor({"judge_logit": 1.0, "uncovered_number": -3.0}, 0.5),))
    options = MetricOptions(lang="en", calibrations={"en": calibration})
    program = faithfulness.compute(sample(), options)
    next(program)
    program.send(per_sentence([], ["Paris has 3 million people."], []))
    score = finish(program, [SupportVerdict(verdict=1, probability=0.5)])
    assert score.value == pytest.approx(1 / (1 + math.exp(-(0.5 + 0.0 - 3.0))))
    assert score.evidence["statements"][0]["verdict"] == 0 and score.evidence["statements"][0]["judge_verdict"] == 1


def test_with_evidence_sentences_the_judge_reads_only_those():
    options = MetricOptions(evidence_sentences=1)
    contexts = ("Paris is the capital of France. It has 2.1 million inhabitants.", "Lyon is a city.")
    program = faithfulness.compute(sample(response="It has 2.1 million people.", contexts=contexts), options)
    next(program)
    calls = program.send(per_sentence(["Paris has 2.1 million people."]))
    assert calls == [support("Paris has 2.1 million people.", ("It has 2.1 million inhabitants.",))]


@pytest.mark.parametrize(
    ("text", "short"),
    [
        ("Arthur's Magazine", True),
        ("6.213 km long", True),
        ("3776メートル", True),
        ("Bobby Darin.", True),
        ("「東京」", True),
        ("Rome is in Italy.", False),
        ("Water boils at 50 degrees.", False),
        ("The main product of Fremantle Octopus is octopus.'", False),
        ("富士山の高さは5000メートルです。", False),
        ("Long " * 40, False),
    ],
)
def test_a_short_answer_is_a_phrase_not_a_sentence(text, short):
    assert is_short_answer(text) == short


def test_a_short_answer_is_judged_as_the_claim_it_makes_about_the_question():
    program = faithfulness.compute(sample(response="Arthur's Magazine"), MetricOptions())
    calls = next(program)
    assert calls == [Call.of("answer_claim", user_input=QUESTION, text="Arthur's Magazine")]
    calls = program.send([Statements(statements=["Arthur's Magazine started first."])])
    assert [call.input_dict()["statement"] for call in calls] == ["Arthur's Magazine started first."]


def test_a_text_with_no_statements_gets_a_second_look_that_finds_its_claim():
    program = faithfulness.compute(sample(response="No, it is not."), MetricOptions())
    next(program)
    calls = program.send(per_sentence([]))
    assert calls == [Call.of("stated_claim", user_input=QUESTION, text="No, it is not.")]
    calls = program.send([StatedClaim(statement="Paris is not the capital of Spain.", answer="yes", probability=0.8)])
    assert [call.input_dict()["statement"] for call in calls] == ["Paris is not the capital of Spain."]
    score = finish(program, [SupportVerdict(verdict=1, probability=0.9)])
    assert brief(score) == (0.9, None, [("Paris is not the capital of Spain.", 1)])
    assert score.evidence["statements"][0]["sentence"] == "No, it is not."


@pytest.mark.parametrize(
    "answer, probability",
    [("no", 0.1), ("yes", 0.4), ("no", None)],  # the judge's P(yes) decides; the written answer where P is unknown
)
def test_a_text_the_second_look_finds_no_claim_in_has_no_statements(answer, probability):
    program = faithfulness.compute(sample(response="I don't know."), MetricOptions())
    next(program)
    program.send(per_sentence([]))
    found = StatedClaim(statement="The answer does not say.", answer=answer, probability=probability)
    assert view(finish(program, [found])) == ("NaN", "no_statements", {})


def test_without_a_question_there_is_no_second_look():
    bare = Sample("q1", 1, user_input="", response="No, it is not.", retrieved_contexts=CONTEXTS)
    program = faithfulness.compute(bare, MetricOptions())
    next(program)
    assert view(finish(program, per_sentence([]))) == ("NaN", "no_statements", {})
