"""P(supported) for a statement: the judge's probability, combined with code's grounding signals by a
calibration that belongs to one judge.

A calibration file records the judge it was fitted with (its GGUF's sha256 and its chat template's
sha256), the evidence setting, and per language the statement_support prompt it was fitted with and
the model it learned. Weights learned on one judge's P say nothing about another judge's, so a run
applies a file only where all of these match (see `choose_calibrations`); anywhere else, P is the
judge's own probability.

A language's model is a product of logistic factors. "additive" is one factor over every signal;
"both" multiplies the judge's calibrated P by the grounding's, so either can veto: a confident "no"
from the judge, or words the contexts do not hold, keeps P low whatever the other says.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.errors import ConfigError

FEATURES = ("judge_logit", "coverage", "evidence_coverage", "sentence_coverage", "uncovered_number")
GROUNDING = FEATURES[1:]
# The direction each signal can only push P in: more words covered never makes a statement less supported.
SIGNS = {"judge_logit": 1, "coverage": 1, "evidence_coverage": 1, "sentence_coverage": 1, "uncovered_number": -1}
# Each form's factors, as the features each one reads.
FORMS: dict[str, tuple[tuple[str, ...], ...]] = {
    "judge": (),
    "additive": (FEATURES,),
    "both": (("judge_logit",), GROUNDING),
}
FORMAT = "localeval-calibration/2"
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
        return {
            "judge_logit": max(-_LOGIT_LIMIT, min(_LOGIT_LIMIT, math.log(p / (1 - p)))),
            "coverage": self.coverage,
            "evidence_coverage": self.evidence_coverage,
            "sentence_coverage": self.sentence_coverage,
            "uncovered_number": float(self.uncovered_numbers > 0),
        }


@dataclass(frozen=True)
class Factor:
    """One logistic term of a calibration: sigmoid(bias + sum of weight * feature)."""

    weights: dict[str, float]
    bias: float = 0.0

    def p(self, features: Mapping[str, float]) -> float:
        return logistic(self.bias + sum(weight * features[name] for name, weight in self.weights.items()))


@dataclass(frozen=True)
class Calibration:
    """How one language's statements get P(supported); form "judge" (no factors) passes the judge's P through."""

    name: str
    form: str = "judge"
    factors: tuple[Factor, ...] = ()
    fitted_on: str = ""  # which labelled rows, for the manifest and for whoever reads the file
    agreement: dict[str, Any] = field(default_factory=dict)  # figures reached on those rows

    def __post_init__(self) -> None:
        if self.form not in FORMS:
            raise ConfigError(
                f"Calibration {self.name!r} has an unknown form {self.form!r} (known: {', '.join(FORMS)})."
            )
        for factor in self.factors:
            if unknown := set(factor.weights) - set(FEATURES):
                raise ConfigError(
                    f"Calibration {self.name!r} has unknown features: {', '.join(sorted(unknown))} "
                    f"(known: {', '.join(FEATURES)})."
                )

    def p_supported(self, signals: Signals) -> float:
        return self.p_of(signals.features()) if self.factors else signals.judge_p

    def p_of(self, features: Mapping[str, float]) -> float:
        """The product of the factors on a statement's features (Signals.features)."""
        return math.prod(factor.p(features) for factor in self.factors)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "form": self.form,
            "factors": [{"weights": f.weights, "bias": f.bias} for f in self.factors],
            "fitted_on": self.fitted_on,
            "agreement": self.agreement,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        factors = tuple(
            Factor({k: float(v) for k, v in f["weights"].items()}, float(f.get("bias", 0.0)))
            for f in data.get("factors", ())
        )
        return cls(
            str(data["name"]),
            str(data.get("form", "additive" if factors else "judge")),
            factors,
            str(data.get("fitted_on", "")),
            dict(data.get("agreement", {})),
        )


JUDGE_ONLY = Calibration("judge probability (uncalibrated)")


@dataclass(frozen=True)
class JudgeIdentity:
    """What a judge's P depends on: the weights and the chat template that wraps every prompt."""

    name: str  # a registry name, a file name or a server's model id: for messages only
    sha256: str
    chat_template_sha256: str

    def same_judge(self, other: JudgeIdentity) -> bool:
        return self.sha256 == other.sha256 and self.chat_template_sha256 == other.chat_template_sha256

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "sha256": self.sha256, "chat_template_sha256": self.chat_template_sha256}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeIdentity:
        return cls(str(data.get("name", "")), str(data["sha256"]), str(data["chat_template_sha256"]))


@dataclass(frozen=True)
class CalibrationFile:
    """One judge's calibrations, per language, with the statement_support prompt each was fitted with.

    UNCALIBRATED (no judge, no languages) makes a run use the judge's own P everywhere, without a notice.
    """

    judge: JudgeIdentity | None
    evidence_sentences: int
    languages: dict[str, Calibration]
    support_prompts: dict[str, str]  # lang -> sha256 of the statement_support prompt file
    path: Path | None = None

    def save(self, path: Path) -> None:
        if self.judge is None:
            raise ValueError("UNCALIBRATED is not a file")
        data = {
            "format": FORMAT,
            "judge": self.judge.as_dict(),
            "evidence_sentences": self.evidence_sentences,
            "languages": {
                lang: {"support_prompt_sha256": self.support_prompts[lang], **c.as_dict()}
                for lang, c in sorted(self.languages.items())
            },
        }
        path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> CalibrationFile:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise ConfigError(f"Cannot read calibration {path}: {error.strerror or error}") from None
        except ValueError as error:
            raise ConfigError(f"{path} is not a localeval calibration file (not JSON: {error}).") from None
        if isinstance(data, dict) and "weights" in data and "judge" not in data:
            raise ConfigError(
                f"{path} is a calibration file of an older localeval, which did not record the judge "
                "it was fitted with. Fit it again with `localeval calibrate LABELLED.jsonl --judge "
                "JUDGE --out DIR` (a rerun into the same results folder reuses its judge calls)."
            )
        try:
            languages = data["languages"]
            return cls(
                JudgeIdentity.from_dict(data["judge"]),
                int(data.get("evidence_sentences", 0)),
                {lang: Calibration.from_dict(entry) for lang, entry in languages.items()},
                {lang: str(entry["support_prompt_sha256"]) for lang, entry in languages.items()},
                path,
            )
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise ConfigError(
                f"{path} is not a localeval calibration file ({type(error).__name__}: {error})."
            ) from None


UNCALIBRATED = CalibrationFile(None, 0, {}, {})
SHIPPED = Path(__file__).resolve().parent / "calibrations"  # one file per registry judge, fitted on dev data


def shipped_files(folder: Path = SHIPPED) -> list[CalibrationFile]:
    return [CalibrationFile.load(path) for path in sorted(folder.glob("*.json"))]


@dataclass(frozen=True)
class LanguageCalibration:
    """The calibration a run uses in one language, and why: what the manifest records."""

    calibration: Calibration
    source: str | None  # the file it came from; None: the judge's own P, nothing fitted matched
    why: str

    def manifest(self) -> dict[str, Any]:
        c = self.calibration
        return {
            "name": c.name,
            "form": c.form,
            "file": self.source,
            "why": self.why,
            "fitted_on": c.fitted_on,
            "factors": [{"weights": f.weights, "bias": f.bias} for f in c.factors],
        }


@dataclass(frozen=True)
class CalibrationChoice:
    """Each language's calibration for one run, the warnings a forced file earns, and a notice where none fits."""

    languages: dict[str, LanguageCalibration]
    warnings: list[str]
    notice: str | None

    def calibrations(self) -> dict[str, Calibration]:
        return {lang: chosen.calibration for lang, chosen in self.languages.items()}


def choose_calibrations(
    langs: Sequence[str],
    judge: JudgeIdentity | None,
    support_prompts: Mapping[str, str],
    evidence_sentences: int,
    forced: CalibrationFile | None = None,
    shipped: Sequence[CalibrationFile] | None = None,
) -> CalibrationChoice:
    """Per language, the calibration fitted for exactly this judge, prompt and evidence setting, else the judge's P.

    `forced` (--calibration FILE) is used wherever it covers a language, with a warning for each way in which
    it was fitted on something else. `support_prompts` maps each language to its statement_support prompt's sha256.
    """
    chosen: dict[str, LanguageCalibration] = {}
    warnings: list[str] = []
    missing: list[str] = []
    if forced is not None and forced.judge is None:
        return CalibrationChoice(
            {lang: LanguageCalibration(JUDGE_ONLY, None, "uncalibrated") for lang in langs}, [], None
        )
    if forced is not None:
        warnings = _mismatches(forced, judge, support_prompts, evidence_sentences, langs)
        for lang in langs:
            if lang in forced.languages:
                chosen[lang] = LanguageCalibration(forced.languages[lang], str(forced.path), "--calibration")
            else:
                chosen[lang] = LanguageCalibration(JUDGE_ONLY, None, f"{forced.path} has no {lang} calibration")
                missing.append(lang)
    else:
        files = [
            f
            for f in (shipped_files() if shipped is None else shipped)
            if judge is not None and f.judge is not None and f.judge.same_judge(judge)
        ]
        for lang in langs:
            chosen[lang] = _matching(files, lang, support_prompts.get(lang), evidence_sentences)
            if chosen[lang].source is None:
                missing.append(lang)
    return CalibrationChoice(chosen, warnings, _notice(missing, judge) if missing else None)


def _matching(
    files: Sequence[CalibrationFile], lang: str, prompt: str | None, evidence_sentences: int
) -> LanguageCalibration:
    for file in files:
        if lang not in file.languages:
            continue
        if file.support_prompts[lang] != prompt:
            return LanguageCalibration(
                JUDGE_ONLY, None, f"{file.path} was fitted with another {lang} statement_support prompt"
            )
        if file.evidence_sentences != evidence_sentences:
            return LanguageCalibration(
                JUDGE_ONLY, None, f"{file.path} was fitted with evidence_sentences={file.evidence_sentences}"
            )
        return LanguageCalibration(file.languages[lang], str(file.path), "fitted for this judge")
    return LanguageCalibration(JUDGE_ONLY, None, "no calibration fitted for this judge")


def _mismatches(
    forced: CalibrationFile,
    judge: JudgeIdentity | None,
    support_prompts: Mapping[str, str],
    evidence_sentences: int,
    langs: Sequence[str],
) -> list[str]:
    """How a forced calibration's fitting differs from this run: each difference makes its weights less apt."""
    found = []
    assert forced.judge is not None
    if judge is not None and not forced.judge.same_judge(judge):
        found.append(
            f"{forced.path} was fitted with the judge {forced.judge.name} (sha256 {forced.judge.sha256[:12]}), "
            f"not {judge.name} (sha256 {judge.sha256[:12]}): its weights were learned on another judge's P."
        )
    for lang in langs:
        if lang in forced.languages and forced.support_prompts[lang] != support_prompts.get(lang):
            found.append(f"{forced.path} was fitted with another {lang} statement_support prompt than this run's.")
    if forced.evidence_sentences != evidence_sentences:
        found.append(
            f"{forced.path} was fitted with evidence_sentences={forced.evidence_sentences}, "
            f"this run uses {evidence_sentences}."
        )
    return found


def _notice(langs: Sequence[str], judge: JudgeIdentity | None) -> str:
    name = judge.name if judge else "JUDGE"
    return (
        f"No calibration for the judge {name} in {', '.join(langs)}: P(supported) there is the judge's own "
        f"probability. `localeval calibrate LABELLED.jsonl --judge {name} --out DIR` fits one on your labels."
    )


def logistic(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))
