"""A server judge beside the same judge in process: seconds per sample and how far the scores move.

    .venv/bin/python benchmarks/server_judge.py [--judge qwen2.5-coder-0.5b] [--data examples/rag_sample.jsonl]
        [--metrics faithfulness,answer_relevancy,context_precision,context_recall] [--threads 2]

Starts llama-cpp-python's OpenAI-compatible server (its packages come with the test extra: fastapi, uvicorn,
sse-starlette, pydantic-settings, starlette-context) on 127.0.0.1 with the judge's GGUF, then scores the data twice
into fresh folders, in process and through the server, one after the other so that they never share the cores.
"""

from __future__ import annotations

import argparse
import math
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from localeval import Judge, evaluate
from localeval.models import resolve_judge

REPO = Path(__file__).resolve().parent.parent


def start_server(model: Path, threads: int, n_ctx: int) -> tuple[subprocess.Popen, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
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
            str(n_ctx),
            "--n_threads",
            str(threads),
            "--n_threads_batch",
            str(threads),
            "--verbose",
            "false",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(300):
        try:
            urllib.request.urlopen(url + "/models", timeout=5).read()
            return server, url
        except OSError:
            if server.poll() is not None:
                break
            time.sleep(1)
    server.kill()
    raise SystemExit("llama_cpp.server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judge", default="qwen2.5-coder-0.5b")
    parser.add_argument("--data", type=Path, default=REPO / "examples" / "rag_sample.jsonl")
    parser.add_argument("--metrics", default="faithfulness,answer_relevancy,context_precision,context_recall")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--n-ctx", type=int, default=8192)
    args = parser.parse_args()
    model = resolve_judge(args.judge).path

    with tempfile.TemporaryDirectory(prefix="server-judge-") as scratch:
        started = time.perf_counter()
        local_judge = Judge(args.judge, n_ctx=args.n_ctx, threads=args.threads)
        local = evaluate(args.data, args.metrics, judge=local_judge, out=Path(scratch) / "local")
        local_seconds = time.perf_counter() - started
        local_judge.close()

        server, url = start_server(model, args.threads, args.n_ctx)
        try:
            started = time.perf_counter()
            served = evaluate(args.data, args.metrics, judge=Judge(url), out=Path(scratch) / "served")
            served_seconds = time.perf_counter() - started
        finally:
            server.terminate()
            server.wait(timeout=30)

    samples = len(local.samples)
    print(f"judge {model.name}, {samples} samples of {args.data.name}, {args.threads} threads, metrics {args.metrics}")
    print(f"{'':<12}{'s/sample':>10}")
    print(f"{'in process':<12}{local_seconds / samples:>10.1f}")
    print(f"{'server':<12}{served_seconds / samples:>10.1f}")
    print(f"\n{'metric':<22}{'in process':>11}{'server':>9}{'max |diff|':>12}{'NaN':>6}")
    for metric in local.metrics:
        pairs = [(a.scores[metric].value, b.scores[metric].value) for a, b in zip(local.samples, served.samples)]
        both = [(a, b) for a, b in pairs if not (math.isnan(a) or math.isnan(b))]
        nans = sum(math.isnan(a) or math.isnan(b) for a, b in pairs)
        mean = lambda values: sum(values) / len(values) if values else math.nan  # noqa: E731
        print(
            f"{metric:<22}{mean([a for a, _ in both]):>11.3f}{mean([b for _, b in both]):>9.3f}"
            f"{max((abs(a - b) for a, b in both), default=math.nan):>12.3f}{nans:>6}"
        )


if __name__ == "__main__":
    main()
