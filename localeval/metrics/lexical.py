"""Judge-free metrics: string match, BLEU, chrF, ROUGE-L, string distance and context ids; no model needed.

Each is a plain function that returns its Score at once. Japanese and Chinese, written without spaces,
are compared by characters where other languages are compared by words.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from rapidfuzz.distance import Levenshtein

from localeval.data.samples import Sample
from localeval.data.text import detect_language, normalize
from localeval.metrics.base import Score, metric
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.metrics.scoring import fraction, lcs_length, rouge_l_f1

if TYPE_CHECKING:
    from sacrebleu.metrics import BLEU, CHRF

# Two contexts match when their string similarity (1 - normalised Levenshtein distance) is at least this.
CONTEXT_MATCH_THRESHOLD = 0.5
# sacrebleu tokenizer by detected language; "13a" (its default, for spaced text) otherwise.
_BLEU_TOKENIZERS = {"zh": "zh", "ja": "char"}
_CHARACTER_LANGUAGES = ("ja", "zh")


@metric("exact_match", required=("response", "reference"))
def exact_match(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> Score:
    """1 when the response equals the reference after NFKC, case folding and whitespace collapsing, else 0."""
    return Score(float(normalize(sample.text("response")) == normalize(sample.text("reference"))))


@metric("string_presence", required=("response", "reference"))
def string_presence(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> Score:
    """1 when the normalised reference appears verbatim in the normalised response, else 0."""
    return Score(float(normalize(sample.text("reference")) in normalize(sample.text("response"))))


@metric("bleu", required=("response", "reference"))
def bleu(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> Score:
    """Sentence BLEU of the response against the reference (sacrebleu, effective order), scaled to 0-1.

    Scored on the raw text, case-sensitive as sacrebleu does; tokenizer "zh" for Chinese, "char" for Japanese.
    """
    response, reference = sample.text("response"), sample.text("reference")
    tokenizer = _BLEU_TOKENIZERS.get(detect_language(reference + response), "13a")
    result = _bleu(tokenizer).sentence_score(response, [reference])
    return Score(_unit(result.score), evidence={"tokenizer": tokenizer})


@metric("chrf", required=("response", "reference"))
def chrf(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> Score:
    """Character n-gram F-score (sacrebleu chrF, beta 2) of the response against the reference, scaled to 0-1.

    Scored on the raw text, as sacrebleu does; characters need no tokenizer, whatever the language.
    """
    return Score(_unit(_chrf().sentence_score(sample.text("response"), [sample.text("reference")]).score))


@metric("rouge_l", required=("response", "reference"))
def rouge_l(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> Score:
    """ROUGE-L F1: the longest common token subsequence of response and reference, as precision and recall.

    Tokens are normalised words; for Japanese and Chinese, characters other than whitespace and punctuation.
    """
    response_text, reference_text = sample.text("response"), sample.text("reference")
    language = detect_language(reference_text + response_text)
    candidate = _rouge_tokens(response_text, language)
    reference = _rouge_tokens(reference_text, language)
    lcs = lcs_length(candidate, reference)
    value = rouge_l_f1(lcs, len(candidate), len(reference))
    tokens = "characters" if language in _CHARACTER_LANGUAGES else "words"
    if math.isnan(value):  # neither text has a single token: only punctuation
        return Score.nan("no_tokens", tokens=tokens)
    evidence = {"tokens": tokens, "lcs": lcs, "response_tokens": len(candidate), "reference_tokens": len(reference)}
    return Score(value, evidence=evidence)


@metric("string_similarity", required=("response", "reference"))
def string_similarity(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> Score:
    """1 - normalised Levenshtein distance between the normalised response and reference."""
    return Score(_similarity(normalize(sample.text("response")), normalize(sample.text("reference"))))


@metric("context_precision_string", required=("retrieved_contexts", "reference_contexts"))
def context_precision_string(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> Score:
    """Share of retrieved contexts that match a reference context by string similarity (no model).

    A match is a similarity of at least CONTEXT_MATCH_THRESHOLD (0.5) on normalised text; blank contexts are ignored.
    """
    return _context_matches(sample.texts("retrieved_contexts"), sample.texts("reference_contexts"), "empty_contexts")


@metric("context_recall_string", required=("retrieved_contexts", "reference_contexts"))
def context_recall_string(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> Score:
    """Share of reference contexts matched by some retrieved context by string similarity (no model).

    A match is a similarity of at least CONTEXT_MATCH_THRESHOLD (0.5) on normalised text; blank contexts are ignored.
    """
    return _context_matches(
        sample.texts("reference_contexts"), sample.texts("retrieved_contexts"), "empty_reference_contexts"
    )


@metric("context_precision_ids", required=("retrieved_context_ids", "reference_context_ids"))
def context_precision_ids(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> Score:
    """Share of the distinct retrieved context ids that are reference context ids.

    Ids are compared as stripped strings; blank ids are ignored.
    """
    return _id_share(
        sample.texts("retrieved_context_ids"), sample.texts("reference_context_ids"), "empty_retrieved_context_ids"
    )


@metric("context_recall_ids", required=("retrieved_context_ids", "reference_context_ids"))
def context_recall_ids(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> Score:
    """Share of the distinct reference context ids that were retrieved.

    Ids are compared as stripped strings; blank ids are ignored.
    """
    return _id_share(
        sample.texts("reference_context_ids"), sample.texts("retrieved_context_ids"), "empty_reference_context_ids"
    )


@lru_cache(maxsize=None)
def _bleu(tokenizer: str) -> BLEU:
    """One scorer per tokenizer, built on first use so listing metrics does not import sacrebleu."""
    from sacrebleu.metrics import BLEU

    return BLEU(tokenize=tokenizer, effective_order=True)


@lru_cache(maxsize=1)
def _chrf() -> CHRF:
    """The chrF scorer, built on first use so listing metrics does not import sacrebleu."""
    from sacrebleu.metrics import CHRF

    return CHRF()


def _unit(percent: float) -> float:
    """sacrebleu's 0-100 score as 0-1, clamped: a perfect match comes back as 100.00000000000004."""
    return min(max(percent / 100, 0.0), 1.0)


def _rouge_tokens(text: str, language: str) -> list[str]:
    """Words of the normalised text; characters for Japanese and Chinese, which put no spaces between words."""
    text = normalize(text)
    if language in _CHARACTER_LANGUAGES:
        return [c for c in text if not c.isspace() and not unicodedata.category(c).startswith("P")]
    return re.findall(r"\w+", text)


def _similarity(a: str, b: str) -> float:
    """1 - normalised Levenshtein distance: 1 for equal strings, 0 for nothing in common."""
    return 1.0 - Levenshtein.normalized_distance(a, b)


def _context_matches(items: Sequence[str], others: Sequence[str], empty_reason: str) -> Score:
    """Share of `items` whose best similarity to any of `others` reaches the threshold; evidence keeps each best."""
    scored = {i: text for i, c in enumerate(items) if (text := normalize(c))}
    if not scored:
        return Score.nan(empty_reason)
    targets = [text for c in others if (text := normalize(c))]
    best = {i: max((_similarity(text, t) for t in targets), default=0.0) for i, text in scored.items()}
    matched = sum(1 for s in best.values() if s >= CONTEXT_MATCH_THRESHOLD)
    similarities = [round(best[i], 4) if i in best else None for i in range(len(items))]  # None: blank context
    evidence = {"similarities": similarities, "threshold": CONTEXT_MATCH_THRESHOLD}
    return Score(fraction(matched, len(best)), evidence=evidence)


def _id_share(items: Sequence[str], others: Sequence[str], empty_reason: str) -> Score:
    """Share of the distinct `items` ids found among `others`; evidence names the ids found and not found."""
    wanted = _ids(items)
    if not wanted:
        return Score.nan(empty_reason)
    found = wanted & _ids(others)
    evidence = {"found": sorted(found), "not_found": sorted(wanted - found)}
    return Score(fraction(len(found), len(wanted)), evidence=evidence)


def _ids(ids: Sequence[str]) -> set[str]:
    """Distinct non-blank ids, stripped, so " d1" and "d1" are the same id (the loader already made numbers strings)."""
    return {text for i in ids if (text := i.strip())}
