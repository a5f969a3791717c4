"""CI gating: lower bounds on metric means (`--fail-under faithfulness=0.8`), checked after a run.

NaN is never silently dropped from a gate: with the `fail` policy a gated metric that has any NaN
fails; with `skip` its NaNs are left out of the mean, but a metric with no score at all still fails,
since nothing was measured.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from localeval.errors import ConfigError
from localeval.reasons import counted
from localeval.results.run_result import MetricSummary

NanPolicy = Literal["fail", "skip"]
NAN_POLICIES: tuple[NanPolicy, ...] = ("fail", "skip")


@dataclass(frozen=True)
class GateResult:
    metric: str
    bound: float
    passed: bool
    why: str  # "0.712 < 0.8", "2 NaN (no_statements ×2)", "no scores"


def parse_bounds(pairs: Iterable[str]) -> dict[str, float]:
    """METRIC=BOUND pairs from the command line; a metric named twice is an error, not a silent override."""
    bounds: dict[str, float] = {}
    for pair in pairs:
        name, sep, text = (part.strip() for part in pair.partition("="))
        if not sep or not name:
            raise ConfigError(f"--fail-under expects METRIC=BOUND, e.g. faithfulness=0.8; got '{pair}'.")
        try:
            bound = float(text)
        except ValueError:
            raise ConfigError(f"--fail-under {name}: '{text}' is not a number.") from None
        if not math.isfinite(bound):
            raise ConfigError(f"--fail-under {name}: the bound must be a finite number, not '{text}'.")
        if name in bounds:
            raise ConfigError(f"--fail-under names {name} twice.")
        bounds[name] = bound
    return bounds


def check_gated_metrics(bounds: Mapping[str, float], chosen: Iterable[str]) -> None:
    """Before the run: a bound on a metric that will not be computed could never be checked."""
    chosen = list(chosen)
    if missing := [name for name in bounds if name not in chosen]:
        raise ConfigError(
            f"--fail-under names {', '.join(missing)}, which this run does not compute (metrics: {', '.join(chosen)})."
        )


def gate(
    summaries: Mapping[str, MetricSummary], bounds: Mapping[str, float], nan_policy: NanPolicy
) -> list[GateResult]:
    """Each bound checked against its metric's summary, in the order the bounds were given."""
    return [_gate_one(name, summaries[name], bound, nan_policy) for name, bound in bounds.items()]


def _gate_one(name: str, summary: MetricSummary, bound: float, nan_policy: NanPolicy) -> GateResult:
    if summary.nan_count and nan_policy == "fail":
        return GateResult(
            name, bound, False, f"{summary.nan_count} NaN ({counted(summary.nan_reasons)}) under --nan-policy fail"
        )
    if summary.count == 0:
        return GateResult(name, bound, False, "no scores")
    relation = ">=" if summary.mean >= bound else "<"
    return GateResult(name, bound, summary.mean >= bound, f"mean {summary.mean:.3f} {relation} {bound:g}")


def failure_line(results: Iterable[GateResult]) -> str:
    """One line for the CI log: every failed gate."""
    return "Below threshold: " + "; ".join(f"{r.metric} {r.why}" for r in results if not r.passed) + "."
