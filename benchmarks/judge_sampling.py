"""Generation speed with a JSON grammar: llama-cpp-python's own sampler, localeval's, and no grammar.

    .venv/bin/python benchmarks/judge_sampling.py [MODEL_NAME_OR_PATH] [--tokens N]

Prints tokens per second for each, and whether the greedy outputs are identical.
"""

import argparse
import json
import time

from llama_cpp import Llama, LlamaGrammar

from localeval.judge.grammar_sampling import GrammarCheckedLlama
from localeval.judge.protocol import JudgeConfig
from localeval.models import resolve_judge

PROMPT = (
    "<|im_start|>user\nList twenty facts about the Eiffel Tower as JSON "
    '{"statements": [...]}<|im_end|>\n<|im_start|>assistant\n'
)
SCHEMA = {
    "type": "object",
    "required": ["statements"],
    "properties": {"statements": {"type": "array", "maxItems": 24, "items": {"type": "string", "maxLength": 300}}},
}


def measure(llm: Llama, grammar: LlamaGrammar | None, tokens: int) -> tuple[float, str]:
    llm.create_completion(PROMPT, max_tokens=4, temperature=0, grammar=grammar)  # prompt now in the KV cache
    started = time.perf_counter()
    reply = llm.create_completion(PROMPT, max_tokens=tokens, temperature=0, grammar=grammar, seed=0)
    seconds = time.perf_counter() - started
    return reply["usage"]["completion_tokens"] / seconds, reply["choices"][0]["text"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model", nargs="?", default=None)
    parser.add_argument("--tokens", type=int, default=200)
    args = parser.parse_args()
    path = str(resolve_judge(args.model).path)
    threads = JudgeConfig().threads()
    grammar = LlamaGrammar.from_json_schema(json.dumps(SCHEMA), verbose=False)
    print(f"model {path}, {threads} threads, {args.tokens} tokens")
    stock_speed, stock_text = measure(
        Llama(model_path=path, n_ctx=2048, n_threads=threads, verbose=False), grammar, args.tokens
    )
    checked = GrammarCheckedLlama(model_path=path, n_ctx=2048, n_threads=threads, verbose=False)
    checked_speed, checked_text = measure(checked, grammar, args.tokens)
    free_speed, _ = measure(checked, None, args.tokens)
    print(f"llama-cpp-python grammar sampler: {stock_speed:6.1f} tokens/s")
    print(f"localeval grammar-checked sampler: {checked_speed:6.1f} tokens/s")
    print(f"no grammar:                        {free_speed:6.1f} tokens/s")
    print(f"greedy outputs identical: {stock_text == checked_text}")


if __name__ == "__main__":
    main()
