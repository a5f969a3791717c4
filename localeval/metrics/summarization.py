"""Summarization score: does the summary (the response) keep the text's key facts, and is it short?"""

from localeval.data.samples import Sample
from localeval.metrics.base import MetricProgram, Score, metric
from localeval.metrics.claims import nonblank
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.metrics.scoring import conciseness, fraction, weighted_mean
from localeval.steps import Call

QA_WEIGHT = 0.5  # the rest is the conciseness term, as in Ragas


@metric(
    "summarization_score",
    required=("retrieved_contexts", "response"),
    steps=("summary_questions", "summary_answers"),
    models=("judge",),
)
def summarization_score(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """0.5 × share of keyphrase questions the summary answers + 0.5 × conciseness (1 - summary/text length).

    The text being summarised is the retrieved contexts, joined; the summary is the response.
    """
    contexts = nonblank(sample.retrieved_contexts)
    if not contexts:
        return Score.nan("empty_contexts")
    text = "\n\n".join(contexts)
    summary = sample.text("response")
    prepared = yield Call.of("summary_questions", text=text)
    answers = (yield Call.of("summary_answers", summary=summary, questions=prepared.questions)).answers
    qa = fraction(sum(answers), len(answers))
    concise = conciseness(len(summary), len(text))
    evidence = {
        "keyphrases": prepared.keyphrases,
        "questions": [{"question": q, "answered": a} for q, a in zip(prepared.questions, answers)],
        "qa_score": qa,
        "conciseness": concise,
    }
    return Score(weighted_mean([qa, concise], [QA_WEIGHT, 1 - QA_WEIGHT]), evidence=evidence)
