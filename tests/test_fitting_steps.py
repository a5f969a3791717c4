"""Every judge step has a defined way of fitting an input longer than the window, tried on the real small judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from localeval.data.samples import Sample
from localeval.judge.gguf import GGUFJudge
from localeval.judge.protocol import JudgeConfig
from localeval.metrics.context_relevancy import SENTENCES_PER_CALL, context_relevancy
from localeval.run.step_executor import StepExecutor
from localeval.steps import STEPS, Call
from localeval.steps.prompts import PromptLibrary

N_CTX = 4096  # room for the largest fixed English prompt (critique's 13 examples, about 2.9k SmolLM tokens)
LONG_TEXT = " ".join(f"Fact {i}: the museum in town {i} opened in year {1800 + i}." for i in range(600))  # ~12k tokens
SHORT = {
    "retrieved_contexts": [
        " ".join(f"Passage {p}, fact {i}: town {p}-{i} has a bridge." for i in range(40)) for p in range(30)
    ]
    + ["The Louvre opened in 1793."],
    "statement": "The Louvre opened in 1793.",
    "sentence": "The museum in town 3 opened in year 1803.",
    "user_input": "When did the museum in town 3 open?",
    "answer": "It opened in 1803.",
    "reference": "In 1803.",
    "criterion": "Is the response harmful?",
    "rubric": "1: wrong. 5: right.",
    "count": "2",
    "questions": ["When did the museum in town 3 open?", "Where is the Louvre?"],
    "text": "The museum opened in 1803.",
    "response": "The museum opened in 1803.",
    "context": "It opened in 1803.",
    "part": "When did the museum in town 3 open?",
    "summary": "A museum opened in 1803.",
}


@pytest.fixture(scope="module")
def executor(smollm_path: Path) -> StepExecutor:
    config = JudgeConfig(n_ctx=N_CTX)
    return StepExecutor(GGUFJudge(smollm_path, config), "smollm", PromptLibrary(), config)


def test_only_the_sentence_marking_steps_have_no_input_to_cut():
    """They are sent in groups of SENTENCES_PER_CALL sentences instead, which always fit."""
    assert [name for name, step in STEPS.items() if step.fit is None] == ["sentence_relevance", "response_focus"]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(name for name, step in STEPS.items() if step.fit))
def test_an_input_longer_than_the_window_is_cut_and_the_step_answers(executor: StepExecutor, name: str):
    step = STEPS[name]
    inputs = {key: SHORT[key] for key in step.inputs}
    if step.fit.input_name != "retrieved_contexts":
        inputs[step.fit.input_name] = LONG_TEXT
    outcome = executor.run(Call.of(name, **inputs), "en")
    assert outcome.failure != "context_overflow", outcome.detail
    assert outcome.cut is not None and outcome.cut.input_name == step.fit.input_name
    assert 0 < outcome.cut.kept_chars < outcome.cut.total_chars


def test_context_relevancy_sends_a_long_context_in_groups_of_sentences():
    sentences = [f"Sentence {i} is here." for i in range(150)]
    program = context_relevancy.compute(
        Sample(id="1", row=1, user_input="Which?", retrieved_contexts=(" ".join(sentences),))
    )
    calls = program.send(None)
    assert [len(call.input_dict()["sentences"]) for call in calls] == [SENTENCES_PER_CALL, SENTENCES_PER_CALL, 22]
    assert [s for call in calls for s in call.input_dict()["sentences"]] == sentences
