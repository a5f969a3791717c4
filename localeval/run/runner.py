"""Drives the metric programs over all samples: scheduling, sharing of calls, and failures as NaN.

Requests are served in rounds. In each round every waiting program's judge calls are grouped by
step, and each step runs for all samples in a row, so the judge's KV cache keeps the step's
instruction and few-shot prefix between calls (and up to JudgeConfig.batch_decode of them are
decoded together); identical calls from different metrics run once. Then the round's embedding
and similarity requests run as one batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Protocol

from localeval.data.samples import Sample
from localeval.judge.protocol import CallUsage
from localeval.metrics import Metric, MetricProgram, Score
from localeval.metrics.base import Request
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.models.encoders import Embed, Encoders, Similarity
from localeval.results.sample_scores import SampleScores
from localeval.run.step_executor import StepOutcome
from localeval.steps import Call

# step name, calls done and calls in this round, and the call's usage (cached: it cost nothing)
Progress = Callable[[str, int, int, CallUsage], None]
EncodersFor = Callable[[str], Encoders]  # a language's embedder and cross-encoder


class CallRunner(Protocol):
    """What runs the judge calls: a StepExecutor, or the dry run's counting wrapper around one."""

    def run(self, call: Call, lang: str) -> StepOutcome: ...


@dataclass
class _Task:
    """One metric program on one sample, and the call(s) it is waiting for."""

    index: int
    metric: Metric
    program: MetricProgram
    waiting: list[Call | Embed | Similarity] = field(default_factory=list)
    wants_list: bool = False


def run_metrics(
    samples: list[Sample],
    metrics: list[Metric],
    executor: CallRunner | None,
    lang_of: Callable[[Sample], str],
    progress: Progress | None = None,
    *,
    encoders: EncodersFor | None = None,
    options: MetricOptions = DEFAULT_OPTIONS,
) -> list[SampleScores]:
    """Score every sample with every metric. On Ctrl-C, unfinished scores become NaN `interrupted`."""
    results = [SampleScores(sample, lang_of(sample)) for sample in samples]
    tasks = []
    for index, result in enumerate(results):
        sample_options = replace(options, lang=result.lang)
        for metric in metrics:
            if missing := result.sample.missing(metric.required):
                result.scores[metric.name] = Score.nan(f"missing_field:{missing[0]}")
                continue
            try:
                program = metric.compute(result.sample, sample_options)
            except Exception as error:  # a bug in one metric must not end the run
                result.scores[metric.name] = _metric_error(error)
                continue
            if isinstance(program, Score):  # a model-free metric scores at once
                result.scores[metric.name] = program
                continue
            task = _Task(index, metric, program)
            if _advance(task, results, None):
                tasks.append(task)
    try:
        while tasks:
            outcomes = _run_round(tasks, results, executor, progress)
            outcomes |= _run_encoders(tasks, results, encoders)
            tasks = [task for task in tasks if _resume(task, results, outcomes)]
    except KeyboardInterrupt:
        for task in tasks:
            task.program.close()
            results[task.index].scores[task.metric.name] = Score.nan("interrupted")
    for result in results:  # metrics finish in any order; report them in the order asked for
        result.scores = {metric.name: result.scores[metric.name] for metric in metrics}
    return results


Outcomes = dict[tuple[int, Call | Embed | Similarity], StepOutcome]
_SHARED = CallUsage(cached=True)  # a call another metric of the same sample already made this round


def _run_round(
    tasks: list[_Task], results: list[SampleScores], executor: CallRunner | None, progress: Progress | None
) -> Outcomes:
    outcomes: Outcomes = {}
    batch = max(1, getattr(executor, "batch_size", 1))
    for step, requests in _group_by_step(tasks):
        pending = [request for request in dict.fromkeys(requests) if request not in outcomes]
        unreported: dict[tuple[int, Call], CallUsage] = {}
        for done, request in enumerate(requests, start=1):
            if request not in outcomes:  # the first of `pending`: serve it with the next ones
                if executor is None:
                    raise RuntimeError(f"step '{step}' needs a judge, but none was loaded")
                chunk, pending = pending[:batch], pending[batch:]
                for (index, call), outcome in zip(chunk, _run_calls(executor, chunk, results)):
                    results[index].usage.add(outcome.usage)
                    if outcome.cut:
                        results[index].inputs_cut.append({"step": step, **outcome.cut.as_dict()})
                    outcomes[(index, call)] = outcome
                    unreported[(index, call)] = outcome.usage
            if progress:
                progress(step, done, len(requests), unreported.pop(request, _SHARED))
    return outcomes


def _run_calls(executor: CallRunner, calls: list[tuple[int, Call]], results: list[SampleScores]) -> list[StepOutcome]:
    """The calls' outcomes, together where the executor decodes several at once."""
    with_lang = [(call, results[index].lang) for index, call in calls]
    if run_many := getattr(executor, "run_many", None):
        return run_many(with_lang)
    return [executor.run(call, lang) for call, lang in with_lang]


def _group_by_step(tasks: list[_Task]) -> Iterator[tuple[str, list[tuple[int, Call]]]]:
    """Steps in order of first request; within a step, sample order, then the metric's own call order."""
    groups: dict[str, list[tuple[int, Call]]] = {}
    for task in sorted(tasks, key=lambda t: t.index):
        for call in task.waiting:
            if isinstance(call, Call):
                groups.setdefault(call.step, []).append((task.index, call))
    yield from groups.items()


def _run_encoders(tasks: list[_Task], results: list[SampleScores], encoders_for: EncodersFor | None) -> Outcomes:
    """Every Embed and Similarity request of the round, per language; new texts are embedded in one batch."""
    by_lang: dict[str, list[tuple[int, Embed | Similarity]]] = {}
    for task in tasks:
        for r in task.waiting:
            if isinstance(r, (Embed, Similarity)):
                by_lang.setdefault(results[task.index].lang, []).append((task.index, r))
    outcomes: Outcomes = {}
    for lang, requests in by_lang.items():
        if encoders_for is None:
            raise RuntimeError("a metric needs an embedder, but none was loaded")
        encoders = encoders_for(lang)
        if encoders.embedder is not None:
            encoders.embed([text for _, r in requests for text in _texts_to_embed(r, encoders)])
        for index, r in requests:
            value = encoders.embed(r.texts) if isinstance(r, Embed) else encoders.similarities(r.pairs)
            outcomes[(index, r)] = StepOutcome(value)
    return outcomes


def _texts_to_embed(request: Embed | Similarity, encoders: Encoders) -> tuple[str, ...]:
    if isinstance(request, Embed):
        return request.texts
    return () if encoders.cross_encoder is not None else tuple(text for pair in request.pairs for text in pair)


def _resume(task: _Task, results: list[SampleScores], outcomes: Outcomes) -> bool:
    received = [outcomes[(task.index, call)] for call in task.waiting]
    for call, outcome in zip(task.waiting, received):
        if outcome.failure:
            if not isinstance(call, Call):
                raise TypeError(f"a {type(call).__name__} request failed: only judge calls fail, encoders raise")
            task.program.close()
            score = Score.nan(outcome.failure, step=call.step, detail=outcome.detail)
            results[task.index].scores[task.metric.name] = score
            return False
    outputs = [outcome.output for outcome in received]
    return _advance(task, results, outputs if task.wants_list else outputs[0])


def _advance(task: _Task, results: list[SampleScores], value: object) -> bool:
    """Send `value` into the program; True while it still waits for calls."""
    try:
        request = task.program.send(value)
    except StopIteration as finished:
        results[task.index].scores[task.metric.name] = finished.value
        return False
    except Exception as error:  # a bug in one metric must not end the run
        results[task.index].scores[task.metric.name] = _metric_error(error)
        return False
    task.wants_list = isinstance(request, list)
    task.waiting = list(request) if isinstance(request, list) else [_check(request)]
    if not task.waiting:
        return _advance(task, results, [])
    return True


def _metric_error(error: Exception) -> Score:
    return Score.nan("metric_error", detail=f"{type(error).__name__}: {error}")


def _check(request: Request) -> Call | Embed | Similarity:
    if not isinstance(request, (Call, Embed, Similarity)):
        raise TypeError(f"a metric yielded {type(request).__name__}, not a Call, Embed or Similarity request")
    return request
