"""P(supported) for a statement: a small logistic model over the judge's probability and code's grounding signals.

A calibration is a handful of named weights, kept per language in a JSON file that also records
what it was fitted on. Without one, P is the judge's own probability (JUDGE_ONLY, no weights).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from localeval.errors import ConfigError

FEATURES = ("judge_logit", "coverage", "evidence_coverage", "sentence_coverage", "uncovered_number")
_LOGIT_LIMIT = 8.0  # a judge's P of exactly 0 or 1 must not become an infinite feature


@dataclass(frozen=True)
class Signals:
    """What is known about one statement's support: the judge's P(1) and what code measured."""

    judge_p: float
    coverage: float  # share of the statement's units anywhere in the contexts
    evidence_coverage: float  # share covered by the evidence sentences alone
    sentence_coverage: float  # share of the original sentence the statement came from (no judge rewording)
    uncovered_numbers: int  # numbers in the statement found nowhere in the contexts

    def features(self) -> dict[str, float]:
        p = min(max(self.judge_p, 1e-6), 1 - 1e-6)
        return {"judge_logit": max(-_LOGIT_LIMIT, min(_LOGIT_LIMIT, math.log(p / (1 - p)))),
                "coverage": self.coverage, "evidence_coverage": self.evidence_coverage,
                "sentence_coverage": self.sentence_coverage, "uncovered_number": float(self.uncovered_numbers > 0)}


@dataclass(frozen=True)
class Calibration:
    name: str
    weights: dict[str, float]
    bias: float = 0.0
    fitted_on: str = ""  # which labelled rows, for the manifest and for whoever reads the file
    agreement: dict[str, Any] = field(default_factory=dict)  # figures reached on those rows

    def __post_init__(self) -> None:
        if unknown := set(self.weights) - set(FEATURES):
            raise ConfigError(f"Calibration {self.name!r} has unknown features: {', '.join(sorted(unknown))} "
                              f"(known: {', '.join(FEATURES)}).")

    def p_supported(self, signals: Signals) -> float:
        """The logistic model's P; a calibration without weights passes the judge's own probability through."""
        if not self.weights:
            return signals.judge_p
        features = signals.features()
        z = self.bias + sum(weight * features[name] for name, weight in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Calibration:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(name=str(data["name"]), weights={k: float(v) for k, v in data["weights"].items()},
                       bias=float(data.get("bias", 0.0)), fitted_on=str(data.get("fitted_on", "")),
                       agreement=dict(data.get("agreement", {})))
        except OSError as error:
            raise ConfigError(f"Cannot read calibration {path}: {error.strerror or error}") from None
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise ConfigError(f"{path} is not a localeval calibration file "
                              f"({type(error).__name__}: {error}).") from None


JUDGE_ONLY = Calibration("judge probability (uncalibrated)", {})
SHIPPED = Path(__file__).resolve().parent / "calibrations"  # <lang>.json, fitted on ../shared/metaeval's dev files


def shipped_calibration(lang: str) -> Calibration:
    """The packaged calibration for `lang`; the judge's own probability where none has been fitted."""
    path = SHIPPED / f"{lang}.json"
    return Calibration.load(path) if path.is_file() else JUDGE_ONLY


def fit_logistic(rows: Sequence[dict[str, float]], labels: Sequence[bool], features: Sequence[str] = FEATURES,
                 l2: float = 1.0, iterations: int = 50) -> tuple[dict[str, float], float]:
    """Weights and bias maximising the L2-penalised log-likelihood (Newton's method; the bias is not penalised)."""
    x = np.array([[row[name] for name in features] + [1.0] for row in rows], dtype=np.float64)
    y = np.array(labels, dtype=np.float64)
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -40, 40)))
        gradient = x.T @ (p - y) + penalty * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty) + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return {name: float(value) for name, value in zip(features, w[:-1])}, float(w[-1])
