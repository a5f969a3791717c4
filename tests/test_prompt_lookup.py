"""Prompt-lookup drafts, on hand-made token sequences."""

import numpy as np

from localeval.judge.prompt_lookup import PromptLookup, draft


def tokens(*ids: int) -> np.ndarray:
    return np.array(ids, dtype=np.intc)


def test_what_followed_the_tail_earlier_is_proposed():
    assert draft(tokens(1, 2, 3, 4, 5, 9, 1, 2, 3), 3, 2, 3).tolist() == [4, 5, 9]


def test_the_latest_earlier_match_wins():
    assert draft(tokens(1, 2, 7, 1, 2, 8, 1, 2), 2, 2, 1).tolist() == [8]


def test_a_longer_match_wins_over_a_later_shorter_one():
    # [4, 1, 2] occurs at 0 (then 7); [1, 2] alone occurs later, at 5 (then 8).
    assert draft(tokens(4, 1, 2, 7, 5, 1, 2, 8, 4, 1, 2), 3, 2, 1).tolist() == [7]


def test_no_match_of_min_ngram_tokens_proposes_nothing():
    assert draft(tokens(1, 2, 3, 1), 3, 2, 8).tolist() == []  # only the single token 1 recurs
    assert draft(tokens(5), 3, 2, 8).tolist() == []


def test_a_draft_stops_at_the_end_of_what_was_read():
    assert draft(tokens(1, 2, 3, 1, 2), 2, 2, 8).tolist() == [3, 1, 2]


def test_the_callable_reads_llama_cpp_input_ids():
    lookup = PromptLookup(max_ngram=3, min_ngram=2, max_draft=2)
    assert lookup(tokens(1, 2, 3, 4, 1, 2, 3)).tolist() == [4, 1]
