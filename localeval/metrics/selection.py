"""Which metrics a run computes: the ones asked for, or by default those validated in the data's languages."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from localeval.data.samples import Sample
from localeval.errors import ConfigError
from localeval.metrics.aspect_critique import BUILT_IN_CRITERIA, PREFIX, critique_metric
from localeval.metrics.base import METRICS, Compute, Metric, MetricProgram, Score
from localeval.metrics.cards import describe, validated_in
from localeval.metrics.options import MetricOptions

CRITIQUE_GROUP = "aspect_critique"  # stands for one aspect_critique:<criterion> metric per known criterion
# The metrics the spec requires, in the order a report lists them; the default run computes the validated ones.
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
    skipped: dict[str, str] = field(default_factory=dict)  # a validated metric the data cannot feed -> why
    unvalidated: dict[str, str] = field(default_factory=dict)  # a metric left out of the default suite -> its cards


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
    requested: Iterable[str] | None,
    present_fields: set[str],
    criteria: Iterable[str] = (),
    langs: Iterable[str] = ("en",),
) -> MetricChoice:
    """The requested metrics, or the default suite for the dataset's languages (saying why others are left out)."""
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
    return default_suite(known, present_fields, criteria, langs)


def default_suite(
    known: dict[str, Metric], present_fields: set[str], criteria: Iterable[str], langs: Iterable[str]
) -> MetricChoice:
    """Every metric validated in one of `langs` whose fields the dataset has, each scoring only the samples of
    the languages it is validated in; why each other metric is left out."""
    langs = sorted(set(langs))
    chosen, skipped, unvalidated = [], {}, {}
    for name in dict.fromkeys([*expand(REQUIRED_SUITE, criteria), *known]):
        metric = known[name]
        runs_in = validated_in(name, langs)
        if not runs_in:
            unvalidated[name] = describe(name, langs)
        elif lacking := _lacking(metric, present_fields):
            skipped[name] = lacking
        else:
            chosen.append(metric if runs_in == set(langs) else only_in(metric, runs_in))
    if not chosen:
        reasons = "".join(f"; {name}: {why}" for name, why in skipped.items())
        raise ConfigError(
            f"No metric validated in {', '.join(langs)} can run on this dataset{reasons}. Choose metrics with "
            "--metrics; `localeval metrics` shows how each was measured."
        )
    return MetricChoice(chosen, skipped, unvalidated)


def only_in(metric: Metric, langs: frozenset[str]) -> Metric:
    """The metric scoring only samples in `langs`: elsewhere NaN `not_validated`, with no judge call."""
    return replace(metric, compute=_ScoredOnlyIn(metric.compute, langs))


@dataclass(frozen=True)
class _ScoredOnlyIn:
    """A metric's compute, limited to some languages; a class, not a closure, so that it pickles (Ray)."""

    compute: Compute
    langs: frozenset[str]

    def __call__(self, sample: Sample, options: MetricOptions) -> MetricProgram | Score:
        if options.lang not in self.langs:
            return Score.nan("not_validated")
        return self.compute(sample, options)


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
