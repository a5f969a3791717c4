"""Context relevancy (superseded by context_precision; kept for users of older evaluators)."""

from localeval.data.samples import Sample
from localeval.data.text import split_sentences
from localeval.metrics.base import MetricProgram, Score, metric
from localeval.metrics.claims import nonblank
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.metrics.scoring import mean
from localeval.steps import Call

# The judge marks a context's sentences in groups of at most this many, so that a context of any length
# fits the window; a group of 64 typical sentences takes about 2,000 tokens.
SENTENCES_PER_CALL = 64


@metric(
    "context_relevancy", required=("user_input", "retrieved_contexts"), steps=("sentence_relevance",), models=("judge",)
)
def context_relevancy(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Expected share of the contexts' sentences needed to answer the question (superseded by context_precision).

    Code splits each context into sentences (。！？ as well as . ! ?) and the judge marks each one, so what is
    "extracted" is always a real sentence of the context. A sentence counts by the judge's own P(mark = 1), which
    ranked focused contexts above padded ones more often than its 0/1 marks in English and Japanese, less often in
    Chinese (docs/validation.md, "context relevance"); without P, by its mark.
    """
    per_context = [split_sentences(c) for c in nonblank(sample.retrieved_contexts)]
    per_context = [sentences for sentences in per_context if sentences]
    if not per_context:
        return Score.nan("empty_contexts")
    groups = [group for sentences in per_context for group in in_groups(sentences)]
    marked = yield [Call.of("sentence_relevance", user_input=sample.text("user_input"), sentences=g) for g in groups]
    pairs = [(s, v) for group, m in zip(groups, marked) for s, v in zip(group, m.verdicts)]
    probabilities = [p for m in marked for p in m.p]
    return Score(
        mean(probabilities),
        evidence={
            "extracted": [s for s, v in pairs if v],
            "sentences": len(pairs),
            "note": "superseded by context_precision",
        },
    )


def in_groups(sentences: list[str]) -> list[list[str]]:
    """Consecutive groups of at most SENTENCES_PER_CALL sentences, one judge call each."""
    return [sentences[i : i + SENTENCES_PER_CALL] for i in range(0, len(sentences), SENTENCES_PER_CALL)]
