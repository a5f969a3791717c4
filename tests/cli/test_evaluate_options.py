"""The options that shape a run, end to end: each one's effect is recorded in the results.

One run with every option set away from its default (SmolLM2-135M judge, one row), read back from
samples.jsonl and manifest.json.
"""

import json

import pytest
from click.testing import CliRunner
from conftest import EXAMPLE_DATA, write_jsonl

from localeval.cli import main

RUBRIC = "1: the response is wrong. 5: the response is right and complete."
POLITENESS = "Is the response polite and respectful?"


@pytest.fixture(scope="module")
def optioned_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("options")
    data = write_jsonl(folder / "data.jsonl", [json.loads(EXAMPLE_DATA.read_text(encoding="utf-8").splitlines()[0])])
    criteria = folder / "criteria.toml"
    criteria.write_text(f'[criteria]\npoliteness = "{POLITENESS}"\n', encoding="utf-8")
    out = folder / "results"
    result = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(data),
            "--metrics",
            "answer_relevancy,rubric_score,aspect_critique:politeness",
            "--judge",
            "smollm2-135m",
            "--out",
            str(out),
            "--n-ctx",
            "4096",
            "--strictness",
            "1",
            "--rubric",
            f"with_reference={RUBRIC}",
            "--criteria-file",
            str(criteria),
            "--embedder",
            "multilingual-e5-small",
            "--seed",
            "5",
            "--temperature",
            "0.3",
        ],
    )
    assert result.exit_code == 0, result.output
    record = json.loads((out / "samples.jsonl").read_text())
    return record, json.loads((out / "manifest.json").read_text())


@pytest.mark.slow
def test_strictness_sets_the_questions_written(optioned_run):
    record, manifest = optioned_run
    assert len(record["evidence"]["answer_relevancy"]["questions"]) == 1  # 3 by default
    assert manifest["metric_options"]["strictness"] == 1


@pytest.mark.slow
def test_rubric_replaces_the_built_in_one(optioned_run):
    record, _ = optioned_run
    assert record["evidence"]["rubric_score"]["rubric"] == "with_reference"
    assert record["evidence"]["rubric_score"]["rubric_text"] == RUBRIC


@pytest.mark.slow
def test_criteria_file_adds_a_critique_metric_with_its_definition(optioned_run):
    record, manifest = optioned_run
    assert "aspect_critique:politeness" in manifest["metrics"]
    assert record["scores"]["aspect_critique:politeness"] in (0.0, 1.0)
    assert record["evidence"]["aspect_critique:politeness"]["criterion"] == POLITENESS


@pytest.mark.slow
def test_embedder_is_used_instead_of_the_default(optioned_run):
    _, manifest = optioned_run
    assert manifest["encoders"]["embedder_by_language"]["en"].startswith("multilingual-e5-small")  # default: MiniLM


@pytest.mark.slow
def test_seed_and_temperature_reach_the_judge(optioned_run):
    _, manifest = optioned_run
    assert (manifest["judge"]["config"]["seed"], manifest["judge"]["config"]["temperature"]) == (5, 0.3)
