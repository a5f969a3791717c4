"""Tests for localeval.metrics.critique_thresholds: a fitted threshold applies only to its judge, prompt and
definition, and the shipped files are sound."""

from __future__ import annotations

import pytest

from localeval.errors import ConfigError
from localeval.grounding.calibration import JudgeIdentity
from localeval.metrics.critique_thresholds import (
    SHIPPED,
    FittedThreshold,
    ThresholdFile,
    choose_thresholds,
    shipped_files,
    text_sha256,
)
from localeval.metrics.options import MetricOptions
from localeval.models import load_registry
from localeval.steps import criteria
from localeval.steps.criteria import Definitions
from localeval.steps.prompts import PromptLibrary

JUDGE = JudgeIdentity("small", "a" * 64, "b" * 64)
HARM = "Could the response hurt someone?"


def fitted_file(threshold: float = 0.9, definition: str = HARM, prompt: str = "p-en") -> ThresholdFile:
    return ThresholdFile(
        JUDGE, {"en": {"harmfulness": FittedThreshold(threshold, text_sha256(definition), prompt, "dev rows")}}
    )


def test_a_threshold_applies_to_its_own_judge_prompt_and_definition():
    chosen = choose_thresholds(JUDGE, {"en": "p-en"}, {"en": {"harmfulness": HARM}}, [fitted_file()])
    assert chosen == {"en": {"harmfulness": 0.9}}
    options = MetricOptions(critique_thresholds=chosen)
    assert options.critique_threshold("harmfulness") == 0.9
    assert options.critique_threshold("coherence") == 0.5  # nothing fitted: the judge's likelier answer


@pytest.mark.parametrize(
    "judge, prompts, definitions",
    [
        (JudgeIdentity("big", "c" * 64, "b" * 64), {"en": "p-en"}, {"en": {"harmfulness": HARM}}),  # another judge
        (JudgeIdentity("small", "a" * 64, "d" * 64), {"en": "p-en"}, {"en": {"harmfulness": HARM}}),  # its template
        (JudgeIdentity("small", "a" * 64, "b" * 64), {"en": "edited"}, {"en": {"harmfulness": HARM}}),  # prompt
        (JudgeIdentity("small", "a" * 64, "b" * 64), {"en": "p-en"}, {"en": {"harmfulness": "Is it bad?"}}),  # text
        (JudgeIdentity("small", "a" * 64, "b" * 64), {"ja": "p-en"}, {"ja": {"harmfulness": HARM}}),  # language
        (None, {"en": "p-en"}, {"en": {"harmfulness": HARM}}),  # a judge of unknown identity
    ],
)
def test_anything_else_flags_at_the_judges_likelier_answer(judge, prompts, definitions):
    assert choose_thresholds(judge, prompts, definitions, [fitted_file()]) == {}


def test_a_thresholds_file_survives_saving(tmp_path):
    path = tmp_path / "judge.json"
    fitted_file(0.73).save(path)
    assert ThresholdFile.load(path) == fitted_file(0.73)


def test_a_broken_thresholds_file_is_named(tmp_path):
    path = tmp_path / "judge.json"
    path.write_text('{"judge": {}}', encoding="utf-8")
    with pytest.raises(ConfigError, match="judge.json is not a localeval critique thresholds file"):
        ThresholdFile.load(path)


def test_the_shipped_thresholds_match_the_shipped_prompts_and_definitions():
    """A shipped threshold that no longer matches its prompt or definition would silently stop applying."""
    files = shipped_files()
    assert files, f"no thresholds file in {SHIPPED}"
    library = PromptLibrary()
    registry = load_registry()
    for file in files:
        assert file.judge.name in registry.entries
        langs = sorted(file.thresholds)
        definitions = criteria.by_language(library, langs, Definitions())
        for lang, by_name in file.thresholds.items():
            for name, fitted in by_name.items():
                assert 0.0 <= fitted.threshold <= 1.0
                assert fitted.matches(definitions[lang].criteria[name], library.get("critique", lang).sha256), (
                    f"{file.judge.name} {lang} {name}: refit with benchmarks/critiques.py --write"
                )
