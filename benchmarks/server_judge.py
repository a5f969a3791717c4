"""A server judge beside the same judge in process: seconds per sample and how far the scores move.

    .venv/bin/python benchmarks/server_judge.py [--judge qwen2.5-coder-0.5b] [--data examples/rag_sample.jsonl]
        [--metrics faithfulness,answer_relevancy,context_precision,context_recall] [--threads 2]
        [--batch-decode N] [--server-binary PATH/llama-server]

Starts llama-cpp-python's OpenAI-compatible server (its packages come with the test extra: fastapi, uvicorn,
sse-starlette, pydantic-settings, starlette-context) on 127.0.0.1 with the judge's GGUF, then scores the data twice
into fresh folders, in process and through the server, one after the other so that they never share the cores.

With `--server-binary`, the server is llama.cpp's own `llama-server` instead, with `--batch-decode` parallel slots
in one KV buffer, which decode the calls localeval sends at once together (continuous batching). That binary is
not part of localeval: build it from the llama.cpp that llama-cpp-python vendors (`pip download
llama-cpp-python==VERSION --no-binary :all:`, then in vendor/llama.cpp `cmake -B build && cmake --build build
--target llama-server`).
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


def start_server(
    model: Path, threads: int, n_ctx: int, binary: Path | None = None, slots: int = 1
) -> tuple[subprocess.Popen, str]:
    """llama-cpp-python's server, or llama.cpp's `binary` with `slots` parallel slots sharing n_ctx cells."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    if binary is None:
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--n_ctx", str(n_ctx)]
        command += ["--n_threads", str(threads), "--n_threads_batch", str(threads), "--verbose", "false"]
    else:
        command = [str(binary), "--model", str(model), "--ctx-size", str(n_ctx), "--parallel", str(slots)]
        command += ["--kv-unified", "--threads", str(threads), "--threads-batch", str(threads), "--no-webui"]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
    raise SystemExit(f"{command[0]} did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judge", default="qwen2.5-coder-0.5b")
    parser.add_argument("--data", type=Path, default=REPO / "examples" / "rag_sample.jsonl")
    parser.add_argument("--metrics", default="faithfulness,answer_relevancy,context_precision,context_recall")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--batch-decode", type=int, default=1, help="calls sent at once, and the server's slots")
    parser.add_argument("--server-binary", type=Path, help="llama.cpp's llama-server, in place of llama-cpp-python's")
    args = parser.parse_args()
    model = resolve_judge(args.judge).path

    with tempfile.TemporaryDirectory(prefix="server-judge-") as scratch:
        started = time.perf_counter()
        local_judge = Judge(args.judge, n_ctx=args.n_ctx, threads=args.threads, batch_decode=args.batch_decode)
        local = evaluate(args.data, args.metrics, judge=local_judge, out=Path(scratch) / "local")
        local_seconds = time.perf_counter() - started
        local_judge.close()

        server, url = start_server(model, args.threads, args.n_ctx, args.server_binary, args.batch_decode)
        try:
            started = time.perf_counter()
            served_judge = Judge(url, batch_decode=args.batch_decode)
            served = evaluate(args.data, args.metrics, judge=served_judge, out=Path(scratch) / "served")
            served_seconds = time.perf_counter() - started
        finally:
            server.terminate()
            server.wait(timeout=30)

    samples = len(local.samples)
    server_name = args.server_binary.name if args.server_binary else "llama_cpp.server"
    print(f"judge {model.name}, {samples} samples of {args.data.name}, {args.threads} threads, metrics {args.metrics}")
    print(f"--batch-decode {args.batch_decode}; server: {server_name}, {args.batch_decode} slot(s)")
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
