"""Loading the run's judge (a checked GGUF in process, or a server) with what the call cache, the manifest and
the calibrations know it by."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from localeval.grounding.calibration import JudgeIdentity
from localeval.judge.check import ensure_judge_runs
from localeval.judge.gguf import GGUFJudge, check_gpu_offload
from localeval.judge.protocol import JudgeConfig
from localeval.judge.server import ServerJudge, connect
from localeval.judge.speeds import key_for, measured, remember
from localeval.models import ResolvedModel, file_sha256
from localeval.results.manifest import JudgeRecord


def remember_speeds(judge: LoadedJudge) -> None:
    """The judge's speeds so far, for later dry runs' estimates (best effort: never fails the run).

    Not from a run that decoded calls together: llama.cpp counts a batch's decode steps as prompt tokens, so
    its prompt and generation speeds cannot be told apart."""
    timings = getattr(judge.judge, "timings", None)
    if judge.config.batch_decode > 1 or timings is None or (speeds := measured(timings())) is None:
        return
    config = judge.manifest.config
    remember(key_for(judge.manifest.sha256, config["n_gpu_layers"], config["n_threads"]), speeds)


@dataclass(frozen=True)
class LoadedJudge:
    """A checked judge in memory, with what the call cache and the manifest know it by."""

    judge: GGUFJudge | ServerJudge
    config: JudgeConfig  # as loaded: the check may have turned weight repacking off
    # keys the call cache: the file's sha256, and the chat template's when one was given; a server's URL and model
    identity: str
    manifest: JudgeRecord

    def identity_of(self) -> JudgeIdentity:
        """What a calibration must have been fitted with to apply to this judge."""
        return self.manifest.identity


def judge_identity(resolved: ResolvedModel, config: JudgeConfig) -> JudgeIdentity:
    """A judge file's identity without loading it: its sha256, and its chat template's (the GGUF's own unless
    --chat-template gives one), hashed as the loaded judge hashes it."""
    if config.chat_template is not None:
        try:
            template = config.chat_template.read_text(encoding="utf-8")
        except OSError:
            template = ""  # loading the judge reports the unreadable file
    else:
        template = resolved.info.chat_template or ""
    name = resolved.entry.name if resolved.entry else resolved.path.name
    return JudgeIdentity(name, file_sha256(resolved.path), hashlib.sha256(template.encode("utf-8")).hexdigest())


def load_judge(resolved: ResolvedModel, config: JudgeConfig, recheck: bool = False) -> LoadedJudge:
    """Prove in a child process that llama.cpp can run the checked judge file here, then load it.

    `recheck`: the previous run into the folder crashed, so a remembered check no longer counts.
    """
    entry, info = resolved.entry, resolved.info
    check_gpu_offload(config.n_gpu_layers)
    sha256 = file_sha256(resolved.path)
    config = ensure_judge_runs(resolved.path, sha256, config, trust_remembered=not recheck)
    judge = GGUFJudge(resolved.path, config)
    # A template given with --chat-template changes every prompt, so it is part of the judge's identity.
    template = f":template:{judge.template_sha256}" if config.chat_template else ""
    manifest = JudgeRecord(
        path=str(resolved.path),
        name=entry.name if entry else None,
        sha256=sha256,
        size=info.size,
        architecture=info.architecture,
        chat_template=str(config.chat_template or "from GGUF metadata"),
        chat_template_sha256=judge.template_sha256,
        config={**_settings(config), "chat_template": None, "n_threads": config.threads(), "n_ctx": judge.n_ctx},
    )
    return LoadedJudge(judge, config, sha256 + template, manifest)


def _settings(config: JudgeConfig) -> dict[str, Any]:
    """The judge's settings as the manifest records them: the name of the API key's variable is no setting."""
    return {key: value for key, value in vars(config).items() if key != "api_key_env"}


def load_server_judge(url: str, config: JudgeConfig) -> LoadedJudge:
    """A judge on an OpenAI-compatible server, checked before any work (see server_judge.connect)."""
    judge = connect(url, config)
    settings = {key: getattr(config, key) for key in ("seed", "temperature", "vote_temperature", "timeout")}
    manifest = JudgeRecord.from_json({**judge.manifest(), "config": {**settings, "n_ctx": judge.n_ctx}})
    return LoadedJudge(judge, config, judge.identity, manifest)
