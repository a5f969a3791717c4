"""The shipped ja and zh prompts: every step in every language, native text, examples in the right script."""

from __future__ import annotations

import re
import tomllib

import pytest

from localeval._resources import bundled_prompts_dir
from localeval.data.text import detect_language
from localeval.data.untrusted import data_tags
from localeval.steps import STEPS
from localeval.steps.prompts import DATA_FILE, LANGUAGES, PromptLibrary

DEFAULTS = bundled_prompts_dir()
FIELD_NAMES = {name for step in STEPS.values() for name in step.output.model_json_schema()["properties"]} | {
    "JSON",
    "yes",
    "no",
}  # "yes"/"no": the critique answer's values, part of the schema
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def files(lang: str) -> set[str]:
    return {path.name for path in (DEFAULTS / lang).glob("*.toml")}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_language_has_every_step_and_the_criteria_file(lang):
    assert files(lang) == {f"{step}.toml" for step in STEPS} | {DATA_FILE}


CHAT_MARKUP = re.compile(r"<\|\w+\|>(?:system|assistant|user)?")  # quoted in critique's injection examples


def stray_latin(text: str, step: str, tags: frozenset[str] = frozenset()) -> list[str]:
    """Latin words other than JSON, schema field names, the template's <tags>, chat markup and {placeholders}."""
    allowed = (FIELD_NAMES | set(STEPS[step].inputs) if step in STEPS else FIELD_NAMES) | tags
    text = CHAT_MARKUP.sub("", re.sub(r"\{[a-z_]+\}", "", text))
    return [w for w in LATIN_WORD.findall(text) if w not in allowed]


@pytest.mark.parametrize("lang", ["ja", "zh"])
@pytest.mark.parametrize("step", sorted(STEPS))
def test_native_prompts_have_no_english_left(lang, step):
    raw = (DEFAULTS / lang / f"{step}.toml").read_text(encoding="utf-8")
    comments = "\n".join(line for line in raw.splitlines() if line.lstrip().startswith("#"))
    template = PromptLibrary().get(step, lang)
    texts = [comments, template.instruction, template.input_template]
    for example in template.examples:
        texts += [str(value) for value in example.inputs.values() if value and value != example.inputs.get("count")]
        texts.append(example.output_json)
    tags = data_tags(template.input_template)
    assert [w for text in texts for w in stray_latin(text, step, tags)] == []


@pytest.mark.parametrize("lang", ["ja", "zh"])
@pytest.mark.parametrize("step", sorted(STEPS))
def test_examples_are_written_in_the_language(lang, step):
    template = PromptLibrary().get(step, lang)
    for example in template.examples:
        texts = [v if isinstance(v, str) else " ".join(v) for v in example.inputs.values()]
        assert detect_language(" ".join(texts) + example.output_json) == lang


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_native_criteria_files_define_the_built_ins_in_the_language(lang):
    data = tomllib.loads((DEFAULTS / lang / DATA_FILE).read_text(encoding="utf-8"))
    english = tomllib.loads((DEFAULTS / "en" / DATA_FILE).read_text(encoding="utf-8"))
    assert set(data["criteria"]) == set(english["criteria"]) and set(data["rubrics"]) == set(english["rubrics"])
    for text in [*data["criteria"].values(), *data["rubrics"].values()]:
        assert detect_language(text) == lang and not LATIN_WORD.search(text), text
