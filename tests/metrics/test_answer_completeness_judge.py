"""answer_completeness with a real judge (Qwen2.5-Coder-0.5B, the smallest that makes sense): an answer against
no answer, in en, ja and zh. Splitting two-part questions is left to the default 1.5B judge, where
benchmarks/metaeval.py measures it: the 0.5B judge often returns such a question whole."""

import pytest

from localeval.data.samples import Sample
from localeval.data.text import detect_language
from localeval.judge.protocol import JudgeConfig
from localeval.metrics import METRICS
from localeval.run.runner import run_metrics
from localeval.run.step_executor import StepExecutor
from localeval.steps.prompts import PromptLibrary

# topic: (language, question, an answer, a response that answers nothing)
CASES = {
    "penicillin": (
        "en",
        "Who discovered penicillin?",
        "Alexander Fleming discovered penicillin in 1928.",
        "I'm sorry, I can't help with that.",
    ),
    "fuji": (
        "ja",
        "富士山の高さは何メートルですか？",
        "富士山の高さは3776メートルです。",
        "申し訳ありませんが、お答えできません。",
    ),
    "changjiang": ("zh", "长江最后流入哪里？", "长江最后流入东海。", "抱歉，我无法回答这个问题。"),
}


@pytest.fixture(scope="module")
def scores(qwen05_judge):
    executor = StepExecutor(qwen05_judge, "qwen05", PromptLibrary(), JudgeConfig())
    samples, languages = [], {}
    for topic, (lang, question, answer, evasion) in CASES.items():
        for kind, response in (("answer", answer), ("evasion", evasion)):
            sample = Sample(id=f"{topic}/{kind}", row=len(samples) + 1, user_input=question, response=response)
            samples.append(sample)
            languages[sample.id] = lang
    results = run_metrics(samples, [METRICS["answer_completeness"]], executor, lambda sample: languages[sample.id])
    return {result.sample.id: result.scores["answer_completeness"] for result in results}


@pytest.mark.slow
@pytest.mark.parametrize("topic", CASES)
def test_an_answer_scores_above_a_response_that_answers_nothing(scores, topic):
    answer, evasion = scores[f"{topic}/answer"], scores[f"{topic}/evasion"]
    assert answer.value > evasion.value, (answer.evidence, evasion.evidence)


@pytest.mark.parametrize("topic", CASES)
def test_each_part_is_a_question_in_the_samples_language_with_a_probability(scores, topic):
    parts = scores[f"{topic}/answer"].evidence["parts"]
    assert parts and all(detect_language(part["part"]) == CASES[topic][0] for part in parts)
    assert all(0.0 <= part["answered"] <= 1.0 and part["reason"] for part in parts)
