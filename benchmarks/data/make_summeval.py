"""Builds summeval/summeval_{dev,test}.jsonl and summeval/summeval_articles.jsonl: SummEval's expert judgements
(coherence, consistency, fluency, relevance; 3 experts, 1-5) of CNN/DailyMail summaries.

    .venv/bin/python benchmarks/data/make_summeval.py /work/.mirror/DAMO-NLP-SG+LLM_summeval/repo [--commit SHA]

The argument is a fetched snapshot (bare git directory) of DAMO-NLP-SG/LLM_summeval, whose
model_output_annotations/M*_outputs_annotations.jsonl files are SummEval's model_annotations.aligned.paired.jsonl
cut by system (12 abstractive systems; the 4 extractive ones, M0 M1 M2 M5, are not in that repository). Each line
is one summary: `id` (CNN/DM story id), `model_id`, `decoded` (the summary), `expert_annotations` (3 dicts),
`turker_annotations` (left out here), `references` (the CNN/DM highlights first, then 10 crowd references) and
`text` (the source article, paired by SummEval's script).

Split, made from the document ids alone before any summary or label is read: sha256 of the doc id string, sorted by
hex digest, the first round(DEV_SHARE * N) docs are dev, the rest test; all summaries of a doc stay together. Rows
are written in digest order of their doc, then by model id.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
from pathlib import Path
from statistics import mean

HERE = Path(__file__).resolve().parent
OUT = HERE / "summeval"
DEV_SHARE = 0.4
FOLDER = "model_output_annotations"
COMMIT = "bd7dde15817a88940c17574973ff03e750356daa"
ASPECTS = ("coherence", "consistency", "fluency", "relevance")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={repo}", *args], check=True, capture_output=True, text=True, encoding="utf-8"
    ).stdout


def read_source(repo: Path, commit: str) -> tuple[list[dict], dict[str, str]]:
    """All lines of the per-system files at `commit`, and each file's blob sha."""
    listing = git(repo, "ls-tree", commit, f"{FOLDER}/").splitlines()
    blobs = {}
    for line in listing:
        info, path = line.split("\t", 1)
        if path.endswith("_outputs_annotations.jsonl"):
            blobs[path] = info.split()[2]
    records = []
    for path in sorted(blobs):
        for line in git(repo, "cat-file", "blob", blobs[path]).splitlines():
            if line.strip():
                records.append(json.loads(line))
    return records, blobs


def split_docs(doc_ids: set[str]) -> tuple[list[str], list[str]]:
    order = sorted(doc_ids, key=digest)
    n_dev = round(DEV_SHARE * len(order))
    return order[:n_dev], order[n_dev:]


def to_row(record: dict) -> dict:
    experts = record["expert_annotations"]
    scores = {aspect: [int(e[aspect]) for e in experts] for aspect in ASPECTS}
    references = record.get("references") or []
    return {
        "id": f"summeval:{record['id']}:{record['model_id']}",
        "lang": "en",
        "source": "summeval",
        "orig_id": record["id"],
        "doc_id": record["id"],
        "user_input": None,
        "response": record["decoded"],
        "reference": references[0] if references else None,
        "label": {**scores, "mean": {aspect: round(mean(values), 4) for aspect, values in scores.items()}},
        "meta": {"model_id": record["model_id"], "n_experts": len(experts)},
    }


def model_order(row: dict) -> int:
    return int(row["meta"]["model_id"].lstrip("M"))


def write(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path, help="bare git directory of DAMO-NLP-SG/LLM_summeval")
    parser.add_argument("--commit", default=COMMIT)
    args = parser.parse_args()

    records, blobs = read_source(args.repo, args.commit)
    # The split sees the document ids only.
    dev_docs, test_docs = split_docs({r["id"] for r in records})

    articles: dict[str, str] = {}
    rows: dict[str, dict] = {}
    for record in records:
        doc = record["id"]
        text = record.get("text")
        if text is not None:
            if articles.setdefault(doc, text) != text:
                raise SystemExit(f"{doc}: the article differs between systems")
        row = to_row(record)
        if row["id"] in rows:
            raise SystemExit(f"duplicate summary {row['id']}")
        if row["meta"]["n_experts"] != 3:
            raise SystemExit(f"{row['id']}: {row['meta']['n_experts']} expert annotations, expected 3")
        rows[row["id"]] = row

    OUT.mkdir(exist_ok=True)
    by_doc: dict[str, list[dict]] = {}
    for row in rows.values():
        by_doc.setdefault(row["doc_id"], []).append(row)
    for name, docs in (("dev", dev_docs), ("test", test_docs)):
        split_rows = [row for doc in docs for row in sorted(by_doc[doc], key=model_order)]
        write(OUT / f"summeval_{name}.jsonl", split_rows)
        print(f"{name}: {len(docs)} docs, {len(split_rows)} rows")
    if articles:
        split_of = {doc: "dev" for doc in dev_docs} | {doc: "test" for doc in test_docs}
        ordered = [{"doc_id": doc, "split": split_of[doc], "article": articles[doc]} for doc in dev_docs + test_docs]
        write(OUT / "summeval_articles.jsonl", ordered)
        print(f"articles: {len(ordered)}")
    for path, blob in sorted(blobs.items()):
        print(f"{path}\t{blob}")


if __name__ == "__main__":
    main()
