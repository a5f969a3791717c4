"""Raw judge speed for this llama.cpp build: prompt processing and generation, with and without repacked weights,
and generation with several sequences decoded together.

    .venv/bin/python benchmarks/judge_speed.py [MODEL_NAME_OR_PATH] [--threads 2] [--prompt 512] [--generate 64]
                                               [--gpu-layers 0] [--batch-sizes 1,2,4,8]
                                               [--suite DATA] [--metrics a,b] [--skip-raw]

Prints the CPU, whether it has AMX, llama.cpp's system info, then tokens per second (median of
--repeats runs) for each setting. "no repacking" is what `localeval evaluate` falls back to when
the repacked kernels crash (see localeval/judge/check.py); scripts/setup.sh's build is meant to make
that fallback unnecessary.

The batch curve: one prompt evaluated once and shared by N sequences (its KV cells tagged with every sequence, not
copied), then each step decodes one token of each sequence in a single llama_decode. It prints the generated
tokens per second summed over the sequences, and the speed-up over one sequence: what decoding a round's
independent calls together could gain on this machine. Then the same through real judge calls (a prompt of their
own after the shared prefix, answers under a grammar), as `localeval doctor` measures it.

With --suite DATA, the run itself at each batch size (`--batch-decode N`): judge seconds per sample, prompt and
generated tokens per second, and how far its scores move from batch 1's (a batch rounds its last bits differently).
--metrics: which (default: the default suite for DATA's languages).
"""

import argparse
import statistics
import time
from pathlib import Path

import llama_cpp
import numpy as np

from localeval.judge.batch_curve import describe_curve, measure_curve
from localeval.judge.batch_decoding import fill_batch
from localeval.judge.gguf import GGUFJudge, parallel_sequences
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


def batch_curve(
    path: Path, threads: int, gpu_layers: int, prompt_tokens: int, generate_tokens: int, sizes: list[int], repeats: int
) -> list[tuple[int, float]]:
    """Generated tokens/s summed over N sequences that share one prompt, each N's median of `repeats`."""
    largest = max(sizes)
    with parallel_sequences(largest):
        llm = llama_cpp.Llama(
            model_path=str(path),
            n_ctx=prompt_tokens + largest * (generate_tokens + 1) + 16,
            n_batch=max(prompt_tokens, largest),
            n_threads=threads,
            n_threads_batch=threads,
            n_gpu_layers=gpu_layers,
            verbose=False,
        )
    prompt = llm.tokenize((TEXT * 200).encode(), add_bos=True)[:prompt_tokens]
    ctx, vocab = llm.ctx, llm.n_vocab()
    memory = llama_cpp.llama_get_memory(ctx)
    batch = llama_cpp.llama_batch_init(max(prompt_tokens, largest), 0, largest)
    curve = []
    try:
        for size in sizes:
            speeds = []
            for _ in range(repeats):
                llama_cpp.llama_memory_clear(memory, True)
                fill_batch(batch, [(t, i, 0, i == len(prompt) - 1) for i, t in enumerate(prompt)])
                if llama_cpp.llama_decode(ctx, batch) != 0:
                    raise RuntimeError("llama_decode failed on the prompt")
                for sequence in range(1, size):
                    llama_cpp.llama_memory_seq_cp(memory, 0, sequence, -1, -1)
                first = int(np.argmax(np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, -1), shape=(vocab,))))
                tokens = [first] * size
                started = time.perf_counter()
                for step in range(generate_tokens):
                    fill_batch(batch, [(tokens[s], len(prompt) + step, s, True) for s in range(size)])
                    if llama_cpp.llama_decode(ctx, batch) != 0:
                        raise RuntimeError(f"llama_decode failed at {size} sequences")
                    for s in range(size):
                        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, s), shape=(vocab,))
                        tokens[s] = int(np.argmax(logits))
                speeds.append(size * generate_tokens / (time.perf_counter() - started))
            curve.append((size, statistics.median(speeds)))
    finally:
        llama_cpp.llama_batch_free(batch)
        llm.close()
    return curve


def suite_curve(model: str | None, data: Path, metrics: list[str] | None, threads: int, sizes: list[int]) -> None:
    """The same run at each batch size: seconds and tokens per second of the judge, and the scores' largest move."""
    import localeval

    first: dict[tuple[str, str], float] | None = None
    for size in sizes:
        judge = localeval.Judge(model, threads=threads, batch_decode=size)
        started = time.perf_counter()
        result = localeval.evaluate(data, metrics, judge=judge)
        wall = time.perf_counter() - started
        judge.close()
        usage = result.usage()
        scores = {(str(s.sample.id), m): score.value for s in result.samples for m, score in s.scores.items()}
        per_sample = usage.seconds / max(1, result.sample_count)
        moved = ""
        if first is None:
            first = scores
        else:
            shared = [k for k in scores if k in first and scores[k] == scores[k] and first[k] == first[k]]
            nan_changed = sum((scores[k] != scores[k]) != (first[k] != first[k]) for k in scores if k in first)
            largest = max((abs(scores[k] - first[k]) for k in shared), default=0.0)
            moved = f"   scores vs batch 1: largest move {largest:.4f}, NaN changed on {nan_changed}"
        print(
            f"  batch {size:>2}: judge {per_sample:6.2f} s/sample ({wall:5.1f} s wall), {usage.calls} calls, "
            f"{usage.completion_tokens / max(usage.seconds, 1e-9):5.1f} answer tokens per judge second{moved}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model", nargs="?", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompt", type=int, default=512)
    parser.add_argument("--generate", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--gpu-layers", type=int, default=0, help="Layers offloaded to the GPU (-1: all).")
    parser.add_argument(
        "--batch-sizes", default="1,2,4,8", help="Sequences decoded together for the batch curve ('' for none)."
    )
    parser.add_argument("--suite", type=Path, help="Also time a run on this data at each batch size.")
    parser.add_argument("--metrics", help="--suite: comma-separated metrics (default: the default suite).")
    parser.add_argument("--skip-raw", action="store_true", help="Only the --suite curve.")
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
    sizes = [int(n) for n in args.batch_sizes.split(",") if n.strip()]
    if not args.skip_raw:
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
        if sizes:
            print("batch curve (repacked weights): sequences sharing the prompt, decoded together")
            curve = batch_curve(path, args.threads, args.gpu_layers, args.prompt, args.generate, sizes, args.repeats)
            single = curve[0][1] if curve[0][0] == 1 else None
            for size, speed in curve:
                gain = f"   x{speed / single:.2f} over 1" if single else ""
                print(f"  {size:>2} sequences   generation {speed:6.1f} tokens/s in all{gain}")
            config = JudgeConfig(n_threads=args.threads, n_gpu_layers=args.gpu_layers)
            calls = measure_curve(path, config, tuple(sizes))
            print(f"judge calls decoded together, as `localeval doctor` times them: {describe_curve(calls)}")
    if args.suite:
        metrics = args.metrics.split(",") if args.metrics else None
        print(f"run on {args.suite}, {args.threads} threads, metrics: {args.metrics or 'the default suite'}")
        suite_curve(args.model, args.suite, metrics, args.threads, sizes)


if __name__ == "__main__":
    main()
