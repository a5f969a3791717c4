"""Grounding coverage: the model-free faithfulness floor that judge-based faithfulness is measured against."""

from localeval.data.samples import Sample
from localeval.data.text import split_sentences
from localeval.grounding.coverage import coverage, units
from localeval.metrics.base import Score, metric
from localeval.metrics.claims import nonblank
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions


@metric("grounding_coverage", required=("response", "retrieved_contexts"))
def grounding_coverage(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> Score:
    """Share of the least-covered response sentence found in the contexts (character bigrams for ja/zh, else words).

    No model: an addition the contexts do not contain shows up as an uncovered sentence. It is the
    floor that faithfulness must beat on labelled data (benchmarks/metaeval.py).
    """
    contexts = nonblank(sample.retrieved_contexts)
    if not contexts:
        return Score.nan("empty_contexts")
    sentences = split_sentences(sample.text("response"))
    if not sentences:
        return Score.nan("no_statements")
    have = units("\n".join(contexts))
    rows = [{"sentence": sentence, "coverage": round(coverage(sentence, have), 4)} for sentence in sentences]
    return Score(min(coverage(sentence, have) for sentence in sentences), evidence={"sentences": rows})
