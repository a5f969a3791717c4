"""Ragas' side of benchmarks/vs_ragas.py; runs in the Ragas venv (`benchmarks/setup_ragas.sh`), never in localeval's.

    .venv-ragas/bin/python benchmarks/vs_ragas_worker.py JUDGE_URL EMBEDDER_URL

Reads one block of samples per line of stdin (a JSON list) and writes one JSON line per block: the
seconds Ragas' evaluate() took, each sample's scores (null for NaN), and the judge calls and tokens
that the block cost. The judge is llama-cpp-python's OpenAI-compatible server and the embedder the
driver's; both listen on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
import warnings

os.environ["RAGAS_DO_NOT_TRACK"] = "true"  # Ragas' usage analytics would reach out to the network
warnings.filterwarnings("ignore")

from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402
from langchain_openai import ChatOpenAI, OpenAIEmbeddings  # noqa: E402
from ragas import EvaluationDataset, evaluate  # noqa: E402
from ragas.embeddings import LangchainEmbeddingsWrapper  # noqa: E402
from ragas.llms import LangchainLLMWrapper  # noqa: E402
from ragas.metrics import (  # noqa: E402
    answer_relevancy,
    context_precision,
    context_recall,
    faithfulness,
)
from ragas.run_config import RunConfig  # noqa: E402

METRICS = [faithfulness, answer_relevancy, context_precision, context_recall]


class JudgeUsage(BaseCallbackHandler):
    """Counts the judge's requests and the tokens the server reports for them."""

    def __init__(self) -> None:
        self.calls = self.prompt_tokens = self.completion_tokens = 0

    def on_llm_end(self, response, **kwargs) -> None:
        usage = (response.llm_output or {}).get("token_usage") or {}
        self.calls += 1
        self.prompt_tokens += usage.get("prompt_tokens", 0)
        self.completion_tokens += usage.get("completion_tokens", 0)


def main() -> None:
    judge_url, embedder_url = sys.argv[1], sys.argv[2]
    llm = LangchainLLMWrapper(
        ChatOpenAI(base_url=judge_url, api_key="local", model="judge", max_retries=0, timeout=3600)
    )
    # check_embedding_ctx_length=False: otherwise the client tokenizes with tiktoken, which downloads its tables.
    embeddings = LangchainEmbeddingsWrapper(
        OpenAIEmbeddings(base_url=embedder_url, api_key="local", model="embedder", check_embedding_ctx_length=False)
    )
    # One job at a time: the server answers one request at a time, and queued jobs would only time out into NaN.
    run_config = RunConfig(max_workers=1, timeout=3600)
    for line in sys.stdin:
        rows = json.loads(line)
        dataset = EvaluationDataset.from_list(
            [{key: row[key] for key in ("user_input", "response", "retrieved_contexts", "reference")} for row in rows]
        )
        usage = JudgeUsage()
        started = time.perf_counter()
        result = evaluate(
            dataset,
            metrics=METRICS,
            llm=llm,
            embeddings=embeddings,
            run_config=run_config,
            callbacks=[usage],
            show_progress=False,
        )
        seconds = time.perf_counter() - started
        scores = [
            {name: (None if value is None or math.isnan(value) else value) for name, value in row.items()}
            for row in result.scores
        ]
        print(
            json.dumps(
                {
                    "seconds": seconds,
                    "scores": scores,
                    "calls": usage.calls,
                    "prompt_tokens": usage.prompt_tokens,
                    "completion_tokens": usage.completion_tokens,
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
