"""The Python front door: `evaluate` for notebooks and scripts, with the judge and embedders loaded once.

A run is planned (the dataset checked, the metrics chosen) and then run; `localeval evaluate` is a thin layer
over `plan` and `run` that prints the plan first. `evaluate` adds what a Python caller needs: in-memory data
(a list of dicts or a pandas DataFrame), models kept in memory between calls, and an optional results folder.
"""

from __future__ import annotations

import atexit
import json
import logging
import math
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from localeval.data.dataset import Dataset
from localeval.errors import ConfigError
from localeval.grounding.calibration import CalibrationFile
from localeval.judge.protocol import JudgeConfig
from localeval.judge.server import is_server_url
from localeval.metrics import Metric
from localeval.metrics.options import MetricOptions
from localeval.metrics.selection import metric_names
from localeval.models import resolve_judge
from localeval.models.encoders import EncoderPool
from localeval.results.run_result import RunResult
from localeval.run.evaluation import run_evaluation
from localeval.run.judges import LoadedJudge, load_judge, load_server_judge
from localeval.run.options import DEFAULT_BATCH, EvaluationOptions, RayExecutor
from localeval.run.planning import choose_for_dataset, load_dataset, rows_for
from localeval.run.progress import ProgressListener
from localeval.steps.criteria import Definitions, parse_named

if TYPE_CHECKING:
    import pandas

log = logging.getLogger("localeval")
Data = Union[str, Path, Iterable[Mapping[str, Any]], "pandas.DataFrame"]


class Judge:
    """A judge, checked and loaded once: pass it to any number of `evaluate` calls.

    `model` is a GGUF file path, a registry name (`localeval models list`) or an OpenAI-compatible server's URL
    (`http://HOST:PORT/v1`, with `#MODEL` where it serves several; its key read from the environment variable
    `api_key_env`); None is the registry's default judge.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        n_ctx: int = 8192,
        threads: int | None = None,
        gpu_layers: int = 0,
        seed: int = 0,
        temperature: float = 0.0,
        chat_template: str | Path | None = None,
        timeout: float | None = None,
        draft_tokens: int = 3,
        batch_decode: int = 1,
        api_key_env: str | None = None,
    ) -> None:
        config = JudgeConfig.from_options(
            n_ctx=n_ctx,
            threads=threads,
            gpu_layers=gpu_layers,
            seed=seed,
            temperature=temperature,
            timeout=timeout,
            draft_tokens=draft_tokens,
            batch_decode=batch_decode,
            chat_template=chat_template,
            api_key_env=api_key_env,
        )
        spec = None if model is None else str(model)
        self.loaded: LoadedJudge = (
            load_server_judge(spec, config)
            if spec is not None and is_server_url(spec)
            else load_judge(resolve_judge(spec), config)
        )
        # llama-cpp-python frees the model in __del__, which fails noisily once the interpreter is being torn down.
        atexit.register(self.close)

    def close(self) -> None:
        """Free the model now (it is freed at exit otherwise); the Judge cannot be used after."""
        self.loaded.judge.close()

    @property
    def path(self) -> Path | None:
        """The GGUF file; None for a server judge."""
        path = self.loaded.manifest.path
        return Path(path) if path is not None else None

    def __repr__(self) -> str:
        record = self.loaded.manifest
        if record.url is not None:
            return f"Judge({record.label!r})"
        return f"Judge({str(self.path)!r}, sha256={record.sha256[:12]}…)"


class Embedders:
    """The embedders (and an optional cross-encoder), each loaded on first use and kept for later calls.

    `embedder`: a registry name, a sentence-transformers folder or a GGUF file; None picks per language.
    """

    def __init__(self, embedder: str | Path | None = None, cross_encoder: str | Path | None = None) -> None:
        self.pool = EncoderPool(
            None if embedder is None else str(embedder), Path(cross_encoder) if cross_encoder else None
        )


def evaluate(
    data: Data,
    metrics: Sequence[str] | str | None = None,
    judge: Judge | str | Path | None = None,
    out: str | Path | None = None,
    *,
    embedders: Embedders | None = None,
    lang: str = "auto",
    field_map: Mapping[str, str] | None = None,
    prompts: str | Path | None = None,
    criteria: Mapping[str, str] | None = None,
    rubrics: Mapping[str, str] | None = None,
    strictness: int = 3,
    evidence_sentences: int = 0,
    calibration: str | Path | None = None,
    batch_size: int = DEFAULT_BATCH,
    progress: ProgressListener | None = None,
    keep_samples: bool = True,
    executor: RayExecutor | None = None,
    **judge_options: Any,
) -> RunResult:
    """Score `data` and return the run's result; with `out`, also write (or resume) a results folder there.

    `data`: a JSONL, JSON, CSV or Parquet file, a `datasets` folder, a list of dicts, or a pandas DataFrame,
    with the dataset fields (user_input, response, retrieved_contexts, reference, ...; `field_map` renames others).
    `metrics`: names, or a comma-separated string; None is the default suite: the metrics validated in the data's
    languages that it has fields for.
    `judge`: a `Judge` to reuse, or a path or registry name loaded for this call only; `judge_options` (n_ctx,
    threads, gpu_layers, seed, temperature, chat_template, timeout, draft_tokens, batch_decode, api_key_env) apply
    to the latter.
    `keep_samples=False` keeps per-sample results in `out` only, for datasets too large for memory.
    `executor=RayExecutor("local" | "auto" | address)` scores on a Ray cluster, each actor loading the judge
    and embedders named here (a loaded `Judge` or `Embedders` cannot travel).
    """
    if isinstance(judge, Judge) and judge_options:
        raise ConfigError(
            f"Judge options ({', '.join(sorted(judge_options))}) belong to Judge(...) when a loaded Judge is passed."
        )
    if out is None and not keep_samples:
        raise ConfigError("keep_samples=False needs out=: the samples would be kept nowhere.")
    definitions = Definitions(parse_named(_pairs(criteria), "criterion"), parse_named(_pairs(rubrics), "rubric"))
    with tempfile.TemporaryDirectory(prefix="localeval-") as scratch:
        options = EvaluationOptions(
            data=_data_file(data, Path(scratch)),
            out=Path(out) if out is not None else Path(scratch) / "results",
            metrics=metric_names(metrics),
            judge=None if judge is None or isinstance(judge, Judge) else str(judge),
            judge_config=_judge_config(judge_options),
            prompts_dir=Path(prompts) if prompts else None,
            field_map=dict(field_map or {}),
            lang=lang,
            definitions=definitions,
            batch_size=batch_size,
            executor=executor,
            metric_options=MetricOptions(strictness=strictness, evidence_sentences=evidence_sentences),
            calibration=CalibrationFile.load(Path(calibration)) if calibration else None,
        )
        planned = plan(options)
        for name, why in planned.skipped.items():
            log.warning("Skipped %s: %s", name, why)
        for error in planned.dataset.row_errors:
            log.warning("Row skipped: %s", error)
        result = run(planned, progress, keep_samples, judge if isinstance(judge, Judge) else None, embedders)
    result.folder = Path(out) if out is not None else None
    return result


@dataclass(frozen=True)
class Plan:
    """A run as settled before any model loads: its options, the rows its metrics can use, and what is left out."""

    options: EvaluationOptions
    dataset: Dataset
    metrics: list[Metric]
    skipped: dict[str, str]  # a validated metric the data cannot feed, and why
    unvalidated: dict[str, str]  # a metric left out of the default suite, and its cards


def plan(options: EvaluationOptions) -> Plan:
    """Check the dataset and choose the metrics, as every run starts (the CLI shows the plan before running it)."""
    dataset = load_dataset(options)
    choice = choose_for_dataset(options, dataset)
    return Plan(options, rows_for(dataset, choice.chosen), choice.chosen, choice.skipped, choice.unvalidated)


def run(
    planned: Plan,
    progress: ProgressListener | None = None,
    keep_samples: bool = True,
    judge: Judge | None = None,
    embedders: Embedders | None = None,
) -> RunResult:
    """Score a plan, with models already loaded where given, else with those its options name."""
    return run_evaluation(
        planned.options,
        planned.dataset,
        planned.metrics,
        progress=progress,
        keep_samples=keep_samples,
        judge=judge.loaded if judge else None,
        encoders=embedders.pool if embedders else None,
    )


def _data_file(data: Data, scratch: Path) -> Path:
    """A file path as it is; in-memory records as a JSONL file, which the dataset reader checks row by row."""
    if isinstance(data, (str, Path)):
        return Path(data)
    if hasattr(data, "to_dict") and hasattr(data, "columns"):  # a pandas DataFrame, without importing pandas
        data = data.to_dict(orient="records")
    if isinstance(data, Mapping) or not isinstance(data, Iterable):
        raise ConfigError(
            f"data must be a file path, a list of dicts or a pandas DataFrame, not {type(data).__name__}."
        )
    path = scratch / "records.jsonl"
    with path.open("w", encoding="utf-8") as file:
        for number, record in enumerate(data, start=1):
            if not isinstance(record, Mapping):
                raise ConfigError(f"data record {number} is a {type(record).__name__}, not a dict.")
            present = {str(key): value for key, value in record.items() if not _missing(value)}
            file.write(json.dumps(present, ensure_ascii=False, default=_plain) + "\n")
    return path


def _missing(value: Any) -> bool:
    """A DataFrame fills absent fields with None or NaN: such a field is left out, as in a JSONL row without it."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _plain(value: Any) -> Any:
    """numpy scalars and arrays, as a DataFrame holds them, as JSON values."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"a {type(value).__name__} cannot be a dataset value")


def _pairs(named: Mapping[str, str] | None) -> list[str]:
    return [f"{name}={text}" for name, text in (named or {}).items()]


def _judge_config(options: dict[str, Any]) -> JudgeConfig:
    try:
        return JudgeConfig.from_options(**options)
    except ConfigError as error:
        raise ConfigError(f"{error} (evaluate's other options are its keyword arguments)") from None
