"""Tests for localeval.steps.prompts: the shipped files, rendering into messages, overrides, export, and every file error."""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

import pytest

from localeval._resources import bundled_prompts_dir
from localeval.errors import PromptFileError
from localeval.steps import STEPS
from localeval.steps.prompts import (
    LANGUAGES,
    PromptLibrary,
    format_input,
    load_prompt_file,
)

DEFAULTS = bundled_prompts_dir()

STATEMENTS_TOML = '''\
instruction = """
Split the sentence.
"""
input = """
Q: {user_input}
T: {text}
S: {sentence}
"""

[[examples]]
user_input = "Who?"
text = "He is Ed. He is 3."
sentence = "He is 3. "
[examples.output]
statements = ["Ed is 3."]

[[examples]]
user_input = "Hi"
text = "Hello!"
sentence = "Hello!"
[examples.output]
statements = []
'''

SUPPORT_TOML = """\
instruction = "Check it."
input = "C:\\n{retrieved_contexts}\\nS: {statement}"

[[examples]]
retrieved_contexts = ["Paris is in France."]
statement = "Paris is in France."
[examples.output]
verdict = 1
"""


def write_prompt(folder: Path, lang: str, step: str, text: str) -> Path:
    path = folder / lang / f"{step}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def load_error(folder: Path, step: str = "statements", lang: str = "en") -> str:
    with pytest.raises(PromptFileError) as info:
        PromptLibrary(folder).get(step, lang)
    return str(info.value)


# --- the shipped prompt files ------------------------------------------------------------------


def test_available_lists_every_step_in_every_language():
    assert PromptLibrary().available() == [(step, lang) for step in sorted(STEPS) for lang in LANGUAGES]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("step", sorted(STEPS))
def test_shipped_prompt_loads_with_its_examples_validated(step, lang):
    path = DEFAULTS / lang / f"{step}.toml"
    raw = path.read_bytes()
    data = tomllib.loads(raw.decode("utf-8"))
    template = PromptLibrary().get(step, lang)
    assert template.step == step
    assert template.lang == lang
    assert template.path == path
    assert template.sha256 == hashlib.sha256(raw).hexdigest()
    assert template.instruction == data["instruction"]
    assert template.input_template == data["input"]
    assert len(data["examples"]) >= 1
    assert [dict(example.inputs) for example in template.examples] == [
        {name: example[name] for name in STEPS[step].inputs} for example in data["examples"]
    ]
    # Each example's output is the schema-validated output, as compact JSON, with only the schema's fields.
    assert [example.output_json for example in template.examples] == [
        json.dumps(
            STEPS[step].output.model_validate(example["output"]).model_dump(mode="json", exclude_none=True),
            ensure_ascii=False,
        )
        for example in data["examples"]
    ]
    properties = set(STEPS[step].json_schema()["properties"])
    assert all(set(json.loads(example.output_json)) <= properties for example in template.examples)
    assert not PromptLibrary().is_override(step, lang)


def test_shipped_prompt_renders_system_examples_then_sample():
    template = PromptLibrary().get("statement_support", "en")
    messages = template.messages({"retrieved_contexts": ("Ctx one. ", " Ctx two."), "statement": " Claim. "})
    assert [m["role"] for m in messages] == ["system"] + ["user", "assistant"] * len(template.examples) + ["user"]
    assert messages[0]["content"] == template.instruction.strip()
    assert messages[-1] == {"role": "user", "content": "Context:\n[1] Ctx one.\n\n[2] Ctx two.\n\nStatement: Claim."}


def test_library_caches_loaded_templates():
    library = PromptLibrary()
    assert library.get("statements") is library.get("statements", "en")


# --- rendering ---------------------------------------------------------------------------------


def test_messages_order_and_content(tmp_path):
    path = write_prompt(tmp_path, "en", "statements", STATEMENTS_TOML)
    template = load_prompt_file(path, STEPS["statements"], "en")
    messages = template.messages({"user_input": " What? ", "text": "One. Two.", "sentence": "Two."})
    assert messages == [
        {"role": "system", "content": "Split the sentence."},
        {"role": "user", "content": "Q: Who?\nT: He is Ed. He is 3.\nS: He is 3."},
        {"role": "assistant", "content": '{"statements": ["Ed is 3."]}'},
        {"role": "user", "content": "Q: Hi\nT: Hello!\nS: Hello!"},
        {"role": "assistant", "content": '{"statements": []}'},
        {"role": "user", "content": "Q: What?\nT: One. Two.\nS: Two."},
    ]


def test_example_output_json_keeps_non_ascii_and_schema_field_order(tmp_path):
    text = (
        'instruction = "Check it."\ninput = "{user_input} {answer} {context}"\n\n[[examples]]\n'
        'user_input = "Where?"\nanswer = "Tokyo."\ncontext = "東京。"\n[examples.output]\n'
        'verdict = 1\nreason = "東京と書いてある。"\n'
    )
    path = write_prompt(tmp_path, "en", "context_usefulness", text)
    template = load_prompt_file(path, STEPS["context_usefulness"], "en")
    assert template.examples[0].output_json == '{"reason": "東京と書いてある。", "verdict": 1}'


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("  plain text \n", "plain text"),
        (["first ", " second"], "[1] first\n\n[2] second"),
        (("only",), "[1] only"),
        ([], ""),
    ],
)
def test_format_input(value, expected):
    assert format_input(value) == expected


def test_braces_in_inputs_are_not_reformatted(tmp_path):
    path = write_prompt(tmp_path, "en", "statement_support", SUPPORT_TOML)
    template = load_prompt_file(path, STEPS["statement_support"], "en")
    assert template.render_input({"retrieved_contexts": ["{statement}"], "statement": '{"a": 1}'}) == (
        'C:\n[1] {statement}\nS: {"a": 1}'
    )


# --- errors in prompt files --------------------------------------------------------------------


def test_invalid_toml_names_the_file(tmp_path):
    path = write_prompt(tmp_path, "en", "statements", 'instruction = "unclosed\n')
    assert load_error(tmp_path) == f"{path}: invalid TOML: Illegal character '\\n' (at line 1, column 24)."


def test_not_utf8_names_the_file(tmp_path):
    path = tmp_path / "en" / "statements.toml"
    path.parent.mkdir()
    path.write_bytes(b'instruction = "\xff"\n')
    assert load_error(tmp_path) == f"{path}: not UTF-8 text."


def test_unknown_top_level_key(tmp_path):
    text = STATEMENTS_TOML.replace("instruction =", 'system = "x"\ninstruction =')
    path = write_prompt(tmp_path, "en", "statements", text)
    assert load_error(tmp_path) == f"{path}: unknown key(s) system; allowed: instruction, input, examples."


def test_missing_instruction(tmp_path):
    path = write_prompt(tmp_path, "en", "statements", 'input = "{user_input} {text} {sentence}"\n')
    assert load_error(tmp_path) == f"{path}: 'instruction' must be a non-empty string."


def test_blank_input_template(tmp_path):
    path = write_prompt(tmp_path, "en", "statements", 'instruction = "x"\ninput = "  "\n')
    assert load_error(tmp_path) == f"{path}: 'input' must be a non-empty string."


def test_unknown_placeholder(tmp_path):
    text = 'instruction = "x"\ninput = "{user_input} {text} {sentence} {answer}"\n'
    path = write_prompt(tmp_path, "en", "statements", text)
    assert load_error(tmp_path) == (
        f"{path}: 'input' uses unknown placeholder(s) {{answer}}; "
        "this step's inputs are {user_input}, {text}, {sentence}."
    )


def test_missing_placeholder(tmp_path):
    path = write_prompt(tmp_path, "en", "statements", 'instruction = "x"\ninput = "Q: {user_input}"\n')
    assert load_error(tmp_path) == f"{path}: 'input' must contain {{sentence}}, {{text}}."


def test_unbalanced_brace_in_input_template(tmp_path):
    path = write_prompt(tmp_path, "en", "statements", 'instruction = "x"\ninput = "{user_input} {text} {sentence} {"\n')
    assert load_error(tmp_path) == (
        f"{path}: 'input' template: Single '{{' encountered in format string (write literal braces as {{{{ and }}}})."
    )


def test_example_missing_an_input(tmp_path):
    path = write_prompt(tmp_path, "en", "statements", STATEMENTS_TOML.replace('user_input = "Hi"\n', ""))
    assert load_error(tmp_path) == f"{path}: example 2: missing user_input."


def test_example_missing_output(tmp_path):
    text = STATEMENTS_TOML.split("[[examples]]")[0] + '[[examples]]\nuser_input = "Q"\ntext = "S."\nsentence = "S."\n'
    path = write_prompt(tmp_path, "en", "statements", text)
    assert load_error(tmp_path) == f"{path}: example 1: missing output."


def test_example_unknown_key(tmp_path):
    path = write_prompt(
        tmp_path, "en", "statements", STATEMENTS_TOML.replace('user_input = "Hi"\n', 'user_input = "Hi"\nnote = "x"\n')
    )
    assert load_error(tmp_path) == f"{path}: example 2: unknown key(s) note."


def test_example_input_of_wrong_type(tmp_path):
    text = STATEMENTS_TOML.replace('sentence = "Hello!"', "sentence = [1]")
    path = write_prompt(tmp_path, "en", "statements", text)
    assert load_error(tmp_path) == f"{path}: example 2: 'sentence' must be a string or a list of strings."


def test_example_output_violating_the_schema(tmp_path):
    text = SUPPORT_TOML.replace("verdict = 1", "verdict = 2")
    path = write_prompt(tmp_path, "en", "statement_support", text)
    assert load_error(tmp_path, "statement_support") == (
        f"{path}: example 1 does not match the 'statement_support' schema: output.verdict: Input should be 0 or 1."
    )


def test_example_output_with_several_problems_lists_them_all(tmp_path):
    text = STATEMENTS_TOML.replace("statements = []", 'statements = ["", 3]')
    path = write_prompt(tmp_path, "en", "statements", text)
    assert load_error(tmp_path) == (
        f"{path}: example 2 does not match the 'statements' schema: "
        "output.statements.0: String should have at least 1 character; "
        "output.statements.1: Input should be a valid string."
    )


def test_unknown_step():
    with pytest.raises(PromptFileError) as info:
        PromptLibrary().get("summary")
    assert str(info.value) == f"Unknown step 'summary'. Known steps: {', '.join(sorted(STEPS))}."


def test_missing_language_names_the_path_looked_for():
    with pytest.raises(PromptFileError) as info:
        PromptLibrary().get("statements", "ko")
    assert str(info.value) == (
        f"No prompt file for step 'statements' in language 'ko' (looked for {DEFAULTS / 'ko' / 'statements.toml'})."
    )


# --- override folders --------------------------------------------------------------------------


def test_override_of_one_step_only(tmp_path):
    path = write_prompt(tmp_path, "en", "statements", STATEMENTS_TOML)
    library = PromptLibrary(tmp_path)
    assert library.get("statements").path == path
    assert library.get("statements").instruction == "Split the sentence.\n"
    assert library.is_override("statements", "en") is True
    assert library.get("statement_support").path == DEFAULTS / "en" / "statement_support.toml"
    assert library.is_override("statement_support", "en") is False


def test_override_sha256_is_the_file_hash(tmp_path):
    path = write_prompt(tmp_path, "en", "statements", STATEMENTS_TOML)
    assert PromptLibrary(tmp_path).get("statements").sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_override_can_add_a_language(tmp_path):
    path = write_prompt(tmp_path, "ja", "statements", STATEMENTS_TOML)
    library = PromptLibrary(tmp_path)
    assert library.get("statements", "ja").path == path
    assert library.get("statements", "ja").lang == "ja"
    assert library.is_override("statements", "ja") is True


def test_stray_toml_at_top_level_of_override_dir(tmp_path):
    (tmp_path / "statements.toml").write_text(STATEMENTS_TOML, encoding="utf-8")
    (tmp_path / "other.toml").write_text("", encoding="utf-8")
    with pytest.raises(PromptFileError) as info:
        PromptLibrary(tmp_path)
    assert str(info.value) == (
        f"{tmp_path} has prompt files at its top level (other.toml, statements.toml); "
        f"put them in language folders, e.g. {tmp_path / 'en' / 'other.toml'} (see `localeval prompts export`)."
    )


def test_missing_override_dir(tmp_path):
    with pytest.raises(PromptFileError) as info:
        PromptLibrary(tmp_path / "nope")
    assert str(info.value) == f"Prompt folder not found: {tmp_path / 'nope'}"


def test_override_dir_that_is_a_file(tmp_path):
    (tmp_path / "prompts").write_text("", encoding="utf-8")
    with pytest.raises(PromptFileError) as info:
        PromptLibrary(tmp_path / "prompts")
    assert str(info.value) == f"Prompt folder not found: {tmp_path / 'prompts'}"


# --- export ------------------------------------------------------------------------------------


def test_export_writes_every_default_file(tmp_path):
    target = tmp_path / "out"
    written = PromptLibrary().export(target)
    expected = sorted(f"{lang}/{step}.toml" for step in STEPS for lang in LANGUAGES) + [
        f"{lang}/criteria.toml" for lang in LANGUAGES
    ]
    assert sorted(str(p.relative_to(target)) for p in written) == sorted(expected)
    for path in written:
        assert path.read_bytes() == (DEFAULTS / path.relative_to(target)).read_bytes()
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file()) == sorted(expected)


def test_exported_folder_works_as_an_override(tmp_path):
    PromptLibrary().export(tmp_path)
    library = PromptLibrary(tmp_path)
    assert library.is_override("statements", "en") is True
    assert library.get("statements").sha256 == PromptLibrary().get("statements").sha256


def test_export_from_a_custom_default_dir(tmp_path):
    defaults = tmp_path / "defaults"
    write_prompt(defaults, "en", "statements", STATEMENTS_TOML)
    write_prompt(defaults, "zh", "statements", STATEMENTS_TOML)
    write_prompt(defaults, "xx", "statements", STATEMENTS_TOML)  # not a known language: not exported
    written = PromptLibrary(default_dir=defaults).export(tmp_path / "out")
    assert written == [tmp_path / "out" / "en" / "statements.toml", tmp_path / "out" / "zh" / "statements.toml"]
    assert written[1].read_text(encoding="utf-8") == STATEMENTS_TOML


def test_export_refuses_to_overwrite(tmp_path):
    existing = write_prompt(tmp_path, "en", "statements", "mine\n")
    with pytest.raises(PromptFileError) as info:
        PromptLibrary().export(tmp_path)
    assert str(info.value) == f"{existing} already exists; export into an empty folder."
    assert existing.read_text(encoding="utf-8") == "mine\n"
