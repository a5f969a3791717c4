"""Builds contradictions_{ja,zh,en}.jsonl: flat contradictions, one number or name of a supported sentence
swapped for another value that the same contexts hold, with the supported sentence beside each (from
../shared/metaeval's dev files).

    python3 benchmarks/data/make_contradictions.py [METAEVAL_DIR]

Swapping in a value from the same contexts keeps every word covered: code's grounding signals cannot see the
change, and only the judge can. Each language gets PER_LANGUAGE pairs, taken in file order:
- ja: No_hallucination sentences of JHARS answers (Apache-2.0), against the answer's passage;
- zh: sentences of UHGEval's real continuation (Apache-2.0), against the article (which holds it);
- en: sentences of HaluEval QA's knowledge (MIT), against that knowledge, with its question.
A row is {"id", "lang", "user_input", "response", "retrieved_contexts", "faithful", "meta": {"pair", "kind",
"changed"}}; `localeval calibrate` and benchmarks/metaeval.py read it as response-level labels.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
PER_LANGUAGE = 25
NUMBER = re.compile(r"(?<![\d.,])\d+(?:\.\d+)?(?![\d.,])")
NAMES = {
    "en": re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)+\b"),  # two or more capitalised words
    "ja": re.compile(r"(?<![\u4e00-\u9fff\u30a1-\u30fc])[\u30a1-\u30fa\u30fc]{3,}"),  # a katakana word
    "zh": None,
}
# after CJK end marks; after a full stop before a space or, as in HaluEval's joined knowledge, a capital
SENTENCE_END = re.compile(r"(?<=[。！？!?])|(?<=[a-z0-9)]\.)\s*(?=[A-Z\"])")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(text) if s and len(s.strip()) >= 8]


def swap(sentence: str, contexts: str, lang: str) -> tuple[str, str, str] | None:
    """(changed sentence, kind, "old -> new"): the first number, else name, replaced by another one the contexts
    hold; None where the sentence has none to swap."""
    for kind, pattern in (("number", NUMBER), ("name", NAMES[lang])):
        if pattern is None:
            continue
        found = [v for v in pattern.findall(sentence) if kind == "number" or _plain_name(v)]
        held = [
            v
            for v in dict.fromkeys(pattern.findall(contexts))
            if v not in found and (kind == "number" or _plain_name(v))
        ]
        for value in found:
            if value in contexts and held:
                # a value of the same shape reads as a plain mistake: a year for a year, a name for a name
                new = min(held, key=lambda v: (abs(len(v) - len(value)), held.index(v)))
                if kind == "number" and len(value) >= 3 and len(new) != len(value):
                    continue  # a year swapped for a count reads as garbled, not as a mistake
                changed = sentence.replace(value, new, 1)
                return changed, kind, f"{value} -> {new}"
    return None


def _plain_name(name: str) -> bool:
    return name.split()[0] not in ("The", "When", "In", "On", "It", "He", "She", "A", "An", "After", "Before")


def candidates(lang: str, rows: list[dict]) -> Iterator[tuple[dict, str]]:
    """(row, supported sentence) in file order."""
    for row in rows:
        if lang == "ja":
            for label in row["label"]["sentence_labels"]:
                if label["type"] == "No_hallucination":
                    yield row, label["sentence"]
        elif lang == "zh":
            for sentence in sentences(row["reference"] or ""):
                yield row, sentence
        elif row["meta"]["answer_kind"] == "right":
            for sentence in sentences(row["retrieved_contexts"][0]):
                yield row, sentence


def pairs(lang: str, rows: list[dict]) -> list[dict]:
    out: list[dict] = []
    seen: set[str] = set()
    for row, sentence in candidates(lang, rows):
        sentence = sentence.strip()
        if "*" in sentence or re.match(r"\d+\.|[-・]", sentence):  # a list item or markdown: not an answer
            continue
        contexts = "\n".join(row["retrieved_contexts"])
        swapped = swap(sentence, contexts, lang)
        if swapped is None or row["id"] in seen or sentence not in contexts and lang != "ja":
            continue
        seen.add(row["id"])  # one pair per source row, so pairs are independent
        changed, kind, what = swapped
        question = row["user_input"] or row["meta"].get("headline") or ""
        pair = f"{lang}:{len(out) // 2}"
        for response, faithful in ((sentence, True), (changed, False)):
            out.append(
                {
                    "id": f"{pair}:{'supported' if faithful else 'contradicted'}",
                    "lang": lang,
                    "user_input": question,
                    "response": response,
                    "retrieved_contexts": row["retrieved_contexts"],
                    "faithful": faithful,
                    "meta": {"pair": pair, "source": row["id"], "kind": kind, "changed": what},
                }
            )
        if len(out) == 2 * PER_LANGUAGE:
            break
    return out


def main() -> None:
    metaeval = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[2] / "shared" / "metaeval"
    files = {"ja": "jhars_dev.jsonl", "zh": "uhgeval_dev.jsonl", "en": "halueval_qa_dev.jsonl"}
    for lang, name in files.items():
        source = [json.loads(line) for line in (metaeval / name).read_text(encoding="utf-8").splitlines()]
        found = pairs(lang, source)
        kinds = sorted({r["meta"]["kind"] for r in found})
        print(f"{lang}: {len(found) // 2} pairs ({', '.join(kinds)})")
        (HERE / f"contradictions_{lang}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in found), encoding="utf-8"
        )


if __name__ == "__main__":
    main()
