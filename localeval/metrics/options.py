"""Settings that change how metrics score, gathered in one object instead of per-metric arguments."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class MetricOptions:
    strictness: int = 3  # answer_relevancy: questions generated; aspect_critique: votes (odd)
    beta: float = 1.0  # F-beta in answer_correctness and factual_correctness
    correctness_weights: tuple[float, float] = (0.75, 0.25)  # answer_correctness: (factuality, similarity)
    similarity_threshold: float | None = None  # answer_similarity: turns the score into 0/1
    correctness_threshold: float | None = None  # answer_correctness: turns the score into 0/1
    criteria: Mapping[str, str] = field(default_factory=dict)  # aspect_critique: name -> definition
    rubrics: Mapping[str, str] = field(default_factory=dict)  # rubric_score: name -> rubric text


DEFAULT_OPTIONS = MetricOptions()
