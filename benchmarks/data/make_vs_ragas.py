"""Builds vs_ragas.jsonl, the fixed sample set of benchmarks/vs_ragas.py, from ../shared/metaeval (Apache-2.0 rows).

    python3 benchmarks/data/make_vs_ragas.py [METAEVAL_DIR]

12 English rows: the 4 WikiEval questions, each with its grounded answer, its ungrounded answer and
its poor answer; the grounded answer is the reference, and the contexts are WikiEval's focused
context for the grounded answer and its padded context otherwise, split into paragraphs, followed by
a passage about the next question's subject, as a retriever's off-topic hit would be.
2 Japanese rows: one JHARS question answered by two models; the third model's answer is the reference.
2 Chinese rows: two UHGEval news openings (as contexts), a model's continuation and the real one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
UHGEVAL_QUESTION = "根据上文，这条新闻接下来报道了什么？"
JHARS_QUESTION = 28
UHGEVAL_DOCS = ("uhgeval:doc_000004", "uhgeval:doc_000088")


def paragraphs(text: str) -> list[str]:
    return [part.strip() for part in text.split("\n\n") if part.strip()]


def wikieval(rows: list[dict]) -> list[dict]:
    by_question: dict[str, dict[str, dict]] = {}
    for row in rows:
        by_question.setdefault(row["orig_id"], {})[row["label"]["aspect"]] = row
    titles = list(by_question)
    samples = []
    for position, (title, aspects) in enumerate(by_question.items()):
        neighbour = by_question[titles[(position + 1) % len(titles)]]["context_relevance"]["retrieved_contexts_b"]
        off_topic = [p for c in neighbour for p in paragraphs(c)][:1]
        grounded = aspects["faithfulness"]["response_a"]
        focused, padded = (
            aspects["context_relevance"]["retrieved_contexts_a"],
            aspects["context_relevance"]["retrieved_contexts_b"],
        )
        question = aspects["faithfulness"]["user_input"]
        for kind, response, contexts in (
            ("answer", grounded, focused),
            ("ungrounded_answer", aspects["faithfulness"]["response_b"], padded),
            ("poor_answer", aspects["answer_relevancy"]["response_b"], padded),
        ):
            samples.append(
                {
                    "id": f"wikieval:{title}:{kind}",
                    "user_input": question,
                    "response": response,
                    "retrieved_contexts": [p for c in contexts for p in paragraphs(c)] + off_topic,
                    "reference": grounded,
                }
            )
    return samples


def jhars(rows: list[dict]) -> list[dict]:
    answers = [row for row in rows if row["orig_id"] == JHARS_QUESTION]
    reference = answers[-1]
    return [
        {
            "id": row["id"],
            "user_input": row["user_input"],
            "response": row["response"],
            "retrieved_contexts": row["retrieved_contexts"],
            "reference": reference["response"],
        }
        for row in answers[:2]
    ]


def uhgeval(rows: list[dict]) -> list[dict]:
    return [
        {
            "id": row["id"],
            "user_input": UHGEVAL_QUESTION,
            "response": row["response"],
            "retrieved_contexts": [c.strip() for c in row["retrieved_contexts"]],
            "reference": row["reference"],
        }
        for row in rows
        if row["id"] in UHGEVAL_DOCS
    ]


def main() -> None:
    metaeval = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[2] / "shared" / "metaeval"

    def read(name: str) -> list[dict]:
        return [json.loads(line) for line in (metaeval / name).read_text(encoding="utf-8").splitlines()]

    samples = wikieval(read("wikieval_dev.jsonl")) + jhars(read("jhars_dev.jsonl")) + uhgeval(read("uhgeval_dev.jsonl"))
    with (HERE / "vs_ragas.jsonl").open("w", encoding="utf-8") as file:
        for sample in samples:
            file.write(json.dumps(sample, ensure_ascii=False) + "\n")
    print(f"wrote {len(samples)} samples to {HERE / 'vs_ragas.jsonl'}")


if __name__ == "__main__":
    main()
