"""What a metric is: its fields, its judge steps and models, and a program that turns step outputs into a score.

A metric's `compute(sample, options)` is a generator: it yields a judge `Call` (or a list of calls),
an `Embed` or a `Similarity` request, receives the result back, and finally returns a `Score`.
A metric that needs no model is a plain function that returns its `Score` at once. The
runner decides when and in which order requests run, batches them, shares identical calls between
metrics, and turns any failed call into a NaN with its reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from localeval.data.samples import Sample
from localeval.metrics.options import MetricOptions
from localeval.models.encoders import Embed, Similarity
from localeval.reasons import is_nan_reason
from localeval.steps import Call

Request = Call | list[Call] | Embed | Similarity
_T = TypeVar("_T")
Program = Generator[Request, Any, _T]  # a part of a metric's program that returns a _T, run with `yield from`
MetricProgram = Program["Score"]
Compute = Callable[[Sample, MetricOptions], "MetricProgram | Score"]


@dataclass(frozen=True)
class Score:
    """A score with the evidence behind it; a score that cannot be computed is NaN with a reason code."""

    value: float
    reason: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def nan(cls, reason: str, **evidence: Any) -> Score:
        if not is_nan_reason(reason):
            raise ValueError(f"'{reason}' is not a NaN reason listed in localeval/reasons.py")
        return cls(math.nan, reason, evidence)

    @property
    def is_nan(self) -> bool:
        return math.isnan(self.value)


@dataclass(frozen=True)
class Metric:
    name: str
    required: tuple[str, ...]
    steps: tuple[str, ...]
    models: tuple[str, ...]
    score_range: tuple[float, float]
    description: str
    compute: Compute
    optional: tuple[str, ...] = ()  # fields it reads when they are there: a bad value in them costs the row too

    @property
    def reads(self) -> tuple[str, ...]:
        """Every field whose value can change the score: the only ones a dataset row is checked for."""
        return self.required + self.optional


METRICS: dict[str, Metric] = {}


def metric(
    name: str,
    *,
    required: tuple[str, ...],
    steps: tuple[str, ...] = (),
    models: tuple[str, ...] = (),
    score_range: tuple[float, float] = (0.0, 1.0),
    optional: tuple[str, ...] = (),
) -> Callable[[Compute], Metric]:
    """Declare a metric; its docstring's first line is its description."""

    def register(compute: Compute) -> Metric:
        description = (compute.__doc__ or "").strip().splitlines()[0]
        declared = Metric(name, required, steps, models, score_range, description, compute, optional)
        METRICS[name] = declared
        return declared

    return register
