"""A run's options: what to score, with which judge and models, into which folder, and where."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from localeval.grounding.calibration import CalibrationFile
from localeval.judge.protocol import JudgeConfig
from localeval.metrics.options import MetricOptions
from localeval.steps.criteria import Definitions

CALL_CACHE_FILE = "judge_calls.jsonl"
DEFAULT_BATCH = 16


@dataclass(frozen=True)
class RayExecutor:
    """Score on a Ray cluster: `local` starts one on this machine, `auto` joins the one `ray start` runs here,
    anything else is the address of a running cluster (host:port, or ray://host:port for Ray Client)."""

    address: str = "auto"
    actors: int | None = None  # None: as many as the cluster's CPUs hold, --threads CPUs each


@dataclass(frozen=True)
class EvaluationOptions:
    data: Path
    out: Path
    metrics: tuple[str, ...] | None = None  # None: the validated metrics the dataset has fields for
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
