"""Builds context_focus_{dev,test}.jsonl: context-relevance pairs in English, Japanese and Chinese, a focused
context (the text that answers the question) against a padded one (the same text plus material that does not),
the focused one preferred, as in the WikiEval context-relevance rows (from ../shared/metaeval's dev files).

    .venv/bin/python benchmarks/data/make_context_focus.py [METAEVAL_DIR]

Both files come from metaeval's DEV part (its held-out test split is not used). Each source's units are split by
the sha256 of the unit id (`<source>:<original id>`; for ragas_wikiqa, whose CSV has no id, the row id
`ragas_wikiqa:<csv row>`): sorted by hex digest, the first round(DEV_SHARE * N) are dev, the rest test. Padding is
taken from the same split only, so that the two files share no text:
- en, halueval_qa_dev.jsonl (HaluEval QA, MIT): one unit per question; focused = its knowledge paragraph; padded =
  it plus the knowledge of the next PADDING questions in hash order.
- en, ragas_wikiqa_dev.jsonl (ragas repo Apache-2.0; WikiQA labels: Microsoft research licence): the file holds two
  sentences of the question's Wikipedia article, not the article; focused = the sentence WikiQA's workers labelled
  as answering; padded = it plus the other one (labelled not answering), a harder, on-topic padding.
- ja, jhars_dev.jsonl (JHARS, Apache-2.0): one unit per question (its three rows share the passage); focused = the
  passage; padded = it plus the passages of the next PADDING questions.
- zh, uhgeval_dev.jsonl (UHGEval, Apache-2.0): one unit per article; the headline is the question; focused = the
  article (its beginning and remainder, the two contexts of the row); padded = it plus the next PADDING articles.
Units that repeat an earlier one in hash order (the same question without its category tag, or a shingle overlap
of the contexts over DUPLICATE) are dropped before the split; a unit whose contexts overlap the question's own over
RELATED is passed over as padding. The padded side's blocks are in an order set by sha256; the focused side is "a"
where the first hex digit of sha256(id) is even, else "b". Each language keeps at most CAP pairs per split, the
first in hash order.
A row is {"id", "lang", "source", "user_input", "retrieved_contexts_a", "retrieved_contexts_b", "reference",
"label": {"aspect": "context_relevance", "preferred"}, "meta"}, the pairwise form of the metaeval files.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
METAEVAL = HERE.parents[2] / "shared" / "metaeval"
DEV_SHARE = 0.5
PADDING = 2  # other units' contexts added to the focused one
CAP = 150  # pairs per language per split
SHINGLE = 8  # characters
DUPLICATE = 0.5  # shingle overlap above which a unit repeats another one and is dropped
RELATED = 0.2  # shingle overlap above which a unit is not used to pad another one (e.g. a report of another day)
CATEGORY_TAG = re.compile(r"^\s*（[^）]*）")
LANGUAGES = ("en", "ja", "zh")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read(directory: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (directory / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def unit(
    row: dict,
    question: str,
    contexts: list[str],
    file: str,
    padding: list[str] | None = None,
    reference: str | None = None,
) -> dict:
    """One split unit: a question, the contexts that answer it and, where the source gives it, its own padding."""
    return {
        "unit": f"{row['source']}:{row['orig_id']}" if row["source"] != "ragas_wikiqa" else row["id"],
        "lang": row["lang"],
        "source": row["source"],
        "file": file,
        "orig_id": row["orig_id"],
        "question": question,
        "contexts": contexts,
        "padding": padding,
        "reference": reference,
    }


def halueval_qa(directory: Path) -> list[dict]:
    name = "halueval_qa_dev.jsonl"
    rows = [r for r in read(directory, name) if r["meta"]["answer_kind"] == "right"]
    return [unit(r, r["user_input"], r["retrieved_contexts"], name, reference=r["reference"]) for r in rows]


def ragas_wikiqa(directory: Path) -> list[dict]:
    name = "ragas_wikiqa_dev.jsonl"
    rows = [r for r in read(directory, name) if r["label"]["wikiqa_label_a"] == 1 and r["label"]["wikiqa_label_b"] == 0]
    # the CSV has no id (orig_id is the question), so the unit is the row id, ragas_wikiqa:<csv row>
    return [unit(r, r["user_input"], [r["response_a"]], name, padding=[r["response_b"]]) for r in rows]


def jhars(directory: Path) -> list[dict]:
    name = "jhars_dev.jsonl"
    first = {}
    for row in read(directory, name):
        first.setdefault(row["orig_id"], row)  # the three model answers of a question share its passage
    return [unit(r, r["user_input"], r["retrieved_contexts"], name) for r in first.values()]


def uhgeval(directory: Path) -> list[dict]:
    name = "uhgeval_dev.jsonl"
    rows = [r for r in read(directory, name) if r["meta"].get("headline") and r["retrieved_contexts"]]
    # the headline's line break and indent (a subtitle) as one space; the category tag, e.g. （国际）, is kept
    return [unit(r, " ".join(r["meta"]["headline"].split()), r["retrieved_contexts"], name) for r in rows]


def shingles(contexts: list[str]) -> set[str]:
    """The text's SHINGLE-character pieces, whitespace removed (CJK has none to split words on)."""
    text = "".join("".join(contexts).split())
    return {text[i : i + SHINGLE] for i in range(max(len(text) - SHINGLE + 1, 1))}


def overlap(one: dict, other: dict) -> float:
    """Share of the smaller unit's context shingles that the other one also holds."""
    return len(one["shingles"] & other["shingles"]) / min(len(one["shingles"]), len(other["shingles"]))


def topic(question: str) -> str:
    """The question without a leading category tag, e.g. UHGEval's （国际）, and whitespace."""
    return "".join(CATEGORY_TAG.sub("", question).split()).lower()


def split(units: list[dict]) -> tuple[list[dict], list[dict]]:
    """(dev, test), each in hash order, after dropping units that repeat an earlier one (in hash order): the same
    question, or mostly the same contexts (UHGEval holds a few articles twice and daily reports under one headline)."""
    kept: list[dict] = []
    for own in sorted(units, key=lambda u: digest(u["unit"])):
        own["shingles"] = shingles(own["contexts"])
        if not any(topic(own["question"]) == topic(k["question"]) or overlap(own, k) > DUPLICATE for k in kept):
            kept.append(own)
    cut = round(DEV_SHARE * len(kept))
    return kept[:cut], kept[cut:]


def pairs(units: list[dict]) -> list[dict]:
    """One pair per unit of one source and split (in hash order), padded from the next units of that list whose
    contexts are not RELATED to its own."""
    found = []
    for i, own in enumerate(units):
        if own["padding"] is not None:
            blocks = [own["contexts"], own["padding"]]
            padding_from: list[str] | str = "same_article"
        else:
            following = [units[(i + k) % len(units)] for k in range(1, len(units))]
            others = [other for other in following if overlap(own, other) <= RELATED][:PADDING]
            blocks = [own["contexts"]] + [other["contexts"] for other in others]
            padding_from = [other["unit"] for other in others]
        pair_id = f"context_focus:{own['unit']}"
        order = sorted(range(len(blocks)), key=lambda k: digest(f"{pair_id}:{k}"))
        padded = [context for k in order for context in blocks[k]]
        focused_side = "a" if int(digest(pair_id)[0], 16) % 2 == 0 else "b"
        sides = (own["contexts"], padded) if focused_side == "a" else (padded, own["contexts"])
        found.append(
            {
                "id": pair_id,
                "lang": own["lang"],
                "source": own["source"],
                "user_input": own["question"],
                "retrieved_contexts_a": sides[0],
                "retrieved_contexts_b": sides[1],
                "reference": own["reference"],
                "label": {"aspect": "context_relevance", "preferred": focused_side},
                "meta": {
                    "unit": own["unit"],
                    "from": own["file"],
                    "orig_id": own["orig_id"],
                    "padding_from": padding_from,
                    "focused_block": order.index(0),  # where the focused text sits among the padded side's blocks
                },
            }
        )
    return found


def build(directory: Path) -> dict[str, list[dict]]:
    """{"dev": rows, "test": rows}, by language then hash order, at most CAP per language."""
    by_split: dict[str, list[dict]] = {"dev": [], "test": []}
    sources = [halueval_qa(directory), ragas_wikiqa(directory), jhars(directory), uhgeval(directory)]
    for lang in LANGUAGES:
        for name, part in zip(("dev", "test"), zip(*(split(s) for s in sources if s and s[0]["lang"] == lang))):
            rows = [row for units in part for row in pairs(units)]
            by_split[name] += sorted(rows, key=lambda r: digest(r["meta"]["unit"]))[:CAP]
    return by_split


def main() -> None:
    directory = Path(sys.argv[1]) if len(sys.argv) > 1 else METAEVAL
    for name, rows in build(directory).items():
        path = HERE / f"context_focus_{name}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        counts = dict(Counter(f"{r['lang']}/{r['source']}" for r in rows))
        preferred_a = sum(r["label"]["preferred"] == "a" for r in rows)
        print(f"{path}: {len(rows)} pairs ({preferred_a} with a preferred), {path.stat().st_size} bytes; {counts}")


if __name__ == "__main__":
    main()
