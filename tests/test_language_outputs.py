"""Judge outputs keep the sample's language: statements, second looks and generated questions come back in Japanese
and Chinese for Japanese and Chinese samples (the real Qwen2.5-Coder-0.5B judge, native prompts)."""

from __future__ import annotations

import re

import pytest
from programs import joined

from localeval.data.text import detect_language, split_sentences
from localeval.judge.protocol import JudgeConfig
from localeval.metrics.claims import statement_calls
from localeval.run.step_executor import StepExecutor
from localeval.steps import Call
from localeval.steps.prompts import PromptLibrary

KANA = re.compile(r"[\u3040-\u30ff]")
HAN = re.compile(r"[\u4e00-\u9fff]")
LATIN_WORD = re.compile(r"[A-Za-z]{3,}")

SAMPLES = {
    "ja": (
        "富士山の高さはどれくらいですか？",
        "富士山の高さは3776メートルです。日本で一番高い山で、静岡県と山梨県にまたがっています。",
    ),
    "zh": ("长江有多长？", "长江全长约6300公里，是中国最长的河流。它发源于青藏高原，最后流入东海。"),
}


@pytest.fixture(scope="module")
def executor(qwen05_judge):
    return StepExecutor(qwen05_judge, "qwen05", PromptLibrary(), JudgeConfig())


def in_language(text: str, lang: str) -> bool:
    """Written in the sample's script: ja has kana, zh has Han and no kana; neither has English words."""
    return detect_language(text) == lang and not LATIN_WORD.search(text)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_statements_come_back_in_the_samples_language(executor, lang):
    question, answer = SAMPLES[lang]
    outcomes = [executor.run(call, lang) for call in statement_calls(question, answer)]
    assert len(outcomes) == len(split_sentences(answer)) >= 2
    assert [o.failure for o in outcomes] == [None] * len(outcomes), [o.detail for o in outcomes]
    statements = joined([o.output for o in outcomes])
    assert len(statements) >= 2
    assert all(in_language(s, lang) for s in statements), statements


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_generated_questions_come_back_in_the_samples_language(executor, lang):
    _, answer = SAMPLES[lang]
    outcome = executor.run(Call.of("questions", response=answer, count="3"), lang)
    assert outcome.failure is None, outcome.detail
    questions = outcome.output.questions
    assert len(questions) == 3
    assert all(in_language(q, lang) for q in questions), questions
    assert outcome.output.noncommittal == 0  # the answer says how long or how high


EVASIONS = {
    "en": "I'm sorry, I don't know anything about that.",
    "ja": "申し訳ありませんが、それについてはわかりません。",
    "zh": "抱歉，我不知道这方面的情况。",
}


@pytest.mark.slow
@pytest.mark.parametrize("lang", EVASIONS)
def test_an_evasive_response_is_flagged_noncommittal_once(executor, lang):
    outcome = executor.run(Call.of("questions", response=EVASIONS[lang], count="3"), lang)
    assert outcome.failure is None, outcome.detail
    assert outcome.output.noncommittal == 1, outcome.output


@pytest.mark.slow
@pytest.mark.parametrize(
    "lang, question, answer",
    [
        ("en", "Is the Nile longer than the Amazon?", "no"),
        ("ja", "富士山は日本で一番高い山ですか？", "いいえ"),
        ("zh", "北京是中国的首都吗？", "不是"),
    ],
)
def test_the_second_look_at_a_bare_no_writes_a_statement_in_the_samples_language(executor, lang, question, answer):
    outcome = executor.run(Call.of("stated_claim", user_input=question, text=answer), lang)
    assert outcome.failure is None, outcome.detail
    assert outcome.output.statement.strip() and outcome.output.probability is not None
    assert lang == "en" or in_language(outcome.output.statement, lang), outcome.output
