"""The statement-level calls that several metrics share, built in one place so they are identical.

The runner runs identical calls on a sample once; faithfulness, answer_correctness,
factual_correctness, noise_sensitivity and context_recall therefore share a text's statements and
the verdicts on them only if they build their calls here.
"""

from __future__ import annotations

from collections.abc import Sequence

from localeval.metrics.base import MetricProgram, Score
from localeval.metrics.scoring import fraction
from localeval.samples import Sample
from localeval.steps import Call
from localeval.steps.statements import joined
from localeval.text import split_sentences


def nonblank(texts: Sequence[str] | None) -> list[str]:
    return [text for text in texts or () if text.strip()]


def statement_calls(user_input: str | None, text: str | None) -> list[Call]:
    """One call per sentence that code splits off the text (see steps/statements.py for why)."""
    return [Call.of("statements", user_input=user_input or "", text=text, sentence=sentence)
            for sentence in split_sentences(text or "")]


def statements_of(user_input: str | None, text: str | None) -> MetricProgram:
    """The text's statements, in sentence order."""
    calls = statement_calls(user_input, text)
    return joined((yield calls) if calls else [])


def support(contexts: Sequence[str], statement: str) -> Call:
    """Does `contexts` (retrieved passages, a reference or a response) support the statement?"""
    return Call.of("statement_support", retrieved_contexts=list(contexts), statement=statement)


def verdict_evidence(statements: Sequence[str], verdicts: Sequence) -> list[dict]:
    return [{"statement": s, "verdict": v.verdict, "reason": v.reason} for s, v in zip(statements, verdicts)]


def statements_of_both(sample: Sample) -> MetricProgram:
    """(response statements, reference statements), asked for in one round."""
    response = statement_calls(sample.user_input, sample.response)
    reference = statement_calls(sample.user_input, sample.reference)
    extracted = (yield response + reference) if response or reference else []
    return joined(extracted[:len(response)]), joined(extracted[len(response):])


def supported_share(user_input: str | None, text: str, contexts: Sequence[str] | None,
                    evidence_key: str) -> MetricProgram:
    """Share of the text's statements that the contexts support: faithfulness (response), context_recall (reference).

    Each statement is judged on its own call (contexts first, statement last), which keeps the
    verdicts aligned with the statements and lets the KV cache reuse the contexts between calls.
    """
    contexts = nonblank(contexts)
    if not contexts:
        return Score.nan("empty_contexts")
    statements = yield from statements_of(user_input, text)
    if not statements:
        return Score.nan("no_statements")
    verdicts = yield [support(contexts, s) for s in statements]
    return Score(fraction(sum(v.verdict for v in verdicts), len(verdicts)),
                 evidence={evidence_key: verdict_evidence(statements, verdicts)})
