"""Faithfulness: the expected share of the response's statements that the retrieved contexts support."""

from localeval.data.samples import Sample
from localeval.metrics.base import MetricProgram, metric
from localeval.metrics.claims import CLAIM_STEPS, supported_share
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions


@metric("faithfulness", required=("user_input", "response", "retrieved_contexts"), steps=CLAIM_STEPS, models=("judge",))
def faithfulness(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Expected share of the response's statements that the retrieved contexts support: the mean P(supported)."""
    return (
        yield from supported_share(sample.user_input, sample.response, sample.retrieved_contexts, "statements", options)
    )
