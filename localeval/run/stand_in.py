"""Stand-in judge answers for a dry run: valid for the step's schema and about as long as a real answer.

A dry run drives the real metric programs, so later calls (statement_support per statement) follow
from these answers. Statements are made from the sentence by code (estimate.statement_count); reasons
and questions reuse the call's own words, so they are tokenized like text of that language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from localeval.judge.estimate import split_evenly, statement_count
from localeval.steps import StepInput

# Typical lengths of what a judge writes, in words (CJK: CJK_PER_WORD characters a word), from a real run
# (Qwen2.5-Coder-0.5B on 4 samples of benchmarks/data/vs_ragas.jsonl): 48 tokens an answer for context_usefulness,
# 25 a question. statement_support writes its verdict alone.
# part_answered was not in that run: it writes the same kind of one-sentence reason as critique.
REASON_WORDS = {"context_usefulness": 27, "critique": 22, "part_answered": 22, "rubric": 24}
QUESTION_WORDS = 8
SUMMARY_QUESTIONS = 5
CJK_PER_WORD = 2


def stand_in(step: str, inputs: Mapping[str, StepInput]) -> dict[str, Any]:
    """An answer to `step` on `inputs`, as the judge would write it (its JSON object)."""
    if step == "statements":
        return {"statements": statements(str(inputs["sentence"]))}
    if step == "answer_claim":  # the question turned around with the answer in it: about as long as the question
        return {"statements": [(str(inputs["user_input"]).rstrip("?？") + " " + str(inputs["text"]))[:300]]}
    if step == "stated_claim":  # as answer_claim's, and a claim
        return {
            "statement": (str(inputs["user_input"]).rstrip("?？") + " " + str(inputs["text"]))[:300],
            "answer": "yes",
        }
    if step == "statement_support":
        return {"verdict": 1}
    if step in ("context_usefulness", "part_answered"):
        source = inputs.get("context") or inputs.get("response")
        return {"reason": _words(str(source), REASON_WORDS[step])[:240], "verdict": 1}
    if step == "question_parts":  # the question whole, one part: the fewest part_answered calls a sample can make
        return {"parts": [str(inputs["user_input"])[:160] or "-"]}
    if step == "critique":
        return {"reason": _words(str(inputs["response"]), REASON_WORDS[step])[:240], "answer": "yes"}
    if step == "rubric":
        return {"reason": _words(str(inputs["response"]), REASON_WORDS[step])[:300], "score": 3}
    if step == "questions":
        question = _words(str(inputs["response"]), QUESTION_WORDS)[:190] + "?"
        return {"questions": [question] * int(str(inputs["count"])), "noncommittal": 0}
    if step in ("sentence_relevance", "response_focus"):
        return {"verdicts": [1] * len(inputs["sentences"])}
    if step == "entities":
        return {"entities": _entities(str(inputs["text"]))}
    if step == "summary_questions":
        text = str(inputs["text"])
        return {
            "keyphrases": [_words(text, 2)[:80]] * SUMMARY_QUESTIONS,
            "questions": [_words(text, QUESTION_WORDS)[:190] + "?"] * SUMMARY_QUESTIONS,
        }
    if step == "summary_answers":
        return {"answers": [1] * len(inputs["questions"])}
    raise ValueError(f"no stand-in answer for step '{step}'")


def statements(sentence: str) -> list[str]:
    """The sentence cut into `statement_count` consecutive pieces (by words, or by characters without spaces)."""
    words = sentence.split()
    if len(words) > 1:
        pieces = [" ".join(run) for run in split_evenly(words, statement_count(sentence))]
    else:
        pieces = ["".join(run) for run in split_evenly(list(sentence.strip()), statement_count(sentence))]
    return [piece[:300] for piece in pieces if piece] or ["-"]


def _words(text: str, count: int) -> str:
    """About `count` words taken from `text` (repeated if it is short): filler of the right length and language."""
    words = text.split()
    if len(words) <= 1:  # Japanese, Chinese: no spaces
        chars = (text.strip() or "-") * (1 + count * CJK_PER_WORD // max(len(text.strip()), 1))
        return chars[: count * CJK_PER_WORD]
    return " ".join((words * (1 + count // len(words)))[:count])


def _entities(text: str) -> list[str]:
    """Capitalised words and numbers, as the names, dates and figures a judge lists (at most 40)."""
    found = [word.strip(".,;:()\"'") for word in text.split() if word[:1].isupper() or any(c.isdigit() for c in word)]
    return list(dict.fromkeys(word[:80] for word in found if word))[:40] or [_words(text, 1)[:80] or "-"]
