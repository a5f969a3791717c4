"""`localeval evaluate --dry-run`: the judge's tokenizer only (Qwen2.5-Coder-0.5B), no weights, nothing written."""

import re

import pytest
from click.testing import CliRunner
from conftest import write_jsonl

from localeval.cli import main
from localeval.judge.estimate import Speeds
from localeval.judge.speeds import key_for, remember
from localeval.models import file_sha256
from localeval.run.progress import format_duration
from localeval.run.step_executor import CallCache

ROWS = [
    {
        "id": "paris",
        "user_input": "What is the capital of France?",
        "response": "Paris is the capital of France. It has about two million people.",
        "reference": "Paris is the capital of France.",
        "retrieved_contexts": ["Paris is the capital and largest city of France.", "The Eiffel Tower is in Paris."],
    },
    {
        "id": "moon",
        "user_input": "When did the first Moon landing happen?",
        "response": "Apollo 11 landed on the Moon in 1969.",
        "reference": "Apollo 11 landed on the Moon on 20 July 1969.",
        "retrieved_contexts": [
            "Apollo 11 was the first crewed Moon landing, on 20 July 1969.",
            "Neil Armstrong stepped out first.",
            "The mission launched from Florida.",
        ],
    },
]
METRICS = "faithfulness,context_precision,answer_relevancy,exact_match"


@pytest.fixture
def no_models(monkeypatch, tmp_path):
    """Loading the judge's weights, checking it in a child process or loading an embedder fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("a dry run loaded a model")

    monkeypatch.setattr("localeval.judge.gguf.GGUFJudge.__post_init__", refuse)
    monkeypatch.setattr("localeval.run.judges.ensure_judge_runs", refuse)
    monkeypatch.setattr("localeval.judge.check.check_judge", refuse)
    monkeypatch.setattr("localeval.models.encoders.load_embedder", refuse)
    monkeypatch.setenv("LOCALEVAL_CACHE_DIR", str(tmp_path / "cache"))


def dry_run(tmp_path, *extra: str):
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    out = tmp_path / "results"
    result = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(data),
            "--judge",
            "qwen2.5-coder-0.5b",
            "--metrics",
            METRICS,
            "--out",
            str(out),
            "--threads",
            "2",
            "--dry-run",
            *extra,
        ],
    )
    return result, out


def row(output: str, name: str) -> list[str]:
    """The table row of a metric: calls, prompt tokens, to process, generated, time."""
    line = next(line for line in output.splitlines() if line.startswith(name + " "))
    return line.split()[1:]


@pytest.mark.slow
def test_the_dry_run_counts_calls_per_metric_and_writes_nothing(tmp_path, no_models):
    result, out = dry_run(tmp_path)
    assert result.exit_code == 0, result.output
    assert not out.exists()
    # faithfulness: 3 sentences, each short enough for one statement, then one support call per statement
    assert row(result.stdout, "faithfulness")[0] == "~6"
    assert row(result.stdout, "context_precision")[0] == "5"  # one call per context
    assert row(result.stdout, "answer_relevancy")[0] == "2"  # one call per sample writes all its questions
    assert row(result.stdout, "exact_match") == ["0", "0", "0", "0", "0s"]
    assert row(result.stdout, "total")[0] == "~13"
    assert "~ 3 of the calls follow from earlier judge answers" in result.stdout


@pytest.mark.slow
def test_consecutive_calls_of_a_step_reuse_the_cached_instruction(tmp_path, no_models):
    result, _ = dry_run(tmp_path)
    calls, prompt, to_process, generated, _ = row(result.stdout, "context_precision")
    prompt, to_process = int(prompt.replace(",", "")), int(to_process.replace(",", ""))
    assert 0 < to_process < prompt / 2  # five calls of one step: the instruction and examples are processed once
    assert int(generated.replace(",", "")) > 0


@pytest.mark.slow
def test_without_stored_speeds_the_default_is_named(tmp_path, no_models):
    result, _ = dry_run(tmp_path)
    assert (
        "Speeds: 280 prompt tok/s, 59 generated tok/s: default speeds for Qwen2.5-Coder-0.5B Q4_K_M on a "
        "2-core CPU, 2 threads (no run of this judge stored here yet)."
    ) in result.stdout


@pytest.mark.slow
def test_speeds_stored_by_an_earlier_run_are_used(tmp_path, no_models, qwen05_path):
    remember(key_for(file_sha256(qwen05_path), 0, 2), Speeds(100.0, 10.0))
    result, _ = dry_run(tmp_path)
    assert result.exit_code == 0, result.output
    assert (
        "Speeds: 100 prompt tok/s, 10 generated tok/s: measured in this machine's last run of this judge ("
        in result.stdout
    )
    calls, prompt, to_process, generated, time = row(result.stdout, "total")
    expected = int(to_process.replace(",", "")) / 100 + int(generated.replace(",", "")) / 10
    assert time == format_duration(expected)


def test_judge_free_metrics_need_no_judge(tmp_path, no_models):
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    result = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(data),
            "--metrics",
            "exact_match,rouge_l",
            "--judge",
            "./no-such-judge.gguf",
            "--out",
            str(tmp_path / "results"),
            "--dry-run",
        ],
    )
    assert result.exit_code == 0, result.output
    assert row(result.stdout, "rouge_l") == ["0", "0", "0", "0", "-"]
    assert "No chosen metric uses the judge." in result.stdout
    assert not (tmp_path / "results").exists()


def test_a_missing_judge_is_an_error_not_a_traceback(tmp_path, no_models):
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    result = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(data),
            "--metrics",
            "faithfulness",
            "--judge",
            "./no-such-judge.gguf",
            "--out",
            str(tmp_path / "results"),
            "--dry-run",
        ],
    )
    assert result.exit_code == 1
    assert re.search(r"^Error: .*no-such-judge\.gguf", result.output, re.MULTILINE)
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_judge_calls_finished_in_the_results_folder_are_not_counted(tmp_path, no_models):
    out = tmp_path / "results"
    out.mkdir()
    calls_file = out / "judge_calls.jsonl"
    # An earlier "run" into the folder: the same calls, under the keys a run gives them, answered and kept.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("localeval.run.dry_run._finished_calls", lambda path: CallCache(calls_file))
        dry_run(tmp_path)
    kept = calls_file.read_text(encoding="utf-8")
    result, _ = dry_run(tmp_path)
    assert result.exit_code == 0, result.output
    assert row(result.stdout, "total")[:4] == ["0", "0", "0", "0"]
    assert (
        f"{len(kept.splitlines())} judge calls finished by an earlier run into the results folder are reused"
        in result.stdout
    )
    assert calls_file.read_text(encoding="utf-8") == kept  # read, never written
    assert sorted(p.name for p in out.iterdir()) == ["judge_calls.jsonl"]


def test_a_steps_instructions_count_once_however_the_steps_alternate(qwen05_path):
    from localeval.judge.gguf import load_tokenizer
    from localeval.run.dry_run import PlanningJudge
    from localeval.steps import STEPS, Call
    from localeval.steps.prompts import PromptLibrary

    judge = PlanningJudge(load_tokenizer(qwen05_path), n_ctx=8192)
    prompts = PromptLibrary()

    def ask(call: Call) -> tuple[int, int, int]:
        judge.call = call
        messages = prompts.get(call.step, "en").messages(call.input_dict())
        tokens, prefix_length = judge.tokenizer.prompt_and_prefix(messages)
        judge.generate(messages, STEPS[call.step].json_schema(), 200, 0, 0.0)
        return judge.costs[-1].to_process, len(tokens), prefix_length

    support = Call.of("statement_support", retrieved_contexts=["Paris is in France."], statement="Paris is in France.")
    questions = Call.of("questions", response="Paris is the capital of France.", count="3")
    first, total, _ = ask(support)
    assert first == total  # the instructions are new: every token is processed
    ask(questions)
    again, total, prefix_length = ask(
        Call.of("statement_support", retrieved_contexts=["Rome is in Italy."], statement="Rome is in Spain.")
    )
    assert prefix_length > 300 and again == total - prefix_length
