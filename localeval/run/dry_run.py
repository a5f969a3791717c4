"""`evaluate --dry-run`: the judge calls, tokens and time a run would take, without the judge's weights.

The real metric programs run through the real runner and step executor, batch by batch as in a run,
against a stand-in judge that has only the judge's vocabulary and chat template: every prompt is
rendered and tokenized as the judge would read it (cut down where it would not fit the window), and
answered with a stand-in answer (stand_in.py). Tokens to process follow llama.cpp's KV-cache reuse
between consecutive calls (estimate.tokens_to_process) and the judge's kept prefix states. A call
that a metric asks for only after the judge has answered it something (statement_support, one per
statement) is counted as estimated.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from localeval.data.dataset import Dataset
from localeval.data.samples import Sample
from localeval.errors import ConfigError
from localeval.judge.estimate import Cost, shared_prefix, tokens_to_process
from localeval.judge.gguf import JudgeTokenizer, check_gpu_offload, load_tokenizer
from localeval.judge.prefix_states import worth_keeping
from localeval.judge.protocol import ContextOverflow, Generation
from localeval.judge.server import is_server_url
from localeval.judge.speeds import KnownSpeeds, key_for, speeds_for
from localeval.metrics import Metric, MetricProgram, Score
from localeval.models import file_sha256, resolve_judge
from localeval.models.encoders import Encoders
from localeval.run.judges import judge_identity
from localeval.run.options import CALL_CACHE_FILE, EvaluationOptions
from localeval.run.planning import prepare, rows_for
from localeval.run.progress import format_duration
from localeval.run.runner import run_metrics
from localeval.run.stand_in import stand_in
from localeval.run.step_executor import CallCache, StepExecutor, StepOutcome
from localeval.steps import Call


@dataclass
class DryRun:
    """A run's estimated judge work, per metric in the order asked for (a call two metrics share counts under the
    first that asked for it), with the speeds that turn it into time."""

    samples: int
    judge: str | None  # the judge file, or None when no metric needs one
    by_metric: dict[str, Cost]
    speeds: KnownSpeeds | None
    reused: int = 0  # calls finished by an earlier run into --out: a run reuses them, so they are not counted

    @property
    def total(self) -> Cost:
        total = Cost()
        for cost in self.by_metric.values():
            total.add(cost)
        return total


def dry_run(options: EvaluationOptions, dataset: Dataset, metrics: list[Metric]) -> DryRun:
    """Estimate the run `run_evaluation` would make of these rows and metrics; nothing is written or loaded."""
    dataset = rows_for(dataset, metrics)
    by_metric = {metric.name: Cost() for metric in metrics}
    if not any("judge" in metric.models for metric in metrics):
        prepare(options, dataset, metrics)  # a broken prompt file fails the dry run as it would the run
        return DryRun(len(dataset), None, by_metric, None)
    if is_server_url(options.judge):
        raise ConfigError(
            "--dry-run estimates from the judge's GGUF tokenizer and its measured speeds on this "
            "machine, which a server judge does not have here: run a few rows instead."
        )
    resolved = resolve_judge(options.judge)
    prepared = prepare(options, dataset, metrics, judge_identity(resolved, options.judge_config))
    config = options.judge_config
    check_gpu_offload(config.n_gpu_layers)
    sha256 = file_sha256(resolved.path)
    tokenizer = load_tokenizer(resolved.path, config.chat_template)
    judge = PlanningJudge(tokenizer, config.n_ctx)
    # The judge's identity as a run keys its calls, so that calls a run into --out finished already are found.
    judge_id = sha256 + (f":template:{tokenizer.template.sha256}" if config.chat_template else "")
    finished = _finished_calls(options.out / CALL_CACHE_FILE)
    executor = _CountingExecutor(StepExecutor(judge, judge_id, prepared.prompts, config, finished), judge, by_metric)
    tagged = [replace(metric, compute=_asking(metric, executor.asked)) for metric in metrics]
    batch: list[Sample] = []
    for sample in chain(dataset, [None]):  # None: the end, which runs the last batch
        if sample is not None:
            batch.append(sample)
        if batch and (sample is None or len(batch) == options.batch_size):
            run_metrics(
                batch,
                tagged,
                executor,
                lambda s: prepared.lang_of[s.id],
                encoders=_stand_in_encoders,
                options=prepared.metric_options,
            )
            executor.asked.clear()  # a batch's calls are all asked within it: memory stays flat over the dataset
            batch = []
    speeds = speeds_for(key_for(sha256, config.n_gpu_layers, config.threads()), resolved.info.size)
    return DryRun(len(dataset), str(resolved.path), by_metric, speeds, executor.reused)


def _finished_calls(path: Path) -> CallCache:
    """The judge answers an earlier run into the folder kept, which a run reuses at no cost; read, never written."""
    try:
        cache = CallCache(path)
    except OSError:
        cache = CallCache()
    cache.path = None
    return cache


class PlanningJudge:
    """The judge's tokenizer and window, answering every call with a stand-in answer and counting its tokens."""

    def __init__(self, tokenizer: JudgeTokenizer, n_ctx: int):
        self.tokenizer = tokenizer
        self.n_ctx = n_ctx
        self.call: Call | None = None  # the call being served, set by the executor
        self.costs: list[Cost] = []  # one per generation, in order
        self._previous: list[int] = []  # what the KV cache holds after the last call
        self._kept_prefixes: set[tuple[int, ...]] = set()  # the steps' instructions, kept once evaluated

    def generate(
        self, messages: list[dict[str, str]], schema: dict[str, Any], max_tokens: int, seed: int, temperature: float
    ) -> Generation:
        tokens, prefix_length = self.tokenizer.prompt_and_prefix(messages)
        if len(tokens) + max_tokens > self.n_ctx:
            raise ContextOverflow(len(tokens), max_tokens, self.n_ctx)
        if self.call is None:
            raise RuntimeError("the planning judge was called outside a step executor's run")
        answer = json.dumps(stand_in(self.call.step, self.call.input_dict()), ensure_ascii=False)
        generated = min(self.tokenizer.count(answer), max_tokens)
        cached = self._previous
        if worth_keeping(prefix_length, shared_prefix(cached, tokens)):  # as the judge's PrefixStates do
            prefix = tuple(tokens[:prefix_length])
            cached = list(prefix) if prefix in self._kept_prefixes else []
            self._kept_prefixes.add(prefix)
        self.costs.append(Cost(1, len(tokens), tokens_to_process(cached, tokens), generated))
        self._previous = tokens
        return Generation(answer, len(tokens), generated, 0.0, truncated=False)


class _CountingExecutor:
    """The step executor, with each generation's cost put down to the metric that asked for the call."""

    def __init__(self, executor: StepExecutor, judge: PlanningJudge, by_metric: dict[str, Cost]):
        self.executor, self.judge, self.by_metric = executor, judge, by_metric
        self.asked: dict[Call, tuple[str, bool]] = {}  # call -> (first metric asking, count estimated)
        self.reused = 0
        self._met: set[Call] = set()

    def run(self, call: Call, lang: str) -> StepOutcome:
        self.judge.call = call
        done = len(self.judge.costs)
        outcome = self.executor.run(call, lang)
        if outcome.usage.cached and call not in self._met:  # answered before this dry run began
            self.reused += 1
        self._met.add(call)
        metric, estimated = self.asked[call]
        for cost in self.judge.costs[done:]:
            self.by_metric[metric].add(replace(cost, estimated_calls=cost.calls if estimated else 0))
        return outcome


def _asking(metric: Metric, asked: dict[Call, tuple[str, bool]]) -> Callable[..., MetricProgram | Score]:
    """The metric's compute, noting for each judge call who asked first and whether judge answers came before."""

    def compute(sample: Sample, options: Any) -> MetricProgram | Score:
        program = metric.compute(sample, options)
        return program if isinstance(program, Score) else _noting(program, metric.name, asked)

    return compute


def _noting(program: MetricProgram, name: str, asked: dict[Call, tuple[str, bool]]) -> MetricProgram:
    value: Any = None
    answered = False  # the program has had a judge answer: its later calls depend on it
    while True:
        try:
            request = program.send(value)
        except StopIteration as finished:
            return finished.value
        calls = [r for r in (request if isinstance(request, list) else [request]) if isinstance(r, Call)]
        for call in calls:
            asked.setdefault(call, (name, answered))
        value = yield request
        answered = answered or bool(calls)


@dataclass
class _StandInEmbedder:
    """Unit vectors without a model: embedders cost no judge time, and a dry run loads none."""

    name: str = "none (dry run)"
    _rng: Any = field(default_factory=lambda: np.random.default_rng(0))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._rng.standard_normal((len(texts), 8)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _stand_in_encoders(lang: str) -> Encoders:
    return Encoders(_StandInEmbedder())


def dry_run_table(dry: DryRun) -> str:
    """Per metric: judge calls, prompt tokens in all and to process, generated tokens and time; then the total."""
    speeds = dry.speeds.speeds if dry.speeds else None
    rows = [(name, cost) for name, cost in dry.by_metric.items()] + [("total", dry.total)]
    width = max(len(name) for name, _ in rows)
    judge = f"judge {dry.judge} (its vocabulary only)" if dry.judge else "no judge"
    lines = [
        f"Dry run: {dry.samples} sample{'' if dry.samples == 1 else 's'}, {judge}; no model loaded, nothing written.",
        f"{'metric':<{width}}  {'judge calls':>11}  {'prompt tokens':>13}  {'to process':>10}  "
        f"{'generated':>9}  {'est. time':>9}",
    ]
    for name, cost in rows:
        calls = ("~" if cost.estimated_calls else "") + f"{cost.calls:,}"
        time = format_duration(cost.seconds(speeds)) if speeds else "-"
        lines.append(
            f"{name:<{width}}  {calls:>11}  {cost.prompt_tokens:>13,}  {cost.to_process:>10,}  "
            f"{cost.generated:>9,}  {time:>9}"
        )
    if not dry.judge:
        return "\n".join(lines + ["No chosen metric uses the judge."])
    if dry.total.estimated_calls:
        lines.append(
            f"~ {dry.total.estimated_calls:,} of the calls follow from earlier judge answers (one per statement "
            "the judge writes): estimated by code from the text's sentences."
        )
    if dry.reused:
        lines.append(
            f"{dry.reused:,} judge calls finished by an earlier run into the results folder are reused, "
            "and not counted."
        )
    lines.append(
        "Generated tokens are estimates (typical answer lengths); to process: prompt tokens not already in "
        "the judge's KV cache from the call before; a call two metrics share counts under the first."
    )
    if dry.speeds:
        known = dry.speeds.speeds
        lines.append(
            f"Speeds: {known.prompt:.0f} prompt tok/s, {known.generated:.0f} generated tok/s: {dry.speeds.source}."
        )
    return "\n".join(lines)
