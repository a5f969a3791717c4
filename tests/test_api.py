"""The Python API: `from localeval import evaluate`, with the real SmolLM2 judge and MiniLM embedder loaded once."""

import json
import math
import subprocess
import sys

import pandas
import pytest
from click.testing import CliRunner

import localeval
from localeval import Embedders, Judge, evaluate, load
from localeval.cli import main
from localeval.errors import ConfigError
from localeval.models import encoders
from localeval.run import evaluation

ROWS = [
    {
        "id": "rhine",
        "user_input": "Where does the Rhine end?",
        "response": "The Rhine ends in the North Sea.",
        "retrieved_contexts": ["The Rhine flows into the North Sea near Rotterdam."],
        "reference": "In the North Sea.",
    },
    {
        "id": "danube",
        "user_input": "Where does the Danube end?",
        "response": "It ends in the Baltic Sea.",
        "retrieved_contexts": ["The Danube flows into the Black Sea."],
        "reference": "In the Black Sea.",
    },
]
METRICS = ["faithfulness", "answer_similarity", "exact_match"]


@pytest.fixture(scope="module")
def judge() -> Judge:
    return Judge("smollm2-135m", threads=2)


@pytest.fixture(scope="module")
def embedders() -> Embedders:
    return Embedders("all-minilm-l6-v2")


@pytest.fixture(scope="module")
def first_run(judge, embedders):
    return evaluate(ROWS, METRICS, judge=judge, embedders=embedders)


def no_model_may_load(*args, **kwargs):
    raise AssertionError("a model was loaded again")


@pytest.mark.slow
def test_a_list_of_dicts_scores_like_the_same_rows_through_the_cli(first_run, tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    out = tmp_path / "cli"
    cli = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(data),
            "--metrics",
            ",".join(METRICS),
            "--judge",
            "smollm2-135m",
            "--embedder",
            "all-minilm-l6-v2",
            "--threads",
            "2",
            "--out",
            str(out),
        ],
    )
    assert cli.exit_code == 0, cli.output
    from_cli = {record["id"]: record for record in map(json.loads, (out / "samples.jsonl").open())}
    assert first_run.metrics == METRICS and first_run.sample_count == 2 and first_run.folder is None
    for result in first_run.samples:
        record = from_cli[result.sample.id]
        assert {
            name: None if score.is_nan else round(score.value, 6) for name, score in result.scores.items()
        } == record["scores"]
        assert {name: score.evidence for name, score in result.scores.items() if score.evidence} == record["evidence"]


def test_the_judge_and_embedders_are_loaded_once_for_many_calls(judge, embedders, first_run, monkeypatch):
    monkeypatch.setattr(evaluation, "load_judge", no_model_may_load)
    monkeypatch.setattr(encoders, "load_embedder", no_model_may_load)
    again = evaluate(ROWS[:1], METRICS, judge=judge, embedders=embedders)
    assert again.samples[0].scores["faithfulness"].value == first_run.samples[0].scores["faithfulness"].value
    assert again.samples[0].scores["answer_similarity"].value == pytest.approx(
        first_run.samples[0].scores["answer_similarity"].value
    )


@pytest.mark.slow
def test_a_dataframe_in_and_out(judge, embedders):
    frame = pandas.DataFrame(ROWS)
    frame.loc[1, "reference"] = None  # a DataFrame's missing value: the row runs without the field
    result = evaluate(frame, "exact_match,faithfulness", judge=judge, embedders=embedders)
    table = result.to_pandas()
    assert list(table["id"]) == ["rhine", "danube"]
    assert list(table.columns[:6]) == ["id", "lang", "user_input", "response", "reference", "retrieved_contexts"]
    assert table.loc[0, "retrieved_contexts"] == ROWS[0]["retrieved_contexts"]
    assert table.loc[0, "exact_match"] == 0.0 and math.isnan(table.loc[1, "exact_match"])
    assert table.loc[1, "nan_reasons"] == {"exact_match": "missing_field:reference"}
    assert "statements" in json.dumps(table.loc[0, "evidence"]["faithfulness"])


@pytest.mark.slow
def test_a_results_folder_is_written_saved_and_loaded_back(first_run, judge, embedders, tmp_path):
    out = tmp_path / "run"
    written = evaluate(ROWS, METRICS, judge=judge, embedders=embedders, out=out)
    assert written.folder == out and (out / "samples.jsonl").is_file() and (out / "manifest.json").is_file()
    assert (out / "report.html").is_file()
    first_run.save(tmp_path / "saved")
    assert (tmp_path / "saved" / "report.html").is_file()
    for folder in (out, tmp_path / "saved"):
        loaded = load(folder)
        assert loaded.metrics == METRICS and loaded.folder == folder
        assert loaded.summaries == first_run.summaries
        assert [(r.sample.id, r.lang, r.scores) for r in loaded.samples] == [
            (r.sample.id, r.lang, {k: _rounded(s) for k, s in r.scores.items()}) for r in first_run.samples
        ]
        assert loaded.manifest.judge == first_run.manifest.judge


def _rounded(score):
    """A score as samples.jsonl keeps it: six decimals."""
    from localeval.metrics import Score

    return score if score.is_nan else Score(round(score.value, 6), score.reason, score.evidence)


def test_a_streamed_result_points_to_its_folder(judge, embedders, tmp_path):
    result = evaluate(ROWS, ["exact_match"], out=tmp_path / "run", keep_samples=False)
    assert result.samples == [] and result.sample_count == 2
    with pytest.raises(ConfigError, match="does not hold its samples"):
        result.to_pandas()
    assert load(result.folder).to_pandas()["exact_match"].tolist()[0] == 0.0


def test_row_problems_are_warned_about_and_skip_their_row_only(caplog):
    rows = [*ROWS, {"id": "bad", "response": 42, "reference": "x"}]
    result = evaluate(rows, ["exact_match"])
    assert [r.sample.id for r in result.samples] == ["rhine", "danube"]
    assert [str(error) for error in result.row_errors] == ["line 3 (id bad): response: expected a string, got a number"]
    assert "Row skipped: line 3 (id bad): response: expected a string, got a number" in caplog.text


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda j: evaluate(42), "data must be a file path, a list of dicts or a pandas DataFrame, not int."),
        (lambda j: evaluate([ROWS[0], "text"]), "data record 2 is a str, not a dict."),
        (lambda j: evaluate(ROWS, ["exact_match"], judge=j, threads=4), "Judge options (threads) belong to Judge(...)"),
        (lambda j: evaluate(ROWS, ["exact_match"], temprature=0.5), "Unknown judge option(s): temprature"),
        (lambda j: evaluate(ROWS, ["exact_match"], keep_samples=False), "keep_samples=False needs out="),
        (lambda j: evaluate(ROWS, ["no_such_metric"]), "no_such_metric"),
        (lambda j: load("/nonexistent/run"), "/nonexistent/run is not a finished results folder"),
    ],
)
def test_bad_calls_raise_a_clear_error(judge, call, message):
    with pytest.raises(ConfigError) as raised:
        call(judge)
    assert message in str(raised.value)


def test_importing_localeval_loads_no_model_library():
    code = (
        "import sys, localeval; print(sorted(m for m in ('llama_cpp', 'torch', 'sentence_transformers') "
        "if m in sys.modules)); print(sorted(localeval.__all__))"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.splitlines() == ["[]", str(sorted(localeval.__all__))]
    assert sorted(localeval.__all__) == ["Embedders", "Judge", "RayExecutor", "RunResult", "evaluate", "load"]


def test_other_embedders_into_the_same_folder_score_again(embedders, tmp_path):
    first = evaluate(ROWS, ["answer_similarity"], out=tmp_path, embedders=embedders)
    again = evaluate(ROWS, ["answer_similarity"], out=tmp_path, embedders=Embedders("multilingual-e5-small"))
    fresh = evaluate(ROWS, ["answer_similarity"], embedders=Embedders("multilingual-e5-small"))

    def scores(result):
        return [sample.scores["answer_similarity"].value for sample in result.samples]

    assert scores(again) == scores(fresh) != scores(first)
    used = json.loads((tmp_path / "manifest.json").read_text())["encoders"]["embedder_by_language"]
    assert used["en"].startswith("multilingual-e5-small")


def test_other_embedders_into_the_same_folder_score_again_from_the_cli(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    out = tmp_path / "run"
    command = ["evaluate", str(data), "--metrics", "answer_similarity", "--out", str(out)]
    runs = []
    for embedder in ("all-minilm-l6-v2", "multilingual-e5-small"):
        outcome = CliRunner().invoke(main, [*command, "--embedder", embedder])
        assert outcome.exit_code == 0, outcome.output
        assert "Resuming" not in outcome.output
        runs.append([json.loads(line)["scores"]["answer_similarity"] for line in (out / "samples.jsonl").open()])
    assert runs[0] != runs[1]
