"""Cutting a step's input down to the window: which sentences stay, in what order, and what the record says."""

from localeval.steps.fitting import GAP, Cut, Fit, shrink

CONTEXTS = [
    "Paris is the capital of France. It has many museums. The Louvre is the largest.",
    "Berlin is in Germany. Rain is common in autumn.",
]


def test_the_sentences_closest_to_the_query_stay_in_reading_order_with_gaps_marked():
    inputs = {"retrieved_contexts": CONTEXTS, "statement": "The Louvre is in Paris."}
    fitted, cut = shrink(Fit("retrieved_contexts", ("statement",)), inputs, max_chars=70)
    assert fitted["retrieved_contexts"] == [f"Paris is the capital of France. {GAP} The Louvre is the largest."]
    assert fitted["statement"] == "The Louvre is in Paris."
    assert cut == Cut(
        "retrieved_contexts",
        kept_chars=len(fitted["retrieved_contexts"][0]),
        total_chars=sum(map(len, CONTEXTS)),
        kept_sentences=2,
        total_sentences=5,
    )


def test_without_a_query_the_first_sentences_stay():
    fitted, cut = shrink(Fit("text"), {"text": "One. Two. Three. Four."}, max_chars=10)
    assert fitted["text"] == f"One. Two. {GAP}"
    assert (cut.kept_sentences, cut.total_sentences) == (2, 4)


def test_japanese_sentences_join_without_spaces():
    text = "東京は日本の首都です。富士山は高い。東京タワーは東京にあります。"
    fitted, _ = shrink(Fit("text", ("q",)), {"text": text, "q": "東京タワー"}, max_chars=30)
    assert fitted["text"] == f"東京は日本の首都です。{GAP}東京タワーは東京にあります。"


def test_a_sentence_longer_than_the_room_is_cut_at_a_character():
    fitted, cut = shrink(Fit("text"), {"text": "x" * 1000}, max_chars=50)
    assert fitted["text"] == "x" * 48 + GAP
    assert (cut.kept_chars, cut.total_chars, cut.kept_sentences) == (49, 1000, 1)


def test_passages_with_nothing_kept_are_dropped():
    fitted, _ = shrink(
        Fit("retrieved_contexts", ("q",)), {"retrieved_contexts": CONTEXTS, "q": "rain autumn"}, max_chars=35
    )
    assert fitted["retrieved_contexts"] == [f"{GAP} Rain is common in autumn."]


def test_a_passage_kept_whole_keeps_its_line_breaks():
    table = "| a | b |\n|---|---|\n| 1 | 2 |"
    fitted, _ = shrink(
        Fit("retrieved_contexts", ("q",)),
        {"retrieved_contexts": [table, "Other text here."], "q": "a b"},
        max_chars=len(table) + 2,
    )
    assert fitted["retrieved_contexts"][0] == table


def test_a_cut_sentence_then_left_out_ones_show_one_gap():
    fitted, _ = shrink(Fit("text"), {"text": "x" * 1000 + ". " + "y" * 1000 + "."}, max_chars=50)
    assert fitted["text"] == "x" * 48 + GAP
