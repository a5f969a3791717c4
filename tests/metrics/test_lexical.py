"""Tests for localeval.metrics.lexical and its scoring helpers, on hand-computed cases in English, Japanese and Chinese."""

from __future__ import annotations

import math

import pytest

from localeval.data.samples import Sample
from localeval.metrics import METRICS
from localeval.metrics.lexical import (
    CONTEXT_MATCH_THRESHOLD,
    bleu,
    chrf,
    context_precision_ids,
    context_precision_string,
    context_recall_ids,
    context_recall_string,
    exact_match,
    rouge_l,
    string_presence,
    string_similarity,
)
from localeval.metrics.scoring import lcs_length, rouge_l_f1

LEXICAL = (
    "exact_match",
    "string_presence",
    "bleu",
    "chrf",
    "rouge_l",
    "string_similarity",
    "context_precision_string",
    "context_recall_string",
    "context_precision_ids",
    "context_recall_ids",
)


def pair(response: str, reference: str) -> Sample:
    return Sample(id="s", row=0, response=response, reference=reference)


def contexts(retrieved: tuple[str, ...], reference: tuple[str, ...]) -> Sample:
    return Sample(id="s", row=0, retrieved_contexts=retrieved, reference_contexts=reference)


def ids(retrieved: tuple[str, ...], reference: tuple[str, ...]) -> Sample:
    return Sample(id="s", row=0, retrieved_context_ids=retrieved, reference_context_ids=reference)


# --- registration -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", LEXICAL)
def test_registered_without_steps_or_models(name):
    declared = METRICS[name]
    assert (declared.steps, declared.models) == ((), ())
    assert declared.score_range == (0.0, 1.0)
    assert declared.description  # shown by `localeval metrics`


def test_text_metrics_require_response_and_reference():
    assert {METRICS[n].required for n in LEXICAL[:6]} == {("response", "reference")}


def test_context_metrics_require_their_lists():
    assert METRICS["context_recall_string"].required == ("retrieved_contexts", "reference_contexts")
    assert METRICS["context_recall_ids"].required == ("retrieved_context_ids", "reference_context_ids")


# --- lcs_length and rouge_l_f1 ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("ABCBDAB", "BDCABA", 4),  # BCBA, the textbook case
        ("abc", "abc", 3),
        ("abc", "xyz", 0),
        ("", "abc", 0),
        ("abc", "", 0),
        ("a", "aaaa", 1),
        (["the", "cat", "sat", "on", "the", "mat"], ["the", "cat", "is", "on", "the", "mat"], 5),
        ("猫坐在垫子上", "猫在垫子上", 5),
        ("東京は日本の首都です", "日本の首都は東京です", 7),  # 日本の首都 + です
    ],
)
def test_lcs_length(a, b, expected):
    assert lcs_length(a, b) == expected


def test_lcs_length_is_symmetric():
    assert lcs_length("AGGTAB", "GXTXAYB") == lcs_length("GXTXAYB", "AGGTAB") == 4  # GTAB


@pytest.mark.parametrize(
    ("lcs", "candidate", "reference", "expected"),
    [
        (5, 6, 6, 5 / 6),  # P = R = 5/6
        (5, 5, 6, 10 / 11),  # P = 1, R = 5/6: 2 * 5/6 / (11/6)
        (2, 4, 2, 2 / 3),  # P = 1/2, R = 1: 2 * 1/2 / (3/2)
        (0, 3, 4, 0.0),
        (0, 0, 4, 0.0),
        (3, 3, 3, 1.0),
    ],
)
def test_rouge_l_f1(lcs, candidate, reference, expected):
    assert rouge_l_f1(lcs, candidate, reference) == pytest.approx(expected)


def test_rouge_l_f1_of_no_tokens_is_nan():
    assert math.isnan(rouge_l_f1(0, 0, 0))


# --- exact_match and string_presence ------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [
        ("Paris", "Paris", 1.0),
        ("  PARIS\n", "paris", 1.0),
        ("New   York", "new york", 1.0),
        ("Paris, France", "Paris", 0.0),
        ("２０２４年", "2024年", 1.0),  # full-width digits, NFKC
        ("ＡＢＣ株式会社", "abc株式会社", 1.0),
        ("東京", "京都", 0.0),
        ("北京", "北京市", 0.0),
    ],
)
def test_exact_match(response, reference, expected):
    assert exact_match.compute(pair(response, reference)).value == expected


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [
        ("The capital of France is Paris.", "paris", 1.0),
        ("The capital of France is Paris.", "Lyon", 0.0),
        ("The capital of France is Paris.", "Paris is", 0.0),
        ("首都は東京です。", "東京", 1.0),
        ("人口は１２００万人です。", "1200万", 1.0),  # full-width digits in the response
        ("首都是北京。", "上海", 0.0),
    ],
)
def test_string_presence(response, reference, expected):
    assert string_presence.compute(pair(response, reference)).value == expected


# --- bleu and chrf ------------------------------------------------------------------------------


def test_bleu_short_hypothesis_uses_effective_order_and_brevity_penalty():
    # 1-, 2-, 3-gram precisions are all 1, there is no 4-gram to count; BP = exp(1 - 6/3).
    score = bleu.compute(pair("the cat sat", "the cat sat on the mat"))
    assert score.value == pytest.approx(math.exp(-1))
    assert score.evidence == {"tokenizer": "13a"}


def test_bleu_chinese_splits_characters():
    # Precisions 5/5, 3/4, 2/3, 1/2 (geometric mean 0.25^(1/4)); BP = exp(1 - 6/5).
    score = bleu.compute(pair("猫在垫子上", "猫坐在垫子上"))
    assert score.value == pytest.approx(math.sqrt(0.5) * math.exp(-0.2))
    assert score.evidence == {"tokenizer": "zh"}


def test_bleu_japanese_uses_characters():
    # Same 10 characters reordered: precisions 10/10, 6/9, 3/8, 2/7; BP = 1.
    score = bleu.compute(pair("東京は日本の首都です", "日本の首都は東京です"))
    assert score.value == pytest.approx((1 / 14) ** 0.25)
    assert score.evidence == {"tokenizer": "char"}


@pytest.mark.parametrize("text", ["The cat sat on the mat.", "猫坐在垫子上。", "東京は日本の首都です。"])
def test_bleu_of_identical_text_is_exactly_one(text):
    assert bleu.compute(pair(text, text)).value == 1.0  # sacrebleu says 100.00000000000004


def test_bleu_of_disjoint_text_is_zero():
    assert bleu.compute(pair("a b c d", "w x y z")).value == 0.0


def test_bleu_is_case_sensitive():
    assert bleu.compute(pair("The Cat", "the cat")).value == 0.0


@pytest.mark.parametrize(("response", "reference"), [("ab", "abc"), ("北京", "北京市")])
def test_chrf_partial(response, reference):
    # Orders 1 and 2 only (the hypothesis has no 3-gram): mean P = 1, mean R = (2/3 + 1/2) / 2 = 7/12;
    # F2 = 5 * P * R / (4 * P + R) = 7/11.
    assert chrf.compute(pair(response, reference)).value == pytest.approx(7 / 11)


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [("The cat sat on the mat.", "The cat sat on the mat.", 1.0), ("東京", "東京", 1.0), ("abc", "xyz", 0.0)],
)
def test_chrf_bounds(response, reference, expected):
    assert chrf.compute(pair(response, reference)).value == expected


# --- rouge_l ------------------------------------------------------------------------------------


def test_rouge_l_english_words():
    # the cat [sat|is] on the mat: LCS 5 of 6 and 6 tokens; case and the full stop do not count.
    score = rouge_l.compute(pair("The cat sat on the mat.", "the cat is on the mat"))
    assert score.value == pytest.approx(5 / 6)
    assert score.evidence == {"tokens": "words", "lcs": 5, "response_tokens": 6, "reference_tokens": 6}


def test_rouge_l_chinese_characters_without_punctuation():
    # 猫在垫子上 (5, the 。 dropped) against 猫坐在垫子上 (6): LCS 5, F1 = 2 * 5 / 11.
    score = rouge_l.compute(pair("猫在垫子上。", "猫坐在垫子上"))
    assert score.value == pytest.approx(10 / 11)
    assert score.evidence == {"tokens": "characters", "lcs": 5, "response_tokens": 5, "reference_tokens": 6}


def test_rouge_l_japanese_characters():
    # LCS 日本の首都です = 7 of 10 and 10 characters (spaces and 、 dropped): F1 = 14 / 20.
    score = rouge_l.compute(pair("東京は 日本の首都です", "日本の首都は、東京です"))
    assert score.value == pytest.approx(0.7)
    assert score.evidence["lcs"] == 7


def test_rouge_l_full_width_digits_match_half_width():
    assert rouge_l.compute(pair("２０２４年", "2024年")).value == 1.0


def test_rouge_l_response_without_tokens_scores_zero():
    assert rouge_l.compute(pair("...", "the cat")).value == 0.0


def test_rouge_l_without_any_token_is_nan():
    score = rouge_l.compute(pair("!!!", "?"))
    assert score.is_nan
    assert score.reason == "no_tokens"


# --- string_similarity --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [
        ("kitten", "sitting", 4 / 7),  # 3 edits over the longer length 7
        ("Kitten", "KITTEN", 1.0),
        ("abcd", "wxyz", 0.0),
        ("東京都", "東京", 2 / 3),
        ("２０２４年", "2024年", 1.0),
        ("北京市", "上海市", 1 / 3),
    ],
)
def test_string_similarity(response, reference, expected):
    assert string_similarity.compute(pair(response, reference)).value == pytest.approx(expected)


# --- context_precision_string and context_recall_string -----------------------------------------


def test_threshold_is_one_half():
    assert CONTEXT_MATCH_THRESHOLD == 0.5


def test_context_precision_string_counts_matches_at_the_threshold():
    # Best similarities 1, 0.5 (two of four characters changed), 0: two of three retrieved contexts match.
    score = context_precision_string.compute(contexts(("abcd", "abxy", "wxyz"), ("abcd",)))
    assert score.value == pytest.approx(2 / 3)
    assert score.evidence == {"similarities": [1.0, 0.5, 0.0], "threshold": 0.5}


def test_context_precision_string_takes_the_best_reference():
    score = context_precision_string.compute(contexts(("wxyz",), ("abcd", "wxyq")))
    assert score.value == 1.0
    assert score.evidence["similarities"] == [0.75]


def test_context_precision_string_japanese_normalised():
    # One character (the 。) out of 11: similarity 10/11; full-width Ｅ matches E after NFKC.
    score = context_precision_string.compute(
        contexts(("東京は日本の首都です。", "ＥＵ"), ("東京は日本の首都です", "eu"))
    )
    assert score.value == 1.0
    assert score.evidence["similarities"] == [round(10 / 11, 4), 1.0]


def test_context_precision_string_ignores_blank_contexts():
    score = context_precision_string.compute(contexts(("  ", "abcd"), ("abcd",)))
    assert score.value == 1.0
    assert score.evidence["similarities"] == [None, 1.0]


def test_context_precision_string_without_reference_contexts_is_zero():
    score = context_precision_string.compute(contexts(("abcd",), ()))
    assert score.value == 0.0
    assert score.evidence["similarities"] == [0.0]


@pytest.mark.parametrize("retrieved", [(), ("", " \n")])
def test_context_precision_string_without_retrieved_contexts_is_nan(retrieved):
    score = context_precision_string.compute(contexts(retrieved, ("abcd",)))
    assert score.is_nan
    assert score.reason == "empty_contexts"


def test_context_recall_string():
    # abcd: 1; wxyz against wxy: 0.75; qqqq: 0 against both. Two of three reference contexts found.
    score = context_recall_string.compute(contexts(("abcd", "wxy"), ("abcd", "wxyz", "qqqq")))
    assert score.value == pytest.approx(2 / 3)
    assert score.evidence == {"similarities": [1.0, 0.75, 0.0], "threshold": 0.5}


def test_context_recall_string_chinese():
    # 北京是中国的首都 against 北京是首都: 3 deletions of 8 -> 5/8 >= 0.5; 上海在南方 shares nothing.
    score = context_recall_string.compute(contexts(("北京是首都",), ("北京是中国的首都", "上海在南方")))
    assert score.value == 0.5
    assert score.evidence["similarities"] == [0.625, 0.0]


def test_context_recall_string_without_retrieved_contexts_is_zero():
    assert context_recall_string.compute(contexts((), ("abcd",))).value == 0.0


@pytest.mark.parametrize("reference", [(), ("",)])
def test_context_recall_string_without_reference_contexts_is_nan(reference):
    score = context_recall_string.compute(contexts(("abcd",), reference))
    assert score.is_nan
    assert score.reason == "empty_reference_contexts"


# --- context_precision_ids and context_recall_ids -----------------------------------------------


def test_context_precision_ids_counts_distinct_stripped_ids():
    # Retrieved {d1, d2, d3} (d1 twice, " d2" stripped); only d2 is a reference id.
    score = context_precision_ids.compute(ids(("d1", " d2", "d3", "d1"), ("d2", "d4")))
    assert score.value == pytest.approx(1 / 3)
    assert score.evidence == {"found": ["d2"], "not_found": ["d1", "d3"]}


def test_context_recall_ids():
    score = context_recall_ids.compute(ids(("d1", " d2", "d3", "d1"), ("d2", "d4 ")))
    assert score.value == 0.5
    assert score.evidence == {"found": ["d2"], "not_found": ["d4"]}


def test_context_ids_are_compared_exactly():
    assert context_recall_ids.compute(ids(("文書1", "DOC-2"), ("文書1", "doc-2"))).value == 0.5


def test_context_precision_ids_without_reference_ids_is_zero():
    assert context_precision_ids.compute(ids(("d1",), ())).value == 0.0


@pytest.mark.parametrize(
    ("metric", "retrieved", "reference", "reason"),
    [
        (context_precision_ids, (), ("d1",), "empty_retrieved_context_ids"),
        (context_precision_ids, (" ",), ("d1",), "empty_retrieved_context_ids"),
        (context_recall_ids, ("d1",), (), "empty_reference_context_ids"),
    ],
)
def test_context_ids_with_nothing_to_count_are_nan(metric, retrieved, reference, reason):
    score = metric.compute(ids(retrieved, reference))
    assert score.is_nan
    assert score.reason == reason
