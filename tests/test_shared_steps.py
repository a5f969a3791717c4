"""Shared steps run once, and aspect_critique makes one greedy call: counted on a real judge.

SmolLM2-135M answers (its verdicts mean nothing); RecordingJudge counts what was asked of it.
"""

from __future__ import annotations

from collections import Counter

import pytest
from recording import RecordingJudge

from localeval.data.samples import Sample
from localeval.data.text import split_sentences
from localeval.judge.protocol import JudgeConfig
from localeval.metrics import METRICS
from localeval.metrics.aspect_critique import critique_metric
from localeval.metrics.options import MetricOptions
from localeval.run.runner import run_metrics
from localeval.run.step_executor import StepExecutor
from localeval.steps.prompts import PromptLibrary

SAMPLES = [
    Sample(
        "eiffel",
        1,
        user_input="When was the Eiffel Tower built?",
        response="The Eiffel Tower was built from 1887 to 1889. It is in Paris.",
        reference="It was built between 1887 and 1889.",
        retrieved_contexts=("The Eiffel Tower in Paris was constructed from 1887 to 1889.",),
    ),
    Sample(
        "nile",
        2,
        user_input="How long is the Nile?",
        response="The Nile is about 6,650 km long.",
        reference="The Nile is about 6,650 kilometres long and flows into the Mediterranean Sea.",
        retrieved_contexts=("The Nile is about 6,650 km long.", "It flows north into the Mediterranean Sea."),
    ),
]
STATEMENT_METRICS = [
    "faithfulness",
    "answer_correctness",
    "factual_correctness",
    "factual_correctness_precision",
    "factual_correctness_recall",
    "context_recall",
    "noise_sensitivity_relevant",
    "noise_sensitivity_irrelevant",
]
CRITERIA = {"en": {"politeness": "Is the response polite?"}}


def run(judge, metric_names, options=MetricOptions()):
    recorder = RecordingJudge(judge)
    executor = StepExecutor(recorder, "smollm", PromptLibrary(), JudgeConfig())
    metrics = [METRICS.get(name) or critique_metric(name.split(":", 1)[1]) for name in metric_names]
    results = run_metrics(SAMPLES, metrics, executor, lambda sample: "en", options=options, encoders=_no_embedder)
    return recorder, results


def _no_embedder(lang):
    raise AssertionError("these metrics must not need an embedder")


def call_keys(recorder: RecordingJudge) -> list[tuple]:
    return [(c.step, c.sample_input, c.seed, c.temperature) for c in recorder.calls]


@pytest.mark.slow
def test_statement_metrics_share_their_steps(smollm_judge):
    names = [n for n in STATEMENT_METRICS if n != "answer_correctness"]  # the one that also needs an embedder
    shared, results = run(smollm_judge, names)
    # One call per sentence of each response and reference (5 sentences here), although seven metrics use them.
    sentences = sum(len(split_sentences(s.response)) + len(split_sentences(s.reference)) for s in SAMPLES)
    assert sentences == 5
    assert Counter(shared.steps())["statements"] == sentences
    # No call runs twice, and together the metrics ask for exactly what they ask for when run one by one.
    assert len(set(call_keys(shared))) == len(shared.calls)
    separately = set()
    calls_one_by_one = 0
    for name in names:
        alone, _ = run(smollm_judge, [name])
        separately |= set(call_keys(alone))
        calls_one_by_one += len(alone.calls)
    assert set(call_keys(shared)) == separately
    assert len(shared.calls) < calls_one_by_one
    for result in results:
        assert set(result.scores) == set(names)
        assert all(not s.is_nan or s.reason for s in result.scores.values())


@pytest.mark.slow
@pytest.mark.parametrize("strictness", [1, 3])
def test_aspect_critique_makes_one_greedy_call_whatever_the_strictness(smollm_judge, strictness):
    """Sampled votes averaged with the greedy call ranked harm no better (docs/validation.md), so none are taken."""
    options = MetricOptions(strictness=strictness, criteria=CRITERIA, lang="en")
    recorder, results = run(smollm_judge, ["aspect_critique:politeness"], options)
    assert recorder.steps() == ["critique"] * len(SAMPLES)
    assert {(c.seed, c.temperature) for c in recorder.calls} == {(JudgeConfig().seed, JudgeConfig().temperature)}
    for result in results:
        score = result.scores["aspect_critique:politeness"]
        assert score.value == float(score.evidence["p_yes"] >= 0.5)  # no threshold is fitted for this judge
        assert 0.0 <= score.evidence["p_yes"] <= 1.0 and score.evidence["answer"] in ("yes", "no")
