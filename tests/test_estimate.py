"""The arithmetic of a dry run, on hand-computed cases."""

import pytest

from localeval.judge.estimate import (
    Cost,
    Speeds,
    seconds,
    shared_prefix,
    split_evenly,
    statement_count,
    tokens_to_process,
)


def test_shared_prefix_stops_at_the_first_difference():
    assert shared_prefix([1, 2, 3, 4], [1, 2, 3, 9, 9]) == 3
    assert shared_prefix([], [1, 2]) == 0
    assert shared_prefix([5, 6], [5, 6, 7]) == 2


def test_tokens_after_the_shared_prefix_are_processed():
    assert tokens_to_process([1, 2, 3, 4], [1, 2, 3, 9, 9]) == 2
    assert tokens_to_process([], [1, 2, 3]) == 3  # an empty cache: every token
    assert tokens_to_process([7, 8], [1, 2, 3]) == 3


def test_a_prompt_already_in_the_cache_still_runs_its_last_token():
    assert tokens_to_process([1, 2, 3], [1, 2, 3]) == 1
    assert tokens_to_process([1, 2, 3, 4], [1, 2]) == 1
    assert tokens_to_process([1], []) == 0


def test_seconds_are_prompt_tokens_at_prompt_speed_plus_generated_at_generation_speed():
    assert seconds(100, 30, Speeds(prompt=50, generated=10)) == 5.0
    assert Cost(calls=2, prompt_tokens=900, to_process=100, generated=30).seconds(Speeds(50, 10)) == 5.0


def test_costs_add_up_field_by_field():
    total = Cost(1, 10, 5, 3, 0)
    total.add(Cost(2, 20, 7, 4, 2))
    assert total == Cost(3, 30, 12, 7, 2)


@pytest.mark.parametrize(
    "sentence, count",
    [
        ("Paris is the capital of France.", 1),  # 6 words
        (" ".join(["word"] * 24), 1),
        (" ".join(["word"] * 25), 2),
        (" ".join(["word"] * 60), 3),  # 1 + 60 // 25
        (" ".join(["word"] * 500), 6),  # the statements step's limit
        ("東" * 39, 1),
        ("東" * 80, 3),  # 80 CJK characters: 1 + 80 // 40
        ("", 1),
    ],
)
def test_statements_per_sentence_grow_with_its_length(sentence, count):
    assert statement_count(sentence) == count


def test_split_evenly_keeps_order_and_gives_the_remainder_to_the_first_runs():
    assert split_evenly(["a", "b", "c", "d", "e"], 2) == [["a", "b", "c"], ["d", "e"]]
    assert split_evenly(["a", "b"], 5) == [["a"], ["b"]]
    assert split_evenly(["a", "b", "c"], 1) == [["a", "b", "c"]]
