"""localeval against Ragas 0.4.3, side by side: the same GGUF judge, embedder, machine, samples and four metrics.

    benchmarks/setup_ragas.sh                   # once: Ragas' venv and llama-cpp-python's server
    .venv/bin/python benchmarks/vs_ragas.py [DATA] [--judge NAME_OR_PATH] [--block N] [--limit N] [--server-log F]
        [--batch-decode N]

DATA defaults to benchmarks/data/vs_ragas.jsonl (12 English, 2 Japanese and 2 Chinese samples; see
benchmarks/data/make_vs_ragas.py). The metrics are Ragas' default four: faithfulness,
answer_relevancy, context_precision and context_recall.

Each tool runs in a process of its own and loads its models once:
- Ragas (`vs_ragas_worker.py`, in .venv-ragas) talks to llama-cpp-python's OpenAI-compatible server
  for the judge and to this process for the embedder, both on 127.0.0.1. Its judge is the same
  GGUF file with the same context size and threads.
- localeval (this file, `--localeval-worker`) runs the judge in-process, as `localeval evaluate` does.

The two take turns, a block of samples at a time (Ragas first), so a change in the machine's speed
during the run touches both alike. For localeval it also prints the efficiency: the time the
hardware needs for the prompt tokens that were not already in the judge's KV cache plus the
generated tokens, at prompt and generation speeds measured on the same judge in the same run,
divided by the time localeval took. The bound decodes one sequence at a time, so with
--batch-decode N (localeval decodes up to N calls of a step together; the server answers Ragas one
request at a time either way) what batching saves shows as efficiency above 1. Peak RSS is each
process's VmHWM; Ragas' includes its server and embedder.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data" / "vs_ragas.jsonl"
RAGAS_VENV = ROOT / ".venv-ragas"
SERVER_LIBS = RAGAS_VENV / "server-libs"  # llama-cpp-python's server extra, for this venv's llama_cpp
METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")
N_CTX = 8192


# ---------------------------------------------------------------- localeval's worker


class KVAwareJudge:
    """The judge, counting the prompt tokens that were not already in its KV cache (the work a call cannot skip)."""

    def __init__(self, judge: Any):
        self.inner = judge
        self.n_ctx = judge.n_ctx
        self.distinct_prompt_tokens = 0

    def generate(self, messages, schema, max_tokens, seed, temperature):
        return self._count([self.inner.generate(messages, schema, max_tokens, seed, temperature)])[0]

    def generate_many(self, requests):
        return self._count(self.inner.generate_many(requests))

    def _count(self, generations):
        for generation in generations:
            if not isinstance(generation, Exception):
                self.distinct_prompt_tokens += generation.prompt_tokens - generation.reused_prompt_tokens
        return generations


class StepCosts:
    """Per judge step: calls, prompt tokens not in the KV cache, generated tokens and seconds (cached calls cost 0)."""

    def __init__(self, executor: Any, judge: KVAwareJudge):
        self.executor, self.judge = executor, judge
        self.by_step: dict[str, list[float]] = {}

    @property
    def batch_size(self) -> int:
        return self.executor.batch_size

    def run(self, call: Any, lang: str) -> Any:
        return self.run_many([(call, lang)])[0]

    def run_many(self, calls: list[tuple[Any, str]]) -> list[Any]:
        """The runner hands over one step's calls at a time, decoded together where --batch-decode allows."""
        distinct = self.judge.distinct_prompt_tokens
        outcomes = self.executor.run_many(calls)
        costs = self.by_step.setdefault(calls[0][0].step, [0, 0, 0, 0.0])
        costs[1] += self.judge.distinct_prompt_tokens - distinct
        for outcome in outcomes:
            costs[0] += outcome.usage.attempts
            costs[2] += outcome.usage.completion_tokens
            costs[3] += outcome.usage.seconds
        return outcomes


def hardware_speeds(llm: Any, text: str) -> tuple[float, float]:
    """(prompt tokens/s, generated tokens/s) of llama.cpp itself: a 512-token prompt, then 64 single-token steps."""
    tokens = llm.tokenize(text.encode("utf-8"), add_bos=False)
    tokens = (tokens * (1 + 600 // max(len(tokens), 1)))[:600]
    llm.reset()
    started = time.perf_counter()
    llm.eval(tokens[:512])
    prompt_speed = 512 / (time.perf_counter() - started)
    started = time.perf_counter()
    for token in tokens[512:576]:
        llm.eval([token])
    generation_speed = 64 / (time.perf_counter() - started)
    llm.reset()
    return prompt_speed, generation_speed


def localeval_worker(judge_name: str | None, threads: int, batch_decode: int) -> None:
    from localeval.data.samples import Sample
    from localeval.judge.gguf import GGUFJudge
    from localeval.judge.protocol import JudgeConfig
    from localeval.metrics.options import MetricOptions
    from localeval.metrics.selection import known_metrics
    from localeval.models import resolve_judge
    from localeval.models.encoders import EncoderPool
    from localeval.run.judges import judge_identity
    from localeval.run.planning import calibrations_for, sample_language
    from localeval.run.runner import run_metrics
    from localeval.run.step_executor import StepExecutor
    from localeval.steps.prompts import PromptLibrary

    config = JudgeConfig(n_ctx=N_CTX, n_threads=threads, batch_decode=batch_decode)
    resolved = resolve_judge(judge_name)
    judge = KVAwareJudge(GGUFJudge(resolved.path, config))
    executor = StepCosts(StepExecutor(judge, str(resolved.path), PromptLibrary(), config), judge)
    encoders = EncoderPool(None, None)
    metrics = [known_metrics()[name] for name in METRICS]
    langs = ("en", "ja", "zh")
    options = MetricOptions(
        calibrations=calibrations_for(PromptLibrary(), langs, judge_identity(resolved, config)).calibrations()
    )
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("speeds"):
            print(json.dumps({"speeds": hardware_speeds(judge.inner._llm, request["speeds"])}), flush=True)
            continue
        samples = [
            Sample(
                id=row["id"],
                row=i,
                user_input=row["user_input"],
                response=row["response"],
                reference=row["reference"],
                retrieved_contexts=tuple(row["retrieved_contexts"]),
            )
            for i, row in enumerate(request["rows"])
        ]
        distinct_before = judge.distinct_prompt_tokens
        started = time.perf_counter()
        results = run_metrics(samples, metrics, executor, sample_language, encoders=encoders, options=options)
        seconds = time.perf_counter() - started
        usage = [r.usage for r in results]
        print(
            json.dumps(
                {
                    "seconds": seconds,
                    "scores": [
                        {name: (None if score.reason else score.value) for name, score in r.scores.items()}
                        for r in results
                    ],
                    "reasons": [
                        {name: score.reason for name, score in r.scores.items() if score.reason} for r in results
                    ],
                    "calls": sum(u.calls for u in usage),
                    "prompt_tokens": sum(u.prompt_tokens for u in usage),
                    "completion_tokens": sum(u.completion_tokens for u in usage),
                    "distinct_prompt_tokens": judge.distinct_prompt_tokens - distinct_before,
                    "drafted_tokens": judge.inner._llm.drafted_tokens,
                    "kept_draft_tokens": judge.inner._llm.kept_draft_tokens,
                    "steps": executor.by_step,
                }
            ),
            flush=True,
        )


# ---------------------------------------------------------------- the embedder that Ragas uses


def embedding_server(port: int) -> ThreadingHTTPServer:
    """An OpenAI-style /v1/embeddings endpoint on 127.0.0.1 with localeval's embedders: English texts get the
    English embedder, Japanese and Chinese ones the multilingual one, as in localeval itself."""
    from localeval.data.text import detect_language
    from localeval.models.encoders import EncoderPool

    pool = EncoderPool(None, None)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
            vectors: list[np.ndarray] = [np.empty(0)] * len(texts)
            langs = [detect_language(text) for text in texts]
            with lock:
                for lang in set(langs):  # one batch per language, as localeval's runner embeds
                    positions = [i for i, text_lang in enumerate(langs) if text_lang == lang]
                    embedded = pool(lang).embed([texts[i] for i in positions])
                    for i, vector in zip(positions, embedded):
                        vectors[i] = np.asarray(vector, dtype=np.float32)
            as_base64 = body.get("encoding_format") == "base64"
            data = [
                {
                    "object": "embedding",
                    "index": i,
                    "embedding": base64.b64encode(v.tobytes()).decode() if as_base64 else v.tolist(),
                }
                for i, v in enumerate(vectors)
            ]
            reply = json.dumps(
                {
                    "object": "list",
                    "data": data,
                    "model": body.get("model", "embedder"),
                    "usage": {"prompt_tokens": 0, "total_tokens": 0},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# ---------------------------------------------------------------- the driver


@dataclass
class Tally:
    """One tool's totals over the blocks it ran."""

    seconds: float = 0.0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    distinct_prompt_tokens: int = 0
    scores: list[dict[str, float | None]] = field(default_factory=list)
    reasons: list[dict[str, str]] = field(default_factory=list)
    steps: dict[str, list[float]] = field(default_factory=dict)  # the worker's running totals per judge step
    drafts: tuple[int, int] = (0, 0)  # the worker's running totals: tokens drafted, and kept by the judge

    def add(self, reply: dict[str, Any]) -> None:
        self.seconds += reply["seconds"]
        self.calls += reply["calls"]
        self.prompt_tokens += reply["prompt_tokens"]
        self.completion_tokens += reply["completion_tokens"]
        self.distinct_prompt_tokens += reply.get("distinct_prompt_tokens", 0)
        self.scores += reply["scores"]
        self.reasons += reply.get("reasons", [{} for _ in reply["scores"]])
        self.steps = reply.get("steps", {})
        self.drafts = (reply.get("drafted_tokens", 0), reply.get("kept_draft_tokens", 0))

    def nans(self, metric: str) -> int:
        return sum(1 for row in self.scores if row.get(metric) is None)


class Worker:
    """A child process that answers one JSON line with one JSON line."""

    def __init__(self, command: list[str]):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)

    def ask(self, request: Any) -> dict[str, Any]:
        self.process.stdin.write(json.dumps(request, ensure_ascii=False) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"{self.process.args[1]} stopped (exit {self.process.wait()})")
        return json.loads(line)


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_judge_server(model: Path, port: int, threads: int, log: Path | None) -> subprocess.Popen:
    """llama-cpp-python's server, with logits kept for the last token only, as localeval keeps them: its default
    keeps every position's, which costs 5 GB of RAM at this context size and slows down every prompt."""
    env = {**os.environ, "PYTHONPATH": str(SERVER_LIBS)}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            str(N_CTX),
            "--n_threads",
            str(threads),
            "--n_threads_batch",
            str(threads),
            "--model_alias",
            "judge",
            "--logits_all",
            "false",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log.open("w") if log else subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"llama-cpp-python's server exited ({server.returncode}); run benchmarks/setup_ragas.sh")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server
        except OSError:
            time.sleep(0.5)
    raise SystemExit("llama-cpp-python's server did not start within 300 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=DATA)
    parser.add_argument("--judge", default=None, help="a registry name or GGUF path (default: the default judge)")
    parser.add_argument("--block", type=int, default=4, help="samples per turn")
    parser.add_argument("--limit", type=int, default=None, help="only the first N samples")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument(
        "--server-log",
        type=Path,
        default=None,
        help="write the judge server's llama.cpp timings (one pair of lines per Ragas call) here",
    )
    parser.add_argument(
        "--batch-decode", type=int, default=1, help="localeval decodes up to N calls of a step together"
    )
    parser.add_argument("--localeval-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.localeval_worker:
        localeval_worker(args.judge, args.threads, args.batch_decode)
        return
    if not (RAGAS_VENV / "bin" / "python").exists():
        raise SystemExit(f"No Ragas venv at {RAGAS_VENV}: run benchmarks/setup_ragas.sh first.")

    from localeval.models import resolve_judge

    model = resolve_judge(args.judge).path
    # A stop by `timeout` or `kill` must not leave the judge server decoding: SIGTERM runs the cleanup below too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rows = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = rows[: args.limit] if args.limit else rows
    judge_port, embedder_port = free_port(), free_port()
    embedder = embedding_server(embedder_port)
    server = start_judge_server(model, judge_port, args.threads, args.server_log)
    children = [server]
    try:
        ragas = Worker(
            [
                str(RAGAS_VENV / "bin" / "python"),
                str(ROOT / "benchmarks" / "vs_ragas_worker.py"),
                f"http://127.0.0.1:{judge_port}/v1",
                f"http://127.0.0.1:{embedder_port}/v1",
            ]
        )
        local = Worker(
            [sys.executable, __file__, "--localeval-worker", "--threads", str(args.threads)]
            + ["--batch-decode", str(args.batch_decode)]
            + (["--judge", args.judge] if args.judge else [])
        )
        children += [ragas.process, local.process]
        tallies, speeds = take_turns(rows, args.block, ragas, local)
        rss_parts = (peak_rss_mib(ragas.process.pid), peak_rss_mib(server.pid), peak_rss_mib(os.getpid()))
        rss = {"localeval": peak_rss_mib(local.process.pid), "ragas": sum(rss_parts)}
    finally:
        for child in children:
            child.kill()  # the server would finish the request in flight before a SIGTERM stops it
            child.wait()
        embedder.shutdown()
    print(
        f"{len(rows)} samples from {args.data}, judge {model.name}, {args.threads} threads, "
        f"localeval's --batch-decode {args.batch_decode}"
    )
    report(rows, tallies, speeds, rss, rss_parts)


def take_turns(
    rows: list[dict], block: int, ragas: Worker, local: Worker
) -> tuple[dict[str, Tally], list[tuple[float, float]]]:
    """Ragas and localeval in turn, a block of samples each; llama.cpp's own speeds measured before and after."""
    speed_text = " ".join(c for row in rows for c in row["retrieved_contexts"])
    speeds = [local.ask({"speeds": speed_text})["speeds"]]
    tallies = {"ragas": Tally(), "localeval": Tally()}
    for start in range(0, len(rows), block):
        for name, worker in (("ragas", ragas), ("localeval", local)):
            part = rows[start : start + block]
            reply = worker.ask(part if name == "ragas" else {"rows": part})
            tallies[name].add(reply)
            print(
                f"  samples {start + 1}-{start + len(part)}: {name} {reply['seconds'] / len(part):.1f} s/sample",
                file=sys.stderr,
                flush=True,
            )
    speeds.append(local.ask({"speeds": speed_text})["speeds"])
    return tallies, speeds


def report(
    rows: list[dict],
    tallies: dict[str, Tally],
    speeds: list[tuple[float, float]],
    rss: dict[str, float],
    rss_parts: tuple[float, float, float],
) -> None:
    n = len(rows)
    ragas, local = tallies["ragas"], tallies["localeval"]
    prompt_speed = float(np.mean([s[0] for s in speeds]))
    generation_speed = float(np.mean([s[1] for s in speeds]))
    bound = local.distinct_prompt_tokens / prompt_speed + local.completion_tokens / generation_speed
    print(
        f"\nllama.cpp on this judge: {prompt_speed:.0f} prompt tokens/s, {generation_speed:.1f} generated tokens/s "
        f"(mean of the measurements before and after)\n"
    )
    print("| | Ragas 0.4.3 | localeval |")
    print("|---|---:|---:|")
    print(f"| seconds per sample | {ragas.seconds / n:.1f} | {local.seconds / n:.1f} |")
    print(f"| speed-up | | **{ragas.seconds / local.seconds:.2f}×** |")
    print(f"| judge calls per sample | {ragas.calls / n:.1f} | {local.calls / n:.1f} |")
    print(f"| prompt tokens per sample | {ragas.prompt_tokens / n:.0f} | {local.prompt_tokens / n:.0f} |")
    print(f"| … not already in the KV cache | | {local.distinct_prompt_tokens / n:.0f} |")
    print(f"| generated tokens per sample | {ragas.completion_tokens / n:.0f} | {local.completion_tokens / n:.0f} |")
    for metric in METRICS:
        print(f"| NaN {metric} | {ragas.nans(metric)}/{n} | {local.nans(metric)}/{n} |")
    print(f"| peak RSS (MiB) | {rss['ragas']:.0f} | {rss['localeval']:.0f} |")
    print(f"| efficiency (bound / actual) | | {bound / local.seconds:.2f} |")
    print(
        f"\nRagas' RSS: worker {rss_parts[0]:.0f} + judge server {rss_parts[1]:.0f} + embedder host "
        f"{rss_parts[2]:.0f} MiB. localeval bound: {local.distinct_prompt_tokens / prompt_speed:.0f} s prompt + "
        f"{local.completion_tokens / generation_speed:.0f} s generation, of {local.seconds:.0f} s."
    )
    drafted, kept = local.drafts
    if drafted:
        print(
            f"localeval's prompt-lookup drafts: {kept} of {drafted} drafted tokens kept ({kept / drafted:.0%}); "
            "each kept token is one forward pass saved, so the bound's generation term counts more passes "
            "than were made."
        )
    print(
        "\n| localeval step | calls / sample | new prompt tokens / call | generated tokens / call | s / call "
        "| bound s / call (prompt + generation) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for step, (calls, distinct, generated, seconds) in local.steps.items():
        print(
            f"| {step} | {calls / n:.1f} | {distinct / calls:.0f} | {generated / calls:.1f} | {seconds / calls:.2f} "
            f"| {distinct / calls / prompt_speed:.2f} + {generated / calls / generation_speed:.2f} |"
        )
    reasons = sorted({f"{m}: {r}" for row in local.reasons for m, r in row.items()})
    if reasons:
        print("localeval NaN reasons: " + "; ".join(reasons))
    print("\n| sample | " + " | ".join(f"{m} R / L" for m in METRICS) + " |")
    print("|---|" + "---:|" * len(METRICS))
    for row, r, l in zip(rows, ragas.scores, local.scores):
        cells = [f"{_fmt(r.get(m))} / {_fmt(l.get(m))}" for m in METRICS]
        print(f"| {row['id'][:40]} | " + " | ".join(cells) + " |")


def _fmt(value: float | None) -> str:
    return "NaN" if value is None else f"{value:.2f}"


if __name__ == "__main__":
    main()
