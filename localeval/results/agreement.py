"""Fitting a calibration on labelled rows: which statements each human label speaks about, the fit, and how
well the result agrees with people beside the judge alone and the model-free floor.

Labels come at three levels: a whole response (`faithful`), its sentences (`sentence_labels`), or
keywords in it (`keyword_labels`). Each label covers a group of statements: all of the response's,
those made from the sentence, or those that contain the keyword. The group is faithful when every
statement in it is supported, so P(group) is the product of its statements' P (noisy-OR), and the
weights maximise the likelihood of the labels under that model, each weight kept to the sign its
signal can only have (calibration.SIGNS). Agreement is measured by cross-validation, so no row is
scored by weights fitted on it; rows that share a question and contexts share a fold.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from localeval.data.text import normalize
from localeval.errors import DatasetError
from localeval.grounding.calibration import (
    FEATURES,
    FORMS,
    SIGNS,
    Calibration,
    Factor,
    Signals,
)
from localeval.grounding.coverage import coverage, lowest_coverage, units
from localeval.results.bootstrap import Figure, auroc_intervals

LEVELS = ("response", "sentence", "keyword")
COMBINED_FORMS = ("additive", "both")
# Sentence labels as the JHARS files spell them; anything else is a verdict of `faithful` true/false.
_SUPPORTED_TYPES = {"No_hallucination": True, "Unverifiable": False, "Contradictory": False}


@dataclass(frozen=True)
class LabelledRow:
    """One labelled row: what faithfulness needs, and the human labels as (text, faithful) at one level."""

    id: str
    user_input: str
    response: str
    retrieved_contexts: list[str]
    level: str
    labels: list[tuple[str, bool]]  # (sentence or keyword; "" for the response itself, faithful)

    def response_faithful(self) -> bool | None:
        """The verdict on the whole response where the labels give one: every sentence labelled, or a response label."""
        if self.level == "response" or (self.level == "sentence" and self.labels):
            return all(faithful for _, faithful in self.labels)
        return None


def read_labelled(path: Path) -> list[LabelledRow]:
    """Rows of a JSONL file; labels at the top level or under `label`."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise DatasetError(f"Cannot read {path}: {error.strerror or error}") from None
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            rows.append(labelled_row(data, number))
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            raise DatasetError(f"{path}, line {number}: {error}") from None
    if not rows:
        raise DatasetError(f"{path} has no labelled rows.")
    levels = {row.level for row in rows}
    if len(levels) > 1:
        raise DatasetError(f"{path} mixes label levels ({', '.join(sorted(levels))}); use one level per file.")
    return rows


def labelled_row(data: dict[str, Any], number: int = 0) -> LabelledRow:
    """A row with its labels at the top level or under `label`; raises ValueError/KeyError/TypeError when malformed."""
    given = data.get("label")
    label: dict[str, Any] = given if isinstance(given, dict) else data
    contexts = data["retrieved_contexts"]
    if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
        raise ValueError("retrieved_contexts must be a list of strings")
    if not isinstance(data["response"], str):
        raise ValueError("response must be a string")
    labels: list[tuple[str, bool]]
    if label.get("keyword_labels"):
        level, labels = "keyword", [(k["keyword"], bool(k["reasonable"])) for k in label["keyword_labels"]]
    elif label.get("sentence_labels"):
        verdicts = [(s["sentence"], _sentence_verdict(s)) for s in label["sentence_labels"]]
        level, labels = "sentence", [(sentence, verdict) for sentence, verdict in verdicts if verdict is not None]
    elif isinstance(label.get("faithful"), bool):
        level, labels = "response", [("", label["faithful"])]
    else:
        raise ValueError("no label: give `faithful` (true/false), `sentence_labels` or `keyword_labels`")
    return LabelledRow(
        str(data.get("id", number)), data.get("user_input") or "", data["response"], contexts, level, labels
    )


def _sentence_verdict(label: dict[str, Any]) -> bool | None:
    if isinstance(label.get("faithful"), bool):
        return label["faithful"]
    return _SUPPORTED_TYPES.get(label.get("type", ""))  # DISPUTED and uncertain sentences give no label


def label_groups(row: LabelledRow, statements: Sequence[dict[str, Any]]) -> list[tuple[list[int], bool, str]]:
    """For each label, the statements it covers, its verdict and its text; labels that cover no statement are left
    out."""
    groups = []
    for text, faithful in row.labels:
        if row.level == "response":
            members = list(range(len(statements)))
        elif row.level == "sentence":
            members = [i for i, s in enumerate(statements) if normalize(s["sentence"]) == normalize(text)]
        else:
            keyword = normalize(text)
            members = [i for i, s in enumerate(statements) if keyword and keyword in normalize(s["statement"])]
        if members:
            groups.append((members, faithful, text))
    return groups


def statement_features(statement: dict[str, Any]) -> dict[str, float]:
    """The calibration features of one row of faithfulness's evidence."""
    return Signals(
        statement["judge_p"],
        statement["coverage"],
        statement["evidence_coverage"],
        statement["sentence_coverage"],
        len(statement["uncovered_numbers"]),
    ).features()


def fit_factors(
    features: Sequence[Sequence[dict[str, float]]],
    groups: Sequence[tuple[Sequence[int], bool]],
    form: str = "additive",
    l2: float = 1.0,
    names: Sequence[str] = FEATURES,
) -> tuple[Factor, ...]:
    """The form's factors maximising the L2-penalised likelihood of the groups' labels under the noisy-OR model.

    `features[g]` are group g's statements, `groups[g][1]` its label; `names` restricts the features used.
    Each weight keeps the sign of SIGNS (a bound in L-BFGS-B); biases are free and not penalised.
    """
    from scipy.optimize import minimize

    layouts = [kept for layout in FORMS[form] if (kept := tuple(name for name in layout if name in names))]
    entries = [(g, f) for g, fs in enumerate(features) for f in fs]
    group_of = np.array([g for g, _ in entries], dtype=np.int64)
    faithful = np.array([label for _, label in groups], dtype=bool)
    blocks = [
        np.array([[f[name] for name in layout] + [1.0] for _, f in entries], dtype=np.float64) for layout in layouts
    ]
    slices, start = [], 0
    for layout in layouts:
        slices.append(slice(start, start + len(layout) + 1))
        start += len(layout) + 1
    penalty = np.concatenate([[l2] * len(layout) + [0.0] for layout in layouts])

    def negative_objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = [np.clip(x @ theta[s], -40.0, 40.0) for x, s in zip(blocks, slices)]
        log_p = sum(-np.logaddexp(0.0, -zi) for zi in z)  # log P of each statement: the product of its factors
        log_all = np.bincount(group_of, weights=log_p, minlength=len(groups))
        all_p = np.exp(log_all)
        total = log_all[faithful].sum() + np.log(np.maximum(1.0 - all_p[~faithful], 1e-300)).sum()
        # d(group's log-likelihood)/d(log_all): 1 for a faithful group, -P/(1-P) for an unfaithful one
        weight = np.where(faithful, 1.0, -all_p / np.maximum(1.0 - all_p, 1e-12))[group_of]
        gradient = np.concatenate([x.T @ (weight / (1.0 + np.exp(zi))) for x, zi in zip(blocks, z)])
        total -= 0.5 * float(penalty @ theta**2)
        gradient -= penalty * theta
        return -float(total), -gradient

    bounds = []
    for layout in layouts:
        bounds += [(0.0, None) if SIGNS[name] > 0 else (None, 0.0) for name in layout] + [(None, None)]
    start_theta = np.zeros(len(penalty))
    if len(layouts) > 1:  # a product of factors that all start at 1/2 would start every statement at 1/4
        for s in slices:
            start_theta[s.stop - 1] = 2.0
    result = minimize(
        negative_objective, start_theta, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 1000}
    )
    theta = result.x
    factors = []
    for layout, s in zip(layouts, slices):
        values = theta[s]
        factors.append(Factor({name: float(w) for name, w in zip(layout, values[:-1])}, float(values[-1])))
    return tuple(factors)


@dataclass(frozen=True)
class Agreement:
    """How well each way of scoring ranks the labels: the judge alone, the model-free floor, each combined form
    (cross-validated). At the labels' own level (a label scores its weakest statement) and, where the labels
    give a verdict per response, at the response level (faithfulness, the mean of the response's P)."""

    level: str
    labels: int
    unfaithful: int
    by_label: dict[str, Figure]
    responses: int
    unfaithful_responses: int
    by_response: dict[str, Figure]
    below_half: dict[str, float]  # share of the unfaithful responses that each scorer's faithfulness puts below 0.5

    def as_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "labels": self.labels,
            "unfaithful": self.unfaithful,
            "auroc_by_label": {k: f.as_dict() for k, f in self.by_label.items()},
            "responses": self.responses,
            "unfaithful_responses": self.unfaithful_responses,
            # Labels with no verdict per response (keywords) leave these figures undefined: left out, not NaN.
            "auroc_by_response": {k: f.as_dict() for k, f in self.by_response.items() if not math.isnan(f.auroc)},
            "unfaithful_below_half": {k: round(v, 4) for k, v in self.below_half.items() if not math.isnan(v)},
        }


@dataclass(frozen=True)
class Fitted:
    calibration: Calibration  # what ships: the best combined form fitted on every row, or the judge's own P
    agreement: Agreement
    forms: dict[str, Calibration]  # every combined form, fitted on every row
    cross_validated: dict[str, list[list[float]]]  # form -> each statement's P from weights fitted without its row
    by_source: dict[str, Agreement]  # the same figures for each labelled file's rows alone


def calibrate(
    rows: Sequence[LabelledRow],
    per_row: Sequence[Sequence[dict[str, Any]]],
    name: str,
    fitted_on: str,
    folds: int = 5,
    units: Sequence[str] | None = None,
    seed: int = 0,
    sources: Sequence[str] | None = None,
) -> Fitted:
    """Fit every combined form on all rows, measure each by `folds`-fold cross-validation, and choose what ships.

    `per_row[i]` is faithfulness's evidence for row i: its statements with their signals. Rows that share a
    unit share a fold; by default a unit is a question with its contexts. A combined form ships only if its
    cross-validated AUROC at the labels' level is at least the better of the judge alone and the floor alone;
    otherwise the judge's own P does. `sources` names each row's labelled file, for figures per file.
    """
    features = [[statement_features(s) for s in statements] for statements in per_row]
    groups = [label_groups(row, statements) for row, statements in zip(rows, per_row)]
    units = list(units) if units is not None else [_unit(row) for row in rows]
    fold_of_unit = {unit: n % folds for n, unit in enumerate(dict.fromkeys(units))}
    fold_of = [fold_of_unit[unit] for unit in units]
    forms: dict[str, Calibration] = {}
    cv: dict[str, list[list[float]]] = {}
    for form in COMBINED_FORMS:
        cv[form] = [[math.nan] * len(statements) for statements in per_row]
        for fold in range(folds):
            factors = _fit_rows([i for i in range(len(rows)) if fold_of[i] != fold], features, groups, form)
            model = Calibration(name, form, factors)
            for i in (i for i in range(len(rows)) if fold_of[i] == fold):
                cv[form][i] = [model.p_of(f) for f in features[i]]
        forms[form] = Calibration(name, form, _fit_rows(range(len(rows)), features, groups, form), fitted_on)
    scorers: dict[str, list[list[float]]] = {"judge": [[s["judge_p"] for s in st] for st in per_row], **cv}
    agreement = _agreement(rows, per_row, groups, scorers, units, seed, range(len(rows)))
    sources = list(sources) if sources is not None else [""] * len(rows)
    by_source = {
        source: _agreement(
            rows, per_row, groups, scorers, units, seed, [i for i in range(len(rows)) if sources[i] == source]
        )
        for source in dict.fromkeys(sources)
    }
    best = max(COMBINED_FORMS, key=lambda form: agreement.by_label[form].auroc)
    bar = max(agreement.by_label["judge"].auroc, agreement.by_label["floor"].auroc)
    ships = forms[best] if agreement.by_label[best].auroc >= bar else Calibration(name, "judge", (), fitted_on)
    recorded = {**agreement.as_dict(), "by_source": {source: a.as_dict() for source, a in by_source.items() if source}}
    return Fitted(
        Calibration(ships.name, ships.form, ships.factors, fitted_on, recorded),
        agreement,
        forms,
        cv,
        by_source,
    )


def _unit(row: LabelledRow) -> str:
    return json.dumps([row.user_input, row.retrieved_contexts], ensure_ascii=False)


def _fit_rows(
    indices: Sequence[int],
    features: Sequence[Sequence[dict[str, float]]],
    groups: Sequence[Sequence[tuple[list[int], bool, str]]],
    form: str,
) -> tuple[Factor, ...]:
    blocks, labels = [], []
    for i in indices:
        for members, faithful, _ in groups[i]:
            blocks.append([features[i][m] for m in members])
            labels.append((members, faithful))
    return fit_factors(blocks, labels, form)


def floor_of_label(row: LabelledRow, text: str) -> float:
    """The model-free floor for one label: the coverage of what it labels by the contexts (a response: its least
    covered sentence)."""
    if row.level == "response":
        return lowest_coverage(row.response, row.retrieved_contexts)
    return coverage(text, units("\n".join(row.retrieved_contexts)))


def _agreement(
    rows: Sequence[LabelledRow],
    per_row: Sequence[Sequence[dict[str, Any]]],
    groups: Sequence[Sequence[tuple[list[int], bool, str]]],
    scorers: dict[str, list[list[float]]],
    units: Sequence[str],
    seed: int,
    indices: Sequence[int],
) -> Agreement:
    label_unit, label_truth = [], []
    label_scores: dict[str, list[float]] = {name: [] for name in ("judge", "floor", *COMBINED_FORMS)}
    for i in indices:
        for members, faithful, text in groups[i]:
            label_unit.append(units[i])
            label_truth.append(faithful)
            label_scores["floor"].append(floor_of_label(rows[i], text))
            for name, values in scorers.items():
                label_scores[name].append(min(values[i][m] for m in members))
    judged = [i for i in indices if rows[i].response_faithful() is not None and per_row[i]]
    response_truth = [bool(rows[i].response_faithful()) for i in judged]
    response_scores = {"floor": [lowest_coverage(rows[i].response, rows[i].retrieved_contexts) for i in judged]}
    for name, values in scorers.items():
        response_scores[name] = [sum(values[i]) / len(values[i]) for i in judged]
    unfaithful = [n for n, faithful in enumerate(response_truth) if not faithful]
    below_half = {
        name: sum(values[n] < 0.5 for n in unfaithful) / len(unfaithful) if unfaithful else math.nan
        for name, values in response_scores.items()
        if name != "floor"
    }
    levels = {rows[i].level for i in indices}
    return Agreement(
        levels.pop() if len(levels) == 1 else "mixed",
        len(label_truth),
        label_truth.count(False),
        auroc_intervals(label_scores, label_truth, label_unit, seed=seed),
        len(response_truth),
        len(unfaithful),
        auroc_intervals(response_scores, response_truth, [units[i] for i in judged], seed=seed),
        below_half,
    )


def format_table(results: Sequence[tuple[str, str, Agreement, str]], by_response: bool = False) -> list[str]:
    """Markdown rows: per (labelled set, judge), the judge alone, the floor, each combined form, and what ships."""
    lines = [
        "| labelled set | judge | labels (unfaithful) | judge alone | floor (no model) | additive "
        "| both (either vetoes) | ships |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for label, judge, a, ships in results:
        figures, count, unfaithful = (
            (a.by_response, a.responses, a.unfaithful_responses)
            if by_response
            else (a.by_label, a.labels, a.unfaithful)
        )
        cells = " | ".join(str(figures[name]) for name in ("judge", "floor", *COMBINED_FORMS))
        lines.append(f"| {label} | {judge} | {count} ({unfaithful}) | {cells} | {ships} |")
    return lines
