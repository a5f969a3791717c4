"""A run streams its rows: memory does not grow with the dataset (benchmarks/scale_memory.py gives the figures)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from localeval.metrics import METRICS
from localeval.run.evaluation import run_evaluation
from localeval.run.options import EvaluationOptions
from localeval.run.planning import load_dataset, rows_for

METRIC_NAMES = ("chrf", "rouge_l")
PASSAGE = " ".join(f"The old bridge number {n} crosses the river north of the station." for n in range(30))


def write_rows(path: Path, count: int) -> Path:
    with path.open("w", encoding="utf-8") as file:
        for i in range(count):
            row = {
                "id": f"r{i}",
                "user_input": f"Which bridge is number {i}?",
                "response": f"Bridge {i} is old.",
                "reference": f"Bridge {i} crosses the river.",
                "retrieved_contexts": [PASSAGE] * 3,
            }
            file.write(json.dumps(row) + "\n")
    return path


def peak_bytes(tmp_path: Path, count: int) -> int:
    """Python's peak traced allocation over reading the file and the whole run, as `localeval evaluate` runs it."""
    data = write_rows(tmp_path / f"rows-{count}.jsonl", count)
    options = EvaluationOptions(data=data, out=tmp_path / f"out-{count}", metrics=METRIC_NAMES)
    metrics = [METRICS[name] for name in METRIC_NAMES]
    tracemalloc.start()
    try:
        result = run_evaluation(options, rows_for(load_dataset(options), metrics), metrics, keep_samples=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.sample_count == count and result.summaries["chrf"].count == count
    lines = (tmp_path / f"out-{count}" / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == [f"r{i}" for i in range(count)]
    return peak


@pytest.mark.slow
def test_ten_times_the_rows_costs_far_less_than_the_rows_themselves(tmp_path):
    row_bytes = len(PASSAGE) * 3
    peak_bytes(tmp_path, 20)  # imports and first-use caches, so that they are not counted as growth
    small, large = peak_bytes(tmp_path, 200), peak_bytes(tmp_path, 2000)
    growth_per_row = (large - small) / 1800
    # Holding the rows would cost more than their text (about 6.7 kB each); a streaming run keeps an id, a
    # language and an offset per row.
    assert growth_per_row < row_bytes / 10, (small, large, growth_per_row)
