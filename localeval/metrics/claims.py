"""The statement-level calls that several metrics share, built in one place so they are identical.

The runner runs identical calls on a sample once; faithfulness, answer_correctness,
factual_correctness, noise_sensitivity and context_recall therefore share a text's statements and
the verdicts on them only if they build their calls here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from localeval.data.samples import Sample
from localeval.data.text import split_sentences
from localeval.data.untrusted import MARKER, strip_judge_format
from localeval.grounding.calibration import Calibration, Signals
from localeval.grounding.coverage import (
    Evidence,
    Passages,
    coverage,
    find_evidence,
    uncovered_numbers,
    units,
)
from localeval.metrics.base import MetricProgram, Program, Score
from localeval.metrics.options import MetricOptions
from localeval.steps import Call
from localeval.steps.statements import StatedClaim, Statements
from localeval.steps.verdicts import SupportVerdict

# On JHARS, statements copied from another sentence had at most 0.33 of their units in the sentence they
# were asked about; a statement whose pronoun was resolved from the previous sentence still had 0.47.
OWN_SHARE = 0.4
MIN_CLAIM_UNITS = 3  # a sentence of fewer words (or CJK bigrams) is not judged in place of its statements
# The judge steps of every metric that judges a text's claims.
CLAIM_STEPS = ("statements", "answer_claim", "stated_claim", "statement_support")
SHORT_ANSWER_UNITS = 4  # at most this many words (CJK bigrams) in a one-sentence text: a short answer
SHORT_ANSWER_CHARS = 60
_SENTENCE_ENDS = (".", "!", "?", "。", "！", "？", "．")


def nonblank(texts: Sequence[str] | None) -> list[str]:
    return [text for text in texts or () if text.strip()]


def statement_calls(user_input: str | None, text: str | None) -> list[Call]:
    """One call per sentence that code splits off the text (see steps/statements.py for why); a short answer to a
    question, one answer_claim call that makes it the statement it is about the question.

    The text is split as the judge will see it, with judge-format imitations already removed: split first,
    a fake JSON verdict would reach the judge in pieces that no longer look like one.
    """
    text = text or ""
    sentences = [s for s in split_sentences(strip_judge_format(text)) if s.replace(MARKER, "").strip()]
    if user_input and user_input.strip() and len(sentences) == 1 and is_short_answer(sentences[0]):
        return [Call.of("answer_claim", user_input=user_input, text=sentences[0])]
    return [Call.of("statements", user_input=user_input or "", text=text, sentence=sentence) for sentence in sentences]


def is_short_answer(sentence: str) -> bool:
    """A name, a number or a phrase, not a sentence: "Arthur's Magazine", "6.213 km long", "3776メートル", "Bobby Darin."

    At most SHORT_ANSWER_UNITS words (CJK bigrams) in a few characters, and no full stop, unless it is one or two
    words ("Rome is in Italy." states a claim on its own; "Bobby Darin." does not).
    """
    text = sentence.strip()
    found = units(text)
    if len(text) > SHORT_ANSWER_CHARS or len(found) > SHORT_ANSWER_UNITS:
        return False
    ends_sentence = text.rstrip("\"'”’」』)）").endswith(_SENTENCE_ENDS)
    return not ends_sentence or (len(text.split()) <= 2 and len(found) <= 2)


def support(contexts: Sequence[str], statement: str) -> Call:
    """Does `contexts` (retrieved passages, a reference or a response) support the statement?"""
    return Call.of("statement_support", retrieved_contexts=list(contexts), statement=statement)


@dataclass(frozen=True)
class Claim:
    """A statement, and the sentence of the text it was made from (code's grounding signals read both)."""

    sentence: str
    statement: str


@dataclass(frozen=True)
class Support:
    """P(supported) for one claim against one set of passages, and the evidence row that shows why."""

    p: float
    row: dict[str, Any]


def _claims(calls: Sequence[Call], outputs: Sequence[Statements]) -> list[Claim]:
    """The claims in reading order, each statement under the sentence that states it; no statement twice.

    A small judge, shown the whole text, sometimes restates a neighbouring sentence instead of the
    one it was given. Such a statement is dropped (see _states), and a sentence left with no
    statement of its own is judged as it stands, so no claim goes unchecked, unless it is too short
    to claim anything ("Hello!"). A sentence for which the judge wrote no statement at all makes no
    claim ("Here is the answer."), unless no sentence of the text makes one (_second_look).
    """
    sentences = [str(call.input_dict().get("sentence", call.input_dict()["text"])) for call in calls]
    sentence_units = [units(sentence) for sentence in sentences]
    seen: set[str] = set()
    claims = []
    for index, (sentence, output) in enumerate(zip(sentences, outputs)):
        stated = [s for s in dict.fromkeys(s.strip() for s in output.statements) if s]
        own = [s for s in stated if _states(index, s, sentence_units)]
        if stated and not own and len(sentence_units[index]) >= MIN_CLAIM_UNITS:
            own = [sentence.strip()]
        for statement in own:
            if statement not in seen:
                seen.add(statement)
                claims.append(Claim(sentence, statement))
    return claims


def _states(index: int, statement: str, sentence_units: Sequence[frozenset[str]]) -> bool:
    """Is the statement sentence `index`'s own? Yes unless another sentence covers it better and its own covers
    under OWN_SHARE of it: a pronoun resolved from the previous sentence must not make it someone else's."""
    scores = [coverage(statement, have) for have in sentence_units]
    return scores[index] >= min(max(scores), OWN_SHARE)


def claims_of(user_input: str | None, text: str | None) -> Program[list[Claim]]:
    """The text's claims, one statements call per sentence."""
    (claims,) = yield from _claims_of_texts(user_input, [text])
    return claims


def claims_of_both(sample: Sample) -> Program[tuple[list[Claim], list[Claim]]]:
    """(response claims, reference claims), asked for together."""
    response, reference = yield from _claims_of_texts(sample.user_input, [sample.response, sample.reference])
    return response, reference


def _claims_of_texts(user_input: str | None, texts: Sequence[str | None]) -> Program[list[list[Claim]]]:
    """Each text's claims, in one round, and a second look (stated_claim) at each text in which none was found."""
    calls = [statement_calls(user_input, text) for text in texts]
    flat = [call for text_calls in calls for call in text_calls]
    outputs: list[Statements] = (yield flat) if flat else []
    claims, start = [], 0
    for text_calls in calls:
        claims.append(_claims(text_calls, outputs[start : start + len(text_calls)]))
        start += len(text_calls)
    second = {
        index: call
        for index, (text, text_calls) in enumerate(zip(texts, calls))
        if text_calls and not claims[index] and (call := _second_look(user_input, text))
    }
    answers: list[StatedClaim] = (yield list(second.values())) if second else []
    for (index, call), answer in zip(second.items(), answers):
        text = str(call.input_dict()["text"])
        claims[index] = [Claim(text, answer.statement.strip())] if answer.p >= 0.5 and answer.statement.strip() else []
    return claims


def _second_look(user_input: str | None, text: str | None) -> Call | None:
    """stated_claim on a text in which no claim was found, where a question says what it would claim about.

    A small judge writes no statement for "no", a negation or a false claim as it does for "I don't know":
    a claim that goes unjudged is a NaN, or a faithfulness that counts only the text's other sentences.
    """
    if not (user_input and user_input.strip()):
        return None
    return Call.of("stated_claim", user_input=user_input, text=strip_judge_format(text or "").strip())


def judged(checks: Sequence[tuple[Sequence[str], Claim]], options: MetricOptions) -> Program[list[Support]]:
    """Support for each (passages, claim) pair, asked for in one round: the judge's verdict combined with grounding.

    The judge reads every passage, or only the claim's evidence sentences (options.evidence_sentences).
    """
    indexed = {key: Passages(key) for key in dict.fromkeys(tuple(passages) for passages, _ in checks)}
    found = [
        find_evidence(claim.statement, indexed[tuple(passages)], options.evidence_sentences or 3)
        for passages, claim in checks
    ]
    shown = [
        list(evidence.sentences) if options.evidence_sentences else list(passages)
        for evidence, (passages, _) in zip(found, checks)
    ]
    verdicts = (yield [support(texts, claim.statement) for texts, (_, claim) in zip(shown, checks)]) if checks else []
    return [
        support_of(claim, verdict, evidence, indexed[tuple(passages)], options.calibration())
        for (passages, claim), verdict, evidence in zip(checks, verdicts, found)
    ]


def supported_share(
    user_input: str | None, text: str | None, contexts: Sequence[str] | None, evidence_key: str, options: MetricOptions
) -> MetricProgram:
    """Expected share of the text's statements that the contexts support: the mean of P(supported).

    Used by faithfulness (the response) and context_recall (the reference).
    """
    contexts = nonblank(contexts)
    if not contexts:
        return Score.nan("empty_contexts")
    claims = yield from claims_of(user_input, text)
    if not claims:
        return Score.nan("no_statements")
    supports = yield from judged([(contexts, claim) for claim in claims], options)
    return Score(sum(s.p for s in supports) / len(supports), evidence={evidence_key: [s.row for s in supports]})


def support_of(
    claim: Claim, verdict: SupportVerdict, evidence: Evidence, passages: Passages, calibration: Calibration
) -> Support:
    """P(supported), and the row that shows why: the verdict at 0.5, the judge's own view, the evidence."""
    judge_p = verdict.p
    numbers = uncovered_numbers(claim.statement, passages)
    sentence_coverage = coverage(claim.sentence, passages)
    signals = Signals(judge_p, evidence.context_coverage, evidence.coverage, sentence_coverage, len(numbers))
    p = calibration.p_supported(signals)
    return Support(
        p,
        {
            "statement": claim.statement,
            "sentence": claim.sentence,
            "p": round(p, 6),
            "verdict": int(p >= 0.5),
            "judge_p": round(judge_p, 6),
            "judge_verdict": verdict.verdict,
            "evidence": list(evidence.sentences),
            "coverage": round(evidence.context_coverage, 4),
            "evidence_coverage": round(evidence.coverage, 4),
            "sentence_coverage": round(sentence_coverage, 4),
            "uncovered_numbers": numbers,
        },
    )
