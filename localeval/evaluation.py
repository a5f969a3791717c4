"""One evaluation run, from a dataset file to a saved results folder."""

from __future__ import annotations

import platform
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from localeval.dataset import Dataset, read_dataset
from localeval.encoders import CrossEncoderScorer, Encoders, SentenceTransformerEmbedder
from localeval.errors import ConfigError
from localeval.judge import GGUFJudge, JudgeConfig
from localeval.metrics import METRICS, Metric
from localeval.metrics.options import MetricOptions
from localeval.models import check_gguf, file_sha256, resolve_embedder_dir, resolve_judge
from localeval.prompts import PromptLibrary
from localeval.results import RunResult
from localeval.runner import Progress, run_metrics
from localeval.samples import FIELDS
from localeval.step_executor import CallCache, StepExecutor

CALL_CACHE_FILE = "judge_calls.jsonl"
_VERSIONED_PACKAGES = ("localeval", "llama-cpp-python", "sentence-transformers", "torch", "numpy", "pydantic", "click")


@dataclass(frozen=True)
class EvaluationOptions:
    data: Path
    out: Path
    metrics: tuple[str, ...] | None = None  # None: every metric whose fields the dataset has
    judge: str | None = None  # a GGUF path or a registry name; None: the registry's default judge
    judge_config: JudgeConfig = field(default_factory=JudgeConfig)
    prompts_dir: Path | None = None
    field_map: dict[str, str] = field(default_factory=dict)
    lang: str = "en"
    embedder: str | None = None  # a sentence-transformers folder or a registry name; None: the default
    cross_encoder: Path | None = None  # answer_similarity scores pairs with it instead of cosine
    metric_options: MetricOptions = field(default_factory=MetricOptions)


@dataclass(frozen=True)
class MetricChoice:
    chosen: list[Metric]
    skipped: dict[str, str]  # metric name -> why it was not chosen


def choose_metrics(requested: tuple[str, ...] | None, dataset: Dataset) -> MetricChoice:
    """The requested metrics, or by default every metric whose required fields some row has."""
    if requested is not None:
        if unknown := [name for name in requested if name not in METRICS]:
            raise ConfigError(f"Unknown metric(s): {', '.join(unknown)}. Known metrics: {', '.join(sorted(METRICS))}.")
        return MetricChoice([METRICS[name] for name in dict.fromkeys(requested)], {})
    present = {name for sample in dataset.samples for name in FIELDS if sample.has(name)}
    chosen, skipped = [], {}
    for metric in METRICS.values():
        missing = [name for name in metric.required if name not in present]
        if missing:
            skipped[metric.name] = f"the dataset has no {', '.join(missing)}"
        else:
            chosen.append(metric)
    if not chosen:
        raise ConfigError(f"No metric can run on {dataset.path}: {'; '.join(f'{k}: {v}' for k, v in skipped.items())}.")
    return MetricChoice(chosen, skipped)


def run_evaluation(options: EvaluationOptions, dataset: Dataset, metrics: list[Metric],
                   progress: Progress | None = None) -> RunResult:
    """Score the dataset and save the results folder; an interrupted run saves what it has and resumes later."""
    prompts = PromptLibrary(options.prompts_dir)
    steps = [step for metric in metrics for step in metric.steps]
    for step in dict.fromkeys(steps):
        prompts.get(step, options.lang)  # a broken prompt file fails now, before the model loads
    executor, judge_manifest = None, None
    if any("judge" in metric.models for metric in metrics):
        options.out.mkdir(parents=True, exist_ok=True)
        executor, judge_manifest = _load_judge(options, prompts)
    encoders, encoder_manifest = _load_encoders(options, metrics)
    samples = run_metrics(dataset.samples, metrics, executor, lambda sample: options.lang, progress,
                          encoders=encoders, options=options.metric_options)
    interrupted = any(score.reason == "interrupted" for result in samples for score in result.scores.values())
    manifest = _manifest(options, dataset, metrics, prompts, steps, judge_manifest)
    manifest["encoders"] = encoder_manifest
    result = RunResult([m.name for m in metrics], samples, dataset.row_errors, manifest, interrupted)
    result.save(options.out)
    return result


def load_dataset(options: EvaluationOptions) -> Dataset:
    return read_dataset(options.data, options.field_map)


def _load_judge(options: EvaluationOptions, prompts: PromptLibrary) -> tuple[StepExecutor, dict[str, Any]]:
    resolved = resolve_judge(options.judge)
    entry = resolved.entry
    info = check_gguf(resolved.path, expected_sha256=entry.sha256 if entry else None,
                      expected_size=entry.size if entry else None)
    sha256 = file_sha256(resolved.path)
    judge = GGUFJudge(resolved.path, options.judge_config)
    cache = CallCache(options.out / CALL_CACHE_FILE)
    manifest = {"path": str(resolved.path), "name": entry.name if entry else None, "sha256": sha256,
                "size": info.size, "architecture": info.architecture,
                "chat_template": str(options.judge_config.chat_template or "from GGUF metadata"),
                "config": {**vars(options.judge_config), "chat_template": None,
                           "n_threads": options.judge_config.threads(), "n_ctx": judge.n_ctx}}
    return StepExecutor(judge, sha256, prompts, options.judge_config, cache), manifest


def _load_encoders(options: EvaluationOptions, metrics: list[Metric]) -> tuple[Encoders | None, dict[str, Any]]:
    """The embedder when a metric needs one; the cross-encoder when the user gave one."""
    needs_embedder = any("embedder" in metric.models for metric in metrics)
    if not needs_embedder:
        return None, {}
    embedder_dir = _embedder_dir(options.embedder)
    encoders = Encoders(SentenceTransformerEmbedder(embedder_dir))
    manifest: dict[str, Any] = {"embedder": str(embedder_dir)}
    if options.cross_encoder is not None:
        encoders.cross_encoder = CrossEncoderScorer(options.cross_encoder, seed=options.judge_config.seed)
        manifest["cross_encoder"] = str(options.cross_encoder)
    return encoders, manifest


def _embedder_dir(name_or_path: str | None) -> Path:
    if name_or_path is not None and (Path(name_or_path).exists() or "/" in name_or_path):
        return Path(name_or_path)
    return resolve_embedder_dir(name_or_path)


def _manifest(options: EvaluationOptions, dataset: Dataset, metrics: list[Metric], prompts: PromptLibrary,
              steps: list[str], judge: dict[str, Any] | None) -> dict[str, Any]:
    used_prompts = {}
    for step in dict.fromkeys(steps):
        template = prompts.get(step, options.lang)
        used_prompts[f"{options.lang}/{step}"] = {"path": str(template.path), "sha256": template.sha256,
                                                  "override": prompts.is_override(step, options.lang)}
    return {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "dataset": {"path": str(dataset.path), "format": dataset.format, "samples": len(dataset.samples),
                    "row_errors": len(dataset.row_errors)},
        "metrics": [metric.name for metric in metrics],
        "lang": options.lang,
        "judge": judge,
        "prompts": used_prompts,
        "versions": {"python": platform.python_version(), **{name: _version(name) for name in _VERSIONED_PACKAGES}},
    }


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
