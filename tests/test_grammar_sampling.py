"""The grammar-checked sampler against llama-cpp-python's own, on the real SmolLM2-135M, and its stock truncation."""

import json
from pathlib import Path

import numpy as np
import pytest
from llama_cpp import Llama, LlamaGrammar

from localeval.judge.grammar_sampling import GrammarCheckedLlama, Truncation, draw

PROMPT = '<|im_start|>user\nList five facts about Paris as JSON {"facts": [...]}<|im_end|>\n<|im_start|>assistant\n'
SCHEMA = {
    "type": "object",
    "required": ["facts"],
    "properties": {"facts": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 80}}},
}


@pytest.fixture(scope="module")
def grammar() -> LlamaGrammar:
    return LlamaGrammar.from_json_schema(json.dumps(SCHEMA), verbose=False)


@pytest.fixture(scope="module")
def checked(smollm_path: Path) -> GrammarCheckedLlama:
    return GrammarCheckedLlama(model_path=str(smollm_path), n_ctx=1024, verbose=False)


def _text(llm: Llama, grammar: LlamaGrammar, temperature: float = 0.0, seed: int = 0) -> str:
    reply = llm.create_completion(PROMPT, max_tokens=200, temperature=temperature, seed=seed, grammar=grammar)
    return reply["choices"][0]["text"]


@pytest.mark.slow
def test_greedy_output_equals_the_stock_sampler(smollm_path: Path, checked, grammar):
    stock = Llama(model_path=str(smollm_path), n_ctx=1024, verbose=False)
    expected = _text(stock, grammar)
    assert _text(checked, grammar) == expected
    facts = json.loads(expected, strict=False)["facts"]
    assert 1 <= len(facts) <= 5 and all(len(fact) <= 80 for fact in facts)


@pytest.mark.slow
def test_sampled_output_is_valid_and_repeats_with_its_seed(checked, grammar):
    first, again, other = (_text(checked, grammar, 0.9, seed) for seed in (1, 1, 2))
    assert first == again
    assert first != other
    for text in (first, other):
        facts = json.loads(text, strict=False)["facts"]
        assert len(facts) <= 5 and all(len(fact) <= 80 for fact in facts)


# --- the stock chain's truncation: top-k, top-p, min-p (pure functions, no model) ------------------


def log_probabilities(*probabilities: float) -> np.ndarray:
    return np.log(np.array(probabilities, dtype=np.float32))


def test_top_k_keeps_the_k_best_tokens_best_first():
    logits = np.array([0.5, 3.0, -1.0, 2.0, 1.0], dtype=np.float32)
    assert Truncation(top_k=3, top_p=1.0, min_p=0.0).candidates(logits).tolist() == [1, 3, 4]


def test_top_p_keeps_tokens_through_the_first_that_reaches_the_mass():
    logits = log_probabilities(0.1, 0.5, 0.04, 0.3, 0.06)  # sorted: 0.5, 0.3, 0.1, 0.06 (cumulative 0.96), 0.04
    assert Truncation(top_k=0, top_p=0.95, min_p=0.0).candidates(logits).tolist() == [1, 3, 0, 4]


def test_min_p_drops_tokens_below_a_share_of_the_best():
    logits = log_probabilities(0.02, 0.6, 0.3, 0.04, 0.04)  # min-p 0.05 of 0.6 is 0.03
    assert Truncation(top_k=0, top_p=1.0, min_p=0.05).candidates(logits).tolist() == [1, 2, 3, 4]


def test_tokens_the_grammar_rejected_are_never_candidates():
    logits = np.array([-np.inf, 1.0, -np.inf, 1.0], dtype=np.float32)
    assert Truncation(top_k=40, top_p=1.0, min_p=0.0).candidates(logits).tolist() == [1, 3]


def test_defaults_are_llama_cpp_pythons():
    assert Truncation() == Truncation(top_k=40, top_p=0.95, min_p=0.05)


@pytest.mark.slow
def test_draws_above_temperature_0_never_leave_the_stock_candidates():
    """A peaked head and a long flat tail, as a judge's logits look: at 0.7 the whole vocabulary would be drawn."""
    rng = np.random.default_rng(0)
    logits = np.concatenate(
        [
            np.array([12.0, 11.5, 11.0, 10.0, 9.0, 6.0], dtype=np.float32),
            rng.normal(0.0, 1.0, 20_000).astype(np.float32),
        ]
    )
    allowed = set(Truncation().candidates(logits).tolist())
    assert allowed == {0, 1, 2, 3}  # top-k keeps 40; top-p and min-p then drop 9.0, 6.0 and the tail
    drawn = {draw(logits, 0.7, rng, Truncation()) for _ in range(1000)}
    assert drawn == allowed
    untruncated = {draw(logits, 0.7, rng, Truncation(top_k=0, top_p=1.0, min_p=0.0)) for _ in range(500)}
    assert untruncated - allowed  # what the sampler did before: tail tokens drawn


def test_draws_at_temperature_0_are_the_best_token():
    logits = np.array([1.0, 5.0, 2.0], dtype=np.float32)
    assert draw(logits, 0.0, np.random.default_rng(0), Truncation()) == 1
