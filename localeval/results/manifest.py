"""What a run records about itself in manifest.json, as types: the data, the judge, the prompts, the options and
the versions that produced its scores.

`to_json` writes the keys in the order manifest.json has always had, and `from_json` reads any localeval
manifest back, an older one or one a run had only begun to write, so reports and resumes work on old folders.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.grounding.calibration import JudgeIdentity

FORMAT_VERSION = 1  # of the results folder's files; bumped when a reader could misread the new layout
FINGERPRINT_KEY = "run_fingerprint"


@dataclass(frozen=True)
class JudgeRecord:
    """The judge as a run records it: a GGUF file (`path`, `size`, `architecture`) or a served model (`url`,
    `server`). The API key of a server is never part of it."""

    name: str | None
    sha256: str
    chat_template: str
    chat_template_sha256: str
    config: dict[str, Any] = field(default_factory=dict)
    path: str | None = None
    size: int | None = None
    architecture: str | None = None
    url: str | None = None
    server: dict[str, str] | None = None

    @property
    def identity(self) -> JudgeIdentity:
        """What a calibration must have been fitted with to apply to this judge."""
        return JudgeIdentity(self.name or Path(self.path or "judge").name, self.sha256, self.chat_template_sha256)

    @property
    def label(self) -> str:
        """How a person names this judge: the registry name, else the file's or the served model's."""
        if self.url is not None:
            return f"{self.url}#{self.name}"
        return self.name or Path(self.path or "judge").name

    def to_json(self) -> dict[str, Any]:
        if self.url is not None:
            return {
                "url": self.url,
                "name": self.name,
                "sha256": self.sha256,
                "chat_template": self.chat_template,
                "chat_template_sha256": self.chat_template_sha256,
                "server": self.server,
                "config": self.config,
            }
        return {
            "path": self.path,
            "name": self.name,
            "sha256": self.sha256,
            "size": self.size,
            "architecture": self.architecture,
            "chat_template": self.chat_template,
            "chat_template_sha256": self.chat_template_sha256,
            "config": self.config,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JudgeRecord:
        return cls(
            name=data.get("name"),
            sha256=data.get("sha256", ""),
            chat_template=data.get("chat_template", ""),
            chat_template_sha256=data.get("chat_template_sha256", ""),
            config=dict(data.get("config") or {}),
            path=data.get("path"),
            size=data.get("size"),
            architecture=data.get("architecture"),
            url=data.get("url"),
            server=data.get("server"),
        )


@dataclass(frozen=True)
class DatasetRecord:
    path: str
    format: str = ""
    samples: int = 0
    row_errors: int = 0
    row_warnings: int = 0


@dataclass(frozen=True)
class PromptRecord:
    path: str
    sha256: str
    override: bool = False  # a file of the user's, not the packaged prompt


@dataclass
class RunManifest:
    """manifest.json. A run fills in `calibration`, `languages` and `fingerprint` before scoring, and `encoders`
    once the embedders have been loaded."""

    created: str
    dataset: DatasetRecord | None
    metrics: list[str]
    metric_options: dict[str, Any]
    lang: str | None
    judge: JudgeRecord | None
    prompts: dict[str, PromptRecord]  # by "lang/step"
    versions: dict[str, str | None]
    calibration: dict[str, dict[str, Any]] | None = None  # by language; None when the run had no judge steps
    # lang -> criterion -> fitted threshold, where one matched the judge; None when the run had no critique
    critique_thresholds: dict[str, dict[str, float]] | None = None
    languages: dict[str, int] = field(default_factory=dict)  # samples per language
    fingerprint: str | None = None  # decides which samples an earlier run into the folder can give back
    encoders: dict[str, Any] | None = None
    format_version: int = FORMAT_VERSION
    extra: dict[str, Any] = field(default_factory=dict)  # keys of a newer localeval, kept as they were

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format_version": self.format_version,
            "created": self.created,
            "dataset": vars(self.dataset) if self.dataset else None,
            "metrics": self.metrics,
            "metric_options": self.metric_options,
            "lang": self.lang,
            "judge": self.judge.to_json() if self.judge else None,
            "prompts": {name: vars(prompt) for name, prompt in self.prompts.items()},
            "versions": self.versions,
        }
        if self.calibration is not None:
            data["calibration"] = self.calibration
        if self.critique_thresholds is not None:
            data["critique_thresholds"] = self.critique_thresholds
        data["languages"] = self.languages
        if self.fingerprint is not None:
            data[FINGERPRINT_KEY] = self.fingerprint
        if self.encoders is not None:
            data["encoders"] = self.encoders
        return {**data, **self.extra}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunManifest:
        """Any localeval manifest.json's contents; what a run had not written yet reads as empty."""
        known = {field_name for field_name in cls.__dataclass_fields__ if field_name != "extra"} | {FINGERPRINT_KEY}
        dataset, judge = data.get("dataset"), data.get("judge")
        return cls(
            created=data.get("created", ""),
            dataset=DatasetRecord(**dataset) if isinstance(dataset, dict) else None,
            metrics=list(data.get("metrics") or []),
            metric_options=dict(data.get("metric_options") or {}),
            lang=data.get("lang"),
            judge=JudgeRecord.from_json(judge) if isinstance(judge, dict) else None,
            prompts={name: PromptRecord(**prompt) for name, prompt in (data.get("prompts") or {}).items()},
            versions=dict(data.get("versions") or {}),
            calibration=data.get("calibration"),
            critique_thresholds=data.get("critique_thresholds"),
            languages=dict(data.get("languages") or {}),
            fingerprint=data.get(FINGERPRINT_KEY),
            encoders=data.get("encoders"),
            format_version=data.get("format_version", FORMAT_VERSION),
            extra={key: value for key, value in data.items() if key not in known},
        )

    def prompt_sha256(self, lang: str, step: str) -> str | None:
        prompt = self.prompts.get(f"{lang}/{step}")
        return prompt.sha256 if prompt else None
