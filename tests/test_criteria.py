"""Tests for localeval.steps.criteria: criteria files, NAME=DEFINITION pairs, precedence, and the bundled definitions."""

from __future__ import annotations

from pathlib import Path

import pytest

from localeval._resources import bundled_prompts_dir
from localeval.errors import ConfigError, PromptFileError
from localeval.metrics.aspect_critique import BUILT_IN_CRITERIA
from localeval.steps.criteria import (
    RUBRICS,
    Definitions,
    by_language,
    criterion_names,
    parse_named,
    read_definitions,
)
from localeval.steps.prompts import LANGUAGES, PromptLibrary


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_read_definitions(tmp_path):
    path = write(
        tmp_path / "c.toml",
        '[criteria]\npoliteness = "  Is it polite?\\n"\nno-jargon_2 = "Plain words?"\n'
        '[rubrics]\nreference_free = """\n1: bad\n5: good"""\n',
    )
    assert read_definitions(path) == Definitions(
        {"politeness": "Is it polite?", "no-jargon_2": "Plain words?"}, {"reference_free": "1: bad\n5: good"}
    )
    assert read_definitions(write(tmp_path / "empty.toml", "")) == Definitions()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[criteria\n", "not a valid TOML criteria file"),
        ('[criteria]\na = "x"\n[extra]\nb = "y"\n', "unknown section(s) extra"),
        ('criteria = "x"\n', "[criteria] must be a table"),
        ("[criteria]\npoliteness = 3\n", "[criteria] politeness: the definition must be non-empty text"),
        ('[rubrics]\nreference_free = "   "\n', "[rubrics] reference_free: the definition must be non-empty text"),
        ('[criteria]\n"polite ness" = "x"\n', "name 'polite ness' must be letters, digits"),
    ],
)
def test_read_definitions_rejects_bad_files(tmp_path, text, message):
    path = write(tmp_path / "bad.toml", text)
    with pytest.raises(ConfigError) as info:
        read_definitions(path)
    assert message in str(info.value) and str(path) in str(info.value)


def test_read_definitions_missing_or_binary_file(tmp_path):
    with pytest.raises(ConfigError, match="Criteria file not found"):
        read_definitions(tmp_path / "none.toml")
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe[criteria]")
    with pytest.raises(ConfigError, match="not a valid TOML"):
        read_definitions(tmp_path / "bin.toml")


def test_parse_named():
    assert parse_named([" politeness = Is it polite? ", "formula=a=b"], "criterion") == {
        "politeness": "Is it polite?",
        "formula": "a=b",
    }
    assert parse_named([], "rubric") == {}


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("politeness", "--criterion expects NAME=DEFINITION, got 'politeness'"),
        ("politeness=  ", "--criterion politeness: the definition must be non-empty text"),
        ("=Is it polite?", "--criterion: name '' must be"),
        ("po lite=x", "name 'po lite' must be"),
    ],
)
def test_parse_named_rejects(pair, message):
    with pytest.raises(ConfigError) as info:
        parse_named([pair], "criterion")
    assert message in str(info.value)


def test_an_unknown_rubric_name_is_refused_naming_the_known_ones(tmp_path):
    """rubric_score only ever picks reference_free or with_reference: any other name would never be used."""
    assert RUBRICS == ("reference_free", "with_reference")
    assert parse_named(["with_reference=1: no 5: yes"], "rubric") == {"with_reference": "1: no 5: yes"}
    with pytest.raises(ConfigError) as info:
        parse_named(["foo=bar"], "rubric")
    assert str(info.value) == (
        "--rubric: unknown rubric 'foo'; rubric_score uses only reference_free and "
        "with_reference (a row's own rubric goes in its `rubric` column)."
    )
    path = write(tmp_path / "c.toml", '[rubrics]\nstrict = "1: bad 5: good"\n')
    with pytest.raises(ConfigError, match=r"\[rubrics\]: unknown rubric 'strict'; rubric_score uses only "):
        read_definitions(path)
    assert parse_named(["foo=bar"], "criterion") == {"foo": "bar"}  # any criterion name makes a metric


def test_criterion_names_take_a_name_or_a_definition():
    assert criterion_names(["politeness=Is it polite?", " brevity ", "formula=a=b"]) == [
        "politeness",
        "brevity",
        "formula",
    ]
    with pytest.raises(ConfigError, match="--criterion: name 'po lite' must be"):
        criterion_names(["po lite=x"])


def test_merged_lets_the_other_side_win():
    ours = Definitions({"a": "ours", "b": "ours"}, {"reference_free": "ours"})
    theirs = Definitions({"b": "theirs", "c": "theirs"}, {"reference_free": "theirs", "with_reference": "theirs"})
    assert ours.merged(theirs) == Definitions(
        {"a": "ours", "b": "theirs", "c": "theirs"}, {"reference_free": "theirs", "with_reference": "theirs"}
    )
    assert ours == Definitions({"a": "ours", "b": "ours"}, {"reference_free": "ours"})  # unchanged


def test_by_language_prefers_the_override_then_adds_the_user(tmp_path):
    default, override = tmp_path / "default", tmp_path / "override"
    write(default / "en" / "criteria.toml", '[criteria]\na = "default en"\nb = "default en"\n')
    write(default / "ja" / "criteria.toml", '[criteria]\na = "default ja"\n')
    write(override / "en" / "criteria.toml", '[criteria]\na = "override en"\n')
    library = PromptLibrary(override, default)
    user = Definitions({"u": "user"}, {"reference_free": "user rubric"})
    assert by_language(library, ["en", "ja"], user) == {
        "en": Definitions({"a": "override en", "u": "user"}, {"reference_free": "user rubric"}),
        "ja": Definitions({"a": "default ja", "u": "user"}, {"reference_free": "user rubric"}),
    }
    with pytest.raises(PromptFileError, match="No criteria.toml for language 'zh'"):
        by_language(library, ["zh"], user)


BUNDLED = [lang for lang in LANGUAGES if (bundled_prompts_dir() / lang / "criteria.toml").is_file()]


@pytest.mark.parametrize("lang", BUNDLED)
def test_bundled_criteria_define_the_built_ins_and_both_rubrics(lang):
    definitions = read_definitions(bundled_prompts_dir() / lang / "criteria.toml")
    assert set(BUILT_IN_CRITERIA) <= set(definitions.criteria)
    assert {"reference_free", "with_reference"} <= set(definitions.rubrics)
    for name in ("reference_free", "with_reference"):
        lines = definitions.rubrics[name].splitlines()
        assert [line[0] for line in lines] == ["1", "2", "3", "4", "5"]  # one line per grade, in order


def test_bundled_english_is_present():
    assert (bundled_prompts_dir() / "en" / "criteria.toml").is_file()
