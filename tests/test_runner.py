"""Tests for localeval.run.runner: scheduling, shared calls, failures as NaN, interruption and usage.

The real faithfulness metric runs on a FakeJudge-backed StepExecutor; small test-only metrics are
built with `Metric(...)` directly and never registered in METRICS.
"""

from __future__ import annotations

import math

import pytest
from fakes import FakeBatchJudge, FakeJudge, JudgeCall, Reply, answer, as_json
from programs import joined

from localeval.data.samples import Sample
from localeval.judge.protocol import JudgeConfig
from localeval.metrics import Metric, MetricProgram, Score
from localeval.metrics.claims import statement_calls
from localeval.metrics.faithfulness import faithfulness
from localeval.results.sample_scores import Usage
from localeval.run.runner import run_metrics
from localeval.run.step_executor import StepExecutor
from localeval.steps import Call
from localeval.steps.prompts import PromptLibrary
from localeval.steps.statements import Statements

PARIS = Sample(
    "a",
    1,
    user_input="Tell me about Paris.",
    response="Paris is in France. It is big.",
    retrieved_contexts=("Paris is the capital of France.",),
)
ROME = Sample(
    "b",
    2,
    user_input="Tell me about Rome.",
    response="Rome is in Italy.",
    retrieved_contexts=("Rome is the capital of Italy.",),
)
STATEMENTS = {
    "Paris is in France.": ["Paris is in France."],
    "It is big.": ["Paris is big."],
    "Rome is in Italy.": ["Rome is in Italy."],
}  # by sentence
VERDICTS = {"Paris is in France.": 1, "Paris is big.": 0, "Rome is in Italy.": 1}


def sentence_of(call: JudgeCall) -> str:
    return call.last_user.rsplit("\nSentence to rewrite: ", 1)[1]


def statement_of(call: JudgeCall) -> str:
    return call.last_user.rsplit("\nStatement: ", 1)[1]


def key_of(call: JudgeCall) -> tuple[str, str]:
    return (call.step, sentence_of(call) if call.step == "statements" else statement_of(call))


def respond(call: JudgeCall) -> Reply:
    """Statements by sentence, verdicts by statement; statements calls cost more tokens than verdicts."""
    if call.step == "statements":
        return answer(
            as_json({"statements": STATEMENTS[sentence_of(call)]}), prompt_tokens=200, completion_tokens=30, seconds=1.0
        )
    statement = statement_of(call)
    return answer(as_json({"verdict": VERDICTS[statement]}))


def faulty(faults: dict[tuple[str, str], BaseException]):
    def reply(call: JudgeCall) -> Reply:
        return faults.get(key_of(call)) or respond(call)

    return reply


def run(samples, metrics, judge=None, progress=None, lang="en"):
    executor = StepExecutor(judge, "fake", PromptLibrary(), JudgeConfig()) if judge is not None else None
    return run_metrics(samples, metrics, executor, lambda sample: lang, progress)


def view(score: Score) -> tuple:
    """A score as comparable values (NaN is not equal to itself); statement rows keep what plumbing decides."""
    evidence = dict(score.evidence)
    if "statements" in evidence:
        evidence["statements"] = [{key: row[key] for key in ("statement", "verdict")} for row in evidence["statements"]]
    return ("NaN" if math.isnan(score.value) else score.value, score.reason, evidence)


def make_metric(name: str, compute, required=("user_input", "response")) -> Metric:
    """A test-only metric whose program ignores the metric options."""
    return Metric(name, required, (), (), (0.0, 1.0), f"test-only {name}", lambda sample, options: compute(sample))


def constant_metric(name: str, value: float, required=("user_input", "response")) -> Metric:
    """A metric that scores without any judge call."""

    def compute(sample: Sample) -> MetricProgram:
        return Score(value)
        yield  # unreachable: makes `compute` a generator

    return make_metric(name, compute, required)


def statements_calls(sample: Sample) -> list[Call]:
    return statement_calls(sample.user_input, sample.response)


def count_statements(sample: Sample) -> MetricProgram:
    extracted: list[Statements] = yield statements_calls(sample)
    return Score(float(len(joined(extracted))))


COUNT = make_metric("statement_count", count_statements)


def paris_evidence() -> dict:
    return {
        "statements": [{"statement": "Paris is in France.", "verdict": 1}, {"statement": "Paris is big.", "verdict": 0}]
    }


# --- scores ------------------------------------------------------------------------------------


def test_faithfulness_over_two_samples():
    judge = FakeJudge(respond=respond)
    results = run([PARIS, ROME], [faithfulness], judge)
    assert [(r.sample.id, r.lang, {n: view(s) for n, s in r.scores.items()}) for r in results] == [
        ("a", "en", {"faithfulness": (0.5, None, paris_evidence())}),
        ("b", "en", {"faithfulness": (1.0, None, {"statements": [{"statement": "Rome is in Italy.", "verdict": 1}]})}),
    ]


def test_language_comes_from_lang_of():
    results = run([PARIS], [constant_metric("none", 1.0)], lang="ja")
    assert results[0].lang == "ja"


def test_missing_field_is_nan_without_a_judge_call():
    judge = FakeJudge(respond=respond)
    no_contexts = Sample("c", 3, user_input="Tell me about Paris.", response="Paris is in France.")
    blank_response = Sample("d", 4, user_input="Q", response="   ", retrieved_contexts=("C.",))
    results = run([no_contexts, blank_response], [faithfulness], judge)
    assert [view(r.scores["faithfulness"]) for r in results] == [
        ("NaN", "missing_field:retrieved_contexts", {}),
        ("NaN", "missing_field:response", {}),
    ]
    assert judge.calls == []


def test_no_judge_needed_when_no_metric_calls_one():
    results = run([PARIS], [constant_metric("constant", 0.25)])
    assert view(results[0].scores["constant"]) == (0.25, None, {})


def test_a_step_without_a_judge_is_an_error():
    with pytest.raises(RuntimeError) as info:
        run([PARIS], [faithfulness])
    assert str(info.value) == "step 'statements' needs a judge, but none was loaded"


# --- sharing and ordering ----------------------------------------------------------------------


def test_identical_calls_from_two_metrics_run_once():
    judge = FakeJudge(respond=respond)
    results = run([PARIS], [faithfulness, COUNT], judge)
    assert [key_of(call) for call in judge.calls] == [
        ("statements", "Paris is in France."),
        ("statements", "It is big."),
        ("statement_support", "Paris is in France."),
        ("statement_support", "Paris is big."),
    ]
    assert {n: view(s) for n, s in results[0].scores.items()} == {
        "faithfulness": (0.5, None, paris_evidence()),
        "statement_count": (2.0, None, {}),
    }
    assert results[0].usage == Usage(calls=4, cached_calls=0, prompt_tokens=600, completion_tokens=80, seconds=3.0)


def test_identical_call_in_a_later_round_is_served_by_the_cache():
    def late_count(sample: Sample) -> MetricProgram:
        yield Call.of(
            "statement_support", retrieved_contexts=list(sample.retrieved_contexts), statement="Paris is in France."
        )
        extracted = yield statements_calls(sample)
        return Score(float(len(joined(extracted))))

    judge = FakeJudge(respond=respond)
    results = run([PARIS], [faithfulness, make_metric("late_count", late_count)], judge)
    # Round 1 runs the statements calls and late_count's verdict; round 2 the two verdicts (one cached)
    # and late_count's statements calls (cached).
    assert [key_of(call) for call in judge.calls] == [
        ("statements", "Paris is in France."),
        ("statements", "It is big."),
        ("statement_support", "Paris is in France."),
        ("statement_support", "Paris is big."),
    ]
    assert view(results[0].scores["late_count"]) == (2.0, None, {})
    assert results[0].usage == Usage(calls=4, cached_calls=3, prompt_tokens=600, completion_tokens=80, seconds=3.0)


def test_all_samples_run_one_step_before_the_next():
    judge = FakeJudge(respond=respond)
    progress = []
    run(
        [PARIS, ROME],
        [faithfulness],
        judge,
        progress=lambda step, done, total, usage: progress.append((step, done, total)),
    )
    assert [key_of(call) for call in judge.calls] == [
        ("statements", "Paris is in France."),
        ("statements", "It is big."),
        ("statements", "Rome is in Italy."),
        ("statement_support", "Paris is in France."),
        ("statement_support", "Paris is big."),
        ("statement_support", "Rome is in Italy."),
    ]
    assert progress == [
        ("statements", 1, 3),
        ("statements", 2, 3),
        ("statements", 3, 3),
        ("statement_support", 1, 3),
        ("statement_support", 2, 3),
        ("statement_support", 3, 3),
    ]


def test_a_steps_calls_go_to_the_judge_in_batches_and_each_is_reported_once():
    """With batch_decode 2, each step's three calls are two batches; the scores and the progress are as one at a
    time, each call reported once with its own usage."""
    judge = FakeBatchJudge(respond=respond)
    executor = StepExecutor(judge, "fake", PromptLibrary(), JudgeConfig(batch_decode=2))
    progress = []
    results = run_metrics(
        [PARIS, ROME],
        [faithfulness],
        executor,
        lambda sample: "en",
        lambda step, done, total, usage: progress.append((step, done, total, usage.cached, usage.completion_tokens)),
    )
    assert judge.batches == [2, 2] and len(judge.calls) == 6  # the third call of each step alone
    assert [view(r.scores["faithfulness"])[0] for r in results] == [0.5, 1.0]
    assert progress == [
        ("statements", 1, 3, False, 30),
        ("statements", 2, 3, False, 30),
        ("statements", 3, 3, False, 30),
        ("statement_support", 1, 3, False, 10),
        ("statement_support", 2, 3, False, 10),
        ("statement_support", 3, 3, False, 10),
    ]


def test_calls_of_one_round_are_grouped_by_step_in_order_of_first_request():
    def verdict_first(sample: Sample) -> MetricProgram:
        verdict = yield Call.of(
            "statement_support", retrieved_contexts=list(sample.retrieved_contexts), statement=sample.response
        )
        return Score(float(verdict.verdict))

    judge = FakeJudge(respond=respond)
    one_statement = Sample(
        "r",
        3,
        user_input="Tell me about Rome.",
        response="Rome is in Italy.",
        retrieved_contexts=("Rome is the capital of Italy.",),
    )
    paris_one = Sample(
        "p",
        4,
        user_input="Tell me about Paris.",
        response="Paris is in France.",
        retrieved_contexts=("Paris is the capital of France.",),
    )
    results = run([paris_one, one_statement], [make_metric("verdict_first", verdict_first), COUNT], judge)
    assert [key_of(call) for call in judge.calls] == [
        ("statement_support", "Paris is in France."),
        ("statement_support", "Rome is in Italy."),
        ("statements", "Paris is in France."),
        ("statements", "Rome is in Italy."),
    ]
    assert [(view(r.scores["verdict_first"]), view(r.scores["statement_count"])) for r in results] == [
        ((1.0, None, {}), (1.0, None, {})),
        ((1.0, None, {}), (1.0, None, {})),
    ]


def test_a_list_request_keeps_the_metrics_call_order():
    def reversed_verdicts(sample: Sample) -> MetricProgram:
        contexts = list(sample.retrieved_contexts)
        verdicts = yield [
            Call.of("statement_support", retrieved_contexts=contexts, statement=s)
            for s in ("Paris is big.", "Paris is in France.")
        ]
        return Score(float(verdicts[0].verdict * 10 + verdicts[1].verdict))

    judge = FakeJudge(respond=respond)
    results = run([PARIS], [make_metric("reversed", reversed_verdicts)], judge)
    assert [key_of(call) for call in judge.calls] == [
        ("statement_support", "Paris is big."),
        ("statement_support", "Paris is in France."),
    ]
    assert view(results[0].scores["reversed"]) == (1.0, None, {})


def test_an_empty_list_request_gets_an_empty_list_back():
    received = []

    def asks_nothing(sample: Sample) -> MetricProgram:
        outputs = yield []
        received.append(outputs)
        return Score(float(len(outputs)))

    judge = FakeJudge(respond=respond)
    results = run([PARIS], [make_metric("asks_nothing", asks_nothing)], judge)
    assert received == [[]]
    assert view(results[0].scores["asks_nothing"]) == (0.0, None, {})
    assert judge.calls == []
    assert results[0].usage == Usage()


# --- failures ----------------------------------------------------------------------------------


def test_a_failed_verdict_makes_the_score_nan_with_its_reason_and_step():
    judge = FakeJudge(respond=faulty({("statement_support", "Paris is big."): TimeoutError("no answer after 60 s")}))
    results = run([PARIS, ROME], [faithfulness], judge)
    assert [view(r.scores["faithfulness"]) for r in results] == [
        ("NaN", "judge_timeout", {"step": "statement_support", "detail": "no answer after 60 s"}),
        (1.0, None, {"statements": [{"statement": "Rome is in Italy.", "verdict": 1}]}),
    ]


def test_a_failed_statements_call_fails_every_metric_sharing_it():
    judge = FakeJudge(respond=faulty({("statements", "It is big."): RuntimeError("GPU lost")}))
    results = run([PARIS], [faithfulness, COUNT], judge)
    failure = ("NaN", "judge_error", {"step": "statements", "detail": "RuntimeError: GPU lost"})
    assert {n: view(s) for n, s in results[0].scores.items()} == {"faithfulness": failure, "statement_count": failure}
    assert [key_of(call) for call in judge.calls] == [
        ("statements", "Paris is in France."),
        ("statements", "It is big."),
    ]


def test_a_failed_call_closes_the_program():
    closed = []

    def tidy(sample: Sample) -> MetricProgram:
        try:
            yield statements_calls(sample)
        finally:
            closed.append(sample.id)
        return Score(1.0)

    judge = FakeJudge(respond=lambda call: answer("not json"))
    results = run([PARIS], [make_metric("tidy", tidy)], judge)
    assert view(results[0].scores["tidy"]) == ("NaN", "judge_unparseable", {"step": "statements", "detail": "not json"})
    assert closed == ["a"]


def test_a_metric_raising_is_metric_error():
    def broken_early(sample: Sample) -> MetricProgram:
        raise ValueError("no good")
        yield  # a generator all the same

    def broken_late(sample: Sample) -> MetricProgram:
        extracted = yield statements_calls(sample)
        return Score(1 / (len(joined(extracted)) - 2))

    judge = FakeJudge(respond=respond)
    results = run([PARIS, ROME], [make_metric("early", broken_early), make_metric("late", broken_late)], judge)
    assert [{n: view(s) for n, s in r.scores.items()} for r in results] == [
        {
            "early": ("NaN", "metric_error", {"detail": "ValueError: no good"}),
            "late": ("NaN", "metric_error", {"detail": "ZeroDivisionError: division by zero"}),
        },
        {"early": ("NaN", "metric_error", {"detail": "ValueError: no good"}), "late": (-1.0, None, {})},
    ]


def test_keyboard_interrupt_leaves_unfinished_scores_interrupted():
    closed = []

    def tidy_faithfulness(sample: Sample) -> MetricProgram:
        try:
            return (yield from faithfulness.compute(sample))
        finally:
            closed.append(sample.id)

    judge = FakeJudge(respond=faulty({("statement_support", "Paris is big."): KeyboardInterrupt()}))
    no_question = Sample("c", 3, response="R.", retrieved_contexts=("C.",))
    constant = constant_metric("constant", 0.5, required=())
    tidy = make_metric("tidy", tidy_faithfulness, required=faithfulness.required)
    results = run([PARIS, ROME, no_question], [faithfulness, COUNT, tidy, constant], judge)
    assert [list(r.scores) for r in results] == [["faithfulness", "statement_count", "tidy", "constant"]] * 3
    assert [{n: view(s) for n, s in r.scores.items()} for r in results] == [
        {
            "faithfulness": ("NaN", "interrupted", {}),
            "statement_count": (2.0, None, {}),
            "tidy": ("NaN", "interrupted", {}),
            "constant": (0.5, None, {}),
        },
        {
            "faithfulness": ("NaN", "interrupted", {}),
            "statement_count": (1.0, None, {}),
            "tidy": ("NaN", "interrupted", {}),
            "constant": (0.5, None, {}),
        },
        {
            "faithfulness": ("NaN", "missing_field:user_input", {}),
            "statement_count": ("NaN", "missing_field:user_input", {}),
            "tidy": ("NaN", "missing_field:user_input", {}),
            "constant": (0.5, None, {}),
        },
    ]
    assert [key_of(call) for call in judge.calls] == [
        ("statements", "Paris is in France."),
        ("statements", "It is big."),
        ("statements", "Rome is in Italy."),
        ("statement_support", "Paris is in France."),
        ("statement_support", "Paris is big."),
    ]
    assert closed == ["a", "b"]


# --- usage -------------------------------------------------------------------------------------


def test_usage_is_summed_per_sample_including_retries():
    truncated_once = {"n": 0}

    def reply(call: JudgeCall) -> Reply:
        if key_of(call) == ("statement_support", "Paris is big.") and not truncated_once["n"]:
            truncated_once["n"] += 1
            return answer('{"verd', prompt_tokens=100, completion_tokens=16, seconds=2.0, truncated=True)
        return respond(call)

    judge = FakeJudge(respond=reply)
    results = run([PARIS, ROME], [faithfulness], judge)
    assert [r.usage for r in results] == [
        Usage(calls=5, cached_calls=0, prompt_tokens=700, completion_tokens=96, seconds=5.0),
        Usage(calls=2, cached_calls=0, prompt_tokens=300, completion_tokens=40, seconds=1.5),
    ]
    assert view(results[0].scores["faithfulness"]) == (0.5, None, paris_evidence())
