"""Which metrics a run computes: the ones asked for, or by default the required suite that the data allows."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from localeval.errors import ConfigError
from localeval.metrics.aspect_critique import BUILT_IN_CRITERIA, PREFIX, critique_metric
from localeval.metrics.base import METRICS, Metric

CRITIQUE_GROUP = "aspect_critique"  # stands for one aspect_critique:<criterion> metric per known criterion
# The metrics the spec requires; the default run computes those whose fields the dataset has.
REQUIRED_SUITE = (
    "faithfulness",
    "answer_relevancy",
    "answer_completeness",
    "context_precision",
    "context_utilization",
    "context_recall",
    "context_relevancy",
    "context_entity_recall",
    "answer_similarity",
    "answer_correctness",
    CRITIQUE_GROUP,
)


@dataclass(frozen=True)
class MetricChoice:
    chosen: list[Metric]
    skipped: dict[str, str] = field(default_factory=dict)  # metric name -> why it was not chosen


def known_metrics(criteria: Iterable[str] = ()) -> dict[str, Metric]:
    """Every registered metric, plus one aspect_critique metric per user criterion."""
    known = dict(METRICS)
    for name in criteria:
        known.setdefault(f"{PREFIX}{name}", critique_metric(name))
    return known


def expand(names: Iterable[str], criteria: Iterable[str] = ()) -> list[str]:
    """Metric names with the aspect_critique group replaced by its criteria, without repeats."""
    criteria = list(dict.fromkeys([*BUILT_IN_CRITERIA, *criteria]))
    expanded: list[str] = []
    for name in names:
        if name == CRITIQUE_GROUP:
            expanded.extend(f"{PREFIX}{c}" for c in criteria)
        else:
            expanded.append(name)
    return list(dict.fromkeys(expanded))


def choose_metrics(
    requested: Iterable[str] | None, present_fields: set[str], criteria: Iterable[str] = ()
) -> MetricChoice:
    """The requested metrics, or every required metric whose fields the dataset has (saying why others are left out)."""
    criteria = list(criteria)
    known = known_metrics(criteria)
    if requested is not None:
        names = expand(requested, criteria)
        if not names:
            raise ConfigError(
                "--metrics names no metric: give metric names separated by commas (`localeval "
                "metrics` lists them), or leave --metrics out for the default suite."
            )
        if unknown := [name for name in names if name not in known]:
            raise ConfigError(
                f"Unknown metric(s): {', '.join(unknown)}. Run `localeval metrics` to list them; "
                f"a new criterion needs --criterion NAME=DEFINITION."
            )
        chosen = [known[name] for name in names]
        require_a_runnable_metric(chosen, present_fields)
        return MetricChoice(chosen)
    chosen, skipped = [], {}
    for name in expand(REQUIRED_SUITE, criteria):
        metric = known[name]
        if lacking := _lacking(metric, present_fields):
            skipped[name] = lacking
        else:
            chosen.append(metric)
    chosen_names = {metric.name for metric in chosen}
    for name in known:
        if name not in chosen_names and name not in skipped:
            skipped[name] = "not in the default suite; ask for it with --metrics"
    if not chosen:
        reasons = "; ".join(f"{k}: {v}" for k, v in skipped.items() if "dataset" in v)
        raise ConfigError(f"No default metric can run on this dataset ({reasons}). Choose metrics with --metrics.")
    return MetricChoice(chosen, skipped)


def require_a_runnable_metric(metrics: list[Metric], present_fields: set[str], rows: str = "the dataset has") -> None:
    """A run where every score would be NaN for want of a field is refused rather than reported as done."""
    if all(_lacking(metric, present_fields, rows) for metric in metrics):
        reasons = "; ".join(f"{m.name}: {_lacking(m, present_fields, rows)}" for m in metrics)
        raise ConfigError(f"No chosen metric can run on this dataset ({reasons}); every score would be NaN.")


def _lacking(metric: Metric, present_fields: set[str], rows: str = "the dataset has") -> str | None:
    """Why no row can feed the metric (a field it requires that no row has), or None."""
    missing = [name for name in metric.required if name not in present_fields]
    return f"{rows} no {', '.join(missing)}" if missing else None


def metric_names(metrics: Sequence[str] | str | None) -> tuple[str, ...] | None:
    """Names from a list or a comma-separated string, blanks dropped; None stays None (the default suite)."""
    if metrics is None:
        return None
    names = metrics.split(",") if isinstance(metrics, str) else metrics
    return tuple(filter(None, (name.strip() for name in names)))
