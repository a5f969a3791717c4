"""Agreement with human labels from ../shared/metaeval: faithfulness on JHARS (ja), UHGEval (zh), and WikiEval (en).

    .venv/bin/python benchmarks/metaeval.py jhars [--limit N] [--judge NAME_OR_PATH] [--out DIR]
    .venv/bin/python benchmarks/metaeval.py uhgeval [--limit N] [--out DIR]
    .venv/bin/python benchmarks/metaeval.py wikieval [--out DIR]

--out keeps each run's results folder (and its judge-call cache) under DIR, so a stopped measurement
resumes where it stopped and a finished one recomputes its figures without calling the judge again.

- jhars: AUROC and balanced accuracy (faithful iff score == 1) of the score against `faithful`.
  --limit keeps every unfaithful response and fills up with faithful ones in file order.
- uhgeval: the share of hallucinated keywords that fall inside statements judged unsupported,
  next to the same share for reasonable keywords (keywords found in no statement are counted apart).
- wikieval: per aspect, the metric on the preferred side (a) and the other (b): faithfulness
  (grounded vs ungrounded answer), answer_relevancy (good vs poor answer), context_relevancy and
  context_utilization (focused vs padded contexts).
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

from localeval.dataset import read_dataset
from localeval.evaluation import EvaluationOptions, run_evaluation
from localeval.metrics import METRICS
from localeval.text import normalize

METAEVAL = Path(__file__).resolve().parents[2] / "shared" / "metaeval"


def score_rows(rows: list[dict], judge: str | None, out: Path | None, name: str,
               metric: str = "faithfulness") -> list[dict]:
    """One metric per row (same order), through the normal evaluation path."""
    fields = ("id", "user_input", "response", "retrieved_contexts")
    with tempfile.TemporaryDirectory() as scratch:
        folder = out / f"{name}-{metric}" if out else Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        data = folder / "data.jsonl"
        data.write_text("".join(json.dumps({k: row[k] for k in fields}, ensure_ascii=False) + "\n" for row in rows),
                        encoding="utf-8")
        options = EvaluationOptions(data=data, out=folder / "results", metrics=(metric,), judge=judge)
        result = run_evaluation(options, read_dataset(data), [METRICS[metric]], progress=_progress)
        usage = result.usage()
        print(f"{metric}: {len(rows)} rows; judge {usage.calls} calls, {usage.seconds:.0f} s", flush=True)
        return [{"score": s.scores[metric].value, "reason": s.scores[metric].reason,
                 "evidence": s.scores[metric].evidence} for s in result.samples]


def _progress(step: str, done: int, total: int) -> None:
    print(f"  {time.strftime('%H:%M:%S')} {step}: {done}/{total}", flush=True)


def auroc(scores: list[float], positives: list[bool]) -> float:
    """Probability that a random positive scores above a random negative (ties count half)."""
    pos = [s for s, p in zip(scores, positives) if p]
    neg = [s for s, p in zip(scores, positives) if not p]
    pairs = [(1.0 if a > b else 0.5 if a == b else 0.0) for a in pos for b in neg]
    return sum(pairs) / len(pairs) if pairs else math.nan


def jhars(limit: int | None, judge: str | None, out: Path | None) -> None:
    rows = [r for r in _read("jhars_dev.jsonl") if r["label"]["faithful"] is not None]
    if limit:
        negatives = [r for r in rows if not r["label"]["faithful"]]
        rows = negatives + [r for r in rows if r["label"]["faithful"]][:max(0, limit - len(negatives))]
    results = score_rows(rows, judge, out, "jhars")
    kept = [(res["score"], r["label"]["faithful"]) for res, r in zip(results, rows) if not math.isnan(res["score"])]
    scores, faithful = [s for s, _ in kept], [f for _, f in kept]
    predicted = [s >= 1.0 for s in scores]
    tpr = _share([p for p, f in zip(predicted, faithful) if f])
    tnr = _share([not p for p, f in zip(predicted, faithful) if not f])
    print(f"JHARS: {len(kept)} scored ({sum(faithful)} faithful, {len(kept) - sum(faithful)} not), "
          f"{len(rows) - len(kept)} NaN")
    print(f"AUROC {auroc(scores, faithful):.3f}; balanced accuracy (faithful iff score == 1) {(tpr + tnr) / 2:.3f} "
          f"(faithful recognised {tpr:.2f}, unfaithful recognised {tnr:.2f})")
    print(f"mean score: faithful {_mean([s for s, f in kept if f]):.3f}, "
          f"unfaithful {_mean([s for s, f in kept if not f]):.3f}")


def uhgeval(limit: int | None, judge: str | None, out: Path | None) -> None:
    rows = _read("uhgeval_dev.jsonl")[:limit or None]
    for row in rows:
        row["user_input"] = row["user_input"] or row["meta"].get("headline") or ""
    results = score_rows(rows, judge, out, "uhgeval")
    counts = {True: [0, 0, 0], False: [0, 0, 0]}  # reasonable? -> [in unsupported, in supported only, in none]
    for row, res in zip(rows, results):
        statements = res["evidence"].get("statements", [])
        for label in row["label"]["keyword_labels"]:
            keyword = normalize(label["keyword"])
            holding = [s for s in statements if keyword and keyword in normalize(s["statement"])]
            slot = 2 if not holding else 0 if any(s["verdict"] == 0 for s in holding) else 1
            counts[bool(label["reasonable"])][slot] += 1
    for reasonable, name in ((False, "hallucinated"), (True, "reasonable")):
        inside, supported, nowhere = counts[reasonable]
        found = inside + supported
        print(f"{name} keywords: {inside}/{found} ({_ratio(inside, found)}) inside an unsupported statement; "
              f"{nowhere} not found in any statement")


WIKIEVAL_METRICS = {"faithfulness": ("faithfulness",), "answer_relevancy": ("answer_relevancy",),
                    "context_relevance": ("context_relevancy", "context_utilization")}


def wikieval(judge: str | None, out: Path | None) -> None:
    """Each aspect's metric(s) on the preferred side (a) and the other (b); a should score higher."""
    rows = _read("wikieval_dev.jsonl")
    for aspect, metrics in WIKIEVAL_METRICS.items():
        aspect_rows = [r for r in rows if r["label"]["aspect"] == aspect]
        pairs = [dict(r, id=f"{r['id']}:{side}", **_side(r, side)) for r in aspect_rows for side in "ab"]
        for metric in metrics:
            results = score_rows(pairs, judge, out, f"wikieval-{aspect}", metric)
            outcome = []
            for i, row in enumerate(aspect_rows):
                a, b = results[2 * i]["score"], results[2 * i + 1]["score"]
                outcome.append("win" if a > b else "tie" if a == b else "loss")
                print(f"  {row['orig_id'][:48]:<48} a {a:.3f}  b {b:.3f}")
            print(f"WikiEval {aspect} / {metric}: a > b on {outcome.count('win')}/{len(outcome)} "
                  f"({outcome.count('tie')} ties, {outcome.count('loss')} losses)", flush=True)


def _side(row: dict, side: str) -> dict:
    """The row's fields for one side of the pair: its own response, or its own contexts."""
    if row["label"]["aspect"] == "context_relevance":
        return {"retrieved_contexts": row[f"retrieved_contexts_{side}"]}
    return {"response": row[f"response_{side}"]}


def _read(name: str) -> list[dict]:
    return [json.loads(line) for line in (METAEVAL / name).read_text(encoding="utf-8").splitlines()]


def _share(flags: list[bool]) -> float:
    return sum(flags) / len(flags) if flags else math.nan


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.1%}" if b else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset", choices=["jhars", "uhgeval", "wikieval"])
    parser.add_argument("--limit", type=int)
    parser.add_argument("--judge")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.dataset == "jhars":
        jhars(args.limit, args.judge, args.out)
    elif args.dataset == "uhgeval":
        uhgeval(args.limit, args.judge, args.out)
    else:
        wikieval(args.judge, args.out)


if __name__ == "__main__":
    main()
