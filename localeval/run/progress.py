"""Where a long run stands: samples done, judge calls, tokens/s and an ETA that settles as samples finish.

The ETA is the time per sample scored so far in this run times the samples left, so it steadies as more
samples finish; samples reused from an earlier run cost nothing and count only as done.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from localeval.judge.protocol import CallUsage

if TYPE_CHECKING:
    from localeval.results.sample_scores import Usage


@dataclass
class RunProgress:
    total_samples: int
    clock: Callable[[], float] = time.monotonic
    samples_done: int = 0
    samples_reused: int = 0
    judge_calls: int = 0
    judge_tokens: int = 0
    judge_seconds: float = 0.0
    step: str = ""
    step_done: int = 0
    step_total: int = 0
    started: float = field(init=False)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def call_served(self, step: str, done: int, total: int, usage: CallUsage) -> None:
        """One request of a step round served: run by the judge, or taken from the cache (free)."""
        self.step, self.step_done, self.step_total = step, done, total
        if not usage.cached:
            self.judge_calls += usage.attempts
            self.judge_tokens += usage.prompt_tokens + usage.completion_tokens
            self.judge_seconds += usage.seconds

    def judge_work(self, usage: Usage) -> None:
        """A sample's judge work, counted when it finishes: a Ray run's calls are served on other machines."""
        self.judge_calls += usage.calls
        self.judge_tokens += usage.prompt_tokens + usage.completion_tokens
        self.judge_seconds += usage.seconds

    def sample_finished(self, reused: bool) -> None:
        scored_before = self.samples_done - self.samples_reused
        self.samples_done += 1
        if reused:
            self.samples_reused += 1
            if not scored_before:  # reused samples are read back at once: time only the scored ones
                self.started = self.clock()

    def tokens_per_second(self) -> float | None:
        return self.judge_tokens / self.judge_seconds if self.judge_seconds > 0 else None

    def eta_seconds(self) -> float | None:
        """None until a sample has been scored in this run."""
        scored = self.samples_done - self.samples_reused
        if scored <= 0:
            return None
        return (self.clock() - self.started) / scored * (self.total_samples - self.samples_done)


ProgressListener = Callable[
    [RunProgress], None
]  # called with the run's state after each judge call and finished sample


def format_duration(seconds: float) -> str:
    """`45s`, `12m05s`, `3h07m`: short enough for a progress line."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
