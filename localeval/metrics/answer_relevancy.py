"""Answer relevancy: how well questions written back from the response match the real question."""

import math

import numpy as np

from localeval.data.samples import Sample
from localeval.metrics.base import MetricProgram, Score, metric
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.metrics.scoring import mean, unit_interval
from localeval.models.encoders import Embed
from localeval.steps import Call


@metric("answer_relevancy", required=("user_input", "response"), steps=("questions",), models=("judge", "embedder"))
def answer_relevancy(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Mean cosine between the question and `strictness` questions the judge writes back from the response.

    One call writes all `strictness` questions (the grammar fixes their number), so the judge varies
    them instead of sampling the same question again. Cosines below 0 count as 0. The score is 0
    when the judge flags the response noncommittal (an evasive answer).
    """
    answer = yield Call.of("questions", response=sample.text("response"), count=str(options.strictness))
    vectors = yield Embed((sample.text("user_input"), *answer.questions))
    cosines = [unit_interval(float(np.dot(vectors[0], v))) for v in vectors[1:]]
    evidence = {
        "noncommittal": answer.noncommittal,
        "questions": [{"question": q, "cosine": round(c, 4)} for q, c in zip(answer.questions, cosines)],
    }
    if answer.noncommittal:
        return Score(0.0, evidence=evidence)
    value = mean(cosines)
    if math.isnan(value):
        return Score.nan("encoder_nan", **evidence)
    return Score(value, evidence=evidence)
