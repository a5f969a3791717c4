"""Per-sample language: prompts, embedder and the recorded language follow each sample (SmolLM2 judge: plumbing)."""

import json

import pytest
from click.testing import CliRunner
from conftest import write_jsonl

from localeval.cli import main

ROWS = [
    {
        "id": "en",
        "user_input": "How tall is Mount Fuji?",
        "response": "Mount Fuji is 3,776 metres tall.",
        "reference": "It is 3,776 m high.",
        "retrieved_contexts": ["Mount Fuji is 3,776 metres high."],
    },
    {
        "id": "ja",
        "user_input": "富士山の高さは？",
        "response": "富士山の高さは3776メートルです。",
        "reference": "３７７６メートルです。",
        "retrieved_contexts": ["富士山は標高3776メートルの日本最高峰である。"],
    },
    {
        "id": "zh",
        "user_input": "长江有多长？",
        "response": "长江全长约6300公里。",
        "reference": "约6300公里。",
        "retrieved_contexts": ["长江全长约6300公里，是中国第一长河。"],
    },
]


def run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mixed")
    data = write_jsonl(folder / "data.jsonl", ROWS)
    result = run(
        "evaluate",
        str(data),
        "--metrics",
        "faithfulness,answer_similarity",
        "--judge",
        "smollm2-135m",
        "--out",
        str(folder / "out"),
        "--n-ctx",
        "4096",
    )
    return result, folder / "out"


@pytest.mark.slow
def test_auto_language_is_recorded_per_sample(mixed_run):
    result, out = mixed_run
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert [(r["id"], r["lang"]) for r in records] == [("en", "en"), ("ja", "ja"), ("zh", "zh")]


@pytest.mark.slow
def test_each_language_gets_its_own_prompts_and_ja_zh_a_multilingual_embedder(mixed_run):
    _, out = mixed_run
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["languages"] == {"en": 1, "ja": 1, "zh": 1}
    assert set(manifest["prompts"]) == {
        f"{lang}/{step}"
        for lang in ("en", "ja", "zh")
        for step in ("statements", "answer_claim", "stated_claim", "statement_support")
    }
    embedders = manifest["encoders"]["embedder_by_language"]
    assert "multilingual-e5-small" in embedders["ja"] and embedders["ja"] == embedders["zh"]
    assert "multilingual-e5-small" not in embedders["en"]


@pytest.mark.slow
def test_forced_language_overrides_detection(tmp_path):
    data = write_jsonl(tmp_path / "data.jsonl", ROWS[1:2])
    result = run("evaluate", str(data), "--metrics", "answer_similarity", "--lang", "en", "--out", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "o" / "samples.jsonl").read_text())
    assert record["lang"] == "en"
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert "multilingual-e5-small" not in manifest["encoders"]["embedder_by_language"]["en"]


@pytest.mark.slow
def test_the_manifest_records_each_languages_calibration_and_the_run_says_where_none_fits(mixed_run):
    result, out = mixed_run
    calibration = json.loads((out / "manifest.json").read_text())["calibration"]
    for lang in ("en", "ja", "zh"):  # nothing is fitted for the plumbing judge
        assert calibration[lang]["name"] == "judge probability (uncalibrated)"
        assert calibration[lang]["file"] is None and calibration[lang]["factors"] == []
        assert calibration[lang]["why"] == "no calibration fitted for this judge"
    assert (
        "No calibration for the judge smollm2-135m in en, ja, zh: P(supported) there is the judge's own "
        "probability. `localeval calibrate LABELLED.jsonl --judge smollm2-135m --out DIR` fits one"
    ) in result.output
