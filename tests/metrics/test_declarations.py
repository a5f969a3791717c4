"""Every registered metric's declaration against what its program does.

The runner trusts the declarations: it checks a row for the `required` fields only, loads the judge
or an embedder only for the `models` named, and loads the prompts of the `steps` named before the
model. So each metric runs here to its score on a row with every field, with canned step outputs,
and what it read, called and asked for must be what it declared.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from localeval.data.samples import FIELDS, RUBRIC_FIELD, Sample
from localeval.metrics import METRICS, Metric, Score
from localeval.metrics.options import MetricOptions
from localeval.models.encoders import Embed, Similarity
from localeval.steps import Call, criteria
from localeval.steps.completeness import QuestionParts
from localeval.steps.entities import Entities
from localeval.steps.prompts import PromptLibrary
from localeval.steps.questions import Questions
from localeval.steps.relevance import SentenceVerdicts
from localeval.steps.rubric import RubricGrade
from localeval.steps.statements import StatedClaim, Statements
from localeval.steps.summary import KeyphraseQuestions, SummaryAnswers
from localeval.steps.verdicts import CritiqueAnswer, SupportVerdict, Verdict

BUILT_IN = criteria.by_language(PromptLibrary(), ["en"], criteria.Definitions())["en"]
OPTIONS = MetricOptions(criteria={"en": BUILT_IN.criteria}, rubrics={"en": BUILT_IN.rubrics})
ROW = {
    "user_input": "What is the capital of France?",
    "response": "Paris is the capital. It is large.",
    "reference": "Paris is the capital of France. It lies on the Seine.",
    "retrieved_contexts": ("Paris is the capital of France.",),
    "reference_contexts": ("Paris is the capital of France.",),
    "retrieved_context_ids": ("d1",),
    "reference_context_ids": ("d1",),
}
SHORT_ANSWERS = {**ROW, "response": "Paris", "reference": "Paris"}
NO_STATEMENTS = "Not the capital of Spain."  # canned: the statements step finds no claim in it (stated_claim's turn)
NEGATIONS = {**ROW, "response": NO_STATEMENTS, "reference": NO_STATEMENTS}


class ReadLog(dict):
    """A sample's `extra`, noting each key read."""

    def __init__(self, data: dict, read: set[str]):
        super().__init__(data)
        self.read = read

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)


class RecordingSample(Sample):
    """A Sample that notes every field read: by attribute, by `has`, or from `extra`."""

    def __getattribute__(self, name: str):
        if name in FIELDS:
            object.__getattribute__(self, "extra").read.add(name)
        return object.__getattribute__(self, name)


@dataclass
class Trace:
    read: set[str] = field(default_factory=set)
    steps: set[str] = field(default_factory=set)
    models: set[str] = field(default_factory=set)


def canned(call: Call) -> object:
    """A valid output for any step, with as many items as the call asks for."""
    inputs = call.input_dict()
    outputs = {
        "statements": lambda: Statements(
            statements=[] if inputs["sentence"] == NO_STATEMENTS else [inputs["sentence"]]
        ),
        "answer_claim": lambda: Statements(statements=[f"The capital of France is {inputs['text']}."]),
        "stated_claim": lambda: StatedClaim(statement="Madrid is the capital of Spain.", answer="yes", probability=0.9),
        "statement_support": lambda: SupportVerdict(verdict=1, probability=0.9),
        "context_usefulness": lambda: Verdict(reason="Used.", verdict=1, probability=0.9),
        "critique": lambda: CritiqueAnswer(answer="yes", reason="Fine."),
        "questions": lambda: Questions(questions=["What is the capital?"] * int(inputs["count"]), noncommittal=0),
        "sentence_relevance": lambda: SentenceVerdicts(verdicts=[1] * len(inputs["sentences"])),
        "entities": lambda: Entities(entities=["Paris"]),
        "rubric": lambda: RubricGrade(reason="Good.", score=4),
        "summary_questions": lambda: KeyphraseQuestions(keyphrases=["Paris"], questions=["Is Paris the capital?"]),
        "summary_answers": lambda: SummaryAnswers(answers=[1] * len(inputs["questions"])),
        "question_parts": lambda: QuestionParts(parts=["What is the capital of France?"]),
        "part_answered": lambda: Verdict(reason="Paris.", verdict=1, probability=0.9),
        "response_focus": lambda: SentenceVerdicts(verdicts=[1] * len(inputs["sentences"]), probabilities=None),
    }
    return outputs[call.step]()


def answer(request: object, trace: Trace) -> object:
    if isinstance(request, list):
        return [answer(call, trace) for call in request]
    if isinstance(request, Call):
        trace.steps.add(request.step)
        trace.models.add("judge")
        return canned(request)
    trace.models.add("embedder")
    if isinstance(request, Embed):
        return np.full((len(request.texts), 4), 0.5)
    assert isinstance(request, Similarity)
    return np.full(len(request.pairs), 0.8)


def run_to_score(metric: Metric, row: dict = ROW, trace: Trace | None = None) -> tuple[Score, Trace]:
    trace = trace or Trace()
    sample = RecordingSample("q1", 1, **row, extra=ReadLog({RUBRIC_FIELD: "1: wrong. 5: right."}, trace.read))
    program = metric.compute(sample, OPTIONS)
    if isinstance(program, Score):
        return program, trace
    request = next(program)
    while True:
        try:
            request = program.send(answer(request, trace))
        except StopIteration as finished:
            return finished.value, trace


@pytest.mark.parametrize("metric", METRICS.values(), ids=list(METRICS))
def test_a_metric_reads_calls_and_asks_for_exactly_what_it_declares(metric):
    score, trace = run_to_score(metric)
    assert not score.is_nan, score
    assert metric.score_range[0] <= score.value <= metric.score_range[1]
    for row in (SHORT_ANSWERS, NEGATIONS):  # steps some texts need: answer_claim, stated_claim
        other, trace = run_to_score(metric, row, trace)
        assert not other.is_nan, (row, other)
    assert trace.read == set(metric.required) | set(metric.optional)
    assert trace.steps == set(metric.steps)
    assert trace.models == set(metric.models)


@pytest.mark.parametrize("metric", METRICS.values(), ids=list(METRICS))
def test_a_metric_is_registered_under_its_name_with_a_one_line_description(metric):
    assert METRICS[metric.name] is metric
    assert metric.description.strip() == metric.description
    assert metric.description and "\n" not in metric.description
