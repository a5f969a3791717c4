"""Throughput of a local run against `--ray local` with one 2-thread actor and with two 1-thread actors.

The same 20 rows (the 16 of vs_ragas.jsonl, in en, ja and zh, and the first 4 of the example data), the same
judge, metrics and batch size; each configuration is a fresh `localeval evaluate` process into a fresh folder,
timed from start to exit, so model loading and the cluster's start count. Ray's overhead per sample is the
1 x 2 run's time less the local run's, over the rows: both use the same two cores for one judge.

    .venv/bin/python benchmarks/ray_throughput.py                       # 0.5B judge
    .venv/bin/python benchmarks/ray_throughput.py --judge smollm2-135m --rows 8
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (ROOT / "benchmarks" / "data" / "vs_ragas.jsonl", ROOT / "examples" / "rag_sample.jsonl")
CONFIGS = (
    ("local, 2 threads", ["--threads", "2"]),
    ("Ray, 1 actor x 2 threads", ["--threads", "2", "--ray", "local"]),
    ("Ray, 2 actors x 1 thread", ["--threads", "1", "--ray", "local", "--ray-actors", "2"]),
)


def rows(count: int) -> list[dict]:
    found = [json.loads(line) for source in SOURCES for line in source.read_text(encoding="utf-8").splitlines()]
    return found[:count]


@click.command()
@click.option("--judge", default="qwen2.5-coder-0.5b", show_default=True)
@click.option("--metrics", default="faithfulness,context_precision", show_default=True)
@click.option("--rows", "count", default=20, show_default=True)
@click.option(
    "--batch-size",
    default=2,
    show_default=True,
    help="The same for every configuration; small enough that two actors share the batches evenly.",
)
def main(judge: str, metrics: str, count: int, batch_size: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        data = work / "data.jsonl"
        data.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows(count)), encoding="utf-8")
        print(f"{count} rows, judge {judge}, metrics {metrics}, batch size {batch_size}")
        print(f"{'configuration':<26} {'wall s':>7} {'s/sample':>9} {'judge s':>8} {'calls':>6}")
        walls = {}
        scores = {}
        for name, options in CONFIGS:
            out = work / name.replace(" ", "_").replace(",", "")
            command = [
                sys.executable,
                "-m",
                "localeval.cli",
                "evaluate",
                str(data),
                "--judge",
                judge,
                "--metrics",
                metrics,
                "--batch-size",
                str(batch_size),
                "--out",
                str(out),
                *options,
            ]
            started = time.perf_counter()
            done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            walls[name] = time.perf_counter() - started
            if done.returncode != 0:
                raise SystemExit(f"{name} failed ({done.returncode}): {done.stderr[-800:]}")
            summary = json.loads((out / "summary.json").read_text())
            scores[name] = [
                (r["id"], r["scores"], r["evidence"])
                for r in map(json.loads, (out / "samples.jsonl").read_text().splitlines())
            ]
            print(
                f"{name:<26} {walls[name]:>7.1f} {walls[name] / count:>9.2f} {summary['judge']['seconds']:>8.1f} "
                f"{summary['judge']['calls']:>6}"
            )
        local, one, two = (walls[name] for name, _ in CONFIGS)
        print(f"Ray overhead per sample (1 x 2 against local): {(one - local) / count:+.2f} s")
        print(f"2 x 1 against local: {local / two:.2f}x the throughput")
        same = all(scores[name] == scores[CONFIGS[0][0]] for name, _ in CONFIGS)
        print(f"scores and evidence identical in all three: {same}")


if __name__ == "__main__":
    main()
