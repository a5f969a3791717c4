"""The progress of a run: counts, tokens/s, an ETA that settles, and the line the CLI draws from them."""

from dataclasses import replace

import pytest
from conftest import write_jsonl

from localeval.cli.evaluate import progress_line
from localeval.judge.protocol import CallUsage, JudgeConfig
from localeval.metrics import METRICS
from localeval.run.evaluation import run_evaluation
from localeval.run.options import EvaluationOptions
from localeval.run.planning import load_dataset
from localeval.run.progress import RunProgress, format_duration


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_eta_is_time_per_scored_sample_times_samples_left():
    clock = Clock()
    state = RunProgress(10, clock=clock)
    assert state.eta_seconds() is None
    clock.now += 30
    state.sample_finished(reused=False)
    state.sample_finished(reused=False)
    assert state.eta_seconds() == pytest.approx(15 * 8)
    clock.now += 30  # a slower stretch: the average over all scored samples moves, it does not jump
    state.sample_finished(reused=False)
    assert state.eta_seconds() == pytest.approx(20 * 7)


def test_reused_samples_count_as_done_but_not_in_the_time_per_sample():
    clock = Clock()
    state = RunProgress(6, clock=clock)
    clock.now += 50  # loading models before the first sample
    state.sample_finished(reused=True)
    state.sample_finished(reused=True)
    assert state.eta_seconds() is None
    clock.now += 10
    state.sample_finished(reused=False)
    assert (state.samples_done, state.eta_seconds()) == (3, pytest.approx(10 * 3))


def test_judge_work_counts_only_calls_that_ran():
    state = RunProgress(1)
    state.call_served("statements", 1, 2, CallUsage(prompt_tokens=300, completion_tokens=40, seconds=4.0, attempts=1))
    state.call_served("statements", 2, 2, CallUsage(cached=True))
    assert (state.judge_calls, state.judge_tokens, state.tokens_per_second()) == (1, 340, 85.0)
    assert (state.step, state.step_done, state.step_total) == ("statements", 2, 2)


@pytest.mark.parametrize(
    "seconds, text", [(0, "0s"), (59.4, "59s"), (61, "1m01s"), (725, "12m05s"), (3600, "1h00m"), (11220, "3h07m")]
)
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_progress_line():
    clock = Clock()
    state = RunProgress(200, clock=clock)
    assert progress_line(state) == "  samples 0/200 | ETA after the first samples"
    state.call_served("statements", 12, 40, CallUsage(prompt_tokens=500, completion_tokens=110, seconds=10, attempts=1))
    clock.now += 121
    state.sample_finished(reused=False)
    assert progress_line(state) == (
        "  statements [######..............] 12/40 | samples 1/200 | 1 judge calls, 61 tok/s | ETA 6h41m"
    )


@pytest.mark.slow
def test_a_run_reports_every_judge_call_and_sample(tmp_path):
    """With the SmolLM2 judge: the last state agrees with the run's own usage."""
    rows = [
        {
            "user_input": "Where is Paris?",
            "response": "Paris is in France. It is large.",
            "retrieved_contexts": ["Paris is the capital of France."],
        },
        {"user_input": "Where is Rome?", "response": "Rome is in Italy.", "retrieved_contexts": ["Rome is in Italy."]},
    ]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    options = EvaluationOptions(
        data=data,
        out=tmp_path / "out",
        metrics=("faithfulness",),
        judge="smollm2-135m",
        judge_config=JudgeConfig(n_ctx=2048),
    )
    states = []
    result = run_evaluation(
        options, load_dataset(options), [METRICS["faithfulness"]], progress=lambda state: states.append(replace(state))
    )
    last = states[-1]
    assert (last.samples_done, last.total_samples, last.samples_reused) == (2, 2, 0)
    assert last.judge_calls == result.usage().calls > 0
    assert last.judge_tokens == result.usage().prompt_tokens + result.usage().completion_tokens
    assert [s.samples_done for s in states] == sorted(s.samples_done for s in states)
