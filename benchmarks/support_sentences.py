"""statement_support on labelled sentences: how well the judge's P tells supported from unsupported text.

    .venv/bin/python benchmarks/support_sentences.py [--reason-first] [--limit N] [--out FILE.json]
    .venv/bin/python benchmarks/support_sentences.py --compare BEFORE.json AFTER.json

Each labelled sentence of ../shared/metaeval is one statement_support call against its row's contexts,
with no statement extraction in between, so only the support step is measured:
- JHARS (ja): every labelled sentence of the 16 unfaithful dev rows, hallucinated or not;
- UHGEval (zh): the response sentences of the first dev rows that hold a labelled keyword, until 70;
  a keyword scores the P of its sentence (keyword AUROC, as metaeval.py uhgeval);
- WikiEval (en): each sentence of the grounded and the ungrounded answer of the 4 faithfulness pairs.

It prints the AUROC of the judge's own P and of its 0/1 verdict, the AUROC of P after the shipped
calibration of the language (with code's grounding signals, the statement being the sentence itself),
the model-free floor, and seconds and generated tokens per call.

--reason-first runs the answer format shipped before: a one-sentence reason, then the verdict
(benchmarks/data/reason_first holds those prompt files), so both formats are measured on the same calls.
--compare takes two --out files of such runs and prints each AUROC's change with a 95% bootstrap interval,
resampling rows (a JHARS response, a UHGEval article, a WikiEval answer), since a row's sentences are not
independent.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import time
from collections.abc import Iterator
from pathlib import Path

from localeval.data.text import split_sentences
from localeval.grounding.calibration import Calibration
from localeval.grounding.coverage import Passages, coverage, find_evidence
from localeval.judge.gguf import GGUFJudge
from localeval.judge.protocol import JudgeConfig
from localeval.metrics.claims import Claim, support_of
from localeval.metrics.scoring import auroc
from localeval.models import resolve_judge
from localeval.run.judges import judge_identity
from localeval.run.planning import calibrations_for
from localeval.run.step_executor import StepExecutor
from localeval.steps import STEPS, Call
from localeval.steps.prompts import PromptLibrary
from localeval.steps.verdicts import SupportVerdict, Verdict

METAEVAL = Path(__file__).resolve().parents[2] / "shared" / "metaeval"
REASON_FIRST_PROMPTS = Path(__file__).resolve().parent / "data" / "reason_first"
UHGEVAL_SENTENCES = 70
RESAMPLES = 2000


@dataclasses.dataclass(frozen=True)
class Item:
    dataset: str
    row: dict
    lang: str
    statement: str
    supported: bool  # the human label
    unit: str  # the row, or for WikiEval the answer, that the bootstrap resamples


@dataclasses.dataclass
class Scored:
    """One figure's scores with their labels and resampling units, in call order."""

    scores: list[float] = dataclasses.field(default_factory=list)
    labels: list[bool] = dataclasses.field(default_factory=list)
    units: list[str] = dataclasses.field(default_factory=list)

    def add(self, score: float, label: bool, unit: str) -> None:
        self.scores.append(score)
        self.labels.append(label)
        self.units.append(unit)


def rows(name: str) -> Iterator[dict]:
    with (METAEVAL / name).open(encoding="utf-8") as file:
        yield from (json.loads(line) for line in file)


def items() -> list[Item]:
    chosen = [
        Item("jhars", row, "ja", label["sentence"], label["type"] == "No_hallucination", row["id"])
        for row in rows("jhars_dev.jsonl")
        if not row["label"]["faithful"]
        for label in row["label"]["sentence_labels"]
    ]
    uhgeval: list[Item] = []
    for row in rows("uhgeval_dev.jsonl"):
        labels = row["label"]["keyword_labels"]
        bad = [k["keyword"] for k in labels if not k["reasonable"]]
        uhgeval += [
            Item("uhgeval", row, "zh", sentence, not any(k in sentence for k in bad), row["id"])
            for sentence in split_sentences(row["response"])
            if any(k["keyword"] in sentence for k in labels)
        ]
        if len(uhgeval) >= UHGEVAL_SENTENCES:
            break
    wikieval = [
        Item("wikieval", row, "en", sentence, side == "a", f"{row['id']}:{side}")
        for row in rows("wikieval_dev.jsonl")
        if row["label"]["aspect"] == "faithfulness"
        for side in ("a", "b")
        for sentence in split_sentences(row[f"response_{side}"])
    ]
    return chosen + uhgeval + wikieval


def calibrated(item: Item, judge_p: float, calibration: Calibration) -> tuple[float, float]:
    """(P as faithfulness computes it with the language's calibration, the statement being its own sentence; the
    floor: the share of the sentence the contexts cover)."""
    passages = Passages(item.row["retrieved_contexts"])
    evidence = find_evidence(item.statement, passages, 3)
    verdict = SupportVerdict(verdict=int(judge_p >= 0.5), probability=judge_p)
    support = support_of(Claim(item.statement, item.statement), verdict, evidence, passages, calibration)
    return support.p, evidence.context_coverage


def figures(results: list[dict], chosen: list[Item]) -> dict[str, Scored]:
    """Every printed AUROC's scores: per sentence for JHARS and WikiEval, per keyword for UHGEval."""
    out: dict[str, Scored] = {}
    # What the default judge's runs use: its shipped calibration where one matches, else its own P.
    calibrations = calibrations_for(
        PromptLibrary(), ("en", "ja", "zh"), judge_identity(resolve_judge(None), JudgeConfig())
    ).calibrations()
    for result, item in zip(results, chosen):
        if result["p"] is None:
            continue
        p, floor = calibrated(item, result["p"], calibrations[item.lang])
        values = {"judge P": result["p"], "verdict": result["verdict"], "calibrated": p, "floor": floor}
        if item.dataset == "uhgeval":
            passages = Passages(item.row["retrieved_contexts"])
            for label in item.row["label"]["keyword_labels"]:
                if label["keyword"] in item.statement:
                    values["floor"] = coverage(label["keyword"], passages)
                    for name, value in values.items():
                        out.setdefault(f"uhgeval {name}", Scored()).add(value, label["reasonable"], item.unit)
        else:
            for name, value in values.items():
                out.setdefault(f"{item.dataset} {name}", Scored()).add(value, item.supported, item.unit)
    return out


def report(results: list[dict], chosen: list[Item]) -> None:
    failed = sum(r["p"] is None for r in results)
    print(
        f"{len(results)} calls, {sum(r['seconds'] for r in results) / len(results):.2f} s and "
        f"{sum(r['generated'] for r in results) / len(results):.1f} generated tokens a call, {failed} failed"
    )
    for name, scored in figures(results, chosen).items():
        level = "keyword" if name.startswith("uhgeval") else "sentence"
        print(
            f"  {name:<20} {level} AUROC {auroc(scored.scores, scored.labels):.3f} on {len(scored.labels)} "
            f"({scored.labels.count(False)} unsupported)"
        )
    answers: dict[str, list[float]] = {}
    for result, item in zip(results, chosen):
        if item.dataset == "wikieval" and result["p"] is not None:
            answers.setdefault(item.unit, []).append(result["p"])
    pairs = sorted({unit.rsplit(":", 1)[0] for unit in answers})
    wins = sum(_mean(answers[f"{pair}:a"]) > _mean(answers[f"{pair}:b"]) for pair in pairs if f"{pair}:b" in answers)
    print(f"  wikieval: the grounded answer's mean P is higher on {wins} of {len(pairs)} pairs")


def compare(before: list[dict], after: list[dict], chosen: list[Item]) -> None:
    """Each AUROC's change from `before` to `after`, with a 95% interval from resampling units (paired)."""
    old, new = figures(before, chosen), figures(after, chosen)
    rng = random.Random(0)
    for name in sorted(old.keys() & new.keys()):
        if name.endswith("floor"):
            continue  # no judge in it
        a, b = old[name], new[name]
        if a.units != b.units:
            print(f"  {name}: the runs failed on different calls; not compared")
            continue
        by_unit: dict[str, list[int]] = {}
        for index, unit in enumerate(a.units):
            by_unit.setdefault(unit, []).append(index)
        units = list(by_unit)

        def change(indices: list[int]) -> float:
            labels = [a.labels[i] for i in indices]
            return auroc([b.scores[i] for i in indices], labels) - auroc([a.scores[i] for i in indices], labels)

        draws = sorted(
            d
            for d in (
                change([i for u in rng.choices(units, k=len(units)) for i in by_unit[u]]) for _ in range(RESAMPLES)
            )
            if d == d
        )
        print(
            f"  {name:<20} {auroc(a.scores, a.labels):.3f} -> {auroc(b.scores, b.labels):.3f} "
            f"({change(list(range(len(a.units)))):+.3f}, 95% interval {draws[int(0.025 * len(draws))]:+.3f} to "
            f"{draws[int(0.975 * len(draws)) - 1]:+.3f} over {len(units)} rows)"
        )


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def judge_all(chosen: list[Item], reason_first: bool) -> list[dict]:
    prompts = PromptLibrary()
    if reason_first:
        STEPS["statement_support"] = dataclasses.replace(STEPS["statement_support"], output=Verdict, max_tokens=160)
        prompts = PromptLibrary(REASON_FIRST_PROMPTS)
    config = JudgeConfig(n_ctx=8192)
    resolved = resolve_judge(None)
    executor = StepExecutor(GGUFJudge(resolved.path, config), str(resolved.path), prompts, config)
    print(
        f"{len(chosen)} sentences, judge {resolved.path.name}, "
        f"{'reason first' if reason_first else 'verdict alone (shipped)'}",
        flush=True,
    )
    results, started = [], time.perf_counter()
    for item in chosen:
        outcome = executor.run(
            Call.of(
                "statement_support", retrieved_contexts=list(item.row["retrieved_contexts"]), statement=item.statement
            ),
            item.lang,
        )
        results.append(
            {
                "id": item.row["id"],
                "statement": item.statement,
                "supported": item.supported,
                "p": outcome.output.p if outcome.output else None,
                "verdict": outcome.output.verdict if outcome.output else None,
                "seconds": outcome.usage.seconds,
                "generated": outcome.usage.completion_tokens,
            }
        )
    print(f"judged in {time.perf_counter() - started:.0f} s")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--reason-first", action="store_true", help="the answer format shipped before: a reason, then the verdict"
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N calls")
    parser.add_argument("--out", type=Path, default=None, help="write each call's P, verdict and cost here")
    parser.add_argument(
        "--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"), help="compare two --out files instead of judging"
    )
    args = parser.parse_args()
    chosen = items()[: args.limit]
    if args.compare:
        before, after = (json.loads(path.read_text(encoding="utf-8")) for path in args.compare)
        compare(before, after, chosen[: min(len(before), len(after))])
        return
    results = judge_all(chosen, args.reason_first)
    if args.out:
        args.out.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    report(results, chosen)


if __name__ == "__main__":
    main()
