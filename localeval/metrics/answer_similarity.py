"""Answer similarity: how close the response is in meaning to the reference answer."""

import math

from localeval.data.samples import Sample
from localeval.metrics.base import MetricProgram, Score, metric
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.metrics.scoring import apply_threshold, unit_interval
from localeval.models.encoders import Similarity


def similarity(response: str, reference: str) -> Similarity:
    return Similarity(((response, reference),))


@metric("answer_similarity", required=("response", "reference"), models=("embedder",))
def answer_similarity(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Cosine of the response's and the reference's embeddings, or the cross-encoder's score when one is given.

    A negative cosine counts as 0; a NaN from the encoder is NaN `encoder_nan`. With
    `similarity_threshold` the score becomes 1 at or above it, else 0.
    """
    value = unit_interval(float((yield similarity(sample.text("response"), sample.text("reference")))[0]))
    if math.isnan(value):
        return Score.nan("encoder_nan")
    return Score(apply_threshold(value, options.similarity_threshold), evidence={"similarity": round(value, 4)})
