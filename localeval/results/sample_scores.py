"""One sample's scores and the judge work they took: what the runner produces and every result is made of."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from localeval.data.samples import Sample
from localeval.judge.protocol import CallUsage
from localeval.metrics import Score


@dataclass
class Usage:
    """Judge work attributed to one sample (cached calls cost nothing)."""

    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def add(self, usage: CallUsage) -> None:
        if usage.cached:
            self.cached_calls += 1
            return
        self.calls += usage.attempts
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.seconds += usage.seconds


@dataclass
class SampleScores:
    sample: Sample
    lang: str
    scores: dict[str, Score] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    inputs_cut: list[dict[str, Any]] = field(default_factory=list)  # what fitting prompts into the window left out
