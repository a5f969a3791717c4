"""Writes the labelled dev sets that the registry judges' calibrations are fitted on, as `localeval calibrate`
reads them.

    .venv/bin/python benchmarks/calibration_sets.py OUT_DIR [--jhars-rows N] [--uhgeval-rows N]
    .venv/bin/localeval calibrate OUT_DIR/jhars_dev.jsonl benchmarks/data/contradictions_ja.jsonl \\
        --judge qwen2.5-coder-1.5b --out CALIBRATIONS_DIR

From ../shared/metaeval:
- jhars_dev.jsonl: every row of the questions that have an unfaithful answer first, then the others in
  file order, so that a judging run stopped early (hours on 2 cores) has every unfaithful row; --jhars-rows
  keeps the first N (the shipped Japanese calibration: 112 of the 180).
- uhgeval_dev.jsonl: the first --uhgeval-rows rows (default 150), the headline as the question, since
  the news continuations have none.
- halueval_qa_dev.jsonl: as it is (a right and a hallucinated answer per question, the knowledge as context).
The judge-call cache of a run stays in CALIBRATIONS_DIR/JUDGE-results, outside the repository: the same
command resumes a stopped run and recomputes the figures of a finished one without calling the judge.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

METAEVAL = Path(__file__).resolve().parents[2] / "shared" / "metaeval"


def read(name: str) -> list[dict]:
    return [json.loads(line) for line in (METAEVAL / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def jhars(rows: int | None) -> list[dict]:
    found = [r for r in read("jhars_dev.jsonl") if r["label"]["faithful"] is not None]
    with_unfaithful = {r["orig_id"] for r in found if not r["label"]["faithful"]}
    ordered = [r for r in found if r["orig_id"] in with_unfaithful] + [
        r for r in found if r["orig_id"] not in with_unfaithful
    ]
    return ordered[:rows]


def uhgeval(rows: int) -> list[dict]:
    rows_read = read("uhgeval_dev.jsonl")[:rows]
    return [dict(r, user_input=r["user_input"] or r["meta"].get("headline") or "") for r in rows_read]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("out", type=Path)
    parser.add_argument("--jhars-rows", type=int, default=None)
    parser.add_argument("--uhgeval-rows", type=int, default=150)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, rows in (
        ("jhars_dev.jsonl", jhars(args.jhars_rows)),
        ("uhgeval_dev.jsonl", uhgeval(args.uhgeval_rows)),
        ("halueval_qa_dev.jsonl", read("halueval_qa_dev.jsonl")),
    ):
        (args.out / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        print(f"{args.out / name}: {len(rows)} rows")


if __name__ == "__main__":
    main()
