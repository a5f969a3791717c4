"""One evaluation run, from a dataset file to a saved results folder."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from localeval.data.dataset import Dataset
from localeval.data.samples import Sample
from localeval.errors import ConfigError, LocalevalError
from localeval.grounding.calibration import JudgeIdentity
from localeval.judge.protocol import CallUsage
from localeval.judge.server import is_server_url
from localeval.metrics import Metric, Score
from localeval.models import ResolvedModel, resolve_judge
from localeval.models.encoders import EncoderPool, require_cross_encoder
from localeval.results.folder import SAMPLES_FILE
from localeval.results.html_report import write_html_report
from localeval.results.manifest import JudgeRecord, RunManifest
from localeval.results.run_result import (
    RunResult,
    Tally,
    sample_record,
    save_manifest,
    scores_from_record,
)
from localeval.results.sample_scores import SampleScores
from localeval.run.batch_scoring import BatchScorer
from localeval.run.guard import RunGuard
from localeval.run.judges import (
    LoadedJudge,
    judge_identity,
    load_judge,
    load_server_judge,
    remember_speeds,
)
from localeval.run.manifest import fingerprint_settings, run_manifest
from localeval.run.options import CALL_CACHE_FILE, EvaluationOptions
from localeval.run.planning import Prepared, prepare, rows_for
from localeval.run.progress import ProgressListener, RunProgress
from localeval.run.sample_log import SampleLog, fingerprint
from localeval.run.step_executor import CallCache, StepExecutor

log = logging.getLogger("localeval")


def run_evaluation(
    options: EvaluationOptions,
    dataset: Dataset,
    metrics: list[Metric],
    progress: ProgressListener | None = None,
    keep_samples: bool = True,
    judge: LoadedJudge | None = None,
    encoders: EncoderPool | None = None,
) -> RunResult:
    """Score the dataset and save the results folder; an interrupted run saves what it has and resumes later.

    `progress` is called with the run's state after every judge call and every finished sample.

    `keep_samples=False` leaves the scored samples in the folder only, so that memory stays flat however
    many rows there are; the result still has the summaries.

    `judge` and `encoders`, when given, are models already in memory (the API's reuse between runs); without
    them, the run loads what its metrics need and `options.judge` names.
    """
    if not metrics:
        raise ConfigError("No metric to compute: a run would score nothing.")
    if encoders is not None:  # the pool's models score, whatever the options name: the fingerprint must say so
        options = replace(options, embedder=encoders.chosen_embedder, cross_encoder=encoders.cross_encoder_path)
    dataset = rows_for(dataset, metrics)
    if options.cross_encoder is not None:
        require_cross_encoder(options.cross_encoder)  # before any model loads
    needs_judge = any("judge" in metric.models for metric in metrics)
    if options.executor is not None and (judge is not None or encoders is not None):
        raise ConfigError(
            "A Ray run loads the judge and embedders on each actor: name them (a path or a registry "
            "name) instead of passing models loaded in this process."
        )
    if needs_judge and judge is None and options.executor is None and is_server_url(options.judge):
        judge = load_server_judge(str(options.judge), options.judge_config)  # reachable and schema-bound, or stop
    # On a cluster the nodes need the judge file, not this process: each actor checks it against the registry.
    resolved = resolve_judge(options.judge) if needs_judge and judge is None and options.executor is None else None
    if resolved and resolved.entry and resolved.entry.plumbing:
        log.warning(
            "The judge %s is for testing localeval itself (%s): its scores say nothing about your data.",
            resolved.entry.name,
            resolved.entry.description,
        )
    identity = None  # which calibrations and thresholds apply: only runs with steps that have them need to know
    if any(step in ("statement_support", "critique") for metric in metrics for step in metric.steps):
        identity = (
            judge.identity_of()
            if judge is not None
            else judge_identity(resolved, options.judge_config)
            if isinstance(resolved, ResolvedModel)
            else _cluster_judge_identity(options)
        )
    with RunGuard(options.out) as guard:
        if guard.unfinished:
            log.warning(guard.unfinished.describe(options.out))
        prepared = prepare(options, dataset, metrics, identity)
        recheck = bool(guard.unfinished and guard.unfinished.crash)
        if options.executor is not None:
            from localeval.run.ray_cluster import (
                start_ray_scoring,  # imports ray: only for a Ray run
            )

            scoring: Scoring = start_ray_scoring(options, metrics, prepared, needs_judge, recheck)
        else:
            if isinstance(resolved, ResolvedModel):
                judge = load_judge(resolved, options.judge_config, recheck=recheck)
            if encoders is None and any("embedder" in metric.models for metric in metrics):
                encoders = EncoderPool(options.embedder, options.cross_encoder)
            scoring = LocalScoring(options, metrics, prepared, judge if needs_judge else None, encoders)
        try:
            if guard.unfinished or scoring.calls_done:
                log.warning("Resuming: %d judge calls are already done.", scoring.calls_done)
            return _run(options, dataset, metrics, prepared, scoring, progress, keep_samples)
        finally:
            scoring.close()


class Scoring(Protocol):
    """Where a run's batches are scored: `LocalScoring` in this process, or on a Ray cluster (ray_cluster.py)."""

    judge_manifest: JudgeRecord | None  # the loaded judge as the manifest records it; None without a judge
    calls_done: int  # judge calls already in the folder's call cache when the run started
    reports_calls: bool  # each judge call reaches the progress listener as it is served (else per sample)

    def score(
        self,
        batches: Iterator[list[Sample]],
        langs: Mapping[str, str],
        call_served: Callable[[str, int, int, CallUsage], None] | None,
    ) -> Iterator[list[SampleScores]]:
        """Each batch's scores, as batches finish (not necessarily in the order given)."""

    def encoders_manifest(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class LocalScoring:
    """The models in this process, one batch after another, each judge call shown as it is served."""

    reports_calls = True

    def __init__(
        self,
        options: EvaluationOptions,
        metrics: list[Metric],
        prepared: Prepared,
        judge: LoadedJudge | None,
        encoders: EncoderPool | None,
    ):
        self.judge = judge
        self.encoders = encoders
        executor = None
        if judge is not None:
            executor = StepExecutor(
                judge.judge, judge.identity, prepared.prompts, judge.config, CallCache(options.out / CALL_CACHE_FILE)
            )
        self.judge_manifest = judge.manifest if judge else None
        self.calls_done = len(executor.cache) if executor else 0
        self.scorer = BatchScorer(metrics, executor, encoders, prepared.metric_options)

    def score(
        self,
        batches: Iterator[list[Sample]],
        langs: Mapping[str, str],
        call_served: Callable[[str, int, int, CallUsage], None] | None,
    ) -> Iterator[list[SampleScores]]:
        for batch in batches:
            yield self.scorer(batch, langs, call_served)

    def encoders_manifest(self) -> dict[str, Any]:
        return self.encoders.manifest() if self.encoders else {}

    def close(self) -> None:
        if self.judge is not None:
            remember_speeds(self.judge)


def _run(
    options: EvaluationOptions,
    dataset: Dataset,
    metrics: list[Metric],
    prepared: Prepared,
    scoring: Scoring,
    progress: ProgressListener | None,
    keep_samples: bool,
) -> RunResult:
    manifest = run_manifest(
        options, dataset, metrics, prepared.prompts, prepared.steps, prepared.langs, scoring.judge_manifest
    )
    if prepared.calibrations is not None:
        manifest.calibration = {lang: chosen.manifest() for lang, chosen in prepared.calibrations.languages.items()}
    if "critique" in prepared.steps:
        fitted = prepared.metric_options.critique_thresholds
        manifest.critique_thresholds = {lang: dict(by_name) for lang, by_name in fitted.items()}
    manifest.languages = dict(Counter(prepared.lang_of.values()))
    manifest.fingerprint = fingerprint(fingerprint_settings(manifest, options, prepared.definitions))
    tally = Tally([metric.name for metric in metrics])
    kept: list[SampleScores] | None = [] if keep_samples else None
    has_judge = scoring.judge_manifest is not None
    interrupted = _score_streaming(
        options, dataset, metrics, manifest, scoring, progress, prepared.lang_of, tally, kept
    )
    manifest.encoders = scoring.encoders_manifest()
    result = RunResult(
        [m.name for m in metrics], kept or [], dataset.row_errors, manifest, interrupted, dataset.row_warnings, tally
    )
    _save_summary(result, options.out, has_judge)
    return result


def _score_streaming(
    options: EvaluationOptions,
    dataset: Dataset,
    metrics: list[Metric],
    manifest: RunManifest,
    scoring: Scoring,
    progress: ProgressListener | None,
    lang_of: dict[str, str],
    tally: Tally,
    kept: list[SampleScores] | None,
) -> bool:
    """Score `batch_size` samples at a time, appending each to samples.jsonl as its batch finishes; True if
    interrupted.

    Samples that an earlier run into the folder finished, under the same fingerprint, are taken as they are.
    Every sample goes into `tally`, and into `kept` (in file order) when the caller keeps them; samples.jsonl
    ends with every sample once, in file order, the ones never scored as NaN interrupted.
    """
    has_judge = scoring.judge_manifest is not None
    sample_log = SampleLog(options.out)
    try:
        reused = sample_log.reusable(manifest.fingerprint or "", lang_of)
        save_manifest(options.out, manifest)
    except OSError as error:
        raise _unwritable(options.out, error, has_judge) from None
    if reused:
        log.warning("Resuming: %d of %d samples are already scored.", len(reused), len(dataset))
    by_id: dict[str, SampleScores] = {}  # only when the caller keeps the samples
    recorded: set[str] = set()
    state = RunProgress(len(dataset))

    def finished(result: SampleScores, record: bool = True) -> None:
        if record:
            sample_log.append(sample_record(result))
            if progress and not scoring.reports_calls:
                state.judge_work(result.usage)
        recorded.add(result.sample.id)
        tally.add(result)
        if kept is not None:
            by_id[result.sample.id] = result
        if progress:
            state.sample_finished(reused=not record)
            progress(state)

    def call_served(step: str, done: int, total: int, usage: CallUsage) -> None:
        state.call_served(step, done, total, usage)
        if progress:
            progress(state)

    def to_score() -> Iterator[list[Sample]]:
        """Each batch's samples to score, once its reused ones are taken as they are."""
        for batch in _batches(dataset, reused, options.batch_size):
            for sample in batch.reused:
                finished(scores_from_record(sample_log.reused(sample.id), sample), record=False)
            if batch.todo:
                yield batch.todo

    try:
        _take_scored(scoring.score(to_score(), lang_of, call_served if progress else None), finished, sample_log)
        not_started = {metric.name: Score.nan("interrupted") for metric in metrics}
        for ref in dataset.rows:  # after an interruption: the reused samples not yet met, and the rest
            if ref.id in reused and ref.id not in recorded:
                finished(scores_from_record(sample_log.reused(ref.id), Sample(ref.id, ref.row)), record=False)
            elif ref.id not in recorded:
                finished(SampleScores(Sample(ref.id, ref.row), lang_of[ref.id], dict(not_started)))
        sample_log.finish([ref.id for ref in dataset.rows])
    except OSError as error:
        raise _unwritable(options.out, error, has_judge) from None
    finally:
        sample_log.close()
    if kept is not None:
        kept.extend(by_id[ref.id] for ref in dataset.rows)
    return any("interrupted" in tally.summary(metric.name).nan_reasons for metric in metrics)


def _take_scored(scored: Iterator[list[SampleScores]], finished: Callable[..., None], sample_log: SampleLog) -> None:
    """Until the batches run out or a Ctrl-C stops them, record each scored batch and sync it to the disk."""
    try:
        for results in scored:
            for result in results:
                finished(result)
            sample_log.sync()
            if any(_was_interrupted(result) for result in results):
                return
    except KeyboardInterrupt:
        pass  # between batches: the samples not started become NaN interrupted
    finally:
        close = getattr(scored, "close", None)  # a generator's own cleanup (a Ray run's tasks in flight)
        if close:
            close()


@dataclass
class _Batch:
    reused: list[Sample] = field(default_factory=list)  # finished by an earlier run, read back
    todo: list[Sample] = field(default_factory=list)


def _batches(dataset: Dataset, reused: Collection[str], size: int) -> Iterator[_Batch]:
    """The dataset read in file order, `size` samples to score at a time, with the reused ones met on the way."""
    batch = _Batch()
    for sample in dataset:
        (batch.reused if sample.id in reused else batch.todo).append(sample)
        if len(batch.todo) == size or len(batch.reused) == size:
            yield batch
            batch = _Batch()
    if batch.reused or batch.todo:
        yield batch


def _was_interrupted(result: SampleScores) -> bool:
    return any(score.reason == "interrupted" for score in result.scores.values())


def _save_summary(result: RunResult, out: Path, has_judge: bool) -> None:
    try:
        result.save_summary(out)
    except OSError as error:
        raise _unwritable(out, error, has_judge) from None
    try:
        write_html_report(out)
    except LocalevalError as error:  # the results are saved: the page can be built again from them
        log.warning("%s The results are saved; `localeval report %s` builds the page from them.", error, out)


def _unwritable(out: Path, error: OSError, has_judge: bool) -> ConfigError:
    """What failed, and that the work finished so far is kept: the same command resumes from it."""
    kept = f"{out / SAMPLES_FILE}" + (f" and {out / CALL_CACHE_FILE}" if has_judge else "")
    return ConfigError(
        f"Could not write the results to {out}: {error.strerror or error}. The work finished so far "
        f"is kept in {kept}: rerun the same command once the folder is fixed, and it is not done "
        "again."
    )


def _cluster_judge_identity(options: EvaluationOptions) -> JudgeIdentity | None:
    """A Ray run's judge as this machine knows it; None where the file is only on the nodes (no calibration)."""
    try:
        if is_server_url(options.judge):
            return load_server_judge(str(options.judge), options.judge_config).identity_of()
        return judge_identity(resolve_judge(options.judge), options.judge_config)
    except LocalevalError:
        return None
