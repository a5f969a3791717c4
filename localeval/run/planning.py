"""What a run settles before any model loads: the rows its metrics can use, each sample's language, the
prompts, and each language's calibration."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from localeval.data.dataset import Dataset, read_dataset
from localeval.data.samples import Sample
from localeval.data.text import detect_language
from localeval.errors import ConfigError, DatasetError
from localeval.grounding.calibration import (
    CalibrationChoice,
    CalibrationFile,
    JudgeIdentity,
    choose_calibrations,
)
from localeval.metrics import Metric
from localeval.metrics.critique_thresholds import choose_thresholds
from localeval.metrics.options import MetricOptions
from localeval.metrics.selection import (
    MetricChoice,
    choose_metrics,
    require_a_runnable_metric,
)
from localeval.run.options import EvaluationOptions
from localeval.steps import criteria
from localeval.steps.criteria import Definitions
from localeval.steps.prompts import PromptLibrary

log = logging.getLogger("localeval")


def sample_language(sample: Sample, lang: str = "auto") -> str:
    """The language whose prompts a sample gets: the forced one, or detected from its question and answers."""
    if lang != "auto":
        return lang
    return detect_language(" ".join(getattr(sample, name) or "" for name in ("user_input", "response", "reference")))


def choose_for_dataset(options: EvaluationOptions, dataset: Dataset) -> MetricChoice:
    """The metrics asked for, or the default suite: those validated in the languages of the dataset's samples."""
    langs = {sample_language(sample, options.lang) for sample in dataset} if options.metrics is None else ()
    return choose_metrics(options.metrics, dataset.present_fields(), options.definitions.criteria, langs)


def rows_for(dataset: Dataset, metrics: list[Metric]) -> Dataset:
    """The rows the metrics can use: a bad value costs its row only in a field that one of them reads.

    The fields that made the metrics eligible may have been only in rows that this costs, so they are checked again.
    """
    usable = _require_rows(dataset.checked_for({name for metric in metrics for name in metric.reads}))
    if usable is not dataset:
        try:
            require_a_runnable_metric(metrics, usable.present_fields(), rows="the rows without bad values have")
        except ConfigError as error:
            dropped = next(e for e in usable.row_errors if e not in dataset.row_errors)
            raise ConfigError(f"{error} The first row skipped for a bad value: {dropped}") from None
    return usable


@dataclass(frozen=True)
class Prepared:
    """What a run settles before any model loads: prompts, each sample's language, and the metrics' options."""

    prompts: PromptLibrary
    lang_of: dict[str, str]
    langs: list[str]
    steps: list[str]
    definitions: dict[str, Definitions]
    calibrations: CalibrationChoice | None  # None: no metric of the run judges statement support
    metric_options: MetricOptions


def prepare(
    options: EvaluationOptions, dataset: Dataset, metrics: list[Metric], judge: JudgeIdentity | None = None
) -> Prepared:
    """Languages detected once per sample, every prompt file the run needs loaded (a broken one fails now), and
    each language's calibration and critique thresholds for `judge`."""
    prompts = PromptLibrary(options.prompts_dir)
    lang_of = {sample.id: sample_language(sample, options.lang) for sample in dataset}
    used_langs = sorted(set(lang_of.values()))
    steps = list(dict.fromkeys(step for metric in metrics for step in metric.steps))
    for step in steps:
        for lang in used_langs:
            prompts.get(step, lang)
    definitions = criteria.by_language(prompts, used_langs, options.definitions)
    calibrations = None
    if "statement_support" in steps:
        calibrations = calibrations_for(
            prompts, used_langs, judge, options.metric_options.evidence_sentences, options.calibration
        )
        for message in calibrations.warnings + [calibrations.notice] * bool(calibrations.notice):
            log.warning(message)
    thresholds = {}
    if "critique" in steps:
        thresholds = choose_thresholds(
            judge,
            {lang: prompts.get("critique", lang).sha256 for lang in used_langs},
            {lang: d.criteria for lang, d in definitions.items()},
        )
    metric_options = replace(
        options.metric_options,
        criteria={lang: d.criteria for lang, d in definitions.items()},
        rubrics={lang: d.rubrics for lang, d in definitions.items()},
        calibrations=calibrations.calibrations() if calibrations else {},
        critique_thresholds=thresholds,
    )
    return Prepared(prompts, lang_of, used_langs, steps, definitions, calibrations, metric_options)


def calibrations_for(
    prompts: PromptLibrary,
    langs: Sequence[str],
    judge: JudgeIdentity | None,
    evidence_sentences: int = 0,
    forced: CalibrationFile | None = None,
) -> CalibrationChoice:
    """Each language's calibration for this judge and these statement_support prompts (see choose_calibrations)."""
    shas = {lang: prompts.get("statement_support", lang).sha256 for lang in langs}
    return choose_calibrations(langs, judge, shas, evidence_sentences, forced)


def load_dataset(options: EvaluationOptions) -> Dataset:
    """Every row with no problem of its own; which bad values cost their row waits for the metrics (rows_for)."""
    return _require_rows(read_dataset(options.data, options.field_map, checked=()))


def _require_rows(dataset: Dataset) -> Dataset:
    """A run over no rows would score nothing and still look like a success."""
    if not dataset.rows:
        bad = len({error.row for error in dataset.row_errors})
        rows = "its only row has" if bad == 1 else f"all {bad} rows have"
        raise DatasetError(f"{dataset.path} has no row to score: {rows} errors; the first: {dataset.row_errors[0]}")
    return dataset
