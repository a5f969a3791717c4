"""One evaluation run, from a dataset file to a saved results folder."""

from __future__ import annotations

import hashlib
import logging
import platform
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from localeval import criteria
from localeval.calibration import CalibrationChoice, CalibrationFile, JudgeIdentity, choose_calibrations
from localeval.criteria import Definitions
from localeval.dataset import Dataset, dataset_sha256, read_dataset
from localeval.batch_scoring import BatchScorer
from localeval.encoders import EncoderPool, require_cross_encoder
from localeval.errors import ConfigError, DatasetError, LocalevalError
from localeval.html_report import write_html_report
from localeval.judge import GGUFJudge, JudgeConfig, check_gpu_offload
from localeval.judge_check import ensure_judge_runs
from localeval.metrics import Metric, Score
from localeval.metrics.options import MetricOptions
from localeval.metrics.selection import MetricChoice, choose_metrics, require_a_runnable_metric
from localeval.models import ResolvedModel, file_sha256, resolve_judge
from localeval.progress import ProgressListener, RunProgress
from localeval.prompts import PromptLibrary
from localeval.results import (FORMAT_VERSION, SAMPLES_FILE, RunResult, Tally, sample_record, save_manifest,
                               scores_from_record)
from localeval.run_guard import RunGuard
from localeval.runner import SampleScores
from localeval.sample_log import FINGERPRINT_KEY, SampleLog, fingerprint
from localeval.samples import Sample
from localeval.server_judge import ServerJudge, connect, is_server_url
from localeval.speeds import key_for, measured, remember
from localeval.step_executor import CallCache, CallUsage, StepExecutor
from localeval.text import detect_language

if TYPE_CHECKING:
    from localeval.ray_cluster import RayExecutor

CALL_CACHE_FILE = "judge_calls.jsonl"
DEFAULT_BATCH = 16
log = logging.getLogger("localeval")
_VERSIONED_PACKAGES = ("localeval", "llama-cpp-python", "sentence-transformers", "torch", "numpy", "pydantic", "click")


@dataclass(frozen=True)
class EvaluationOptions:
    data: Path
    out: Path
    metrics: tuple[str, ...] | None = None  # None: the required suite, where the dataset has the fields
    judge: str | None = None  # a GGUF path or a registry name; None: the registry's default judge
    judge_config: JudgeConfig = field(default_factory=JudgeConfig)
    prompts_dir: Path | None = None
    field_map: dict[str, str] = field(default_factory=dict)
    lang: str = "auto"  # auto: each sample's own language (see sample_language)
    embedder: str | None = None  # any spec load_embedder takes; None: per-language default
    cross_encoder: Path | None = None  # answer_similarity scores pairs with it instead of cosine
    definitions: Definitions = field(default_factory=Definitions)  # the user's criteria and rubrics
    metric_options: MetricOptions = field(default_factory=MetricOptions)
    # P(supported) from this file wherever it covers a language; None: what was fitted for this judge, if anything
    calibration: CalibrationFile | None = None
    # Samples scored together. Within a batch each judge step runs for every sample in a row, so the step's
    # instruction stays in the KV cache; a finished batch is written to samples.jsonl at once.
    batch_size: int = DEFAULT_BATCH
    # Where batches are scored: None in this process; a RayExecutor spreads them over a Ray cluster's actors.
    executor: RayExecutor | None = None


def sample_language(sample: Sample, lang: str = "auto") -> str:
    """The language whose prompts a sample gets: the forced one, or detected from its question and answers."""
    if lang != "auto":
        return lang
    return detect_language(" ".join(getattr(sample, name) or "" for name in ("user_input", "response", "reference")))


def choose_for_dataset(options: EvaluationOptions, dataset: Dataset) -> MetricChoice:
    return choose_metrics(options.metrics, dataset.present_fields(), options.definitions.criteria)


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


def run_evaluation(options: EvaluationOptions, dataset: Dataset, metrics: list[Metric],
                   progress: ProgressListener | None = None, keep_samples: bool = True,
                   judge: LoadedJudge | None = None, encoders: EncoderPool | None = None) -> RunResult:
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
        raise ConfigError("A Ray run loads the judge and embedders on each actor: name them (a path or a registry "
                          "name) instead of passing models loaded in this process.")
    if needs_judge and judge is None and options.executor is None and is_server_url(options.judge):
        judge = load_server_judge(str(options.judge), options.judge_config)  # reachable and schema-bound, or stop
    # On a cluster the nodes need the judge file, not this process: each actor checks it against the registry.
    resolved = (resolve_judge(options.judge) if needs_judge and judge is None and options.executor is None
                else None)
    if resolved and resolved.entry and resolved.entry.plumbing:
        log.warning("The judge %s is for testing localeval itself (%s): its scores say nothing about your data.",
                    resolved.entry.name, resolved.entry.description)
    identity = None  # which calibrations apply: only runs that judge statement support need to know
    if any("statement_support" in metric.steps for metric in metrics):
        identity = (judge.identity_of() if judge is not None
                    else judge_identity(resolved, options.judge_config) if isinstance(resolved, ResolvedModel)
                    else _cluster_judge_identity(options))
    with RunGuard(options.out) as guard:
        if guard.unfinished:
            log.warning(guard.unfinished.describe(options.out))
        prepared = prepare(options, dataset, metrics, identity)
        recheck = bool(guard.unfinished and guard.unfinished.crash)
        if options.executor is not None:
            from localeval.ray_cluster import start_ray_scoring  # imports ray: only for a Ray run

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


def prepare(options: EvaluationOptions, dataset: Dataset, metrics: list[Metric],
            judge: JudgeIdentity | None = None) -> Prepared:
    """Languages detected once per sample, every prompt file the run needs loaded (a broken one fails now), and
    each language's calibration for `judge`."""
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
        calibrations = calibrations_for(prompts, used_langs, judge, options.metric_options.evidence_sentences,
                                        options.calibration)
        for message in calibrations.warnings + [calibrations.notice] * bool(calibrations.notice):
            log.warning(message)
    metric_options = replace(options.metric_options,
                             criteria={lang: d.criteria for lang, d in definitions.items()},
                             rubrics={lang: d.rubrics for lang, d in definitions.items()},
                             calibrations=calibrations.calibrations() if calibrations else {})
    return Prepared(prompts, lang_of, used_langs, steps, definitions, calibrations, metric_options)


def calibrations_for(prompts: PromptLibrary, langs: Sequence[str], judge: JudgeIdentity | None,
                     evidence_sentences: int = 0, forced: CalibrationFile | None = None) -> CalibrationChoice:
    """Each language's calibration for this judge and these statement_support prompts (see choose_calibrations)."""
    shas = {lang: prompts.get("statement_support", lang).sha256 for lang in langs}
    return choose_calibrations(langs, judge, shas, evidence_sentences, forced)


class Scoring(Protocol):
    """Where a run's batches are scored: `LocalScoring` in this process, or on a Ray cluster (ray_cluster.py)."""

    judge_manifest: dict[str, Any] | None  # the loaded judge as the manifest records it; None without a judge
    calls_done: int  # judge calls already in the folder's call cache when the run started
    reports_calls: bool  # each judge call reaches the progress listener as it is served (else per sample)

    def score(self, batches: Iterator[list[Sample]], langs: Mapping[str, str],
              call_served: Callable[[str, int, int, CallUsage], None] | None) -> Iterator[list[SampleScores]]:
        """Each batch's scores, as batches finish (not necessarily in the order given)."""

    def encoders_manifest(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class LocalScoring:
    """The models in this process, one batch after another, each judge call shown as it is served."""

    reports_calls = True

    def __init__(self, options: EvaluationOptions, metrics: list[Metric], prepared: Prepared,
                 judge: LoadedJudge | None, encoders: EncoderPool | None):
        self.judge = judge
        self.encoders = encoders
        executor = None
        if judge is not None:
            executor = StepExecutor(judge.judge, judge.identity, prepared.prompts, judge.config,
                                    CallCache(options.out / CALL_CACHE_FILE))
        self.judge_manifest = judge.manifest if judge else None
        self.calls_done = len(executor.cache) if executor else 0
        self.scorer = BatchScorer(metrics, executor, encoders, prepared.metric_options)

    def score(self, batches: Iterator[list[Sample]], langs: Mapping[str, str],
              call_served: Callable[[str, int, int, CallUsage], None] | None) -> Iterator[list[SampleScores]]:
        for batch in batches:
            yield self.scorer(batch, langs, call_served)

    def encoders_manifest(self) -> dict[str, Any]:
        return self.encoders.manifest() if self.encoders else {}

    def close(self) -> None:
        if self.judge is not None:
            remember_speeds(self.judge)


def _run(options: EvaluationOptions, dataset: Dataset, metrics: list[Metric], prepared: Prepared, scoring: Scoring,
         progress: ProgressListener | None, keep_samples: bool) -> RunResult:
    manifest = _manifest(options, dataset, metrics, prepared.prompts, prepared.steps, prepared.langs,
                         scoring.judge_manifest)
    if prepared.calibrations is not None:
        manifest["calibration"] = {lang: chosen.manifest() for lang, chosen in prepared.calibrations.languages.items()}
    manifest["languages"] = dict(Counter(prepared.lang_of.values()))
    manifest[FINGERPRINT_KEY] = fingerprint(_fingerprint_settings(manifest, options, prepared.definitions))
    tally = Tally([metric.name for metric in metrics])
    kept: list[SampleScores] | None = [] if keep_samples else None
    has_judge = scoring.judge_manifest is not None
    interrupted = _score_streaming(options, dataset, metrics, manifest, scoring, progress, prepared.lang_of, tally,
                                   kept)
    manifest["encoders"] = scoring.encoders_manifest()
    result = RunResult([m.name for m in metrics], kept or [], dataset.row_errors, manifest, interrupted,
                       dataset.row_warnings, tally)
    _save_summary(result, options.out, has_judge)
    return result


def remember_speeds(judge: LoadedJudge) -> None:
    """The judge's speeds so far, for later dry runs' estimates (best effort: never fails the run)."""
    timings = getattr(judge.judge, "timings", None)
    if timings is None or (speeds := measured(timings())) is None:
        return
    config = judge.manifest["config"]
    remember(key_for(judge.manifest["sha256"], config["n_gpu_layers"], config["n_threads"]), speeds)


def _score_streaming(options: EvaluationOptions, dataset: Dataset, metrics: list[Metric], manifest: dict[str, Any],
                     scoring: Scoring, progress: ProgressListener | None, lang_of: dict[str, str], tally: Tally,
                     kept: list[SampleScores] | None) -> bool:
    """Score `batch_size` samples at a time, appending each to samples.jsonl as its batch finishes; True if
    interrupted.

    Samples that an earlier run into the folder finished, under the same fingerprint, are taken as they are.
    Every sample goes into `tally`, and into `kept` (in file order) when the caller keeps them; samples.jsonl
    ends with every sample once, in file order, the ones never scored as NaN interrupted.
    """
    has_judge = scoring.judge_manifest is not None
    sample_log = SampleLog(options.out)
    try:
        reused = sample_log.reusable(manifest[FINGERPRINT_KEY], lang_of)
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


def _fingerprint_settings(manifest: dict[str, Any], options: EvaluationOptions,
                          definitions: dict[str, Definitions]) -> dict[str, Any]:
    """What decides a sample's record: the manifest less what varies between identical runs, plus the inputs."""
    settings = {key: value for key, value in manifest.items()
                if key not in ("created", "dataset", "encoders", "prompts")}
    settings["prompts"] = {name: prompt["sha256"] for name, prompt in manifest["prompts"].items()}
    if judge := manifest["judge"]:
        config = {key: value for key, value in judge.get("config", {}).items() if key != "n_threads"}
        settings["judge"] = {"sha256": judge.get("sha256"), "chat_template_sha256": judge.get("chat_template_sha256"),
                             "config": config}
    settings["dataset_sha256"] = dataset_sha256(options.data)
    settings["inputs"] = {"field_map": options.field_map, "embedder": options.embedder,
                          "cross_encoder": options.cross_encoder, "definitions": definitions,
                          "metric_options": options.metric_options, "format_version": FORMAT_VERSION}
    return settings


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
    return ConfigError(f"Could not write the results to {out}: {error.strerror or error}. The work finished so far "
                       f"is kept in {kept}: rerun the same command once the folder is fixed, and it is not done "
                       "again.")


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


@dataclass(frozen=True)
class LoadedJudge:
    """A checked judge in memory, with what the call cache and the manifest know it by."""

    judge: GGUFJudge | ServerJudge
    config: JudgeConfig  # as loaded: the check may have turned weight repacking off
    # keys the call cache: the file's sha256, and the chat template's when one was given; a server's URL and model
    identity: str
    manifest: dict[str, Any]

    def identity_of(self) -> JudgeIdentity:
        """What a calibration must have been fitted with to apply to this judge."""
        return identity_in_manifest(self.manifest)


def identity_in_manifest(manifest: Mapping[str, Any]) -> JudgeIdentity:
    """A loaded judge's identity as its run's manifest records it."""
    return JudgeIdentity(manifest.get("name") or Path(manifest.get("path", "judge")).name,
                         manifest.get("sha256", ""), manifest.get("chat_template_sha256", ""))


def judge_identity(resolved: ResolvedModel, config: JudgeConfig) -> JudgeIdentity:
    """A judge file's identity without loading it: its sha256, and its chat template's (the GGUF's own unless
    --chat-template gives one), hashed as the loaded judge hashes it."""
    if config.chat_template is not None:
        try:
            template = config.chat_template.read_text(encoding="utf-8")
        except OSError:
            template = ""  # loading the judge reports the unreadable file
    else:
        template = resolved.info.chat_template or ""
    name = resolved.entry.name if resolved.entry else resolved.path.name
    return JudgeIdentity(name, file_sha256(resolved.path), hashlib.sha256(template.encode("utf-8")).hexdigest())


def _cluster_judge_identity(options: EvaluationOptions) -> JudgeIdentity | None:
    """A Ray run's judge as this machine knows it; None where the file is only on the nodes (no calibration)."""
    try:
        if is_server_url(options.judge):
            return load_server_judge(str(options.judge), options.judge_config).identity_of()
        return judge_identity(resolve_judge(options.judge), options.judge_config)
    except LocalevalError:
        return None


def load_judge(resolved: ResolvedModel, config: JudgeConfig, recheck: bool = False) -> LoadedJudge:
    """Prove in a child process that llama.cpp can run the checked judge file here, then load it.

    `recheck`: the previous run into the folder crashed, so a remembered check no longer counts.
    """
    entry, info = resolved.entry, resolved.info
    check_gpu_offload(config.n_gpu_layers)
    sha256 = file_sha256(resolved.path)
    config = ensure_judge_runs(resolved.path, sha256, config, trust_remembered=not recheck)
    judge = GGUFJudge(resolved.path, config)
    # A template given with --chat-template changes every prompt, so it is part of the judge's identity.
    template = f":template:{judge.template_sha256}" if config.chat_template else ""
    manifest = {"path": str(resolved.path), "name": entry.name if entry else None, "sha256": sha256,
                "size": info.size, "architecture": info.architecture,
                "chat_template": str(config.chat_template or "from GGUF metadata"),
                "chat_template_sha256": judge.template_sha256,
                "config": {**_settings(config), "chat_template": None, "n_threads": config.threads(),
                           "n_ctx": judge.n_ctx}}
    return LoadedJudge(judge, config, sha256 + template, manifest)


def _settings(config: JudgeConfig) -> dict[str, Any]:
    """The judge's settings as the manifest records them: the name of the API key's variable is no setting."""
    return {key: value for key, value in vars(config).items() if key != "api_key_env"}


def load_server_judge(url: str, config: JudgeConfig) -> LoadedJudge:
    """A judge on an OpenAI-compatible server, checked before any work (see server_judge.connect)."""
    judge = connect(url, config)
    settings = {key: getattr(config, key) for key in ("seed", "temperature", "vote_temperature", "timeout")}
    manifest = {**judge.manifest(), "config": {**settings, "n_ctx": judge.n_ctx}}
    return LoadedJudge(judge, config, judge.identity, manifest)


def _manifest(options: EvaluationOptions, dataset: Dataset, metrics: list[Metric], prompts: PromptLibrary,
              steps: list[str], langs: list[str], judge: dict[str, Any] | None) -> dict[str, Any]:
    used_prompts = {}
    for step in steps:
        for lang in langs:
            template = prompts.get(step, lang)
            used_prompts[f"{lang}/{step}"] = {"path": str(template.path), "sha256": template.sha256,
                                              "override": prompts.is_override(step, lang)}
    return {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "dataset": {"path": str(dataset.path), "format": dataset.format, "samples": len(dataset),
                    "row_errors": len(dataset.row_errors), "row_warnings": len(dataset.row_warnings)},
        "metrics": [metric.name for metric in metrics],
        "metric_options": {"strictness": options.metric_options.strictness, "beta": options.metric_options.beta,
                           "correctness_weights": list(options.metric_options.correctness_weights),
                           "similarity_threshold": options.metric_options.similarity_threshold,
                           "correctness_threshold": options.metric_options.correctness_threshold,
                           "evidence_sentences": options.metric_options.evidence_sentences},
        "lang": options.lang,
        "judge": judge,
        "prompts": used_prompts,
        "versions": {"python": platform.python_version(), **{name: version_of(name) for name in _VERSIONED_PACKAGES}},
    }


def version_of(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
