"""Builds hotpotqa/hotpotqa_{dev,test}.jsonl: HotpotQA questions with their ten paragraphs, the two that the
question's writers marked as holding its supporting facts, and eight distractors retrieved for the question.

    .venv/bin/python benchmarks/data/make_hotpotqa.py /work/.mirror/Rakin061+hotpot/repo

The argument is a fetched snapshot (bare git directory) of Rakin061/hotpot, a copy of the HotpotQA code whose
commit 077eab2e holds the start of hotpot_dev_distractor_v1.json (blob 0aa9da1e, 365,099 bytes of the official
46 MB file: a partial download, cut inside its 54th question). Only the complete questions are read. A question
is kept when it has ten paragraphs and each supporting fact's title is one of them (the rule was fixed before
any question was read; one question has two paragraphs and is left out).

Split, from the question ids alone: sha256 of the `_id` string, sorted by hex digest, the first round(0.4 * N)
questions are dev, the rest test. Rows are written in digest order.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parent / "hotpotqa"
DEV_SHARE = 0.4
COMMIT = "077eab2e2b7c8e81a7d7baaea8d22f4f13f9ad3f"
PATH = "hotpot_dev_distractor_v1.json"


def complete_questions(text: str) -> list[dict]:
    """The JSON array's elements up to the first one the file cuts off."""
    decoder = json.JSONDecoder()
    found, at = [], text.index("[") + 1
    while True:
        try:
            question, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            return found
        found.append(question)
        while at < len(text) and text[at] in ", \n":
            at += 1


def row(question: dict, split: str) -> dict:
    supporting = {title for title, _ in question["supporting_facts"]}
    return {
        "id": f"hotpotqa:{question['_id']}",
        "lang": "en",
        "source": "hotpotqa",
        "split": split,
        "orig_id": question["_id"],
        "user_input": question["question"],
        "reference": question["answer"],
        "paragraphs": [
            {"title": title, "text": " ".join(s.strip() for s in sentences), "supporting": title in supporting}
            for title, sentences in question["context"]
        ],
        "label": {"supporting_facts": question["supporting_facts"]},
        "meta": {"type": question["type"], "level": question["level"]},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo", type=Path, help="bare git directory of Rakin061/hotpot")
    repo = parser.parse_args().repo
    text = subprocess.run(
        ["git", f"--git-dir={repo}", "show", f"{COMMIT}:{PATH}"], check=True, capture_output=True, text=True
    ).stdout
    questions = [
        q
        for q in complete_questions(text)
        if len(q["context"]) == 10 and {t for t, _ in q["supporting_facts"]} <= {t for t, _ in q["context"]}
    ]
    questions.sort(key=lambda q: hashlib.sha256(q["_id"].encode("utf-8")).hexdigest())
    dev = round(DEV_SHARE * len(questions))
    OUT.mkdir(exist_ok=True)
    for split, part in (("dev", questions[:dev]), ("test", questions[dev:])):
        lines = [json.dumps(row(q, split), ensure_ascii=False) + "\n" for q in part]
        (OUT / f"hotpotqa_{split}.jsonl").write_text("".join(lines), encoding="utf-8")
        print(f"{split}: {len(part)} questions")


if __name__ == "__main__":
    main()
