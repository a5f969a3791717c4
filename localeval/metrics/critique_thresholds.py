"""Where aspect_critique's P(yes) becomes a flag: a threshold per judge, language and criterion, fitted on
labelled dev rows (benchmarks/critiques.py --write).

A P(yes) means something only for the judge, the critique prompt and the criterion's definition it came from,
so a run uses a fitted threshold only where all three match. Anywhere else it flags at 0.5, the judge's own
likelier answer: a team that swaps in another judge or rewrites a definition gets that judge's own verdicts,
not thresholds learned on someone else's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.errors import ConfigError
from localeval.grounding.calibration import JudgeIdentity

FORMAT = "localeval-critique-thresholds/1"
SHIPPED = Path(__file__).resolve().parent / "critique_thresholds"  # one file per registry judge


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class FittedThreshold:
    """One language's threshold for one criterion, with what it was fitted with and on."""

    threshold: float
    definition_sha256: str
    prompt_sha256: str  # the critique prompt file of that language
    fitted_on: str = ""
    figures: dict[str, Any] = field(default_factory=dict)

    def matches(self, definition: str, prompt_sha256: str) -> bool:
        return self.definition_sha256 == text_sha256(definition) and self.prompt_sha256 == prompt_sha256


@dataclass(frozen=True)
class ThresholdFile:
    judge: JudgeIdentity
    thresholds: dict[str, dict[str, FittedThreshold]]  # lang -> criterion -> threshold

    def save(self, path: Path) -> None:
        data = {
            "format": FORMAT,
            "judge": self.judge.as_dict(),
            "thresholds": {
                lang: {name: vars(fitted) for name, fitted in sorted(by_name.items())}
                for lang, by_name in sorted(self.thresholds.items())
            },
        }
        path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> ThresholdFile:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                JudgeIdentity.from_dict(data["judge"]),
                {
                    lang: {name: FittedThreshold(**fitted) for name, fitted in by_name.items()}
                    for lang, by_name in data["thresholds"].items()
                },
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise ConfigError(f"{path} is not a localeval critique thresholds file ({error}).") from None


def shipped_files(folder: Path = SHIPPED) -> list[ThresholdFile]:
    return [ThresholdFile.load(path) for path in sorted(folder.glob("*.json"))]


def choose_thresholds(
    judge: JudgeIdentity | None,
    prompts: Mapping[str, str],
    definitions: Mapping[str, Mapping[str, str]],
    files: Sequence[ThresholdFile] | None = None,
) -> dict[str, dict[str, float]]:
    """Per language (`prompts`: lang -> critique prompt sha256), the thresholds fitted for exactly this judge,
    prompt and definition (`definitions`: lang -> criterion -> text); the others are left to the 0.5 default."""
    if judge is None:
        return {}
    chosen: dict[str, dict[str, float]] = {}
    for file in shipped_files() if files is None else files:
        if not file.judge.same_judge(judge):
            continue
        for lang, by_name in file.thresholds.items():
            for name, fitted in by_name.items():
                definition = definitions.get(lang, {}).get(name)
                if lang in prompts and definition is not None and fitted.matches(definition, prompts[lang]):
                    chosen.setdefault(lang, {})[name] = fitted.threshold
    return chosen
