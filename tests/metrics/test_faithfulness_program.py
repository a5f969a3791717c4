"""Tests for the faithfulness metric's program, driven by hand: no judge, the step outputs are given."""

from __future__ import annotations

import pytest
from programs import finish, per_sentence, view

from localeval.metrics import METRICS
from localeval.metrics.faithfulness import faithfulness
from localeval.samples import Sample
from localeval.steps import Call
from localeval.steps.verdicts import Verdict

CONTEXTS = ("Paris is the capital of France. It has 2.1 million inhabitants.",)
QUESTION = "Tell me about Paris."


def sample(response: str = "Paris is the capital of France. It has 2.1 million people. Hello!",
           contexts: tuple[str, ...] = CONTEXTS) -> Sample:
    return Sample("q1", 1, user_input=QUESTION, response=response, retrieved_contexts=contexts)


def support(statement: str, contexts: tuple[str, ...] = CONTEXTS) -> Call:
    return Call.of("statement_support", retrieved_contexts=list(contexts), statement=statement)


def test_declaration():
    assert METRICS["faithfulness"] is faithfulness
    assert (faithfulness.name, faithfulness.required, faithfulness.steps, faithfulness.models,
            faithfulness.score_range, faithfulness.description) == (
        "faithfulness", ("user_input", "response", "retrieved_contexts"), ("statements", "statement_support"),
        ("judge",), (0.0, 1.0), "Share of the response's statements supported by the retrieved contexts.")


@pytest.mark.parametrize("contexts", [(), ("",), ("  ", "\n")])
def test_empty_contexts(contexts):
    program = faithfulness.compute(sample(contexts=contexts))
    assert view(finish(program, None)) == ("NaN", "empty_contexts", {})


def test_first_round_asks_for_the_statements_of_each_sentence():
    response = "Paris is the capital of France. It has 2.1 million people. Hello!"
    program = faithfulness.compute(sample(response))
    assert next(program) == [
        Call("statements", (("sentence", sentence), ("text", response), ("user_input", QUESTION)))
        for sentence in ("Paris is the capital of France.", "It has 2.1 million people.", "Hello!")]


@pytest.mark.parametrize("groups", [[[], [], []], [["  "], [], [" "]]])
def test_no_statements(groups):
    program = faithfulness.compute(sample())
    next(program)
    assert view(finish(program, per_sentence(*groups))) == ("NaN", "no_statements", {})


def test_three_statements_with_verdicts_1_0_1():
    program = faithfulness.compute(sample())
    next(program)
    calls = program.send(per_sentence(
        ["Paris is the capital of France."], ["Paris has 2.1 million people.", "Paris is large."], []))
    assert calls == [support("Paris is the capital of France."), support("Paris has 2.1 million people."),
                     support("Paris is large.")]
    score = finish(program, [Verdict(reason="Stated in [1].", verdict=1),
                             Verdict(reason="Not mentioned.", verdict=0),
                             Verdict(reason="Same number in [1].", verdict=1)])
    assert view(score) == (2 / 3, None, {"statements": [
        {"statement": "Paris is the capital of France.", "verdict": 1, "reason": "Stated in [1]."},
        {"statement": "Paris has 2.1 million people.", "verdict": 0, "reason": "Not mentioned."},
        {"statement": "Paris is large.", "verdict": 1, "reason": "Same number in [1]."}]})


def test_duplicate_statements_across_sentence_groups_count_once():
    program = faithfulness.compute(sample())
    next(program)
    calls = program.send(per_sentence(
        ["Paris is the capital of France.", "Paris is in France."],
        ["Paris is in France. ", "Paris has 2.1 million people."],
        ["Paris is the capital of France."]))
    assert calls == [support("Paris is the capital of France."), support("Paris is in France."),
                     support("Paris has 2.1 million people.")]
    score = finish(program, [Verdict(reason="r1", verdict=1), Verdict(reason="r2", verdict=1),
                             Verdict(reason="r3", verdict=0)])
    assert view(score) == (2 / 3, None, {"statements": [
        {"statement": "Paris is the capital of France.", "verdict": 1, "reason": "r1"},
        {"statement": "Paris is in France.", "verdict": 1, "reason": "r2"},
        {"statement": "Paris has 2.1 million people.", "verdict": 0, "reason": "r3"}]})


def test_blank_contexts_are_left_out_of_the_verdict_calls():
    contexts = ("", "Paris is the capital of France.", "   ", "Paris is in Europe.")
    program = faithfulness.compute(sample(response="Paris is in Europe.", contexts=contexts))
    next(program)
    calls = program.send(per_sentence(["Paris is in Europe."]))
    assert calls == [Call("statement_support", (
        ("retrieved_contexts", ("Paris is the capital of France.", "Paris is in Europe.")),
        ("statement", "Paris is in Europe.")))]
    assert view(finish(program, [Verdict(reason="[2] says so.", verdict=1)])) == (1.0, None, {"statements": [
        {"statement": "Paris is in Europe.", "verdict": 1, "reason": "[2] says so."}]})


def test_all_statements_unsupported_scores_zero():
    program = faithfulness.compute(sample(response="パリはドイツにあります。人口は百人です。"))
    assert [call.input_dict()["sentence"] for call in next(program)] == ["パリはドイツにあります。", "人口は百人です。"]
    program.send(per_sentence(["パリはドイツにあります。"], ["パリの人口は百人です。"]))
    score = finish(program, [Verdict(reason="違う。", verdict=0), Verdict(reason="違う。", verdict=0)])
    assert view(score) == (0.0, None, {"statements": [
        {"statement": "パリはドイツにあります。", "verdict": 0, "reason": "違う。"},
        {"statement": "パリの人口は百人です。", "verdict": 0, "reason": "違う。"}]})
