"""`localeval evaluate` end to end with the real SmolLM2-135M judge (plumbing: its verdicts mean nothing)."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import EXAMPLE_DATA, write_jsonl

from localeval.cli import main
from localeval.metrics.selection import REQUIRED_SUITE, expand
from localeval.models import resolve_embedder_dir

REQUIRED = expand(REQUIRED_SUITE)  # every metric the spec requires: the example has every field they need
METRICS = ",".join(REQUIRED)


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def run_example(out: Path):
    """The example with every required metric and the plumbing judge."""
    return run(
        "evaluate",
        str(EXAMPLE_DATA),
        "--judge",
        "smollm2-135m",
        "--out",
        str(out),
        "--n-ctx",
        "4096",
        "--metrics",
        METRICS,
    )


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "results"
    return run_example(out), out


@pytest.mark.slow
def test_evaluate_writes_samples_summary_and_manifest(example_run):
    result, out = example_run
    assert result.exit_code == 0, result.output
    assert "6 samples" in result.output
    assert all(name in result.output for name in REQUIRED)
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == ["eiffel", "insulin", "amazon", "photosynthesis", "moon-landing", "great-wall"]
    assert [r["row"] for r in records] == [1, 2, 3, 4, 5, 6]
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["metrics"]) == REQUIRED
    for name in REQUIRED:
        assert summary["metrics"][name]["count"] + summary["metrics"][name]["nan_count"] == 6
    assert summary["judge"]["calls"] > 0 and summary["judge"]["prompt_tokens"] > 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["judge"]["sha256"] == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert manifest["judge"]["name"] == "smollm2-135m"
    assert set(manifest["prompts"]) == {
        f"en/{step}"
        for step in (
            "statements",
            "answer_claim",
            "stated_claim",
            "statement_support",
            "questions",
            "question_parts",
            "part_answered",
            "response_focus",
            "context_usefulness",
            "sentence_relevance",
            "entities",
            "critique",
        )
    }
    assert manifest["encoders"]["embedder_by_language"] == {
        "en": f"all-minilm-l6-v2 ({resolve_embedder_dir('all-minilm-l6-v2')})"
    }
    assert manifest["languages"] == {"en": 6}
    assert manifest["versions"]["llama-cpp-python"]


@pytest.mark.slow  # runs the example with every required metric (module fixture)
def test_each_score_has_evidence_or_a_nan_reason(example_run):
    _, out = example_run
    for line in (out / "samples.jsonl").read_text().splitlines():
        record = json.loads(line)
        assert list(record["scores"]) == REQUIRED
        for name, score in record["scores"].items():
            if score is None:
                assert record["nan_reasons"][name]
            else:
                assert 0.0 <= score <= 1.0 and record["evidence"][name], name
        if record["scores"]["faithfulness"] is not None:
            statements = record["evidence"]["faithfulness"]["statements"]
            assert all(
                set(s)
                == {
                    "statement",
                    "sentence",
                    "p",
                    "verdict",
                    "judge_p",
                    "judge_verdict",
                    "evidence",
                    "coverage",
                    "evidence_coverage",
                    "sentence_coverage",
                    "uncovered_numbers",
                }
                for s in statements
            )
            assert all(0.0 <= s["p"] <= 1.0 and s["verdict"] == int(s["p"] >= 0.5) for s in statements)


@pytest.mark.slow  # runs the example with every required metric (module fixture)
def test_rerun_into_the_same_folder_reuses_judge_calls_and_scores(example_run, tmp_path):
    _, out = example_run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    result = run_example(copy)
    assert result.exit_code == 0, result.output
    first = json.loads((out / "summary.json").read_text())
    second = json.loads((copy / "summary.json").read_text())
    # Nothing is paid again: every call of the first run is reused, retries included (a truncated answer
    # retried with twice the budget counts two calls and leaves one line in judge_calls.jsonl).
    assert second["judge"]["calls"] == 0
    assert second["judge"]["cached_calls"] == first["judge"]["calls"] + first["judge"]["cached_calls"]
    assert 0 < len((out / "judge_calls.jsonl").read_text().splitlines()) <= first["judge"]["calls"]
    assert second["metrics"] == first["metrics"]

    def scored(folder: Path) -> list[dict]:
        records = [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]
        return [{key: r[key] for key in ("id", "scores", "nan_reasons", "evidence")} for r in records]

    assert scored(copy) == scored(out)


@pytest.mark.slow
def test_bad_rows_are_reported_and_good_rows_still_run(tmp_path):
    data = write_jsonl(
        tmp_path / "data.jsonl",
        [
            {
                "id": "good",
                "question": "What colour is the sky?",
                "answer": "The sky is blue.",
                "contexts": ["On a clear day the sky is blue."],
            },
            {"id": "bad", "user_input": "Q", "response": "A", "retrieved_contexts": "not a list"},
        ],
    )
    result = run(
        "evaluate",
        str(data),
        "--metrics",
        "faithfulness",
        "--judge",
        "smollm2-135m",
        "--out",
        str(tmp_path / "out"),
        "--n-ctx",
        "4096",
    )
    assert result.exit_code == 0, result.output
    assert "line 2 (id bad): retrieved_contexts: expected a list of strings, got a string" in result.stderr
    assert (
        "Warning: The judge smollm2-135m is for testing localeval itself (SmolLM2-135M-Instruct Q4_1: plumbing "
        "tests only, its verdicts mean nothing): its scores say nothing about your data."
    ) in result.stderr
    records = [json.loads(line) for line in (tmp_path / "out" / "samples.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == ["good"]


@pytest.mark.slow
def test_missing_field_gives_nan_for_that_row_only(tmp_path):
    data = write_jsonl(
        tmp_path / "data.jsonl",
        [
            {
                "id": "full",
                "user_input": "What colour is the sky?",
                "response": "The sky is blue.",
                "retrieved_contexts": ["On a clear day the sky is blue."],
            },
            {"id": "no-contexts", "user_input": "What colour is grass?", "response": "Grass is green."},
        ],
    )
    result = run(
        "evaluate",
        str(data),
        "--metrics",
        "faithfulness",
        "--judge",
        "smollm2-135m",
        "--out",
        str(tmp_path / "out"),
        "--n-ctx",
        "4096",
    )
    assert result.exit_code == 0, result.output
    records = {json.loads(line)["id"]: json.loads(line) for line in (tmp_path / "out" / "samples.jsonl").open()}
    assert records["no-contexts"]["nan_reasons"] == {"faithfulness": "missing_field:retrieved_contexts"}
    assert (
        "faithfulness" not in records["full"]["nan_reasons"]
        or records["full"]["nan_reasons"]["faithfulness"] != "missing_field:retrieved_contexts"
    )


@pytest.mark.slow
def test_a_context_longer_than_the_window_is_cut_to_fit_and_the_cut_recorded(tmp_path):
    data = write_jsonl(
        tmp_path / "data.jsonl",
        [
            {
                "id": "long",
                "user_input": "Summarise.",
                "response": "It is long.",
                "retrieved_contexts": ["word " * 3000],
            },
        ],
    )
    result = run(
        "evaluate",
        str(data),
        "--metrics",
        "faithfulness",
        "--judge",
        "smollm2-135m",
        "--out",
        str(tmp_path / "out"),
        "--n-ctx",
        "1024",
    )
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "out" / "samples.jsonl").read_text())
    assert record["scores"]["faithfulness"] is not None
    assert record["inputs_cut"], "the cut is recorded"
    for cut in record["inputs_cut"]:  # one per statement judged
        assert cut["step"] == "statement_support" and cut["input"] == "retrieved_contexts"
        assert 0 < cut["kept_chars"] < cut["total_chars"] == 15000 and cut["total_sentences"] == 1


def test_a_prompt_whose_fixed_part_overflows_is_a_nan_not_a_crash(tmp_path):
    data = write_jsonl(
        tmp_path / "data.jsonl",
        [
            {"id": "long", "user_input": "Summarise.", "response": "Long " * 400 + ".", "retrieved_contexts": ["A."]},
        ],
    )
    result = run(
        "evaluate",
        str(data),
        "--metrics",
        "faithfulness",
        "--judge",
        "smollm2-135m",
        "--out",
        str(tmp_path / "out"),
        "--n-ctx",
        "1024",
    )
    assert result.exit_code == 3, result.output  # every judge-based score lost to the judge: results kept, exit 3
    record = json.loads((tmp_path / "out" / "samples.jsonl").read_text())
    assert record["scores"] == {"faithfulness": None}
    assert record["nan_reasons"] == {"faithfulness": "context_overflow"}
    assert record["evidence"]["faithfulness"]["step"] == "statements"


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.jsonl"], "Error: dataset file not found: missing.jsonl"),
        (
            ["{data}", "--metrics", "faithfulness,nonsense"],
            "Error: Unknown metric(s): nonsense. Run `localeval metrics` to list them",
        ),
        (["{data}", "--judge", "/nowhere/model.gguf"], "Error: Model file not found: /nowhere/model.gguf"),
        (["{data}", "--map", "oops"], "Error: --map 'oops'"),
        (["{data}", "--judge", "no-such-model"], "Error: Unknown model 'no-such-model'."),
    ],
)
def test_bad_input_gets_a_clear_error_and_exit_1(tmp_path, args, message):
    data = write_jsonl(tmp_path / "data.jsonl", [{"user_input": "Q?", "response": "A.", "retrieved_contexts": ["C."]}])
    args = [a.replace("{data}", str(data)) for a in args]
    result = run("evaluate", "--metrics", "faithfulness", *args, "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert result.output.startswith(message) or f"\n{message}" in result.output, result.output
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_not_gguf_and_truncated_judges_get_their_own_messages(tmp_path, smollm_path):
    data = write_jsonl(tmp_path / "data.jsonl", [{"user_input": "Q?", "response": "A.", "retrieved_contexts": ["C."]}])
    not_gguf = tmp_path / "notes.gguf"
    not_gguf.write_bytes(b"PK\x03\x04 this is a zip file")
    truncated = tmp_path / "cut.gguf"
    truncated.write_bytes(smollm_path.read_bytes()[:50_000_000])
    result = run(
        "evaluate", str(data), "--judge", str(not_gguf), "--metrics", "faithfulness", "--out", str(tmp_path / "o1")
    )
    assert result.exit_code == 1
    assert (
        f"Error: {not_gguf} is not a GGUF model file: it starts with b'PK\\x03\\x04', expected b'GGUF'" in result.output
    )
    result = run(
        "evaluate", str(data), "--judge", str(truncated), "--metrics", "faithfulness", "--out", str(tmp_path / "o2")
    )
    assert result.exit_code == 1
    assert (
        f"Error: {truncated} is truncated: the file has 50,000,000 bytes, its header describes 98,362,432"
        in result.output
    )


def test_broken_prompt_override_names_the_file(tmp_path):
    data = write_jsonl(tmp_path / "data.jsonl", [{"user_input": "Q?", "response": "A.", "retrieved_contexts": ["C."]}])
    broken = tmp_path / "prompts" / "en" / "statement_support.toml"
    broken.parent.mkdir(parents=True)
    broken.write_text('instruction = "Judge."\ninput = "{statement}"\n', encoding="utf-8")
    result = run(
        "evaluate",
        str(data),
        "--judge",
        "smollm2-135m",
        "--prompts",
        str(tmp_path / "prompts"),
        "--metrics",
        "faithfulness",
        "--out",
        str(tmp_path / "out"),
    )
    assert result.exit_code == 1
    assert f"Error: {broken}: 'input' must contain {{retrieved_contexts}}." in result.output
