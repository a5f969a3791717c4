"""Contexts far longer than the window (about 50,000 tokens over 30 passages) still get scores, with the cuts recorded."""

import json

import pytest
from click.testing import CliRunner
from conftest import write_jsonl

from localeval.cli import main

N_CTX = 4096


def passage(p: int) -> str:
    """About 1,700 tokens of distinct, dull facts."""
    return " ".join(
        f"Fact {p}-{i}: the bridge in district {i} of town {p} was repaired in {1800 + i}." for i in range(70)
    )


def context_tokens(model_path, contexts: list[str]) -> int:
    from llama_cpp import Llama

    vocabulary = Llama(model_path=str(model_path), vocab_only=True, verbose=False)
    return sum(len(vocabulary.tokenize(c.encode(), add_bos=False)) for c in contexts)


@pytest.mark.slow
def test_faithfulness_and_context_metrics_score_a_50k_token_context(tmp_path, smollm_path):
    contexts = [passage(p) for p in range(29)] + ["The Louvre in Paris opened to the public in 1793."]
    assert context_tokens(smollm_path, contexts) > 50_000  # more than 12 windows of text
    data = write_jsonl(
        tmp_path / "data.jsonl",
        [
            {
                "id": "long",
                "user_input": "When did the Louvre open?",
                "response": "The Louvre opened in 1793.",
                "reference": "The Louvre opened to the public in 1793.",
                "retrieved_contexts": contexts,
            }
        ],
    )
    result = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(data),
            "--metrics",
            "faithfulness,context_precision,context_recall",
            "--judge",
            "smollm2-135m",
            "--out",
            str(tmp_path / "out"),
            "--n-ctx",
            str(N_CTX),
        ],
    )
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "out" / "samples.jsonl").read_text())
    assert record["nan_reasons"] == {}
    assert all(0.0 <= score <= 1.0 for score in record["scores"].values())
    cut_steps = {cut["step"] for cut in record["inputs_cut"]}
    assert cut_steps == {"statement_support"}  # each passage alone fits, for context_usefulness
    for cut in record["inputs_cut"]:
        assert cut["kept_chars"] < cut["total_chars"] == sum(map(len, contexts))
        assert cut["total_sentences"] == 29 * 70 + 1
