"""Building a run's manifest, and the part of it that decides whether a sample's record can be reused (the
fingerprint)."""

from __future__ import annotations

import platform
from datetime import datetime, timezone
from importlib import metadata
from typing import Any

from localeval.data.dataset import Dataset, dataset_sha256
from localeval.metrics import Metric
from localeval.results.manifest import (
    FINGERPRINT_KEY,
    FORMAT_VERSION,
    DatasetRecord,
    JudgeRecord,
    PromptRecord,
    RunManifest,
)
from localeval.run.options import EvaluationOptions
from localeval.steps.criteria import Definitions
from localeval.steps.prompts import PromptLibrary

_VERSIONED_PACKAGES = ("localeval", "llama-cpp-python", "sentence-transformers", "torch", "numpy", "pydantic", "click")


def fingerprint_settings(
    manifest: RunManifest, options: EvaluationOptions, definitions: dict[str, Definitions]
) -> dict[str, Any]:
    """What decides a sample's record: the manifest less what varies between identical runs, plus the inputs."""
    recorded = manifest.to_json()
    settings = {
        key: value
        for key, value in recorded.items()
        if key not in ("format_version", "created", "dataset", "encoders", "prompts", FINGERPRINT_KEY)
    }
    settings["prompts"] = {name: prompt.sha256 for name, prompt in manifest.prompts.items()}
    if judge := manifest.judge:
        config = {key: value for key, value in judge.config.items() if key != "n_threads"}
        settings["judge"] = {
            "sha256": judge.sha256,
            "chat_template_sha256": judge.chat_template_sha256,
            "config": config,
        }
    settings["dataset_sha256"] = dataset_sha256(options.data)
    settings["inputs"] = {
        "field_map": options.field_map,
        "embedder": options.embedder,
        "cross_encoder": options.cross_encoder,
        "definitions": definitions,
        "metric_options": options.metric_options,
        "format_version": FORMAT_VERSION,
    }
    return settings


def run_manifest(
    options: EvaluationOptions,
    dataset: Dataset,
    metrics: list[Metric],
    prompts: PromptLibrary,
    steps: list[str],
    langs: list[str],
    judge: JudgeRecord | None,
) -> RunManifest:
    used_prompts = {}
    for step in steps:
        for lang in langs:
            template = prompts.get(step, lang)
            used_prompts[f"{lang}/{step}"] = PromptRecord(
                str(template.path), template.sha256, prompts.is_override(step, lang)
            )
    return RunManifest(
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        dataset=DatasetRecord(
            str(dataset.path), dataset.format, len(dataset), len(dataset.row_errors), len(dataset.row_warnings)
        ),
        metrics=[metric.name for metric in metrics],
        metric_options={
            "strictness": options.metric_options.strictness,
            "beta": options.metric_options.beta,
            "correctness_weights": list(options.metric_options.correctness_weights),
            "similarity_threshold": options.metric_options.similarity_threshold,
            "correctness_threshold": options.metric_options.correctness_threshold,
            "evidence_sentences": options.metric_options.evidence_sentences,
        },
        lang=options.lang,
        judge=judge,
        prompts=used_prompts,
        versions={"python": platform.python_version(), **{name: version_of(name) for name in _VERSIONED_PACKAGES}},
    )


def version_of(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
