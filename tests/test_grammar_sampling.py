"""The grammar-checked sampler against llama-cpp-python's own, on the real SmolLM2-135M."""

import json
from pathlib import Path

import pytest
from llama_cpp import Llama, LlamaGrammar

from localeval._grammar_sampling import GrammarCheckedLlama

PROMPT = ('<|im_start|>user\nList five facts about Paris as JSON {"facts": [...]}<|im_end|>\n'
          "<|im_start|>assistant\n")
SCHEMA = {"type": "object", "required": ["facts"], "properties": {
    "facts": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 80}}}}


@pytest.fixture(scope="module")
def grammar() -> LlamaGrammar:
    return LlamaGrammar.from_json_schema(json.dumps(SCHEMA), verbose=False)


@pytest.fixture(scope="module")
def checked(smollm_path: Path) -> GrammarCheckedLlama:
    return GrammarCheckedLlama(model_path=str(smollm_path), n_ctx=1024, verbose=False)


def _text(llm: Llama, grammar: LlamaGrammar, temperature: float = 0.0, seed: int = 0) -> str:
    reply = llm.create_completion(PROMPT, max_tokens=200, temperature=temperature, seed=seed, grammar=grammar)
    return reply["choices"][0]["text"]


def test_greedy_output_equals_the_stock_sampler(smollm_path: Path, checked, grammar):
    stock = Llama(model_path=str(smollm_path), n_ctx=1024, verbose=False)
    expected = _text(stock, grammar)
    assert _text(checked, grammar) == expected
    facts = json.loads(expected, strict=False)["facts"]
    assert 1 <= len(facts) <= 5 and all(len(fact) <= 80 for fact in facts)


def test_sampled_output_is_valid_and_repeats_with_its_seed(checked, grammar):
    first, again, other = (_text(checked, grammar, 0.9, seed) for seed in (1, 1, 2))
    assert first == again
    assert first != other
    for text in (first, other):
        facts = json.loads(text, strict=False)["facts"]
        assert len(facts) <= 5 and all(len(fact) <= 80 for fact in facts)
