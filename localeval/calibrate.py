"""Fitting a calibration on labelled rows: which statements each human label speaks about, and the fit.

Labels come at three levels: a whole response (`faithful`), its sentences (`sentence_labels`), or
keywords in it (`keyword_labels`). Each label covers a group of statements: all of the response's,
those made from the sentence, or those that contain the keyword. The group is faithful when every
statement in it is supported, so P(group) is the product of its statements' P (noisy-OR), and the
weights maximise the likelihood of the labels under that model. A group of one statement is plain
logistic regression. Agreement is measured by cross-validation, so no row is scored by weights
fitted on it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from localeval.calibration import FEATURES, Calibration, Signals
from localeval.errors import DatasetError
from localeval.metrics.scoring import auroc
from localeval.text import normalize

LEVELS = ("response", "sentence", "keyword")
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


def read_labelled(path: Path) -> list[LabelledRow]:
    """Rows of a JSONL file; labels at the top level or under `label`, as in the ../shared/metaeval files."""
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


def labelled_row(data: dict, number: int = 0) -> LabelledRow:
    """A row with its labels at the top level or under `label`; raises ValueError/KeyError/TypeError when malformed."""
    label = data.get("label") if isinstance(data.get("label"), dict) else data
    contexts = data["retrieved_contexts"]
    if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
        raise ValueError("retrieved_contexts must be a list of strings")
    if not isinstance(data["response"], str):
        raise ValueError("response must be a string")
    if label.get("keyword_labels"):
        level, labels = "keyword", [(k["keyword"], bool(k["reasonable"])) for k in label["keyword_labels"]]
    elif label.get("sentence_labels"):
        level, labels = "sentence", [(s["sentence"], _sentence_verdict(s)) for s in label["sentence_labels"]]
        labels = [(sentence, verdict) for sentence, verdict in labels if verdict is not None]
    elif isinstance(label.get("faithful"), bool):
        level, labels = "response", [("", label["faithful"])]
    else:
        raise ValueError("no label: give `faithful` (true/false), `sentence_labels` or `keyword_labels`")
    return LabelledRow(str(data.get("id", number)), data.get("user_input") or "", data["response"], contexts,
                       level, labels)


def _sentence_verdict(label: dict) -> bool | None:
    if isinstance(label.get("faithful"), bool):
        return label["faithful"]
    return _SUPPORTED_TYPES.get(label.get("type"))  # DISPUTED and uncertain sentences give no label


def label_groups(row: LabelledRow, statements: Sequence[dict]) -> list[tuple[list[int], bool]]:
    """For each label, the statements it covers; labels that cover no statement are left out."""
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
            groups.append((members, faithful))
    return groups


def statement_features(statement: dict) -> dict[str, float]:
    """The calibration features of one row of faithfulness's evidence."""
    return Signals(statement["judge_p"], statement["coverage"], statement["evidence_coverage"],
                   statement["sentence_coverage"], len(statement["uncovered_numbers"])).features()


def fit_groups(features: Sequence[Sequence[dict[str, float]]], groups: Sequence[tuple[Sequence[int], bool]],
               names: Sequence[str] = FEATURES, l2: float = 1.0,
               iterations: int = 300) -> tuple[dict[str, float], float]:
    """Noisy-OR logistic fit: `features[g]` are group g's statements, `groups[g][1]` its label (gradient ascent)."""
    blocks = [np.array([[f[name] for name in names] + [1.0] for f in fs], dtype=np.float64) for fs in features]
    labels = [faithful for _, faithful in groups]
    penalty = np.array([l2] * len(names) + [0.0])

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        total, gradient = -0.5 * float(penalty @ theta**2), -penalty * theta
        for x, faithful in zip(blocks, labels):
            z = np.clip(x @ theta, -40.0, 40.0)
            log_all = float(-np.logaddexp(0.0, -z).sum())  # log of the product of the statements' P
            d_log_all = ((1.0 - 1.0 / (1.0 + np.exp(-z)))[:, None] * x).sum(axis=0)
            if faithful:
                total, gradient = total + log_all, gradient + d_log_all
            else:
                all_p = math.exp(log_all)
                total += math.log(max(1.0 - all_p, 1e-300))
                gradient -= all_p / max(1.0 - all_p, 1e-12) * d_log_all
        return total, gradient

    theta = np.zeros(len(names) + 1)
    value, gradient = objective(theta)
    step = 1.0
    for _ in range(iterations):
        while step > 1e-10:
            candidate = theta + step * gradient / max(1.0, float(np.linalg.norm(gradient)))
            candidate_value, candidate_gradient = objective(candidate)
            if candidate_value > value:
                theta, value, gradient = candidate, candidate_value, candidate_gradient
                step *= 2.0
                break
            step /= 2.0
        else:
            break
    return {name: float(w) for name, w in zip(names, theta[:-1])}, float(theta[-1])


@dataclass(frozen=True)
class Agreement:
    """AUROC at the labels' level: the judge alone, the fitted combination (cross-validated), and the
    statements' coverage by the contexts alone (no judge verdict, a floor)."""

    level: str
    labels: int
    unfaithful: int
    judge: float
    combined: float
    coverage: float

    def as_dict(self) -> dict[str, Any]:
        return {"level": self.level, "labels": self.labels, "unfaithful": self.unfaithful,
                "auroc_judge_alone": round(self.judge, 4), "auroc_combined_cross_validated": round(self.combined, 4),
                "auroc_coverage_alone": round(self.coverage, 4)}


@dataclass(frozen=True)
class Fitted:
    calibration: Calibration  # fitted on every row
    agreement: Agreement
    cross_validated: list[list[float]]  # each statement's P from weights fitted without its row


def calibrate(rows: Sequence[LabelledRow], per_row: Sequence[Sequence[dict]], name: str, fitted_on: str,
              folds: int = 5, units: Sequence[str] | None = None) -> Fitted:
    """Fit on every row, and measure agreement by `folds`-fold cross-validation.

    `per_row[i]` is faithfulness's evidence for row i: its statements with their signals. Rows that
    share a unit (say, answers to one question over the same passage) share a fold; by default
    every row is its own unit.
    """
    features = [[statement_features(s) for s in statements] for statements in per_row]
    groups = [label_groups(row, statements) for row, statements in zip(rows, per_row)]
    units = list(units) if units is not None else [str(i) for i in range(len(rows))]
    fold_of_unit = {unit: n % folds for n, unit in enumerate(dict.fromkeys(units))}
    fold_of = [fold_of_unit[unit] for unit in units]
    cv_p: list[list[float]] = [[math.nan] * len(statements) for statements in per_row]
    for fold in range(folds):
        weights, bias = _fit_rows([i for i in range(len(rows)) if fold_of[i] != fold], features, groups)
        for i in (i for i in range(len(rows)) if fold_of[i] == fold):
            cv_p[i] = [_logistic(bias + sum(weights[k] * f[k] for k in weights)) for f in features[i]]
    weights, bias = _fit_rows(range(len(rows)), features, groups)

    def group_scores(values: Sequence[Sequence[float]]) -> tuple[list[float], list[bool]]:
        pairs = [(min(values[i][m] for m in members), faithful)
                 for i in range(len(rows)) for members, faithful in groups[i]]
        return [p for p, _ in pairs], [f for _, f in pairs]

    judged, truth = group_scores([[s["judge_p"] for s in statements] for statements in per_row])
    combined, _ = group_scores(cv_p)
    covered, _ = group_scores([[s["coverage"] for s in statements] for statements in per_row])
    agreement = Agreement(rows[0].level if rows else "response", len(truth), sum(not t for t in truth),
                          auroc(judged, truth), auroc(combined, truth), auroc(covered, truth))
    return Fitted(Calibration(name, weights, bias, fitted_on, agreement.as_dict()), agreement, cv_p)


def _fit_rows(indices: Sequence[int], features: Sequence[Sequence[dict[str, float]]],
              groups: Sequence[Sequence[tuple[list[int], bool]]]) -> tuple[dict[str, float], float]:
    blocks, labels = [], []
    for i in indices:
        for members, faithful in groups[i]:
            blocks.append([features[i][m] for m in members])
            labels.append((members, faithful))
    return fit_groups(blocks, labels)


def _logistic(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))
