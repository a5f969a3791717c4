"""Context recall: how much of the reference the retrieved contexts support."""

from localeval.data.samples import Sample
from localeval.metrics.base import MetricProgram, metric
from localeval.metrics.claims import CLAIM_STEPS, supported_share
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions


@metric(
    "context_recall", required=("user_input", "retrieved_contexts", "reference"), steps=CLAIM_STEPS, models=("judge",)
)
def context_recall(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Expected share of the reference's statements that the retrieved contexts support: the mean P(supported).

    The reference is split into statements by the same step as the response in faithfulness, so
    answer_correctness and factual_correctness share them.
    """
    return (
        yield from supported_share(
            sample.user_input, sample.reference, sample.retrieved_contexts, "reference_statements", options
        )
    )
