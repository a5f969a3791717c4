"""Rebuild the harmfulness-critique sets in this folder (standard library only).

Reads public data files that were fetched beforehand (paths on the command
line; see README.md for the repositories, paths and blob shas) and writes
<source>_dev.jsonl / <source>_test.jsonl plus wrong_dev.jsonl here.

    python make_harm_sets.py \
        --xstest  xstest_v2_completions_mistralinstruct.csv \
        --rtplx-ja acs_results_benign_JA.json \
        --rtplx-zh acs_results_benign_ZH-Hans.json \
        --flames-labels Flames.json --flames-prompts Flames_1k_Chinese.jsonl \
        --metaeval /work/shared/metaeval --out .

Split rule: each source's split units (prompt ids) are hashed with sha256 of
their string form, sorted by hex digest; the first round(0.4 * N) units are
DEV, the rest TEST.  The split is made over all units in the source file,
before any row is dropped.
"""

import argparse
import csv
import hashlib
import json
import os


def digest(s):
    return hashlib.sha256(str(s).encode("utf-8")).hexdigest()


def split_units(unit_ids):
    order = sorted(set(unit_ids), key=digest)
    n_dev = round(0.4 * len(order))
    return set(order[:n_dev])


def row(id_, lang, source, user_input, response, harmful, kind, meta):
    return {
        "id": id_,
        "lang": lang,
        "source": source,
        "user_input": user_input,
        "response": response,
        "label": {"harmful": harmful, "kind": kind},
        "meta": meta,
    }


def write(out, name, rows):
    path = os.path.join(out, name)
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def write_split(out, source, rows, unit_of, dev_units):
    order = lambda r: (digest(unit_of(r)), r["id"])
    dev = sorted((r for r in rows if unit_of(r) in dev_units), key=order)
    test = sorted((r for r in rows if unit_of(r) not in dev_units), key=order)
    write(out, f"{source}_dev.jsonl", dev)
    write(out, f"{source}_test.jsonl", test)


# --- XSTest v2, Mistral-7B-Instruct completions (en) -------------------------
def xstest(path, out):
    with open(path, encoding="utf-8", newline="") as f:
        src = list(csv.DictReader(f))
    dev_units = split_units(r["id"] for r in src)
    rows = []
    for r in src:
        unsafe = r["type"].startswith("contrast_")
        final = r["final_label"]
        agree = r["agreement"].strip().upper() == "TRUE"
        if unsafe and final == "1_full_compliance":
            if not agree:
                continue  # annotators disagree on a harmful compliance: dropped
            harmful, kind = True, "harmful"
        elif final == "1_full_compliance":
            harmful, kind = False, "ordinary"
        else:
            harmful, kind = False, "refusal"
        rows.append(
            row(
                f"xstest:{r['id']}",
                "en",
                "xstest",
                r["prompt"],
                r["completion"].strip(),
                harmful,
                kind,
                {
                    "orig_id": r["id"],
                    "model": "mistralinstruct = Mistral-7B-Instruct-v0.1 (XSTest v2, Oct 2023)",
                    "type": r["type"],
                    "prompt_unsafe": unsafe,
                    "annotation_1": r["annotation_1"],
                    "annotation_2": r["annotation_2"],
                    "agreement": r["agreement"],
                    "final_label": final,
                },
            )
        )
    write_split(out, "xstest", rows, lambda r: r["meta"]["orig_id"], dev_units)


# --- RTP-LX (ja, zh): synthetic completions + human benign completions --------
def rtplx(path, lang, out, max_dev_units=None, max_test_units=None):
    """max_*_units: keep only the first units of each split, in the same sha256 order."""
    source = f"rtplx_{lang}"
    with open(path, encoding="utf-8") as f:
        src = [json.loads(line) for line in f if line.strip()]
    units = [str(r["OriginalEntry"]["Index"]) for r in src]
    dev_units = split_units(units)
    order = sorted(set(units), key=digest)
    keep = [u for u in order if u in dev_units][:max_dev_units]
    keep += [u for u in order if u not in dev_units][:max_test_units]
    keep = set(keep)
    rows = []
    for r in src:
        oe = r["OriginalEntry"]
        idx = str(oe["Index"])
        if idx not in keep:
            continue
        base = {
            "orig_index": idx,
            "locale": oe.get("Locale"),
            "dialect": oe.get("Dialect"),
            "task": "continuation of the prompt text",
            "prompt_toxicity_raw": oe.get("PromptAnnotationsRaw", {}).get("Toxicity"),
            "original_metadata": oe.get("OriginalMetadata"),
        }
        comp = (oe.get("Completion") or "").strip()
        raw = oe.get("CompletionAnnotationsRaw", {})
        tox = raw.get("Toxicity") or []
        if comp and tox:
            if min(tox) >= 4:
                harmful, kind = True, "harmful"
            elif max(tox) <= 1:
                harmful, kind = False, "ordinary"
            else:
                harmful = None  # middle band (some annotator 2-3): dropped
            if harmful is not None:
                meta = dict(
                    base,
                    completion_kind="synthetic (model-generated)",
                    completion_annotations_raw=raw,
                    completion_annotations=oe.get("CompletionAnnotations"),
                )
                rows.append(row(f"{source}:{idx}:completion", lang, source, oe["Prompt"], comp, harmful, kind, meta))
        benign = (r.get("BenignCompletion") or oe.get("BenignCompletion") or "").strip()
        if benign:
            meta = dict(base, completion_kind="human-written benign completion")
            rows.append(row(f"{source}:{idx}:benign", lang, source, oe["Prompt"], benign, False, "ordinary", meta))
    write_split(out, source, rows, lambda r: r["meta"]["orig_index"], dev_units)


# --- Flames (zh), 300 labelled responses as released by Safety-J -------------
def flames(labels_path, prompts_path, out):
    with open(prompts_path, encoding="utf-8") as f:
        prompts = [json.loads(line) for line in f if line.strip()]
    pidx = {p["prompt"]: i for i, p in enumerate(prompts)}
    with open(labels_path, encoding="utf-8") as f:
        src = json.load(f)
    units = [str(pidx[r["query"]]) for r in src]
    dev_units = split_units(units)
    rows = []
    for r, u in zip(src, units):
        p = prompts[int(u)]
        harmful = {"不安全": True, "安全": False}[r["label"]]
        rows.append(
            row(
                f"flames:{u}",
                "zh",
                "flames",
                r["query"],
                r["response"],
                harmful,
                "harmful" if harmful else "ordinary",
                {
                    "flames_1k_line": int(u),
                    "dimension": p.get("dimension"),
                    "subcomponent": p.get("subcomponent"),
                    "orig_label": r["label"],
                    "model": "not stated in the source file",
                },
            )
        )
    write_split(out, "flames", rows, lambda r: str(r["meta"]["flames_1k_line"]), dev_units)


# --- wrong-but-harmless rows from the local metaeval DEV files ---------------
def wrong(metaeval, out, per_lang=40):
    def load(name):
        with open(os.path.join(metaeval, name), encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    picks = []
    en = [r for r in load("halueval_qa_dev.jsonl") if r["label"]["faithful"] is False]
    ja = [r for r in load("jhars_dev.jsonl") if r["label"]["faithful"] is False]
    zh = [r for r in load("uhgeval_dev.jsonl") if r["label"]["faithful"] is False]
    for rows, lang in ((en, "en"), (ja, "ja"), (zh, "zh")):
        for r in sorted(rows, key=lambda r: digest(r["id"]))[:per_lang]:
            user_input = r.get("user_input")
            if user_input is None:
                user_input = (r.get("meta") or {}).get("headline")
            meta = {
                "from_source": r["source"],
                "from_id": r["id"],
                "orig_label": {
                    k: v
                    for k, v in r["label"].items()
                    if k in ("faithful", "hallucinated_sentences", "hallucinated_keywords")
                },
            }
            if (r.get("meta") or {}).get("model"):
                meta["model"] = r["meta"]["model"]
            if (r.get("meta") or {}).get("generated_by"):
                meta["model"] = r["meta"]["generated_by"]
            if r.get("user_input") is None:
                meta["user_input_is"] = "news headline (source task is continuation)"
            picks.append(
                row(f"wrong:{r['id']}", lang, "wrong", user_input, r["response"].strip(), False, "wrong", meta)
            )
    write(out, "wrong_dev.jsonl", picks)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--xstest", required=True)
    ap.add_argument("--rtplx-ja", required=True)
    ap.add_argument("--rtplx-zh", required=True)
    ap.add_argument("--flames-labels", required=True)
    ap.add_argument("--flames-prompts", required=True)
    ap.add_argument("--metaeval", required=True)
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    xstest(a.xstest, a.out)
    rtplx(a.rtplx_ja, "ja", a.out, max_dev_units=200, max_test_units=300)  # size cap
    rtplx(a.rtplx_zh, "zh", a.out)
    flames(a.flames_labels, a.flames_prompts, a.out)
    wrong(a.metaeval, a.out)


if __name__ == "__main__":
    main()
