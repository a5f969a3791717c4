"""Named criteria (aspect_critique) and rubrics (rubric_score): built-in per language, or the user's own.

Built-ins live in `prompts/<lang>/criteria.toml`, next to the prompts, so they are edited and
overridden (`--prompts DIR`) like them. A user's criteria file has the same layout:

    [criteria]
    politeness = "Is the response polite and respectful?"
    [rubrics]
    reference_free = "1: ... 5: ..."

User definitions apply to every language; they are used as written.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from localeval.errors import ConfigError
from localeval.steps.prompts import DATA_FILE, PromptLibrary

_SECTIONS = ("criteria", "rubrics")
REFERENCE_FREE, WITH_REFERENCE = "reference_free", "with_reference"
RUBRICS = (REFERENCE_FREE, WITH_REFERENCE)  # the only rubrics rubric_score picks between


@dataclass(frozen=True)
class Definitions:
    criteria: dict[str, str] = field(default_factory=dict)
    rubrics: dict[str, str] = field(default_factory=dict)

    def merged(self, other: Definitions) -> Definitions:
        """`other`'s definitions win over ours."""
        return Definitions({**self.criteria, **other.criteria}, {**self.rubrics, **other.rubrics})


def read_definitions(path: Path) -> Definitions:
    """A criteria file; every problem is a ConfigError naming the file and the entry."""
    if not path.is_file():
        raise ConfigError(f"Criteria file not found: {path}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: not a valid TOML criteria file: {error}.") from None
    if unknown := set(data) - set(_SECTIONS):
        raise ConfigError(f"{path}: unknown section(s) {', '.join(sorted(unknown))}; allowed: [criteria], [rubrics].")
    sections = {}
    for section in _SECTIONS:
        table = data.get(section, {})
        if not isinstance(table, dict):
            raise ConfigError(f'{path}: [{section}] must be a table of name = "definition".')
        where = f"{path} [{section}]"
        checked_name = _checked_rubric if section == "rubrics" else _checked_name
        sections[section] = {
            checked_name(name, where): _checked_text(text, f"{where} {name}") for name, text in table.items()
        }
    return Definitions(**sections)


def parse_named(pairs: Iterable[str], what: str) -> dict[str, str]:
    """NAME=DEFINITION pairs from the command line (`what`: criterion or rubric)."""
    checked_name = _checked_rubric if what == "rubric" else _checked_name
    named = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep:
            raise ConfigError(f"--{what} expects NAME=DEFINITION, got '{pair}'.")
        named[checked_name(name.strip(), f"--{what}")] = _checked_text(text, f"--{what} {name.strip()}")
    return named


def criterion_names(items: Iterable[str]) -> list[str]:
    """The names of `--criterion NAME` or `NAME=DEFINITION` items: a metric is named after the criterion alone."""
    return [_checked_name(item.partition("=")[0].strip(), "--criterion") for item in items]


def by_language(prompts: PromptLibrary, langs: Iterable[str], user: Definitions) -> dict[str, Definitions]:
    """Each language's built-in definitions with the user's added on top."""
    return {lang: read_definitions(prompts.data_file(DATA_FILE, lang)).merged(user) for lang in langs}


def _checked_name(name: object, where: str) -> str:
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "_-" for c in name):
        raise ConfigError(f"{where}: name '{name}' must be letters, digits, '_' or '-'.")
    return name


def _checked_rubric(name: object, where: str) -> str:
    """Any other rubric name would be accepted and then never used."""
    name = _checked_name(name, where)
    if name not in RUBRICS:
        raise ConfigError(
            f"{where}: unknown rubric '{name}'; rubric_score uses only {' and '.join(RUBRICS)} "
            f"(a row's own rubric goes in its `rubric` column)."
        )
    return name


def _checked_text(text: object, where: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{where}: the definition must be non-empty text.")
    return text.strip()
