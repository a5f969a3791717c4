"""Tests for localeval.data.text: sentence splitting (English, Japanese, Chinese) and normalization."""

from __future__ import annotations

import pytest

from localeval.data.text import normalize, split_sentences

# --- split_sentences: English ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The sky is blue. Grass is green.", ["The sky is blue.", "Grass is green."]),
        ("What? Yes! No.", ["What?", "Yes!", "No."]),
        ("Wow!! Really?!", ["Wow!!", "Really?!"]),
        ("No final stop", ["No final stop"]),
        ("  Padded.   Spaces.  ", ["Padded.", "Spaces."]),
    ],
)
def test_english_basic(text, expected):
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Dr. Smith arrived. He left.", ["Dr. Smith arrived.", "He left."]),
        ("Mr. and Mrs. Jones met Prof. Lee. They talked.", ["Mr. and Mrs. Jones met Prof. Lee.", "They talked."]),
        ("Use tools, e.g. hammers. Or not.", ["Use tools, e.g. hammers.", "Or not."]),
        ("One rule, i.e. none. Done.", ["One rule, i.e. none.", "Done."]),
        ("The U.S. is big. OK.", ["The U.S. is big.", "OK."]),
    ],
)
def test_english_abbreviations_do_not_end_sentences(text, expected):
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The answer is no. It failed.", ["The answer is no.", "It failed."]),
        ("Say no. Then leave.", ["Say no.", "Then leave."]),
        ("See No. 5 for details.", ["See No. 5 for details."]),
        (
            "Items no. 12 and Nos. 3 and 4 are sold. Others are not.",
            ["Items no. 12 and Nos. 3 and 4 are sold.", "Others are not."],
        ),
    ],
)
def test_no_is_an_abbreviation_only_before_a_number(text, expected):
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("He lives in St. Louis. It is big.", ["He lives in St. Louis.", "It is big."]),
        ("Acme Co. makes tools. They sell well.", ["Acme Co. makes tools.", "They sell well."]),
    ],
)
def test_st_and_co_are_not_words_so_stay_abbreviations(text, expected):
    assert split_sentences(text) == expected


def test_english_decimals_do_not_end_sentences():
    assert split_sentences("Pi is about 3.14 and x is 3.5. Next.") == ["Pi is about 3.14 and x is 3.5.", "Next."]


def test_english_initials_do_not_end_sentences():
    assert split_sentences("J. R. R. Tolkien wrote books. He died in 1973.") == [
        "J. R. R. Tolkien wrote books.",
        "He died in 1973.",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The number of planets is 8. Pluto is not one.", ["The number of planets is 8.", "Pluto is not one."]),
        ("He scored 5. Then he left.", ["He scored 5.", "Then he left."]),
    ],
)
def test_english_single_digit_before_full_stop_ends_sentence(text, expected):
    assert split_sentences(text) == expected


def test_numbered_list_markers_do_not_end_sentences():
    assert split_sentences("1. First step. Then more.\n10. Tenth step\n  2. Indented") == [
        "1. First step.",
        "Then more.",
        "10. Tenth step",
        "2. Indented",
    ]


def test_english_domain_name_does_not_end_sentence():
    assert split_sentences("Visit www.example.com now. Done.") == ["Visit www.example.com now.", "Done."]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It links the countries.The project is funded.", ["It links the countries.", "The project is funded."]),
        ("It was founded in 2014.PharmaCann grew.", ["It was founded in 2014.", "PharmaCann grew."]),
        ("See e.g.The Times.", ["See e.g.The Times."]),
        ("The U.S.Army won.", ["The U.S.Army won."]),
        ("Use node.js daily.", ["Use node.js daily."]),
    ],
)
def test_a_full_stop_without_its_space_ends_a_sentence_before_a_capitalised_word(text, expected):
    """Generated text often drops the space after a full stop; an abbreviation or a name with a dot still holds."""
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ('He said "Stop!" Then he left.', ['He said "Stop!"', "Then he left."]),
        ("She said \u201cgo.\u201d He went.", ["She said \u201cgo.\u201d", "He went."]),
        ("It is big (very big. Huge.) Next.", ["It is big (very big. Huge.) Next."]),
    ],
)
def test_english_quotes_and_brackets(text, expected):
    assert split_sentences(text) == expected


def test_newlines_end_sentences():
    assert split_sentences("First line\nSecond line\n\n\nThird. Fourth") == [
        "First line",
        "Second line",
        "Third.",
        "Fourth",
    ]


def test_bullets_are_one_sentence_per_line_and_keep_their_marker():
    text = "Steps:\n- item one\n- item two. It has two sentences.\n\n* item three\n1. numbered"
    assert split_sentences(text) == [
        "Steps:",
        "- item one",
        "- item two.",
        "It has two sentences.",
        "* item three",
        "1. numbered",
    ]


# --- split_sentences: Japanese and Chinese -----------------------------------------------------


def test_japanese_full_stops():
    assert split_sentences("東京は日本の首都です。大阪は大きい！本当？") == [
        "東京は日本の首都です。",
        "大阪は大きい！",
        "本当？",
    ]


def test_japanese_corner_brackets_stay_intact():
    assert split_sentences("彼は「こんにちは。元気？」と言った。次の文。") == [
        "彼は「こんにちは。元気？」と言った。",
        "次の文。",
    ]


def test_japanese_double_corner_brackets_stay_intact():
    assert split_sentences("『走れメロス。』は太宰治の作品です。はい。") == [
        "『走れメロス。』は太宰治の作品です。",
        "はい。",
    ]


def test_japanese_closing_bracket_after_full_stop_stays_with_sentence():
    assert split_sentences("「はい。」次です。") == ["「はい。」次です。"]


def test_japanese_halfwidth_full_stop():
    assert split_sentences("ｺﾝﾆﾁﾊ｡ｻﾖﾅﾗ｡") == ["ｺﾝﾆﾁﾊ｡", "ｻﾖﾅﾗ｡"]


def test_chinese_full_width_parentheses_stay_intact():
    assert split_sentences("北京是中国的首都（位于华北。）。上海很大！真的吗？") == [
        "北京是中国的首都（位于华北。）。",
        "上海很大！",
        "真的吗？",
    ]


def test_chinese_full_width_exclamation_and_question_marks():
    assert split_sentences("好！好？不好。") == ["好！", "好？", "不好。"]


def test_full_width_marks_end_sentences_without_a_following_space():
    assert split_sentences("Ｈｅｌｌｏ！Ｗｏｒｌｄ？") == ["Ｈｅｌｌｏ！", "Ｗｏｒｌｄ？"]


def test_mixed_scripts_across_lines():
    assert split_sentences("答えは42です。\nThe answer is 42. Really!") == [
        "答えは42です。",
        "The answer is 42.",
        "Really!",
    ]


@pytest.mark.parametrize("text", ["", "   ", "\n\n", " \n \t "])
def test_empty_text_has_no_sentences(text):
    assert split_sentences(text) == []


# --- normalize ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("１２３", "123"),
        ("ＡＢＣ", "abc"),
        ("ｶﾀｶﾅ", "カタカナ"),
        ("Straße", "strasse"),
        ("HELLO World", "hello world"),
        ("  Hello\t\n  World  ", "hello world"),
        ("東京　タワー", "東京 タワー"),  # an ideographic space becomes a plain one
        ("", ""),
    ],
)
def test_normalize(text, expected):
    assert normalize(text) == expected
