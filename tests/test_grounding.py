"""Model-free grounding: units, coverage, uncovered numbers and the evidence finder, on hand-computed cases."""

import pytest

from localeval.grounding.coverage import (
    Passages,
    coverage,
    find_evidence,
    lowest_coverage,
    uncovered_numbers,
    units,
)


def test_japanese_and_chinese_become_character_bigrams():
    assert units("東京タワー") == {"東京", "京タ", "タワ", "ワー"}
    assert units("北京。") == {"北京"}  # punctuation is not part of any unit
    assert units("猫") == {"猫"}


def test_latin_text_becomes_content_words_casefolded():
    assert units("The Eiffel Tower is tall.") == {"eiffel", "tower", "tall"}


def test_latin_words_inside_japanese_stay_whole():
    assert units("ドラえもんはAIです") == {"ドラ", "ラえ", "えも", "もん", "んは", "ai", "です"}


def test_full_width_text_is_normalised():
    assert units("ＡＩ３７７６") == units("ai3776") == {"ai3776"}


def test_coverage_is_the_share_of_units_found():
    assert coverage("東京タワー", ["東京の塔"]) == pytest.approx(1 / 4)
    assert coverage("Paris has 9 moons.", ["Paris is the capital of France."]) == pytest.approx(1 / 3)
    assert coverage("。", ["anything"]) == 1.0  # nothing to check


def test_uncovered_numbers():
    contexts = ["It is 330 metres (1083 ft) tall and was built from 1887 to 1889."]
    assert uncovered_numbers("It is 330 metres and 1,083 ft, built 1887.", contexts) == []
    assert uncovered_numbers("It was built in 1900 and is 330 m tall.", contexts) == ["1900"]
    assert uncovered_numbers("高さは３７７６メートル", ["標高3776m"]) == []
    assert uncovered_numbers("3.5 or 3.50 or 3", ["3.5"]) == ["3.50", "3"]


def test_evidence_is_the_greedy_cover_in_reading_order():
    contexts = [
        "The Eiffel Tower is in Paris. It was built from 1887 to 1889.",
        "Paris is the capital of France. The tower is 330 metres tall.",
    ]
    evidence = find_evidence("The tower is 330 metres tall and was built from 1887 to 1889.", contexts)
    assert evidence.sentences == ("It was built from 1887 to 1889.", "The tower is 330 metres tall.")
    assert evidence.coverage == 1.0 and evidence.context_coverage == 1.0


def test_evidence_stops_when_nothing_more_is_covered():
    contexts = ["Cats sleep a lot. Dogs bark. Birds sing."]
    evidence = find_evidence("Cats sleep on the moon.", contexts)
    assert evidence.sentences == ("Cats sleep a lot.",)
    assert evidence.coverage == pytest.approx(2 / 3)  # cats, sleep; not moon


def test_evidence_of_a_statement_with_nothing_in_the_contexts_is_the_shortest_sentence():
    evidence = find_evidence("Zebras are striped.", ["A long sentence about something else entirely.", "Short one."])
    assert evidence.sentences == ("Short one.",)
    assert evidence.coverage == 0.0


def test_lowest_coverage_is_the_least_covered_sentence():
    assert lowest_coverage(
        "Paris is in France. Paris has 9 moons.", ["Paris is the capital of France."]
    ) == pytest.approx(1 / 3)
    assert lowest_coverage("", ["x"]) == 1.0


def test_grounding_coverage_metric_scores_the_least_covered_sentence():
    from localeval.data.samples import Sample
    from localeval.metrics.grounding_coverage import grounding_coverage

    sample = Sample(
        "g",
        1,
        response="Paris is in France. Paris has 9 moons.",
        retrieved_contexts=("Paris is the capital of France.", ""),
    )
    score = grounding_coverage.compute(sample)
    assert score.value == pytest.approx(1 / 3)
    assert score.evidence == {
        "sentences": [
            {"sentence": "Paris is in France.", "coverage": 1.0},
            {"sentence": "Paris has 9 moons.", "coverage": 0.3333},
        ]
    }
    blank = Sample("g", 1, response="x", retrieved_contexts=(" ",))
    assert grounding_coverage.compute(blank).reason == "empty_contexts"
    assert grounding_coverage.models == ()


def test_passages_worked_out_once_give_the_same_answers_as_the_contexts():
    contexts = ["The Eiffel Tower is in Paris. It was built from 1887 to 1889.", "It is 330 metres tall."]
    passages = Passages(contexts)
    statement = "The tower in Paris is 300 metres tall."
    assert find_evidence(statement, passages) == find_evidence(statement, contexts)
    assert coverage(statement, passages) == coverage(statement, contexts) == pytest.approx(4 / 5)
    assert uncovered_numbers(statement, passages) == uncovered_numbers(statement, contexts) == ["300"]
