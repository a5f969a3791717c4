"""Prompt files: loading, validation against the step's schema, and rendering into chat messages.

A prompt file is TOML at `<dir>/<lang>/<step>.toml` with an `instruction`, an `input` template whose
`{placeholders}` are the step's inputs, and `[[examples]]` that give example inputs and an `output`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import string
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from localeval._resources import bundled_prompts_dir
from localeval.data.untrusted import data_tags, neutralize
from localeval.errors import PromptFileError
from localeval.steps import STEPS, Step, StepInput

LANGUAGES = ("en", "ja", "zh")
DATA_FILE = "criteria.toml"  # built-in criteria and rubrics, next to the step prompts (see criteria.py)
_ALLOWED_KEYS = {"instruction", "input", "examples"}
Message = dict[str, str]
JUDGED = "response"  # the input under judgment: the only one that can vouch for itself


@dataclass(frozen=True)
class Example:
    inputs: Mapping[str, StepInput]
    output_json: str


@dataclass(frozen=True)
class PromptTemplate:
    """One validated prompt file, ready to render."""

    step: str
    lang: str
    path: Path
    sha256: str
    instruction: str
    input_template: str
    examples: tuple[Example, ...]

    @cached_property
    def data_tags(self) -> frozenset[str]:
        return data_tags(self.input_template)

    def render_input(self, inputs: Mapping[str, StepInput], example: bool = False) -> str:
        """The user turn for `inputs`; a sample's response (not an example's, which is ours) loses its self-vouching."""
        values = {
            name: neutralize(format_input(value), self.data_tags, judged=name == JUDGED and not example)
            for name, value in inputs.items()
        }
        return self.input_template.format_map(values).strip()

    def messages(self, inputs: Mapping[str, StepInput]) -> list[Message]:
        """Instruction, then few-shot turns, then the sample: the fixed part comes first so the KV cache reuses it."""
        messages = [{"role": "system", "content": self.instruction.strip()}]
        for example in self.examples:
            messages.append({"role": "user", "content": self.render_input(example.inputs, example=True)})
            messages.append({"role": "assistant", "content": example.output_json})
        messages.append({"role": "user", "content": self.render_input(inputs)})
        return messages


def format_input(value: StepInput) -> str:
    """Lists (contexts) become numbered blocks so the judge can tell them apart."""
    if isinstance(value, str):
        return value.strip()
    return "\n\n".join(f"[{i}] {item.strip()}" for i, item in enumerate(value, start=1))


class PromptLibrary:
    """Finds the prompt file for a step and language: the user's override folder first, then the defaults."""

    def __init__(self, override_dir: Path | None = None, default_dir: Path | None = None):
        self.default_dir = default_dir or bundled_prompts_dir()
        self.override_dir = override_dir
        if override_dir is not None:
            _check_override_dir(override_dir)
        self._loaded: dict[tuple[str, str], PromptTemplate] = {}

    def path(self, step: str, lang: str) -> Path:
        if step not in STEPS:
            raise PromptFileError(f"Unknown step '{step}'. Known steps: {', '.join(sorted(STEPS))}.")
        if self.override_dir is not None:
            candidate = self.override_dir / lang / f"{step}.toml"
            if candidate.is_file():
                return candidate
        candidate = self.default_dir / lang / f"{step}.toml"
        if not candidate.is_file():
            raise PromptFileError(f"No prompt file for step '{step}' in language '{lang}' (looked for {candidate}).")
        return candidate

    def data_file(self, name: str, lang: str) -> Path:
        """A non-step file of a language folder (criteria.toml), from the override folder when it has one."""
        if self.override_dir is not None and (self.override_dir / lang / name).is_file():
            return self.override_dir / lang / name
        candidate = self.default_dir / lang / name
        if not candidate.is_file():
            raise PromptFileError(f"No {name} for language '{lang}' (looked for {candidate}).")
        return candidate

    def get(self, step: str, lang: str = "en") -> PromptTemplate:
        key = (step, lang)
        if key not in self._loaded:
            self._loaded[key] = load_prompt_file(self.path(step, lang), STEPS[step], lang)
        return self._loaded[key]

    def is_override(self, step: str, lang: str) -> bool:
        return self.override_dir is not None and self.path(step, lang).is_relative_to(self.override_dir)

    def available(self) -> list[tuple[str, str]]:
        """Every (step, language) pair that has a default prompt file."""
        return [
            (step, lang)
            for step in sorted(STEPS)
            for lang in LANGUAGES
            if (self.default_dir / lang / f"{step}.toml").is_file()
        ]

    def export(self, target: Path) -> list[Path]:
        """Copy the default prompt files to `target`, keeping the <lang>/<step>.toml layout; never overwrite."""
        names = [(f"{step}.toml", lang) for step, lang in self.available()]
        names += [(DATA_FILE, lang) for lang in LANGUAGES if (self.default_dir / lang / DATA_FILE).is_file()]
        pairs = [(self.default_dir / lang / name, target / lang / name) for name, lang in names]
        if existing := [destination for _, destination in pairs if destination.exists()]:
            raise PromptFileError(f"{existing[0]} already exists; export into an empty folder.")
        for source, destination in pairs:
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination)
        return [destination for _, destination in pairs]


def _check_override_dir(directory: Path) -> None:
    if not directory.is_dir():
        raise PromptFileError(f"Prompt folder not found: {directory}")
    stray = sorted(p.name for p in directory.glob("*.toml"))
    if stray:
        raise PromptFileError(
            f"{directory} has prompt files at its top level ({', '.join(stray)}); "
            f"put them in language folders, e.g. {directory / 'en' / stray[0]} (see `localeval prompts export`)."
        )


def load_prompt_file(path: Path, step: Step, lang: str) -> PromptTemplate:
    raw = path.read_bytes()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise PromptFileError(f"{path}: not UTF-8 text.") from None
    except tomllib.TOMLDecodeError as error:
        raise PromptFileError(f"{path}: invalid TOML: {error}.") from None
    unknown = set(data) - _ALLOWED_KEYS
    if unknown:
        raise PromptFileError(
            f"{path}: unknown key(s) {', '.join(sorted(unknown))}; allowed: instruction, input, examples."
        )
    instruction = _required_text(data, "instruction", path)
    input_template = _required_text(data, "input", path)
    _check_placeholders(input_template, step, path)
    examples = tuple(_parse_example(item, i, step, path) for i, item in enumerate(data.get("examples", []), start=1))
    return PromptTemplate(step.name, lang, path, hashlib.sha256(raw).hexdigest(), instruction, input_template, examples)


def _required_text(data: dict[str, Any], key: str, path: Path) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise PromptFileError(f"{path}: '{key}' must be a non-empty string.")
    return value


def _check_placeholders(template: str, step: Step, path: Path) -> None:
    try:
        names = {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}
    except ValueError as error:
        raise PromptFileError(f"{path}: 'input' template: {error} (write literal braces as {{{{ and }}}}).") from None
    if unknown := names - set(step.inputs):
        raise PromptFileError(
            f"{path}: 'input' uses unknown placeholder(s) "
            f"{', '.join('{' + n + '}' for n in sorted(unknown))}; this step's inputs are "
            f"{', '.join('{' + n + '}' for n in step.inputs)}."
        )
    if missing := set(step.inputs) - names:
        raise PromptFileError(f"{path}: 'input' must contain {', '.join('{' + n + '}' for n in sorted(missing))}.")


def _parse_example(item: Any, number: int, step: Step, path: Path) -> Example:
    where = f"{path}: example {number}"
    if not isinstance(item, dict):
        raise PromptFileError(f"{where}: must be a table.")
    if missing := [name for name in (*step.inputs, "output") if name not in item]:
        raise PromptFileError(f"{where}: missing {', '.join(missing)}.")
    if unknown := set(item) - {*step.inputs, "output"}:
        raise PromptFileError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}.")
    for name in step.inputs:
        value = item[name]
        if not (isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))):
            raise PromptFileError(f"{where}: '{name}' must be a string or a list of strings.")
    try:
        output = step.output.model_validate(item["output"])
    except ValidationError as error:
        problems = "; ".join(f"output.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise PromptFileError(f"{where} does not match the '{step.name}' schema: {problems}.") from None
    inputs = {name: item[name] for name in step.inputs}
    # Only what the judge writes: fields outside the answer's schema (a verdict's probability) stay out.
    return Example(inputs, json.dumps(output.model_dump(mode="json", exclude_none=True), ensure_ascii=False))
