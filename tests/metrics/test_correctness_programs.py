"""Tests for answer_correctness and factual_correctness(_precision/_recall), driven by hand: no judge, no embedder."""

from __future__ import annotations

import pytest
from programs import NO_CLAIM, finish, per_sentence, support, view

from localeval.data.samples import Sample
from localeval.metrics import METRICS, MetricProgram
from localeval.metrics.claims import statement_calls
from localeval.metrics.correctness import (
    answer_correctness,
    factual_correctness,
    factual_correctness_precision,
    factual_correctness_recall,
)
from localeval.metrics.options import MetricOptions
from localeval.models.encoders import Similarity
from localeval.steps.verdicts import SupportVerdict

QUESTION = "Tell me about the Eiffel Tower."
RESPONSE = "The Eiffel Tower is in Paris. It was built in 1900."
REFERENCE = "The Eiffel Tower is in Paris. It was completed in 1889. It is 330 metres tall."
R1, R2 = "The Eiffel Tower is in Paris.", "The Eiffel Tower was built in 1900."
F1, F2 = "The Eiffel Tower is in Paris.", "The Eiffel Tower was completed in 1889."
F3 = "The Eiffel Tower is 330 metres tall."
RESPONSE_STATEMENTS = per_sentence([R1], [R2])
REFERENCE_STATEMENTS = per_sentence([F1], [F2], [F3])
# Response: R1 supported, R2 not -> TP 1, FP 1. Reference: F1 supported by the response, F2, F3 not -> FN 2.
VERDICTS = [
    SupportVerdict(verdict=1),
    SupportVerdict(verdict=0),
    SupportVerdict(verdict=1),
    SupportVerdict(verdict=0),
    SupportVerdict(verdict=0),
]
EVIDENCE = {
    "tp": 1,
    "fp": 1,
    "fn": 2,
    "response_statements": [{"statement": R1, "verdict": 1}, {"statement": R2, "verdict": 0}],
    "reference_statements": [
        {"statement": F1, "verdict": 1},
        {"statement": F2, "verdict": 0},
        {"statement": F3, "verdict": 0},
    ],
}
ALL = (answer_correctness, factual_correctness, factual_correctness_precision, factual_correctness_recall)


def brief(evidence: dict) -> dict:
    """The evidence with each statement row cut to statement and verdict (the rest is grounding detail)."""
    return {
        key: [{f: row[f] for f in ("statement", "verdict")} for row in value] if key.endswith("_statements") else value
        for key, value in evidence.items()
    }


def sample() -> Sample:
    return Sample("q1", 1, user_input=QUESTION, response=RESPONSE, reference=REFERENCE)


def started(metric, options: MetricOptions = MetricOptions()) -> MetricProgram:
    """The program after the statements round, holding the verdict calls."""
    program = metric.compute(sample(), options)
    next(program)
    return program


def test_declarations():
    for metric in ALL:
        assert METRICS[metric.name] is metric
        assert (metric.required, metric.steps) == (
            ("user_input", "response", "reference"),
            ("statements", "answer_claim", "stated_claim", "statement_support"),
        )
    assert answer_correctness.models == ("judge", "embedder")
    assert factual_correctness.models == ("judge",)


@pytest.mark.parametrize("metric", ALL)
def test_same_calls_for_every_metric(metric):
    program = metric.compute(sample(), MetricOptions())
    first = next(program)
    assert first == statement_calls(QUESTION, RESPONSE) + statement_calls(QUESTION, REFERENCE)
    assert [call.input_dict()["sentence"] for call in first] == [
        "The Eiffel Tower is in Paris.",
        "It was built in 1900.",
        "The Eiffel Tower is in Paris.",
        "It was completed in 1889.",
        "It is 330 metres tall.",
    ]
    assert [call.input_dict()["text"] for call in first] == [RESPONSE] * 2 + [REFERENCE] * 3
    # Response statements against [reference] first, then reference statements against [response].
    assert program.send(RESPONSE_STATEMENTS + REFERENCE_STATEMENTS) == [
        support(REFERENCE, R1),
        support(REFERENCE, R2),
        support(RESPONSE, F1),
        support(RESPONSE, F2),
        support(RESPONSE, F3),
    ]


def test_answer_correctness_weighted_mean_of_f1_and_similarity():
    program = started(answer_correctness)
    program.send(RESPONSE_STATEMENTS + REFERENCE_STATEMENTS)
    assert program.send(VERDICTS) == Similarity(((RESPONSE, REFERENCE),))
    score = finish(program, [0.8])
    # F1 = 2·1 / (2·1 + 2 + 1) = 0.4; 0.75·0.4 + 0.25·0.8 = 0.3 + 0.2 = 0.5
    assert score.value == pytest.approx(0.5)
    assert score.reason is None
    assert brief(score.evidence) == {**EVIDENCE, "factuality": 0.4, "similarity": 0.8}


def test_answer_correctness_negative_similarity_counts_as_zero():
    program = started(answer_correctness)
    program.send(RESPONSE_STATEMENTS + REFERENCE_STATEMENTS)
    program.send(VERDICTS)
    score = finish(program, [-0.3])
    assert score.value == pytest.approx(0.75 * 0.4)  # 0.3
    assert score.evidence["similarity"] == 0.0


@pytest.mark.parametrize(("threshold", "expected"), [(None, 5 / 28 + 0.4), (0.5, 1.0), (0.6, 0.0)])
def test_answer_correctness_custom_weights_beta_and_threshold(threshold, expected):
    options = MetricOptions(beta=2.0, correctness_weights=(0.5, 0.5), correctness_threshold=threshold)
    program = started(answer_correctness, options)
    program.send(RESPONSE_STATEMENTS + REFERENCE_STATEMENTS)
    program.send(VERDICTS)
    score = finish(program, [0.8])
    # F2 = 5·1 / (5·1 + 4·2 + 1) = 5/14; 0.5·5/14 + 0.5·0.8 = 5/28 + 0.4 ≈ 0.5786 (>= 0.5, < 0.6)
    assert score.value == pytest.approx(expected)
    assert score.evidence["factuality"] == pytest.approx(5 / 14)


@pytest.mark.parametrize(
    ("metric", "options", "expected"),
    [
        (factual_correctness, MetricOptions(), 0.4),  # P 1/2, R 1/3: 2·(1/6) / (1/2 + 1/3)
        (factual_correctness, MetricOptions(beta=2.0), 5 / 14),  # 5·(1/6) / (4·1/2 + 1/3)
        (factual_correctness_precision, MetricOptions(), 0.5),  # TP / (TP + FP) = 1/2
        (factual_correctness_recall, MetricOptions(), 1 / 3),  # reference statements supported: F1 of F1..F3
    ],
)
def test_factual_correctness(metric, options, expected):
    program = started(metric, options)
    program.send(RESPONSE_STATEMENTS + REFERENCE_STATEMENTS)
    score = finish(program, VERDICTS)
    assert (score.value, score.reason, brief(score.evidence)) == (pytest.approx(expected), None, EVIDENCE)


@pytest.mark.parametrize("metric", ALL)
def test_no_statements_on_either_side(metric):
    program = started(metric)
    empty = per_sentence([], [" "]) + per_sentence([], [" "], [])  # 2 response sentences, 3 reference sentences
    assert [call.step for call in program.send(empty)] == ["stated_claim", "stated_claim"]
    assert view(finish(program, [NO_CLAIM, NO_CLAIM])) == ("NaN", "no_statements", {})


def test_response_without_statements():
    # Only the reference's statements are checked: F1 supported, F2 not -> TP 0, FP 0, FN 1.
    reference = per_sentence([F1], [F2], [])
    verdicts = [SupportVerdict(verdict=1), SupportVerdict(verdict=0)]
    evidence = {
        "tp": 0,
        "fp": 0,
        "fn": 1,
        "response_statements": [],
        "reference_statements": [{"statement": F1, "verdict": 1}, {"statement": F2, "verdict": 0}],
    }
    expected = {
        factual_correctness_precision: ("NaN", "no_statements", evidence),  # 0 / 0
        factual_correctness_recall: (0.5, None, evidence),  # F1 of F1, F2
        factual_correctness: ("NaN", "no_statements", evidence),
    }  # precision undefined
    for metric, result in expected.items():
        program = started(metric)
        assert [call.step for call in program.send(per_sentence([], []) + reference)] == ["stated_claim"]
        assert program.send([NO_CLAIM]) == [support(RESPONSE, F1), support(RESPONSE, F2)]
        score = finish(program, verdicts)
        assert (view(score)[:2], brief(score.evidence)) == (result[:2], result[2])


def test_reference_without_statements_leaves_recall_nan():
    program = started(factual_correctness_recall)
    assert [call.step for call in program.send(RESPONSE_STATEMENTS + per_sentence([], [], []))] == ["stated_claim"]
    assert program.send([NO_CLAIM]) == [
        support(REFERENCE, R1),
        support(REFERENCE, R2),
    ]
    score = finish(program, VERDICTS[:2])  # R1 supported, R2 not: TP 1, FP 1; no reference statement to recall
    assert (score.is_nan, score.reason, score.evidence["tp"], score.evidence["fp"]) == (True, "no_statements", 1, 1)


def test_counts_are_sums_of_support_probabilities():
    # P(supported): R1 0.9, R2 0.2; F1 0.8, F2 0.4, F3 0.1 (no calibration: the judge's own P).
    # TP = 1.1, FP = 0.9, FN = 0.2 + 0.6 + 0.9 = 1.7; precision 1.1 / 2 = 0.55, recall 1.3 / 3;
    # F1 = 2·0.55·(1.3/3) / (0.55 + 1.3/3) = 0.47667 / 0.98333 ≈ 0.48475.
    probabilities = [0.9, 0.2, 0.8, 0.4, 0.1]
    verdicts = [v.model_copy(update={"probability": p}) for v, p in zip(VERDICTS, probabilities)]
    expected = {
        factual_correctness_precision: 0.55,
        factual_correctness_recall: 1.3 / 3,
        factual_correctness: 2 * 0.55 * (1.3 / 3) / (0.55 + 1.3 / 3),
    }
    for metric, value in expected.items():
        program = started(metric)
        program.send(RESPONSE_STATEMENTS + REFERENCE_STATEMENTS)
        score = finish(program, verdicts)
        assert score.value == pytest.approx(value)
        assert (score.evidence["tp"], score.evidence["fp"], score.evidence["fn"]) == (1.1, 0.9, 1.7)
        assert [row["p"] for row in score.evidence["response_statements"]] == [0.9, 0.2]
        assert score.evidence["reference_statements"][1]["evidence"] == ["The Eiffel Tower is in Paris."]
