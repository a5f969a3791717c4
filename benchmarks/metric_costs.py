"""Judge calls and seconds per sample for every metric, each run on its own, then the whole suite at once.

    .venv/bin/python benchmarks/metric_costs.py [DATA] [--judge NAME_OR_PATH] [--metrics a,b,...]

DATA defaults to examples/rag_sample.jsonl and the judge to the registry's default (1.5B). Each
metric runs in a fresh results folder, so no call is reused from another metric; the last line
runs all of them together, where shared steps run once. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from localeval.metrics.selection import known_metrics
from localeval.run.evaluation import run_evaluation
from localeval.run.options import EvaluationOptions
from localeval.run.planning import choose_for_dataset, load_dataset

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "rag_sample.jsonl"


def measure(data: Path, judge: str | None, metrics: tuple[str, ...]) -> tuple[float, float, float, float]:
    """(judge calls, judge seconds, wall seconds, mean score) per sample."""
    with tempfile.TemporaryDirectory() as out:
        options = EvaluationOptions(data=data, out=Path(out), metrics=metrics, judge=judge)
        dataset = load_dataset(options)
        started = time.perf_counter()
        result = run_evaluation(options, dataset, choose_for_dataset(options, dataset).chosen)
        wall = time.perf_counter() - started
    n = len(result.samples)
    usage = result.usage()
    means = [s.mean for s in result.summaries.values()]
    return usage.calls / n, usage.seconds / n, wall / n, means[0] if len(means) == 1 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", nargs="?", type=Path, default=EXAMPLE)
    parser.add_argument("--judge", default=None)
    parser.add_argument("--metrics", default=None, help="comma-separated (default: every metric)")
    args = parser.parse_args()
    names = args.metrics.split(",") if args.metrics else list(known_metrics())
    print(f"data {args.data}; judge {args.judge or 'default'}\n")
    print("| metric | judge calls / sample | judge s / sample | wall s / sample | mean score |")
    print("|---|---:|---:|---:|---:|")
    for name in names:
        calls, judge_s, wall_s, mean = measure(args.data, args.judge, (name,))
        print(f"| {name} | {calls:.1f} | {judge_s:.2f} | {wall_s:.2f} | {mean:.3f} |", flush=True)
    calls, judge_s, wall_s, _ = measure(args.data, args.judge, tuple(names))
    print(f"| **all {len(names)} together** | {calls:.1f} | {judge_s:.2f} | {wall_s:.2f} | |")


if __name__ == "__main__":
    main()
