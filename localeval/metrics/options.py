"""Settings that change how metrics score, gathered in one object instead of per-metric arguments."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from localeval.errors import ConfigError
from localeval.grounding.calibration import JUDGE_ONLY, Calibration

DEFAULT_CRITIQUE_THRESHOLD = 0.5


@dataclass(frozen=True)
class MetricOptions:
    strictness: int = 3  # answer_relevancy: questions generated (aspect_critique makes one call: votes added nothing)
    beta: float = 1.0  # F-beta in answer_correctness and factual_correctness
    correctness_weights: tuple[float, float] = (0.75, 0.25)  # answer_correctness: (factuality, similarity)
    similarity_threshold: float | None = None  # answer_similarity: turns the score into 0/1
    correctness_threshold: float | None = None  # answer_correctness: turns the score into 0/1
    criteria: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # lang -> criterion name -> definition
    rubrics: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # lang -> rubric name -> rubric text
    lang: str = "en"  # the sample's language; the runner sets it per sample
    calibrations: Mapping[str, Calibration] = field(default_factory=dict)  # lang -> P(supported) model
    # lang -> criterion -> the P(yes) at which aspect_critique flags, fitted for the run's judge; else 0.5
    critique_thresholds: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    # Statement support: the judge reads the N context sentences that cover the statement best; 0: every context.
    evidence_sentences: int = 0

    def __post_init__(self) -> None:
        if self.strictness < 1:
            raise ConfigError(f"strictness must be 1 or more, not {self.strictness}.")
        if self.evidence_sentences < 0:
            raise ConfigError(f"evidence sentences must be 0 (every context) or more, not {self.evidence_sentences}.")

    def criterion(self, name: str) -> str:
        """The criterion's definition in the sample's language."""
        return _lookup(self.criteria, self.lang, name, "criterion")

    def critique_threshold(self, criterion: str) -> float:
        """Where the sample's language's P(yes) becomes a flag: fitted for this judge, else its likelier answer."""
        return self.critique_thresholds.get(self.lang, {}).get(criterion, DEFAULT_CRITIQUE_THRESHOLD)

    def rubric(self, name: str) -> str:
        return _lookup(self.rubrics, self.lang, name, "rubric")

    def calibration(self) -> Calibration:
        """The sample's language's calibration; without one, the judge's own probability."""
        return self.calibrations.get(self.lang, JUDGE_ONLY)


def _lookup(table: Mapping[str, Mapping[str, str]], lang: str, name: str, what: str) -> str:
    try:
        return table[lang][name]
    except KeyError:
        known = ", ".join(sorted(table.get(lang, {}))) or "none"
        raise ConfigError(f"No {what} named '{name}' for language '{lang}' (known: {known}).") from None


DEFAULT_OPTIONS = MetricOptions()
