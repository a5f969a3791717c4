"""Context relevancy (superseded by context_precision; kept for users of older evaluators)."""

from localeval.metrics.base import MetricProgram, Score, metric
from localeval.metrics.claims import nonblank
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.metrics.scoring import fraction
from localeval.samples import Sample
from localeval.steps import Call
from localeval.text import split_sentences


@metric("context_relevancy", required=("user_input", "retrieved_contexts"),
        steps=("sentence_relevance",), models=("judge",))
def context_relevancy(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Share of the contexts' sentences needed to answer the question (superseded by context_precision).

    Code splits each context into sentences (。！？ as well as . ! ?) and the judge marks each one,
    so what is "extracted" is always a real sentence of the context.
    """
    per_context = [split_sentences(c) for c in nonblank(sample.retrieved_contexts)]
    per_context = [sentences for sentences in per_context if sentences]
    if not per_context:
        return Score.nan("empty_contexts")
    marked = yield [Call.of("sentence_relevance", user_input=sample.user_input, sentences=s) for s in per_context]
    pairs = [(s, v) for sentences, m in zip(per_context, marked) for s, v in zip(sentences, m.verdicts)]
    extracted = [s for s, v in pairs if v]
    return Score(fraction(len(extracted), len(pairs)),
                 evidence={"extracted": extracted, "sentences": len(pairs), "note": "superseded by context_precision"})
