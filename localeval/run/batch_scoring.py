"""One batch of samples scored on models in memory: the unit of work of a local run and of each Ray actor.

A batch's scores depend on its samples alone, never on the batches scored before it in the same process:
the judge's KV cache and the embedder's memo start empty. That is what lets a cluster hand batches to any
actor, in any order, and still write the scores a local run writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from localeval.data.samples import Sample
from localeval.metrics import Metric
from localeval.metrics.options import MetricOptions
from localeval.models.encoders import EncoderPool
from localeval.results.sample_scores import SampleScores
from localeval.run.runner import Progress, run_metrics
from localeval.run.step_executor import StepExecutor


@dataclass
class BatchScorer:
    metrics: list[Metric]
    executor: StepExecutor | None  # None when no metric needs the judge
    encoders: EncoderPool | None  # None when no metric needs an embedder
    metric_options: MetricOptions

    def __call__(
        self, batch: list[Sample], langs: Mapping[str, str], call_served: Progress | None = None
    ) -> list[SampleScores]:
        """Every metric on every sample of the batch; `langs` maps each sample id to its prompt language."""
        if not batch:
            return []
        if self.executor is not None:
            self.executor.forget_context()
        if self.encoders is not None:
            self.encoders.forget()
        return run_metrics(
            batch,
            self.metrics,
            self.executor,
            lambda sample: langs[sample.id],
            call_served,
            encoders=self.encoders,
            options=self.metric_options,
        )
