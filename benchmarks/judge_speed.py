"""Raw judge speed for this llama.cpp build: prompt processing and generation, with and without repacked weights.

    .venv/bin/python benchmarks/judge_speed.py [MODEL_NAME_OR_PATH] [--threads 2] [--prompt 512] [--generate 64]
                                               [--gpu-layers 0]

Prints the CPU, whether it has AMX, llama.cpp's system info, then tokens per second (median of
--repeats runs) for each setting. "no repacking" is what `localeval evaluate` falls back to when
the repacked kernels crash (see localeval/judge/check.py); scripts/setup.sh's build is meant to make
that fallback unnecessary.
"""

import argparse
import statistics
import time

import llama_cpp
import numpy as np

from localeval.judge.gguf import GGUFJudge
from localeval.judge.protocol import JudgeConfig
from localeval.judge.system import cpu, llama_build
from localeval.models import resolve_judge

TEXT = (
    "The Rhine rises in the Swiss Alps, flows through Germany and the Netherlands, and reaches the North Sea "
    "near Rotterdam. It has carried barge traffic since Roman times. "
)


def measure(judge: GGUFJudge, prompt_tokens: int, generate_tokens: int, repeats: int) -> tuple[float, float]:
    """Median prompt and generation speeds, each from a fresh KV cache."""
    llm = judge._llm
    tokens = llm.tokenize((TEXT * 200).encode(), add_bos=True)[:prompt_tokens]
    prompt_speeds, generation_speeds = [], []
    for _ in range(repeats):
        llm.reset()
        started = time.perf_counter()
        llm.eval(tokens)
        prompt_speeds.append(len(tokens) / (time.perf_counter() - started))
        started = time.perf_counter()
        for _ in range(generate_tokens):
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(llm.n_vocab(),))
            llm.eval([int(np.argmax(logits))])
        generation_speeds.append(generate_tokens / (time.perf_counter() - started))
    return statistics.median(prompt_speeds), statistics.median(generation_speeds)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model", nargs="?", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompt", type=int, default=512)
    parser.add_argument("--generate", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--gpu-layers", type=int, default=0, help="Layers offloaded to the GPU (-1: all).")
    args = parser.parse_args()
    path = resolve_judge(args.model).path
    build = llama_build()
    print(f"CPU: {cpu().model}; AMX: {'yes' if cpu().has_amx else 'no'}")
    print(f"llama-cpp-python {build.version}; built by setup: {build.setup_stamp is not None}")
    print(f"system info: {build.system_info}")
    print(
        f"model {path}, {args.threads} threads, {args.gpu_layers} GPU layers, {args.prompt}-token prompt, "
        f"{args.generate} generated tokens"
    )
    for repacking in (True, False):
        config = JudgeConfig(
            n_ctx=args.prompt + args.generate + 16,
            n_threads=args.threads,
            weight_repacking=repacking,
            n_gpu_layers=args.gpu_layers,
        )
        prompt_speed, generation_speed = measure(GGUFJudge(path, config), args.prompt, args.generate, args.repeats)
        label = "repacked weights" if repacking else "no repacking"
        print(f"  {label:<18} prompt {prompt_speed:7.1f} tokens/s   generation {generation_speed:6.1f} tokens/s")


if __name__ == "__main__":
    main()
