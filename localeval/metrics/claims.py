"""The statement-level calls that several metrics share, built in one place so they are identical.

The runner runs identical calls on a sample once; faithfulness, answer_correctness,
factual_correctness, noise_sensitivity and context_recall therefore share a text's statements and
the verdicts on them only if they build their calls here.
"""

from __future__ import annotations

from collections.abc import Sequence

from localeval.calibration import Calibration, Signals
from localeval.grounding import Evidence, coverage, find_evidence, uncovered_numbers
from localeval.metrics.base import MetricProgram, Score
from localeval.metrics.options import MetricOptions
from localeval.samples import Sample
from localeval.steps import Call
from localeval.steps.statements import joined
from localeval.steps.verdicts import Verdict
from localeval.text import split_sentences


def nonblank(texts: Sequence[str] | None) -> list[str]:
    return [text for text in texts or () if text.strip()]


def statement_calls(user_input: str | None, text: str | None) -> list[Call]:
    """One call per sentence that code splits off the text (see steps/statements.py for why)."""
    return [Call.of("statements", user_input=user_input or "", text=text, sentence=sentence)
            for sentence in split_sentences(text or "")]


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


def statements_by_sentence(user_input: str | None, text: str | None) -> MetricProgram:
    """[(sentence, its statements)] in order; a statement already made by an earlier sentence is not repeated."""
    calls = statement_calls(user_input, text)
    outputs = (yield calls) if calls else []
    seen: set[str] = set()
    grouped = []
    for call, output in zip(calls, outputs):
        kept = [s for s in dict.fromkeys(s.strip() for s in output.statements) if s and s not in seen]
        seen.update(kept)
        grouped.append((call.input_dict()["sentence"], kept))
    return grouped


def supported_share(user_input: str | None, text: str, contexts: Sequence[str] | None, evidence_key: str,
                    options: MetricOptions) -> MetricProgram:
    """Expected share of the text's statements that the contexts support: the mean of P(supported).

    Used by faithfulness (the response) and context_recall (the reference). Each statement is judged
    on its own call, on its evidence sentences or on every context (options.evidence_sentences), and
    P combines the judge's probability with code's grounding signals (see calibration.py).
    """
    contexts = nonblank(contexts)
    if not contexts:
        return Score.nan("empty_contexts")
    grouped = yield from statements_by_sentence(user_input, text)
    statements = [(sentence, statement) for sentence, group in grouped for statement in group]
    if not statements:
        return Score.nan("no_statements")
    found = [find_evidence(statement, contexts, options.evidence_sentences or 3) for _, statement in statements]
    shown = [list(evidence.sentences) if options.evidence_sentences else contexts for evidence in found]
    verdicts = yield [support(passages, statement) for passages, (_, statement) in zip(shown, statements)]
    supports = [support_of(statement, sentence, verdict, evidence, contexts, options.calibration())
                for (sentence, statement), verdict, evidence in zip(statements, verdicts, found)]
    return Score(sum(p for p, _ in supports) / len(supports), evidence={evidence_key: [row for _, row in supports]})


def support_of(statement: str, sentence: str, verdict: Verdict, evidence: Evidence, contexts: Sequence[str],
               calibration: Calibration) -> tuple[float, dict]:
    """P(supported), and the row that shows why: the verdict at 0.5, the judge's own view, the evidence."""
    judge_p = verdict.probability if verdict.probability is not None else float(verdict.verdict)
    numbers = uncovered_numbers(statement, contexts)
    sentence_coverage = coverage(sentence, contexts)
    signals = Signals(judge_p, evidence.context_coverage, evidence.coverage, sentence_coverage, len(numbers))
    p = calibration.p_supported(signals)
    return p, {"statement": statement, "sentence": sentence, "p": round(p, 6), "verdict": int(p >= 0.5),
            "judge_p": round(judge_p, 6), "judge_verdict": verdict.verdict, "reason": verdict.reason,
            "evidence": list(evidence.sentences), "coverage": round(evidence.context_coverage, 4),
            "evidence_coverage": round(evidence.coverage, 4), "sentence_coverage": round(sentence_coverage, 4),
            "uncovered_numbers": numbers}
