"""Faithfulness with a real judge (Qwen2.5-Coder-0.5B) on obvious, hand-written cases."""

import pytest

from localeval.data.samples import Sample
from localeval.judge.protocol import JudgeConfig
from localeval.metrics import METRICS
from localeval.run.runner import run_metrics
from localeval.run.step_executor import StepExecutor
from localeval.steps.prompts import PromptLibrary

# topic: (question, context, supported answer, contradicted answer)
CASES = {
    "kilimanjaro": (
        "Where is Mount Kilimanjaro and how high is it?",
        "Mount Kilimanjaro is a dormant volcano in Tanzania. Its highest summit, Uhuru Peak, is 5,895 metres "
        "above sea level, which makes it the highest mountain in Africa.",
        "Mount Kilimanjaro is in Tanzania. It is 5,895 metres high.",
        "Mount Kilimanjaro is in Brazil. It is 2,100 metres high.",
    ),
    "penicillin": (
        "Who discovered penicillin?",
        "Penicillin was discovered in 1928 by the Scottish physician Alexander Fleming, who noticed that a mould "
        "had killed the bacteria in one of his culture plates.",
        "Alexander Fleming discovered penicillin in 1928.",
        "Marie Curie discovered penicillin in 1955.",
    ),
    "kyoto": (
        "What was the capital of Japan before Tokyo?",
        "Kyoto served as the capital of Japan for more than a thousand years, until the emperor moved to Tokyo "
        "in 1869.",
        "Kyoto was the capital of Japan until 1869.",
        "Osaka was the capital of Japan until 1950.",
    ),
}


@pytest.fixture(scope="module")
def scores(qwen05_judge):
    executor = StepExecutor(qwen05_judge, "qwen05", PromptLibrary(), JudgeConfig())
    samples = []
    for topic, (question, context, supported, contradicted) in CASES.items():
        for kind, response in (("supported", supported), ("contradicted", contradicted)):
            samples.append(
                Sample(
                    id=f"{topic}/{kind}",
                    row=len(samples) + 1,
                    user_input=question,
                    response=response,
                    retrieved_contexts=(context,),
                )
            )
    results = run_metrics(samples, [METRICS["faithfulness"]], executor, lambda sample: "en")
    return {result.sample.id: result.scores["faithfulness"] for result in results}


@pytest.mark.slow
@pytest.mark.parametrize("topic", CASES)
def test_supported_answer_scores_above_contradicted_one(scores, topic):
    supported, contradicted = scores[f"{topic}/supported"], scores[f"{topic}/contradicted"]
    assert not supported.is_nan and not contradicted.is_nan
    assert supported.value > contradicted.value


def test_evidence_has_statements_verdicts_and_the_judges_probability(scores):
    for score in scores.values():
        statements = score.evidence["statements"]
        assert statements
        for item in statements:
            assert item["statement"] and isinstance(item["evidence"], list)
            assert item["verdict"] in (0, 1) and item["judge_verdict"] in (0, 1)
            assert 0.0 <= item["judge_p"] <= 1.0
