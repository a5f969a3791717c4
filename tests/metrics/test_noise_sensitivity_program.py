"""Tests for noise_sensitivity_relevant / _irrelevant, driven by hand: no judge, the step outputs are given."""

from __future__ import annotations

import pytest
from programs import NO_CLAIM, finish, per_sentence, support, view

from localeval.data.samples import Sample
from localeval.metrics import METRICS
from localeval.metrics.claims import statement_calls
from localeval.metrics.noise_sensitivity import (
    noise_sensitivity_irrelevant,
    noise_sensitivity_relevant,
)
from localeval.metrics.options import MetricOptions
from localeval.steps.verdicts import SupportVerdict

QUESTION = "Tell me about the Eiffel Tower."
RESPONSE = "The Eiffel Tower is in Paris. It was built in 1900. It is 500 metres tall."
REFERENCE = "The Eiffel Tower is in Paris. It was completed in 1889."
A = "The Eiffel Tower is in Paris. Some guides say it was built in 1900."  # relevant: supports F1
B = "A fan site claims the Eiffel Tower is 500 metres tall."  # irrelevant: supports no reference statement
S1, S2 = "The Eiffel Tower is in Paris.", "The Eiffel Tower was built in 1900."
S3 = "The Eiffel Tower is 500 metres tall."
F1, F2 = "The Eiffel Tower is in Paris.", "The Eiffel Tower was completed in 1889."
BOTH = (noise_sensitivity_relevant, noise_sensitivity_irrelevant)


def sample(contexts: tuple[str, ...] | None = (A, "  ", B)) -> Sample:
    return Sample("q1", 1, user_input=QUESTION, response=RESPONSE, reference=REFERENCE, retrieved_contexts=contexts)


def verdicts(*flags: int) -> list[SupportVerdict]:
    return [SupportVerdict(verdict=flag) for i, flag in enumerate(flags, start=1)]


def test_declarations():
    for metric in BOTH:
        assert METRICS[metric.name] is metric
        assert metric.required == ("user_input", "response", "reference", "retrieved_contexts")
        assert metric.steps == ("statements", "answer_claim", "stated_claim", "statement_support")


def verdicts_with(*probabilities: float) -> list[SupportVerdict]:
    return [SupportVerdict(verdict=int(p >= 0.5), probability=p) for i, p in enumerate(probabilities, 1)]


def calls_of_one_round() -> list:
    """Each response statement against [reference]; then each non-blank context, context-major, against every
    reference statement (is it relevant?) and against every response statement (does it carry it?)."""
    return (
        [support(REFERENCE, S1), support(REFERENCE, S2), support(REFERENCE, S3)]
        + [support(A, F1), support(A, F2), support(B, F1), support(B, F2)]
        + [support(A, S1), support(A, S2), support(A, S3), support(B, S1), support(B, S2), support(B, S3)]
    )


@pytest.mark.parametrize(
    ("metric", "expected"), [(noise_sensitivity_relevant, 1 / 3), (noise_sensitivity_irrelevant, 1 / 3)]
)
def test_hand_worked_case_and_request_order(metric, expected):
    program = metric.compute(sample(), MetricOptions())
    assert next(program) == statement_calls(QUESTION, RESPONSE) + statement_calls(QUESTION, REFERENCE)
    assert program.send(per_sentence([S1], [S2], [S3]) + per_sentence([F1], [F2])) == calls_of_one_round()
    # S1 correct, S2 and S3 wrong; A supports F1 (relevant), B nothing; A carries S1 and S2, B carries S3.
    score = finish(program, verdicts(1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1))
    # S2 wrong and in relevant A -> relevant 1/3; S3 wrong and only in irrelevant B -> irrelevant 1/3.
    assert (score.value, score.reason) == (expected, None)
    assert [row["verdict"] for row in score.evidence["response_statements"]] == [1, 0, 0]
    assert score.evidence["relevant_contexts"] == [1]
    assert score.evidence["carried_by_context"] == [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        # P(wrong) S1 0.1, S2 0.8, S3 0.6; carried by A (relevant) 0.9, 0.7, 0.2 and by B 0.3, 0.4, 0.9.
        # relevant: (0.1·0.9 + 0.8·0.7 + 0.6·0.2) / 3 = (0.09 + 0.56 + 0.12) / 3 = 0.77 / 3
        (noise_sensitivity_relevant, 0.77 / 3),
        # irrelevant: (0.1·0.1·0.3 + 0.8·0.3·0.4 + 0.6·0.8·0.9) / 3 = (0.003 + 0.096 + 0.432) / 3 = 0.531 / 3
        (noise_sensitivity_irrelevant, 0.531 / 3),
    ],
)
def test_expected_shares_from_support_probabilities(metric, expected):
    program = metric.compute(sample(), MetricOptions())
    next(program)
    program.send(per_sentence([S1], [S2], [S3]) + per_sentence([F1], [F2]))
    score = finish(program, verdicts_with(0.9, 0.2, 0.4, 0.8, 0.3, 0.1, 0.2, 0.9, 0.7, 0.2, 0.3, 0.4, 0.9))
    assert score.value == pytest.approx(expected)
    assert score.evidence["relevant_contexts"] == [1]


def test_no_wrong_statements_scores_zero():
    program = noise_sensitivity_relevant.compute(sample(contexts=(A,)), MetricOptions())
    next(program)
    assert program.send(per_sentence([S1], [], []) + per_sentence([F1], [F2])) == [
        support(REFERENCE, S1),
        support(A, F1),
        support(A, F2),
        support(A, S1),
    ]
    score = finish(program, verdicts(1, 1, 1, 1))
    assert (score.value, score.evidence["relevant_contexts"]) == (0.0, [1])


@pytest.mark.parametrize("metric", BOTH)
@pytest.mark.parametrize("contexts", [None, (), ("",), (" ", "\n")])
def test_empty_contexts(metric, contexts):
    program = metric.compute(sample(contexts=contexts), MetricOptions())
    assert view(finish(program, None)) == ("NaN", "empty_contexts", {})


@pytest.mark.parametrize("metric", BOTH)
def test_no_response_statements(metric):
    program = metric.compute(sample(), MetricOptions())
    next(program)
    assert [call.step for call in program.send(per_sentence([], [" "], []) + per_sentence([F1], [F2]))] == [
        "stated_claim"
    ]
    score = finish(program, [NO_CLAIM])
    assert view(score) == ("NaN", "no_statements", {})
