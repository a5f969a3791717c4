"""Answer completeness: how much of what the question asks the response answers, and how little else it says."""

from localeval.data.samples import Sample
from localeval.data.text import normalize, split_sentences
from localeval.metrics.base import MetricProgram, Score, metric
from localeval.metrics.context_relevancy import in_groups
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.metrics.scoring import mean
from localeval.steps import Call


@metric(
    "answer_completeness",
    required=("user_input", "response"),
    steps=("question_parts", "part_answered", "response_focus"),
    models=("judge",),
)
def answer_completeness(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """coverage × focus: the expected share of the question's parts answered, times the expected share of
    the response's sentences that tell something the question asks for.

    The judge splits the question into the things it asks for (at most 4; "When was X founded and where is
    it based?" has two) and judges each part against the response in its own call, with its P(answered).
    Code splits the response into sentences and the judge marks each one on or off the question, with its
    P. An answer to half of a two-part question scores about 0.5, and so does a full answer padded with as
    much text about other things: the two faults, incomplete and redundant, that answer_relevancy is meant
    to catch but cannot see, since questions written back from such an answer still resemble the question.
    """
    user_input, response = sample.text("user_input"), sample.text("response")
    parts = distinct((yield Call.of("question_parts", user_input=user_input)).parts)
    if not parts:
        return Score.nan("no_question_parts")
    sentences = split_sentences(response)  # never empty: a blank response is a missing field
    groups = in_groups(sentences)
    outputs = yield (
        [Call.of("part_answered", user_input=user_input, part=part, response=response) for part in parts]
        + [Call.of("response_focus", user_input=user_input, sentences=g) for g in groups]
    )
    verdicts, marked = outputs[: len(parts)], outputs[len(parts) :]
    answered = [v.p for v in verdicts]
    on_question = [p for m in marked for p in m.p]
    coverage, focus = mean(answered), mean(on_question)
    return Score(
        coverage * focus,
        evidence={
            "coverage": round(coverage, 4),
            "focus": round(focus, 4),
            "off_question": [s for s, p in zip(sentences, on_question) if p < 0.5],
            "parts": [
                {"part": part, "answered": round(p, 4), "verdict": v.verdict, "reason": v.reason}
                for part, p, v in zip(parts, answered, verdicts)
            ],
        },
    )


def distinct(parts: list[str]) -> list[str]:
    """The parts in order, without blanks or repeats (after NFKC, case and spacing), which would weigh twice."""
    seen: dict[str, str] = {}
    for part in parts:
        key = normalize(part)  # NFKC, case-folded, whitespace collapsed
        if key and key not in seen:
            seen[key] = part.strip()
    return list(seen.values())
