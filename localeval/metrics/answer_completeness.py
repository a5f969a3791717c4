"""Answer completeness: how much of what the question asks the response answers."""

from localeval.metrics.base import MetricProgram, Score, metric
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.metrics.scoring import mean
from localeval.samples import Sample
from localeval.steps import Call
from localeval.text import normalize


@metric("answer_completeness", required=("user_input", "response"), steps=("question_parts", "part_answered"),
        models=("judge",))
def answer_completeness(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Mean over the question's parts of the judge's P(the response answers the part).

    The judge splits the question into the things it asks for (at most 4; "When was X founded and where is
    it based?" has two), then judges each part against the response in its own call. The score is the
    expected share of parts answered, so an answer to half of a two-part question scores about 0.5, which
    answer_relevancy cannot see: questions written back from half an answer still resemble the question.
    """
    parts = distinct((yield Call.of("question_parts", user_input=sample.user_input)).parts)
    if not parts:
        return Score.nan("no_question_parts")
    verdicts = yield [Call.of("part_answered", user_input=sample.user_input, part=part, response=sample.response)
                      for part in parts]
    answered = [v.p for v in verdicts]
    return Score(mean(answered), evidence={"parts": [
        {"part": part, "answered": round(p, 4), "verdict": v.verdict, "reason": v.reason}
        for part, p, v in zip(parts, answered, verdicts)]})


def distinct(parts: list[str]) -> list[str]:
    """The parts in order, without blanks or repeats (after NFKC, case and spacing), which would weigh twice."""
    seen: dict[str, str] = {}
    for part in parts:
        key = normalize(part)  # NFKC, case-folded, whitespace collapsed
        if key and key not in seen:
            seen[key] = part.strip()
    return list(seen.values())
