"""`localeval evaluate` never reports success for a run that did nothing, and never ignores an option or a value.

No model loads here: the runs stop before any would, use model-free metrics, or use the scripted FakeJudge.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_jsonl
from fakes import FakeJudge, as_json

from localeval.cli import evaluate as evaluate_command
from localeval.cli import main
from localeval.grounding.calibration import JudgeIdentity
from localeval.judge.system import llama_build
from localeval.models import ResolvedModel, resolve_embedder_dir
from localeval.results.manifest import JudgeRecord
from localeval.run import evaluation, judges

GOOD_ROW = {
    "user_input": "What colour is the sky?",
    "response": "Blue.",
    "reference": "Blue.",
    "retrieved_contexts": ["The sky is blue."],
}


def evaluate(data: Path, out: Path, *args: str):
    return CliRunner().invoke(main, ["evaluate", str(data), "--out", str(out), *args])


def error_lines(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("Error:")]


def assert_refused(result, message: str, exit_code: int = 1) -> None:
    """One `Error:` line with the message, no traceback, no results."""
    assert result.exit_code == exit_code, result.output
    assert len(error_lines(result)) == 1, result.output
    assert message in error_lines(result)[0], result.output
    assert "Traceback" not in result.output and "Results written" not in result.output


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "data.jsonl", [GOOD_ROW])


FAKE_IDENTITY = JudgeIdentity("fake", "0" * 64, "0" * 64)


@pytest.fixture
def judge_replying(monkeypatch: pytest.MonkeyPatch):
    """Install a FakeJudge in place of the GGUF judge that `evaluate` would check and load."""

    def install(judge: FakeJudge) -> FakeJudge:
        def load(resolved, config, recheck=False):
            return evaluation.LoadedJudge(judge, config, "fake-judge", JudgeRecord("fake", "", "", ""))

        monkeypatch.setattr(evaluation, "resolve_judge", lambda name: ResolvedModel(Path("fake.gguf"), None, None))
        monkeypatch.setattr(evaluation, "judge_identity", lambda resolved, config: FAKE_IDENTITY)
        monkeypatch.setattr(evaluation, "load_judge", load)
        return judge

    return install


# --- runs that would do nothing --------------------------------------------------------------


def test_a_dataset_whose_rows_are_all_bad_is_an_error(tmp_path):
    data = write_jsonl(
        tmp_path / "data.jsonl",
        [{"id": "a", "response": 1, "reference": "R"}, {"id": "b", "response": "A", "reference": ["x"]}],
    )
    result = evaluate(data, tmp_path / "out", "--metrics", "exact_match")
    assert_refused(
        result,
        f"Error: {data} has no row to score: all 2 rows have errors; the first: "
        "line 1 (id a): response: expected a string, got a number",
    )
    assert not (tmp_path / "out").exists()


def test_metrics_that_no_row_can_feed_are_an_error(tmp_path):
    data = write_jsonl(tmp_path / "data.jsonl", [{"user_input": "Q?", "response": "A."}])
    result = evaluate(data, tmp_path / "out", "--metrics", "exact_match")
    assert_refused(
        result,
        "Error: No chosen metric can run on this dataset (exact_match: the dataset has no "
        "reference); every score would be NaN.",
    )
    assert not (tmp_path / "out").exists()


def test_metrics_whose_fields_are_only_in_rows_with_bad_values_are_an_error(tmp_path):
    data = write_jsonl(tmp_path / "data.jsonl", [{"response": "A.", "reference": 5}, {"reference": "A."}])
    result = evaluate(data, tmp_path / "out", "--metrics", "exact_match")
    assert_refused(
        result,
        "Error: No chosen metric can run on this dataset (exact_match: the rows without bad "
        "values have no response); every score would be NaN.",
    )
    assert (
        "NaN. The first row skipped for a bad value: line 1: reference: expected a string, got a number"
        in result.stderr
    )
    assert not (tmp_path / "out").exists()


def test_a_dataset_with_no_known_column_is_an_error(tmp_path):
    data = write_jsonl(tmp_path / "data.jsonl", [{"q": "Q?", "a": "A."}])
    result = evaluate(data, tmp_path / "out", "--metrics", "exact_match")
    assert_refused(
        result,
        f"Error: {data} has no row to score: its only row has errors; the first: line 1: "
        "no known fields (its keys are 'q', 'a'); expected some of user_input, ",
    )
    assert "--map source=target" in error_lines(result)[0]


@pytest.mark.parametrize("metrics", [",", "", " , "])
def test_metrics_naming_nothing_is_an_error(data, tmp_path, metrics):
    result = evaluate(data, tmp_path / "out", "--metrics", metrics)
    assert_refused(result, "Error: --metrics names no metric: give metric names separated by commas")
    assert not (tmp_path / "out").exists()


def test_a_judge_failing_every_call_writes_the_results_and_exits_3(tmp_path, judge_replying):
    data = write_jsonl(tmp_path / "data.jsonl", [GOOD_ROW, {**GOOD_ROW, "response": "Grey."}])
    judge_replying(FakeJudge(respond=lambda call: RuntimeError("GPU lost")))
    result = evaluate(data, tmp_path / "out", "--metrics", "rubric_score,exact_match")
    assert result.exit_code == 3, result.output
    assert error_lines(result) == [
        "Error: the judge failed on 2 of 2 judge-based scores (100%: judge_error ×2), more than the 50% a run may "
        "lose; their NaN reasons and details are in samples.jsonl, and `localeval doctor` checks the judge."
    ]
    assert "Results written to" in result.stdout
    records = [json.loads(line) for line in (tmp_path / "out" / "samples.jsonl").read_text().splitlines()]
    assert [r["nan_reasons"] for r in records] == [{"rubric_score": "judge_error"}] * 2
    assert [r["scores"]["exact_match"] for r in records] == [1.0, 0.0]  # what was computed is kept


def test_a_judge_failing_on_a_minority_of_scores_still_passes(tmp_path, judge_replying):
    data = write_jsonl(tmp_path / "data.jsonl", [GOOD_ROW, GOOD_ROW | {"response": "Grey."}, GOOD_ROW])
    grade = as_json({"reason": "Fine.", "score": 4})
    judge_replying(FakeJudge([RuntimeError("GPU lost"), grade, grade]))
    result = evaluate(data, tmp_path / "out", "--metrics", "rubric_score")
    assert result.exit_code == 0, result.output
    assert "judge_error ×1" in result.stdout and not error_lines(result)


# --- options and values that must not be ignored ---------------------------------------------


def test_map_from_a_column_that_does_not_exist_names_the_columns(data, tmp_path):
    result = evaluate(data, tmp_path / "out", "--map", "nothere=response")
    assert_refused(
        result,
        f"Error: --map 'nothere=response': {data} has no column 'nothere'; its columns are "
        "'user_input', 'response', 'reference', 'retrieved_contexts'",
    )


def test_an_unknown_rubric_is_refused(data, tmp_path):
    result = evaluate(data, tmp_path / "out", "--rubric", "foo=bar")
    assert_refused(
        result, "Error: --rubric: unknown rubric 'foo'; rubric_score uses only reference_free and with_reference"
    )


def test_a_non_text_rubric_costs_its_row_when_rubric_score_runs(tmp_path, judge_replying):
    data = write_jsonl(tmp_path / "data.jsonl", [GOOD_ROW | {"id": "good"}, GOOD_ROW | {"id": "bad", "rubric": 5}])
    judge = judge_replying(FakeJudge([as_json({"reason": "Fine.", "score": 4})]))
    result = evaluate(data, tmp_path / "out", "--metrics", "rubric_score")
    assert result.exit_code == 0, result.output
    assert "line 2 (id bad): rubric: expected a string, got a number" in result.stderr
    assert [json.loads(line)["id"] for line in (tmp_path / "out" / "samples.jsonl").open()] == ["good"]
    assert len(judge.calls) == 1


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--n-ctx", "0", "Invalid value for '--n-ctx': 0 is not in the range x>=512."),
        ("--threads", "0", "Invalid value for '--threads': 0 is not in the range x>=1."),
        ("--temperature", "-1", "Invalid value for '--temperature': -1.0 is not in the range x>=0.0."),
        ("--gpu-layers", "-2", "Invalid value for '--gpu-layers': -2 is not in the range x>=-1."),
    ],
)
def test_judge_settings_out_of_range_are_usage_errors(data, tmp_path, option, value, message):
    result = evaluate(data, tmp_path / "out", option, value)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "command", [["doctor", "--threads", "0"], ["calibrate", "x.jsonl", "--out", "c", "--n-ctx", "100"]]
)
def test_other_judge_commands_check_the_same_ranges(command):
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 2 and "is not in the range" in result.stderr, result.output


@pytest.mark.skipif(llama_build().gpu_offload, reason="this llama-cpp-python is a GPU build")
def test_gpu_layers_on_a_cpu_build_is_refused_before_the_judge_loads(data, tmp_path, monkeypatch):
    monkeypatch.setattr(judges, "ensure_judge_runs", no_judge_may_load)
    result = evaluate(
        data, tmp_path / "out", "--metrics", "faithfulness", "--judge", "smollm2-135m", "--gpu-layers", "-1"
    )
    assert_refused(
        result,
        "Error: --gpu-layers -1: this llama-cpp-python is a CPU build, with no GPU offload. "
        'Rebuild it for the GPU (CMAKE_ARGS="-DGGML_CUDA=on" scripts/setup.sh)',
    )
    assert not (tmp_path / "out").exists()


def test_a_bi_encoder_is_refused_as_cross_encoder_before_any_model_loads(data, tmp_path):
    minilm = resolve_embedder_dir("all-minilm-l6-v2")
    result = evaluate(data, tmp_path / "out", "--metrics", "answer_similarity", "--cross-encoder", str(minilm))
    assert_refused(
        result,
        f"Error: Cross-encoder {minilm} is a sentence-transformers SentenceTransformer model "
        "(an embedder), not a cross-encoder; give it to --embedder",
    )
    assert not (tmp_path / "out").exists()


def test_a_bad_value_in_a_field_no_chosen_metric_reads_is_a_warning(tmp_path):
    data = write_jsonl(
        tmp_path / "data.jsonl",
        [
            {"id": "a", "response": "Blue.", "reference": "Blue.", "retrieved_contexts": "not a list"},
            {"id": "b", "response": "Grey.", "reference": "Blue.", "reference_context_ids": [True]},
        ],
    )
    result = evaluate(data, tmp_path / "out", "--metrics", "exact_match")
    assert result.exit_code == 0, result.output
    assert (
        "Warning: 2 bad values in fields that the chosen metrics do not read; those rows run without them:"
        in result.stderr
    )
    assert "  line 1 (id a): retrieved_contexts: expected a list of strings, got a string" in result.stderr
    records = [json.loads(line) for line in (tmp_path / "out" / "samples.jsonl").open()]
    assert [(r["id"], r["scores"]["exact_match"]) for r in records] == [("a", 1.0), ("b", 0.0)]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["row_errors"] == [] and len(summary["row_warnings"]) == 2


def test_a_bad_value_in_a_field_a_chosen_metric_reads_costs_the_row(tmp_path):
    data = write_jsonl(
        tmp_path / "data.jsonl",
        [
            {"id": "a", "response": "Blue.", "reference": "Blue."},
            {"id": "b", "response": "Grey.", "reference": 3},
        ],
    )
    result = evaluate(data, tmp_path / "out", "--metrics", "exact_match")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[1:3] == [
        "Warning: 1 row skipped for bad values:",
        "  line 2 (id b): reference: expected a string, got a number",
    ]
    assert "line 2" not in result.stdout and "1 row skipped for bad values" in result.stdout
    assert [json.loads(line)["id"] for line in (tmp_path / "out" / "samples.jsonl").open()] == ["a"]


def test_a_semicolon_csv_is_read(tmp_path):
    data = tmp_path / "data.csv"
    data.write_text("id;response;reference\nq1;Blue, light;Blue, light\n", encoding="utf-8")
    result = evaluate(data, tmp_path / "out", "--metrics", "exact_match")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "out" / "samples.jsonl").read_text())["scores"] == {"exact_match": 1.0}


# --- failures that come early and leave no mess ------------------------------------------------


def test_row_errors_go_to_stderr_the_first_ten_then_a_count_and_all_to_the_summary(tmp_path):
    rows = [{"id": f"bad{i}", "response": "Grey.", "reference": i} for i in range(15)] + [
        {"id": "good", "response": "Blue.", "reference": "Blue."}
    ]
    result = evaluate(write_jsonl(tmp_path / "data.jsonl", rows), tmp_path / "out", "--metrics", "exact_match")
    assert result.exit_code == 0, result.output
    shown = [line for line in result.stderr.splitlines() if line.startswith("  line ")]
    assert shown == [f"  line {i + 1} (id bad{i}): reference: expected a string, got a number" for i in range(10)]
    assert "Warning: 15 rows skipped for bad values:" in result.stderr
    assert "  ... and 5 more (all in summary.json: row_errors)" in result.stderr
    assert "line " not in result.stdout
    assert len(json.loads((tmp_path / "out" / "summary.json").read_text())["row_errors"]) == 15


@pytest.mark.parametrize("judge", ["nothere.gguf", "no-such-model"])
def test_a_failed_judge_lookup_leaves_no_results_folder(data, tmp_path, judge):
    result = evaluate(data, tmp_path / "out", "--metrics", "faithfulness", "--judge", judge)
    assert result.exit_code == 1 and "Error: " in result.stderr, result.output
    assert not (tmp_path / "out").exists()


def test_an_existing_results_folder_is_kept_when_the_judge_lookup_fails(data, tmp_path):
    (tmp_path / "out").mkdir()
    evaluate(data, tmp_path / "out", "--metrics", "faithfulness", "--judge", "nothere.gguf")
    assert (tmp_path / "out").is_dir()


def no_judge_may_load(*args, **kwargs):
    raise AssertionError("the judge was loaded before the results folder was checked")


@pytest.mark.parametrize(
    "out, message",
    [
        ("a-file/results", "Error: Cannot create the results folder {out}: Not a directory"),
        ("/proc/localeval-results", "Error: Cannot create the results folder {out}: "),
    ],
)
def test_an_out_that_cannot_be_written_fails_before_the_judge_loads(data, tmp_path, monkeypatch, out, message):
    (tmp_path / "a-file").write_text("a file, not a folder")
    out = out if out.startswith("/") else str(tmp_path / out)
    monkeypatch.setattr(evaluation, "load_judge", no_judge_may_load)
    result = evaluate(data, Path(out), "--metrics", "faithfulness", "--judge", "smollm2-135m")
    assert_refused(result, message.format(out=out))


def test_results_that_cannot_be_saved_are_a_clear_error_and_the_judge_calls_are_kept(
    tmp_path, judge_replying, monkeypatch
):
    from localeval.results.run_result import RunResult

    def disk_full(self, out_dir):
        raise OSError(28, "No space left on device")

    judge_replying(FakeJudge([as_json({"reason": "ok", "verdict": 1})] * 3))
    monkeypatch.setattr(RunResult, "save_summary", disk_full)
    data = write_jsonl(tmp_path / "data.jsonl", [GOOD_ROW])
    result = evaluate(data, tmp_path / "out", "--metrics", "context_recall")
    assert_refused(
        result,
        f"Error: Could not write the results to {tmp_path / 'out'}: No space left on device. "
        f"The work finished so far is kept in {tmp_path / 'out' / 'samples.jsonl'} and "
        f"{tmp_path / 'out' / 'judge_calls.jsonl'}: rerun the same command",
    )


def test_the_docs_list_exactly_the_exit_codes_that_evaluate_uses():
    """docs/evaluating.md's section "Exit codes" names every code evaluate exits with, and no other."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "evaluating.md").read_text(encoding="utf-8")
    start = page.index("\n## Exit codes\n")
    section = page[start : page.index("\n## ", start + 1)]
    codes = {int(code) for code in re.findall(r"`(\d+)`", section)}
    # 1: an Error: line (LocalevalError); 2: click's usage errors
    assert codes == {
        0,
        1,
        2,
        evaluate_command.EXIT_JUDGE_FAILED,
        evaluate_command.EXIT_BELOW_THRESHOLD,
        evaluate_command.EXIT_INTERRUPTED,
    }
