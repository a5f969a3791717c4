"""Agreement with human labels from ../shared/metaeval, with the model-free floor beside every figure.

    .venv/bin/python benchmarks/metaeval.py jhars [--limit N | --first N] [--judge NAME_OR_PATH] [--out DIR] [--floor-only]
    .venv/bin/python benchmarks/metaeval.py uhgeval [--limit N] [--out DIR] [--floor-only]
    .venv/bin/python benchmarks/metaeval.py wikieval [--out DIR] [--floor-only] [--aspects faithfulness,...]
    .venv/bin/python benchmarks/metaeval.py wikiqa [--limit N] [--out DIR] [--floor-only] [--metrics answer_relevancy,...]
        [--batch-decode N]
    .venv/bin/python benchmarks/metaeval.py wikiqa --sentences [--limit N] [--out DIR]
    .venv/bin/python benchmarks/metaeval.py ragchecker [--limit N] [--out DIR] [--floor-only]
    .venv/bin/python benchmarks/metaeval.py summeval [--limit N] [--out DIR] [--split test]
    .venv/bin/python benchmarks/metaeval.py hotpotqa [--out DIR] [--split test]
    .venv/bin/python benchmarks/metaeval.py context_focus [--out DIR] [--split test]
    .venv/bin/python benchmarks/metaeval.py cards [--judge NAME] [--out DIR] [--limit N]

--out keeps each run's results folder (and its judge-call cache) under DIR, so a stopped measurement
resumes where it stopped and a finished one recomputes its figures without calling the judge again.
jhars --limit N takes every unfaithful row, then faithful ones; --first N the first N rows in file
order (so a stopped full run's finished rows can be compared without new judge calls).
--evidence-sentences N makes the judge read only the N context sentences that cover each statement
best (0: every context, as shipped).

Every judged set prints, on the same rows, an ablation: the model-free floor (character-bigram or
word coverage, no model), the judge alone (its 0/1 verdicts, and its own P(1)), the shipped
faithfulness score, and a logistic combination of the judge with the grounding signals fitted by
cross-validation on these rows (folds by question, so no question is scored by weights fitted on it).

- jhars: response-level AUROC (faithful vs not; a response scores the mean P of its statements, and
  also the lowest) and sentence-level AUROC on the labelled sentences (a sentence scores the lowest P
  among its statements). --limit keeps every unfaithful response and fills up with faithful ones in
  file order. The floor is also printed on all rows.
- uhgeval: keyword-level AUROC (reasonable vs hallucinated keywords): a keyword scores the lowest P
  among the statements that contain it; keywords in no statement are counted and left out.
- wikieval: per aspect, the metric on the preferred side (a) and the other (b): faithfulness
  (grounded vs ungrounded answer), answer_relevancy and answer_completeness (good vs poor answer), context_relevancy and
  context_utilization (focused vs padded contexts).
- wikiqa: answer_relevancy and answer_completeness on the sentence that answers the question (a) and another
  sentence of the same article (b); the share of pairs with a > b (a tie counts half). --batch-decode N scores
  each metric again with N calls decoded together and prints how far the scores moved from batch 1's, and the
  paired change in pairs won with its 95% interval. With --sentences,
  each sentence as a one-sentence context for sentence_relevance (context_relevancy's step): the AUROC of
  the judge's mark, its P, the code signals, and their cross-validated combination.
- ragchecker: answer_correctness and factual_correctness on RAGChecker's pairs (two systems' answers to one
  question; the one the annotators found more correct should score higher), beside ROUGE-L against the
  reference (the floor) and answer_similarity (the embedder alone). Ties are left out; --limit N takes N pairs.
- summeval: aspect_critique:coherence on SummEval's dev summaries that the experts rated clearly coherent or
  clearly not: AUROC by document beside the summary's length and ROUGE-L. --limit N: N of each group.
- hotpotqa: context_precision and context_recall on HotpotQA's dev questions (benchmarks/data/hotpotqa/), against
  the paragraphs its question writers marked as holding the supporting facts: AUROC of each paragraph's P(useful)
  for those against the distractors, and pairs won by the complete support against one with a paragraph swapped
  for a distractor; the floor is the share of the question's and reference's words found.
- context_focus: context_relevancy on benchmarks/data/context_focus_dev.jsonl (WikiQA, HaluEval QA, JHARS, UHGEval;
  see its make_context_focus.py), per language: pairs won by the focused context against the same padded with
  other text, scored by the judge's P (shipped) and by its 0/1 marks, beside the density of question words.
  The pairs judged per source are capped (CONTEXT_FOCUS_PAIRS): the Chinese articles are long.
- --split test: summeval, hotpotqa and context_focus on their test rows, to be read once, at the end.
- cards: writes its cards into localeval/metrics/cards.json (benchmarks/critiques.py writes the critiques'),
  each metric's agreement per language beside its floor on the same rows, which decides the default suite.
  Faithfulness and grounding_coverage come from the judge's shipped calibration file (per labelled set,
  cross-validated; `localeval calibrate`, see docs/validation.md); the pairwise ones are measured here
  (WikiQA, WikiEval, RAGChecker, SummEval), resuming from --out; --limit N: RAGChecker's first N pairs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from localeval.data.dataset import read_dataset
from localeval.data.text import normalize, split_sentences
from localeval.grounding.calibration import SHIPPED
from localeval.grounding.coverage import coverage, lowest_coverage, units
from localeval.judge.gguf import GGUFJudge
from localeval.judge.protocol import JudgeConfig
from localeval.metrics import METRICS
from localeval.metrics.cards import Card, Figure, markdown_table, update_cards
from localeval.metrics.options import MetricOptions
from localeval.metrics.scoring import auroc
from localeval.models import load_registry, resolve_judge
from localeval.models.encoders import load_embedder
from localeval.results.agreement import calibrate, labelled_row
from localeval.results.bootstrap import auroc_intervals, mean_interval
from localeval.run.evaluation import run_evaluation
from localeval.run.options import EvaluationOptions
from localeval.run.progress import RunProgress
from localeval.run.step_executor import CallCache, StepExecutor
from localeval.steps import Call
from localeval.steps.prompts import PromptLibrary

METAEVAL = Path(__file__).resolve().parents[2] / "shared" / "metaeval"
FOLDS = 5


def score_rows(
    rows: list[dict],
    judge: str | None,
    out: Path | None,
    name: str,
    metric: str = "faithfulness",
    evidence_sentences: int = 0,
    batch_decode: int = 1,
) -> list[dict]:
    """One metric per row (same order), through the normal evaluation path."""
    options = MetricOptions(evidence_sentences=evidence_sentences)
    scored = score_metrics(rows, judge, out, f"{name}-{metric}", (metric,), options, batch_decode)
    return [row[metric] for row in scored]


def score_metrics(
    rows: list[dict],
    judge: str | None,
    out: Path | None,
    folder_name: str,
    metrics: tuple[str, ...],
    options: MetricOptions,
    batch_decode: int = 1,
) -> list[dict[str, dict]]:
    """Several metrics per row in one run, so they share its judge calls: {metric: {score, reason, evidence}}.

    batch_decode > 1 decodes that many calls together, in a folder of its own beside batch 1's."""
    if batch_decode > 1:
        folder_name = f"{folder_name}-batch{batch_decode}"
    fields = dict.fromkeys(
        ("id", "user_input", "response", "retrieved_contexts", *(f for m in metrics for f in METRICS[m].reads))
    )
    with tempfile.TemporaryDirectory() as scratch:
        folder = out / folder_name if out else Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        data = folder / "data.jsonl"
        data.write_text(
            "".join(json.dumps({k: row[k] for k in fields if k in row}, ensure_ascii=False) + "\n" for row in rows),
            encoding="utf-8",
        )
        evaluation = EvaluationOptions(
            data=data,
            out=folder / "results",
            metrics=metrics,
            judge=judge,
            judge_config=JudgeConfig(batch_decode=batch_decode),
            metric_options=options,
        )
        result = run_evaluation(evaluation, read_dataset(data), [METRICS[m] for m in metrics], progress=_progress)
        usage = result.usage()
        print(f"{', '.join(metrics)}: {len(rows)} rows; judge {usage.calls} calls, {usage.seconds:.0f} s", flush=True)
        return [
            {
                m: {"score": s.scores[m].value, "reason": s.scores[m].reason, "evidence": s.scores[m].evidence}
                for m in metrics
            }
            for s in result.samples
        ]


def _progress(state: RunProgress) -> None:
    print(
        f"  {time.strftime('%H:%M:%S')} {state.step}: {state.step_done}/{state.step_total}, "
        f"samples {state.samples_done}/{state.total_samples}",
        flush=True,
    )


def jhars(
    limit: int | None, judge: str | None, out: Path | None, floor_only: bool, evidence: int, first: int | None = None
) -> None:
    rows = [r for r in _read("jhars_dev.jsonl") if r["label"]["faithful"] is not None]
    print("JHARS floor on all rows:")
    _print_jhars(rows, {"floor (bigram coverage)": _floor_scores(rows)})
    if floor_only:
        return
    if limit:
        negatives = [r for r in rows if not r["label"]["faithful"]]
        rows = negatives + [r for r in rows if r["label"]["faithful"]][: max(0, limit - len(negatives))]
    elif first:
        rows = rows[:first]
    results = score_rows(rows, judge, out, "jhars", evidence_sentences=evidence)
    nan = [r for r, res in zip(rows, results) if math.isnan(res["score"])]
    kept = [(r, res["evidence"]["statements"]) for r, res in zip(rows, results) if not math.isnan(res["score"])]
    print(f"JHARS judged: {len(kept)} rows scored, {len(nan)} NaN")
    rows = [r for r, _ in kept]
    selection = (
        f"--limit {limit}: every unfaithful row, then faithful ones in file order"
        if limit
        else f"the first {first} in file order"
        if first
        else "all"
    )
    statements = _with_cross_validated(rows, [st for _, st in kept], f"{selection}; {_settings(judge, evidence)}")
    _print_jhars(
        rows,
        {
            "floor (bigram coverage)": _floor_scores(rows),
            "judge verdicts": _statement_scores(statements, lambda s: s["judge_verdict"]),
            "judge P(1)": _statement_scores(statements, lambda s: s["judge_p"]),
            "faithfulness (shipped)": _statement_scores(statements, lambda s: s["p"]),
            "combined (cross-validated)": _statement_scores(statements, lambda s: s["cv_p"]),
        },
    )


def _floor_scores(rows: list[dict]) -> dict:
    """The floor in the same shape as the statement-based scores: per response, and per labelled sentence."""
    per_response = [lowest_coverage(r["response"], r["retrieved_contexts"]) for r in rows]
    per_sentence = []
    for row in rows:
        have = units("\n".join(row["retrieved_contexts"]))
        per_sentence.append({normalize(s): coverage(s, have) for s in split_sentences(row["response"])})
    return {"mean": per_response, "low": per_response, "sentences": per_sentence}


def _statement_scores(per_row: list[list[dict]], value: Callable[[dict], float]) -> dict:
    """Per response the mean and the lowest statement value; per sentence the lowest of its statements."""
    means, lows, sentences = [], [], []
    for statements in per_row:
        values = [float(value(s)) for s in statements]
        means.append(sum(values) / len(values))
        lows.append(min(values))
        by_sentence: dict[str, float] = {}
        for statement, v in zip(statements, values):
            key = normalize(statement["sentence"])
            by_sentence[key] = min(v, by_sentence.get(key, 1.0))
        sentences.append(by_sentence)
    return {"mean": means, "low": lows, "sentences": sentences}


def _print_jhars(rows: list[dict], scorings: dict[str, dict]) -> None:
    faithful = [r["label"]["faithful"] for r in rows]
    print(f"  {len(rows)} responses ({sum(faithful)} faithful, {len(rows) - sum(faithful)} not)")
    for name, scored in scorings.items():
        labelled = [
            (by_sentence.get(normalize(label["sentence"])), label["type"] == "No_hallucination")
            for row, by_sentence in zip(rows, scored["sentences"])
            for label in row["label"]["sentence_labels"]
            if label["type"] in ("No_hallucination", "Unverifiable", "Contradictory")
        ]
        found = [(score, ok) for score, ok in labelled if score is not None]
        # A sentence the statements step made no statement from cannot lower the score: it counts as 1.0.
        every = [(1.0 if score is None else score, ok) for score, ok in labelled]
        print(
            f"  {name:<28} response AUROC {auroc(scored['mean'], faithful):.3f} (mean), "
            f"{auroc(scored['low'], faithful):.3f} (lowest); sentence AUROC "
            f"{auroc([s for s, _ in every], [ok for _, ok in every]):.3f} on all {len(labelled)}, "
            f"{auroc([s for s, _ in found], [ok for _, ok in found]):.3f} on the {len(found)} with statements "
            f"({sum(not ok for _, ok in found)} of {sum(not ok for _, ok in labelled)} hallucinated)"
        )


def uhgeval(limit: int | None, judge: str | None, out: Path | None, floor_only: bool, evidence: int) -> None:
    rows = _read("uhgeval_dev.jsonl")
    for row in rows:
        row["user_input"] = row["user_input"] or row["meta"].get("headline") or ""
    print("UHGEval floor on all rows:")
    _print_keyword_floor(rows)
    if floor_only:
        return
    rows = rows[: limit or None]
    print(f"UHGEval floor on the {len(rows)} judged rows:")
    _print_keyword_floor(rows)
    results = score_rows(rows, judge, out, "uhgeval", evidence_sentences=evidence)
    kept = [(r, res["evidence"]["statements"]) for r, res in zip(rows, results) if not math.isnan(res["score"])]
    print(f"UHGEval judged: {len(kept)} rows scored, {len(rows) - len(kept)} NaN")
    rows = [r for r, _ in kept]
    cv = _with_cross_validated(rows, [st for _, st in kept], f"the first {len(rows)}; {_settings(judge, evidence)}")
    views = {
        "judge verdicts": "judge_verdict",
        "judge P(1)": "judge_p",
        "faithfulness (shipped)": "p",
        "combined (cross-validated)": "cv_p",
        "statement coverage (no model)": "coverage",
    }
    for name, key in views.items():
        scores, reasonable, nowhere = _keyword_scores(rows, cv, lambda s, key=key: s[key])
        print(
            f"  {name:<28} keyword AUROC {auroc(scores, reasonable):.3f} on {len(scores)} keywords "
            f"({sum(not r for r in reasonable)} hallucinated); {nowhere} keywords in no statement"
        )
    # The floor on exactly the keywords scored above (those inside a statement), for a like-for-like comparison.
    print("  the floor on those same keywords:")
    _print_keyword_floor(
        [
            dict(
                row,
                label=dict(
                    row["label"],
                    keyword_labels=[k for k in row["label"]["keyword_labels"] if _holding(k["keyword"], statements)],
                ),
            )
            for row, statements in zip(rows, cv)
        ]
    )


def _with_cross_validated(rows: list[dict], per_row: list[list[dict]], selection: str) -> list[list[dict]]:
    """The statements with `cv_p`: the "both" combination (5-fold, by question). `localeval calibrate` writes
    calibration files; this prints the fit."""
    units = [str(row["orig_id"]) for row in rows]
    fitted = calibrate([labelled_row(row) for row in rows], per_row, "dev", selection, FOLDS, units)
    for form, model in fitted.forms.items():
        factors = " × ".join(
            "σ(" + ", ".join(f"{k} {v:+.2f}" for k, v in f.weights.items()) + f", bias {f.bias:+.2f})"
            for f in model.factors
        )
        print(
            f"  {form} fitted on all {len(rows)} rows: {factors}; {fitted.agreement.level}-level AUROC "
            f"(cross-validated) {fitted.agreement.by_label[form]}"
        )
    return [
        [dict(s, cv_p=p) for s, p in zip(statements, values)]
        for statements, values in zip(per_row, fitted.cross_validated["both"])
    ]


def _settings(judge: str | None, evidence: int) -> str:
    """What a saved calibration must be used with: the same judge and the same evidence setting."""
    return f"judge {judge or load_registry().default_judge}, evidence_sentences={evidence}"


def _keyword_scores(rows: list[dict], per_row: list[list[dict]], value: Callable[[dict], float]):
    scores, reasonable, nowhere = [], [], 0
    for row, statements in zip(rows, per_row):
        for label in row["label"]["keyword_labels"]:
            holding = [float(value(s)) for s in _holding(label["keyword"], statements)]
            if not holding:
                nowhere += 1
                continue
            scores.append(min(holding))
            reasonable.append(bool(label["reasonable"]))
    return scores, reasonable, nowhere


def _holding(keyword: str, statements: list[dict]) -> list[dict]:
    """The statements that contain the keyword (after NFKC)."""
    keyword = normalize(keyword)
    return [s for s in statements if keyword and keyword in normalize(s["statement"])]


def _print_keyword_floor(rows: list[dict]) -> None:
    """A keyword is suspect when its NFKC form is not in the contexts; also its bigram coverage, as a score."""
    substring, bigram, reasonable = [], [], []
    for row in rows:
        contexts = "".join(row["retrieved_contexts"])
        plain = normalize(contexts).replace(" ", "")
        have = units(contexts)
        for label in row["label"]["keyword_labels"]:
            substring.append(float(normalize(label["keyword"]).replace(" ", "") in plain))
            bigram.append(coverage(label["keyword"], have))
            reasonable.append(bool(label["reasonable"]))
    print(
        f"  floor: keyword AUROC {auroc(substring, reasonable):.3f} (in the contexts or not), "
        f"{auroc(bigram, reasonable):.3f} (bigram coverage) on {len(reasonable)} keywords "
        f"({sum(not r for r in reasonable)} hallucinated)"
    )


WIKIQA_METRICS = ("answer_relevancy", "answer_completeness")
WIKIEVAL_METRICS = {
    "faithfulness": ("faithfulness",),
    "answer_relevancy": ("answer_relevancy", "answer_completeness"),
    "context_relevance": ("context_relevancy", "context_utilization"),
}


# The model-free floor per aspect, on one side of a pair: word coverage of the answer by the contexts
# (faithfulness), of the question by the answer (relevancy), and the density of question words in the
# contexts (context relevance).
WIKIEVAL_FLOORS: dict[str, Callable[[dict], float]] = {
    "faithfulness": lambda side: coverage(side["response"], side["retrieved_contexts"]),
    "answer_relevancy": lambda side: coverage(side["user_input"], [side["response"]]),
    "context_relevance": lambda side: _density(side["user_input"], side["retrieved_contexts"]),
}


def wikieval(judge: str | None, out: Path | None, floor_only: bool, aspects: list[str]) -> None:
    """Each aspect's metric(s) on the preferred side (a) and the other (b); a should score higher."""
    rows = _read("wikieval_dev.jsonl")
    for aspect in aspects:
        metrics = WIKIEVAL_METRICS[aspect]
        aspect_rows = [r for r in rows if r["label"]["aspect"] == aspect]
        pairs = [dict(r, id=f"{r['id']}:{side}", **_side(r, side)) for r in aspect_rows for side in "ab"]
        floor = [{"score": WIKIEVAL_FLOORS[aspect](pair)} for pair in pairs]
        _print_pairs(f"WikiEval {aspect}", "floor (no model)", aspect_rows, floor)
        for metric in () if floor_only else metrics:
            _print_pairs(
                f"WikiEval {aspect}", metric, aspect_rows, score_rows(pairs, judge, out, f"wikieval-{aspect}", metric)
            )


def wikiqa(
    limit: int | None, judge: str | None, out: Path | None, floor_only: bool, metrics: list[str], batch_decode: int = 1
) -> None:
    """The metrics on the answering sentence (a) and a same-article sentence that does not answer (b).

    With batch_decode > 1, each metric also at that many calls decoded together, against batch 1."""
    rows = _read("ragas_wikiqa_dev.jsonl")[: limit or None]
    pairs = [dict(r, id=f"{r['id']}:{side}", **_side(r, side)) for r in rows for side in "ab"]
    floor = [{"score": WIKIEVAL_FLOORS["answer_relevancy"](pair)} for pair in pairs]
    _print_pairs("WikiQA answer relevance", "floor (no model)", rows, floor, each=False)
    for metric in () if floor_only else metrics:
        alone = score_rows(pairs, judge, out, "wikiqa", metric)
        _print_pairs("WikiQA answer relevance", metric, rows, alone, each=False)
        if batch_decode > 1:
            together = score_rows(pairs, judge, out, "wikiqa", metric, batch_decode=batch_decode)
            _print_pairs("WikiQA answer relevance", f"{metric}, batch {batch_decode}", rows, together, each=False)
            _print_batch_moves(metric, batch_decode, [r["score"] for r in alone], [r["score"] for r in together])


def _print_batch_moves(metric: str, batch_decode: int, alone: list[float], together: list[float]) -> None:
    """How far decoding calls together moved the scores, and pairs won's paired change with its 95% interval."""
    a, b = np.array(alone), np.array(together)
    both = ~np.isnan(a) & ~np.isnan(b)
    moves = np.abs(a[both] - b[both])
    won = [_pair_outcomes(scores) for scores in (a, b)]
    change = won[1] - won[0]
    low, high = mean_interval(change)
    print(
        f"{metric}, batch {batch_decode} against batch 1: scores moved on {int((moves > 5e-4).sum())} of "
        f"{len(a)} rows (largest {moves.max(initial=0.0):.3f}, mean {moves.mean() if moves.size else 0.0:.4f}); "
        f"NaN changed on {int((np.isnan(a) != np.isnan(b)).sum())}; pairs won {won[0].mean():.3f} -> "
        f"{won[1].mean():.3f}, paired change {change.mean():+.3f} (95% interval {low:+.3f} to {high:+.3f})",
        flush=True,
    )


def wikiqa_sentences(limit: int | None, judge: str | None, out: Path | None) -> None:
    """Sentence relevance: each side's sentence as a one-sentence context, judged by sentence_relevance.

    Prints the AUROC (answering sentence vs not) of the judge's 0/1 mark, its own P, the floor (question
    words in the sentence), the embedder cosine with the question, and logistic combinations of P with
    the code signals, cross-validated by pair: whether code signals add to the judge for context_relevancy.
    """
    rows = _read("ragas_wikiqa_dev.jsonl")[: limit or None]
    resolved = resolve_judge(judge)
    config = JudgeConfig()
    cache = CallCache(out / "wikiqa-sentences" / "judge_calls.jsonl") if out else CallCache()
    if out:
        cache.path.parent.mkdir(parents=True, exist_ok=True)
    executor = StepExecutor(GGUFJudge(resolved.path, config), resolved.path.name, PromptLibrary(), config, cache)
    embedder = load_embedder(None, "en")
    signals, relevant, pair = [], [], []
    for i, row in enumerate(rows):
        for side in "ab":
            sentence, question = row[f"response_{side}"], row["user_input"]
            marked = executor.run(Call.of("sentence_relevance", user_input=question, sentences=[sentence]), "en")
            vectors = embedder.embed([question, sentence])
            signals.append(
                {
                    "mark": float(marked.output.verdicts[0]),
                    "p": marked.output.p[0],
                    "overlap": coverage(question, [sentence]),
                    "cosine": float(vectors[0] @ vectors[1]),
                }
            )
            relevant.append(side == "a")
            pair.append(i)
    print(f"WikiQA sentence relevance, {len(rows)} pairs ({len(signals)} sentences), AUROC:")
    for name in ("mark", "p", "overlap", "cosine"):
        print(f"  {name:<32} {auroc([s[name] for s in signals], relevant):.3f}")
    for names in (("judge_logit", "overlap"), ("judge_logit", "cosine"), ("judge_logit", "overlap", "cosine")):
        features = [[_logit(s["p"]) if n == "judge_logit" else s[n] for n in names] for s in signals]
        scores = _cross_validated_logistic(features, relevant, pair)
        print(f"  {' + '.join(names):<32} {auroc(scores, relevant):.3f} (logistic, {FOLDS}-fold by pair)")


# answer_correctness and factual_correctness share their calls; the no-judge signals ride along on the same rows.
RAGCHECKER_METRICS = ("answer_correctness", "factual_correctness")
RAGCHECKER_FLOORS = ("rouge_l", "answer_similarity")
CORRECTNESS_CRITIQUE = "aspect_critique:correctness"
RAGCHECKER_CHUNK = 10  # pairs per run: a stopped measurement keeps every chunk it finished


def ragchecker_pairs(limit: int | None) -> list[dict]:
    """The dev pairs whose annotators, on average, prefer one response's correctness; the preferred one as a.

    In sha256 order of the row id, a fixed shuffle, so that --limit N takes a random N and a stopped run's
    finished chunks are one too. Ties (the two annotators cancel or both say equal: 30 of 112) are left out.
    """
    rows = [r for r in _read("ragchecker_dev.jsonl") if r["label"]["preferred_by_aspect"]["correctness"] != "tie"]
    rows.sort(key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest())
    pairs = []
    for row in rows[: limit or None]:
        preferred = row["label"]["preferred_by_aspect"]["correctness"]
        other = "b" if preferred == "a" else "a"
        pairs.append(dict(row, response_a=row[f"response_{preferred}"], response_b=row[f"response_{other}"]))
    return pairs


def ragchecker_scores(
    pairs: list[dict], judge: str | None, out: Path | None, metrics: tuple[str, ...]
) -> list[dict[str, dict]]:
    """Both sides of every pair (preferred first), run by chunks of pairs under --out."""
    sides = [
        {
            "id": f"{r['id']}:{side}",
            "user_input": r["user_input"],
            "response": r[f"response_{side}"],
            "reference": r["reference"],
        }
        for r in pairs
        for side in "ab"
    ]
    scored: list[dict[str, dict]] = []
    for start in range(0, len(sides), 2 * RAGCHECKER_CHUNK):
        folder = f"ragchecker-{'-'.join(metrics)}-{start // 2:03d}"
        scored += score_metrics(
            sides[start : start + 2 * RAGCHECKER_CHUNK], judge, out, folder, metrics, MetricOptions()
        )
    return scored


def ragchecker(limit: int | None, judge: str | None, out: Path | None, floor_only: bool) -> None:
    """Answer correctness on RAGChecker's labelled pairs: does the response people found more correct score higher?

    Beside it, on the same pairs, ROUGE-L against the reference (the floor: no model) and answer_similarity
    (the embedder alone, no judge): what the judge's calls must beat to be worth them.
    """
    pairs = ragchecker_pairs(limit)
    print(f"RAGChecker dev, correctness: {len(pairs)} pairs with a preferred side", flush=True)
    metrics = RAGCHECKER_FLOORS if floor_only else (*RAGCHECKER_METRICS, *RAGCHECKER_FLOORS)
    scored = ragchecker_scores(pairs, judge, out, metrics)
    for metric in metrics:
        nans = sum(math.isnan(row[metric]["score"]) for row in scored)
        print(f"  {metric:<22} pairs won {_ragchecker_won(scored, metric)}  ({nans} NaN, scored 0)", flush=True)
    if not floor_only:
        print(f"  {CORRECTNESS_CRITIQUE} P(yes) pairs won {_ragchecker_critique(pairs, judge, out)}", flush=True)


def ragchecker_cards(judge: str | None, name: str, out: Path | None, limit: int | None) -> list[Card]:
    """answer_correctness and factual_correctness (the judge), answer_similarity (the embedder), beside ROUGE-L."""
    pairs = ragchecker_pairs(limit)
    scored = ragchecker_scores(pairs, judge, out, (*RAGCHECKER_METRICS, *RAGCHECKER_FLOORS))
    floor = _ragchecker_won(scored, "rouge_l")
    data = (
        f"RAGChecker dev ({len(pairs)} pairs): two RAG systems' answers to one question, the one the annotators "
        "found more correct against the other"
    )
    won = {metric: _ragchecker_won(scored, metric) for metric in (*RAGCHECKER_METRICS, "answer_similarity")}
    won[CORRECTNESS_CRITIQUE] = _ragchecker_critique(pairs, judge, out)
    return [
        Card(
            metric,
            "en",
            "pairs won",
            figure,
            floor,
            "ROUGE-L against the reference",
            len(pairs),
            data,
            None if metric == "answer_similarity" else name,
            "benchmarks/metaeval.py cards --out DIR",
        )
        for metric, figure in won.items()
    ]


def _ragchecker_critique(pairs: list[dict], judge: str | None, out: Path | None) -> Figure:
    """The correctness critique's P(yes), without the reference (it reads none): the more correct side should get
    the higher P. An empty response is not judged and counts 0."""
    scored = ragchecker_scores(pairs, judge, out, (CORRECTNESS_CRITIQUE,))
    return _pairs_won([float((row[CORRECTNESS_CRITIQUE]["evidence"] or {}).get("p_yes", 0.0)) for row in scored])


def _ragchecker_won(scored: list[dict[str, dict]], metric: str) -> Figure:
    """Pairs won, an empty response's NaN scoring 0: 4 of the dev responses are empty, all on the worse side."""
    return _pairs_won([0.0 if math.isnan(v := row[metric]["score"]) else v for row in scored])


SUMMEVAL = Path(__file__).resolve().parent / "data" / "summeval"
# Expert mean coherence (1-5, three experts) at or above GOOD: coherent; at or below POOR: not; the rows between
# are left out, where the experts themselves differ by a point or two.
GOOD, POOR = 4.0, 2.0


def summeval_rows(split: str, per_group: int | None) -> list[dict]:
    """The split's summaries rated clearly coherent or clearly not, in file order: of each group the first `per_group`."""
    rows = _jsonl(SUMMEVAL / f"summeval_{split}.jsonl")
    taken: dict[bool, int] = {True: 0, False: 0}
    kept = []
    for row in rows:
        mean = row["label"]["mean"]["coherence"]
        if POOR < mean < GOOD or (per_group is not None and taken[mean >= GOOD] >= per_group):
            continue
        taken[mean >= GOOD] += 1
        kept.append(row)
    return kept


def summeval_coherence(
    judge: str | None, out: Path | None, per_group: int | None, split: str = "dev"
) -> tuple[list[dict], dict]:
    """aspect_critique:coherence's P(yes) on each summary, AUROC for coherent against not, beside the floors.

    The floors are the summary's length and its ROUGE-L against the reference, each in whichever direction ranks
    better on these rows (a floor allowed to pick its sign: the judge must beat the better rule).
    """
    rows = summeval_rows(split, per_group)
    metric = "aspect_critique:coherence"
    folder = _folder(f"summeval-{per_group or 'all'}", split)
    scored = score_metrics(rows, judge, out, folder, (metric, "rouge_l"), MetricOptions())
    coherent = [r["label"]["mean"]["coherence"] >= GOOD for r in rows]
    signals = {
        "P(yes)": [float((s[metric]["evidence"] or {}).get("p_yes", math.nan)) for s in scored],
        "length": [float(len(r["response"])) for r in rows],
        "ROUGE-L": [s["rouge_l"]["score"] for s in scored],
    }
    for name in ("length", "ROUGE-L"):
        if auroc(signals[name], coherent) < 0.5:
            signals[name] = [-v for v in signals[name]]
    figures = auroc_intervals(signals, coherent, [r["doc_id"] for r in rows])
    print(f"SummEval {split} coherence: {len(rows)} summaries ({sum(coherent)} coherent), AUROC by document:")
    for name, figure in figures.items():
        print(f"  {name:<8} {figure}")
    # Two of the 12 systems write cased text and are rated the most coherent: a judge could read case, not order.
    lower = [i for i, r in enumerate(rows) if r["response"] == r["response"].lower()]
    print(
        f"  P(yes) on the {len(lower)} lower-cased summaries alone: "
        f"{auroc([signals['P(yes)'][i] for i in lower], [coherent[i] for i in lower]):.3f}"
    )
    return rows, figures


def summeval_cards(judge: str | None, name: str, out: Path | None) -> list[Card]:
    rows, figures = summeval_coherence(judge, out, None)
    data = (
        f"SummEval dev ({len(rows)} CNN/DailyMail summaries by 12 abstractive systems, three experts): "
        f"coherent (mean >= {GOOD:g}) against not (<= {POOR:g})"
    )
    names = {"length": "the summary's length", "ROUGE-L": "ROUGE-L against the reference"}
    floor = max(names, key=lambda f: figures[f].auroc)
    other = next(n for n in names if n != floor)
    floor_name = f"{names[floor]} (better than {names[other]}; either sign)"
    return [
        Card(
            "aspect_critique:coherence",
            "en",
            "AUROC",
            _figure(figures["P(yes)"].as_dict()),
            _figure(figures[floor].as_dict()),
            floor_name,
            len(rows),
            data,
            name,
            "benchmarks/metaeval.py cards --out DIR",
        )
    ]


HOTPOTQA = Path(__file__).resolve().parent / "data" / "hotpotqa"
HOTPOTQA_FLOOR = "the share of the question's and the reference's words in the"


def hotpotqa_rows(split: str) -> list[dict]:
    return _jsonl(HOTPOTQA / f"hotpotqa_{split}.jsonl")


def _passage(paragraph: dict) -> str:
    """A paragraph as a retriever returns it: its title, then its text."""
    return f"{paragraph['title']}\n{paragraph['text']}"


def _asked(row: dict) -> str:
    return f"{row['user_input']} {row['reference']}"


def hotpotqa_precision(judge: str | None, out: Path | None, split: str = "dev") -> tuple[list[dict], dict]:
    """context_precision's P(useful) for each of a question's ten paragraphs: AUROC, by question, for the two that
    hold its supporting facts against the eight distractors retrieved for it, beside the floor on each paragraph.

    context_precision is the average precision of these P over the ranks, so how well P ranks the paragraphs people
    marked as needed is what its score is worth.
    """
    rows = hotpotqa_rows(split)
    samples = [
        {
            "id": r["id"],
            "user_input": r["user_input"],
            "reference": r["reference"],
            "retrieved_contexts": [_passage(p) for p in r["paragraphs"]],
        }
        for r in rows
    ]
    folder = _folder("hotpotqa-context_precision", split)
    scored = score_metrics(samples, judge, out, folder, ("context_precision",), MetricOptions())
    paragraphs = [
        {
            "question": r["id"],
            "supporting": p["supporting"],
            "p": verdict["p"],
            "floor": coverage(_asked(r), [_passage(p)]),
            "holds_reference": coverage(r["reference"], [_passage(p)]) == 1.0,
        }
        for r, s in zip(rows, scored)
        for p, verdict in zip(r["paragraphs"], s["context_precision"]["evidence"]["contexts"])
    ]
    figures = auroc_intervals(
        {"P(useful)": [p["p"] for p in paragraphs], "floor": [p["floor"] for p in paragraphs]},
        [p["supporting"] for p in paragraphs],
        [p["question"] for p in paragraphs],
    )
    print(f"HotpotQA {split}: {len(rows)} questions, {len(paragraphs)} paragraphs, AUROC by question:")
    for name, figure in figures.items():
        print(f"  {name:<10} {figure}")
    for holds in (True, False):
        kind = [p for p in paragraphs if p["supporting"] and p["holds_reference"] == holds]
        print(
            f"  supporting paragraphs {'with' if holds else 'without'} the reference's words: {len(kind)}, "
            f"P >= 0.5 on {sum(p['p'] >= 0.5 for p in kind)}"
        )
    others = [p for p in paragraphs if not p["supporting"]]
    print(f"  distractors: {len(others)}, P >= 0.5 on {sum(p['p'] >= 0.5 for p in others)}")
    return rows, figures


def hotpotqa_recall_pairs(rows: list[dict]) -> list[dict]:
    """Per question, its two supporting paragraphs (a) against the same with one swapped for a distractor (b).

    People marked both paragraphs as needed, so b should recall less of the reference. The one swapped out is the
    one without all of the reference's words when only one lacks them (the hop a word match cannot see), else the
    second; the distractor put in its place is the one holding most of the question's words, the one a lexical
    retriever would have picked.
    """
    pairs = []
    for row in rows:
        gold = [p for p in row["paragraphs"] if p["supporting"]]
        lacking = [p for p in gold if coverage(row["reference"], [_passage(p)]) < 1.0]
        out = lacking[0] if len(lacking) == 1 else gold[1]
        distractor = max(
            (p for p in row["paragraphs"] if not p["supporting"]),
            key=lambda p: coverage(row["user_input"], [_passage(p)]),
        )
        for side, paragraphs in (("a", gold), ("b", [distractor if p is out else p for p in gold])):
            contexts = [_passage(p) for p in paragraphs]
            pairs.append(
                {
                    "id": f"{row['id']}:{side}",
                    "user_input": row["user_input"],
                    "reference": row["reference"],
                    "retrieved_contexts": contexts,
                    "floor": coverage(_asked(row), contexts),
                }
            )
    return pairs


def hotpotqa_recall(judge: str | None, out: Path | None, split: str = "dev") -> tuple[list[dict], dict[str, Figure]]:
    """context_recall on the pairs: the share where the complete support scores higher, beside the floor's."""
    pairs = hotpotqa_recall_pairs(hotpotqa_rows(split))
    folder = _folder("hotpotqa-context_recall", split)
    scored = score_metrics(pairs, judge, out, folder, ("context_recall",), MetricOptions())
    figures = {
        "context_recall": _pairs_won([s["context_recall"]["score"] for s in scored]),
        "floor": _pairs_won([p["floor"] for p in pairs]),
    }
    print(f"HotpotQA {split}: {len(pairs) // 2} pairs, complete support against one paragraph swapped, pairs won:")
    for name, figure in figures.items():
        print(f"  {name:<14} {figure}")
    return pairs, figures


def hotpotqa_cards(judge: str | None, name: str, out: Path | None) -> list[Card]:
    command = "benchmarks/metaeval.py cards --out DIR"
    rows, precision = hotpotqa_precision(judge, out)
    paragraphs = sum(len(r["paragraphs"]) for r in rows)
    pairs, recall = hotpotqa_recall(judge, out)
    return [
        Card(
            "context_precision",
            "en",
            "AUROC",
            _figure(precision["P(useful)"].as_dict()),
            _figure(precision["floor"].as_dict()),
            f"{HOTPOTQA_FLOOR} paragraph",
            paragraphs,
            f"HotpotQA dev ({len(rows)} questions, {paragraphs} paragraphs): the 2 paragraphs the question's writers "
            "marked as holding its supporting facts against the 8 distractors retrieved for it",
            name,
            command,
        ),
        Card(
            "context_recall",
            "en",
            "pairs won",
            recall["context_recall"],
            recall["floor"],
            f"{HOTPOTQA_FLOOR} contexts",
            len(pairs) // 2,
            f"HotpotQA dev ({len(pairs) // 2} pairs): a question's 2 supporting paragraphs against the same with one "
            "swapped for the distractor sharing most of its words",
            name,
            command,
        ),
    ]


CONTEXT_FOCUS = Path(__file__).resolve().parent / "data"
# Pairs judged per source, the first in the file's (hash) order: the Chinese articles are long (about 66 sentences
# a pair, some 27 s a judge call here), so they are sampled most thinly.
CONTEXT_FOCUS_PAIRS = {"ragas_wikiqa": 46, "halueval_qa": 40, "jhars": 30, "uhgeval": 24}
CONTEXT_FOCUS_DATA = {
    "ragas_wikiqa": "WikiQA (the answering sentence against it and another sentence of its article)",
    "halueval_qa": "HaluEval QA (the knowledge paragraph against it and two other questions' paragraphs)",
    "jhars": "JHARS (the passage against it and two other questions' passages)",
    "uhgeval": "UHGEval (the article under the headline against it and two other articles)",
}


def context_focus(
    judge: str | None, out: Path | None, split: str = "dev"
) -> dict[str, tuple[list[dict], dict[str, Figure]]]:
    """context_relevancy on benchmarks/data/context_focus_{split}.jsonl, by language: the focused context against the
    padded one, scored by the judge's P (shipped) and by its 0/1 marks, beside the density floor; a pair's focused
    side should score higher. {lang: (pairs, {"P": ..., "marks": ..., "floor": ...})}."""
    rows = _jsonl(CONTEXT_FOCUS / f"context_focus_{split}.jsonl")
    found = {}
    for lang in ("en", "ja", "zh"):
        chosen = []
        for source, limit in CONTEXT_FOCUS_PAIRS.items():
            chosen += [r for r in rows if r["source"] == source and r["lang"] == lang][:limit]
        if not chosen:
            continue
        preferred = {"a": "b", "b": "a"}
        sides = [
            dict(r, id=f"{r['id']}:{side}", retrieved_contexts=r[f"retrieved_contexts_{side}"])
            for r in chosen
            for side in (r["label"]["preferred"], preferred[r["label"]["preferred"]])
        ]
        scored = score_rows(sides, judge, out, _folder(f"context_focus-{lang}", split), "context_relevancy")
        figures = {
            "P": _pairs_won([s["score"] for s in scored]),
            "marks": _pairs_won([len(s["evidence"]["extracted"]) / s["evidence"]["sentences"] for s in scored]),
            "floor": _pairs_won([_density(side["user_input"], side["retrieved_contexts"]) for side in sides]),
        }
        for source in CONTEXT_FOCUS_PAIRS:
            at = [i for i, r in enumerate(chosen) if r["source"] == source]
            if at:
                by_source = {
                    name: _pairs_won([v for i in at for v in (scores[2 * i], scores[2 * i + 1])]).value
                    for name, scores in (
                        ("P", [s["score"] for s in scored]),
                        ("floor", [_density(side["user_input"], side["retrieved_contexts"]) for side in sides]),
                    )
                }
                print(f"  {lang} {source}: {len(at)} pairs, P {by_source['P']:.2f}, floor {by_source['floor']:.2f}")
        print(
            f"context_focus {split} {lang} ({len(chosen)} pairs), pairs won: "
            + ", ".join(f"{k} {v}" for k, v in figures.items())
        )
        found[lang] = (chosen, figures)
    return found


def context_focus_cards(judge: str | None, name: str, out: Path | None) -> list[Card]:
    found = []
    for lang, (pairs, figures) in context_focus(judge, out).items():
        sources = [s for s in CONTEXT_FOCUS_PAIRS if any(r["source"] == s for r in pairs)]
        counts = ", ".join(f"{CONTEXT_FOCUS_DATA[s]}: {sum(r['source'] == s for r in pairs)}" for s in sources)
        found.append(
            Card(
                "context_relevancy",
                lang,
                "pairs won",
                figures["P"],
                figures["floor"],
                "density of question words in the contexts",
                len(pairs),
                f"context_focus dev ({len(pairs)} pairs), a focused context against a padded one; {counts}",
                name,
                "benchmarks/metaeval.py cards --out DIR",
            )
        )
    return found


def _folder(name: str, split: str) -> str:
    """A measurement's results folder under --out: dev's keeps its plain name, so earlier runs resume."""
    return name if split == "dev" else f"{name}-{split}"


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def _cross_validated_logistic(features: list[list[float]], labels: list[bool], units: list[int]) -> list[float]:
    """Each row's logit from an L2 logistic fit on the other folds (gradient ascent; a bias is added)."""
    x = np.array([[*f, 1.0] for f in features])
    y = np.array(labels, dtype=float)
    fold = np.array(units) % FOLDS
    scores = np.zeros(len(y))
    for k in range(FOLDS):
        train = fold != k
        w = np.zeros(x.shape[1])
        for _ in range(3000):
            p = 1.0 / (1.0 + np.exp(-x[train] @ w))
            w += 0.1 * (x[train].T @ (y[train] - p) - np.r_[w[:-1], 0.0]) / train.sum()
        scores[~train] = x[~train] @ w
    return scores.tolist()


def _print_pairs(aspect: str, name: str, rows: list[dict], results: list[dict], each: bool = True) -> None:
    """Wins (a > b), ties and losses over the pairs, and the share won with a tie counted half.

    Scores are compared as printed, to 3 decimals: a judge's P of 0.9999 against 0.9998 is a tie, not a win.
    """
    outcome = []
    for i, row in enumerate(rows):
        a, b = round(results[2 * i]["score"], 3), round(results[2 * i + 1]["score"], 3)
        outcome.append("win" if a > b else "tie" if a == b else "loss")
        if each:
            print(f"  {row['orig_id'][:48]:<48} a {a:.3f}  b {b:.3f}")
    wins, ties = outcome.count("win"), outcome.count("tie")
    print(
        f"{aspect} / {name}: a > b on {wins}/{len(outcome)} ({ties} ties, {outcome.count('loss')} losses); "
        f"share {(wins + ties / 2) / len(outcome):.2f}",
        flush=True,
    )


# The human-labelled dev set that each language's faithfulness card is measured on (the flat contradictions
# that the calibrations are also fitted on are built by code, not labelled by people).
FAITHFULNESS_SETS = {
    "halueval_qa_dev.jsonl": ("en", "HaluEval QA dev split: answers, right or hallucinated, against the knowledge"),
    "jhars_dev.jsonl": ("ja", "JHARS dev split: answers to questions about one passage each"),
    "uhgeval_dev.jsonl": ("zh", "UHGEval concise dev split: news continuations, keywords labelled"),
}
CALIBRATE_COMMAND = "localeval calibrate (the dev sets of docs/validation.md), then benchmarks/metaeval.py cards"


def cards(judge: str | None, out: Path | None, ragchecker_limit: int | None) -> None:
    """Every card this benchmark can measure, written to the package's cards file."""
    name = judge or load_registry().default_judge
    update_cards(
        [
            *faithfulness_cards(name),
            *pairwise_cards(judge, name, out),
            *ragchecker_cards(judge, name, out, ragchecker_limit),
            *summeval_cards(judge, name, out),
            *hotpotqa_cards(judge, name, out),
            *context_focus_cards(judge, name, out),
        ]
    )
    print(markdown_table())


def faithfulness_cards(judge: str) -> list[Card]:
    """faithfulness (the shipped form's cross-validated AUROC) and grounding_coverage (the floor itself), per
    language, from the per-set figures that `localeval calibrate` recorded in the judge's calibration file."""
    path = SHIPPED / f"{judge}.json"
    languages = json.loads(path.read_text(encoding="utf-8"))["languages"]
    found = []
    for source, (lang, data) in FAITHFULNESS_SETS.items():
        entry = languages.get(lang, {})
        agreement = entry.get("agreement", {}).get("by_source", {}).get(source)
        if agreement is None:
            print(f"{path.name} has no figures for {source}: run `localeval calibrate` on it first")
            continue
        by_response = agreement["level"] == "sentence" or agreement["level"] == "response"
        figures = agreement["auroc_by_response" if by_response else "auroc_by_label"]
        rows = agreement["responses" if by_response else "labels"]
        what = f"{data}; {rows} {'answers' if by_response else 'keywords'}"
        measure = "AUROC" if by_response else "keyword AUROC"
        floor = _figure(figures["floor"])
        units = "word" if lang == "en" else "character-bigram"
        floor_name = (
            f"the least covered sentence's {units} coverage" if by_response else f"the keyword's {units} coverage"
        )
        found.append(
            Card(
                "faithfulness",
                lang,
                measure,
                _figure(figures[entry["form"]]),
                floor,
                floor_name,
                rows,
                what,
                judge,
                CALIBRATE_COMMAND,
            )
        )
        if by_response:  # grounding_coverage scores a response; a keyword's floor is not its score
            found.append(
                Card("grounding_coverage", lang, measure, floor, None, "", rows, what, None, CALIBRATE_COMMAND)
            )
    return found


def pairwise_cards(judge: str | None, name: str, out: Path | None) -> list[Card]:
    """The metrics measured on pairs (the preferred side should score higher), with the floor on the same pairs."""
    command = "benchmarks/metaeval.py cards --out DIR"
    found = []
    wikiqa_rows = _read("ragas_wikiqa_dev.jsonl")
    wikiqa_pairs = [dict(r, id=f"{r['id']}:{side}", **_side(r, side)) for r in wikiqa_rows for side in "ab"]
    floor = _pairs_won([WIKIEVAL_FLOORS["answer_relevancy"](pair) for pair in wikiqa_pairs])
    for metric in WIKIQA_METRICS:
        won = _pairs_won([r["score"] for r in score_rows(wikiqa_pairs, judge, out, "wikiqa", metric)])
        data = f"WikiQA dev ({len(wikiqa_rows)} pairs): the sentence that answers the question against another of its article"
        found.append(
            Card(
                metric,
                "en",
                "pairs won",
                won,
                floor,
                "question words in the response",
                len(wikiqa_rows),
                data,
                name,
                command,
            )
        )
    wikieval_rows = [r for r in _read("wikieval_dev.jsonl") if r["label"]["aspect"] == "context_relevance"]
    wikieval_pairs = [dict(r, id=f"{r['id']}:{side}", **_side(r, side)) for r in wikieval_rows for side in "ab"]
    floor = _pairs_won([WIKIEVAL_FLOORS["context_relevance"](pair) for pair in wikieval_pairs])
    for metric in ("context_utilization",):  # context_relevancy's card comes from the larger context_focus set
        scores = score_rows(wikieval_pairs, judge, out, "wikieval-context_relevance", metric)
        data = f"WikiEval dev ({len(wikieval_rows)} pairs): a focused context against a padded one"
        found.append(
            Card(
                metric,
                "en",
                "pairs won",
                _pairs_won([r["score"] for r in scores]),
                floor,
                "density of question words in the contexts",
                len(wikieval_rows),
                data,
                name,
                command,
            )
        )
    return found


def _pairs_won(scores: list[float]) -> Figure:
    """The share of pairs whose preferred side (a, first) scores higher to 3 decimals, a tie counting half."""
    won = _pair_outcomes(np.array(scores))
    low, high = mean_interval(won)
    return Figure(float(won.mean()), low, high)


def _pair_outcomes(scores: np.ndarray) -> np.ndarray:
    """Per pair (a, b in turn), 1 where a scores higher to 3 decimals, 0.5 for a tie, 0 otherwise."""
    a, b = np.round(scores[::2], 3), np.round(scores[1::2], 3)
    return np.where(a > b, 1.0, np.where(a == b, 0.5, 0.0))


def _figure(data: dict) -> Figure:
    return Figure(data["auroc"], data["low"], data["high"])


def _density(question: str, contexts: list[str]) -> float:
    """Share of the contexts' units that are question units: padding dilutes it."""
    have = units("\n".join(contexts))
    return len(units(question) & have) / len(have) if have else 0.0


def _side(row: dict, side: str) -> dict:
    """The row's fields for one side of the pair: its own response, or its own contexts."""
    if row["label"]["aspect"] == "context_relevance":
        return {"retrieved_contexts": row[f"retrieved_contexts_{side}"]}
    return {"response": row[f"response_{side}"]}


def _read(name: str) -> list[dict]:
    return _jsonl(METAEVAL / name)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "dataset",
        choices=[
            "jhars",
            "uhgeval",
            "wikieval",
            "wikiqa",
            "ragchecker",
            "summeval",
            "hotpotqa",
            "context_focus",
            "cards",
        ],
    )
    limits = parser.add_mutually_exclusive_group()
    limits.add_argument("--limit", type=int)
    limits.add_argument("--first", type=int, help="jhars: the first N rows in file order")
    parser.add_argument("--judge")
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--split",
        default="dev",
        choices=("dev", "test"),
        help="summeval, hotpotqa, context_focus: test only once, at the end (cards come from dev)",
    )
    parser.add_argument("--floor-only", action="store_true", help="only the model-free floor: no judge, seconds")
    parser.add_argument("--evidence-sentences", type=int, default=0)
    parser.add_argument(
        "--batch-decode",
        type=int,
        default=1,
        help="wikiqa: also decode N calls together, and print how far that moves the scores from batch 1",
    )
    parser.add_argument(
        "--aspects",
        default=",".join(WIKIEVAL_METRICS),
        help=f"wikieval: which aspects (default: {','.join(WIKIEVAL_METRICS)})",
    )
    parser.add_argument(
        "--sentences",
        action="store_true",
        help="wikiqa: sentence relevance signals (judge mark, its P, overlap, cosine) and their combination",
    )
    parser.add_argument(
        "--metrics",
        default=",".join(WIKIQA_METRICS),
        help=f"wikiqa: which metrics (default: {','.join(WIKIQA_METRICS)})",
    )
    args = parser.parse_args()
    if args.dataset == "cards":
        cards(args.judge, args.out, args.limit)
    elif args.dataset == "jhars":
        jhars(args.limit, args.judge, args.out, args.floor_only, args.evidence_sentences, args.first)
    elif args.dataset == "uhgeval":
        uhgeval(args.limit, args.judge, args.out, args.floor_only, args.evidence_sentences)
    elif args.dataset == "summeval":
        summeval_coherence(args.judge, args.out, args.limit, args.split)
    elif args.dataset == "hotpotqa":
        hotpotqa_precision(args.judge, args.out, args.split)
        hotpotqa_recall(args.judge, args.out, args.split)
    elif args.dataset == "context_focus":
        context_focus(args.judge, args.out, args.split)
    elif args.dataset == "ragchecker":
        ragchecker(args.limit, args.judge, args.out, args.floor_only)
    elif args.dataset == "wikiqa" and args.sentences:
        wikiqa_sentences(args.limit, args.judge, args.out)
    elif args.dataset == "wikiqa":
        wikiqa(args.limit, args.judge, args.out, args.floor_only, args.metrics.split(","), args.batch_decode)
    else:
        aspects = [a.strip() for a in args.aspects.split(",") if a.strip()]
        if unknown := set(aspects) - set(WIKIEVAL_METRICS):
            parser.error(f"unknown aspects: {', '.join(sorted(unknown))}")
        wikieval(args.judge, args.out, args.floor_only, aspects)


if __name__ == "__main__":
    main()
