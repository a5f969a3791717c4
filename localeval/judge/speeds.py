"""The judge's speeds on this machine: measured and stored after each run, read back by `evaluate --dry-run`.

Stored in the user cache folder, keyed on the judge file, GPU layers, threads and CPU model. Where
none is stored, the dry run uses figures measured on a small machine and says so.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from localeval._resources import cache_dir
from localeval.judge.estimate import Speeds
from localeval.judge.protocol import JudgeTimings
from localeval.judge.system import cpu

SPEEDS_FILE = "judge_speeds.json"
MIN_TOKENS = 50  # fewer prompt or generated tokens than this measure start-up more than speed
_FORMAT = 1

# llama-cpp-python 0.3.36 on a 2-core x86 CPU, 2 threads, measured for the project's model notes (MODELS.md):
# (file size in bytes, prompt tokens/s, generated tokens/s), by the judge file's sha256.
_DEFAULT_CPU = "a 2-core CPU, 2 threads"
_DEFAULTS = {
    "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046": (
        "Qwen2.5-Coder-1.5B Q4_K_M",
        1117320768,
        145.0,
        33.0,
    ),
    "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32": (
        "Qwen2.5-Coder-0.5B Q4_K_M",
        491400064,
        280.0,
        59.0,
    ),
}
# A smaller file is faster only so far: sampling under the grammar costs the same per token. SmolLM2-135M (a
# tenth of the 1.5B file) measured 133 prompt and 40 generated tokens/s in a run here (1 thread, a busy 2-core
# machine), where the 0.5B judge measured 57 and 10.
MAX_SCALE = 2.0
_REFERENCE = _DEFAULTS["cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"]


@dataclass(frozen=True)
class SpeedKey:
    """What the speeds depend on: the judge file, where its layers run, and the CPU."""

    judge_sha256: str
    n_gpu_layers: int
    threads: int
    cpu: str


def key_for(judge_sha256: str, n_gpu_layers: int, threads: int) -> SpeedKey:
    return SpeedKey(judge_sha256, n_gpu_layers, threads, cpu().model)


@dataclass(frozen=True)
class KnownSpeeds:
    speeds: Speeds
    source: str  # where the figures come from, in a phrase for the user


def measured(timings: JudgeTimings) -> Speeds | None:
    """Speeds from a run, or None when it did too little to tell.

    The prompt speed is llama.cpp's; the generation speed takes the rest of the calls' time (decoding
    plus sampling under the grammar), so the two together give back the time the run took.
    """
    generating = timings.call_seconds - timings.prompt_seconds
    if (
        min(timings.prompt_tokens, timings.generated_tokens) < MIN_TOKENS
        or timings.prompt_seconds <= 0
        or generating <= 0
    ):
        return None
    return Speeds(timings.prompt_tokens / timings.prompt_seconds, timings.generated_tokens / generating)


def remember(key: SpeedKey, speeds: Speeds, path: Path | None = None) -> None:
    """Store the speeds under their key, replacing older figures. Best effort: a read-only cache costs nothing."""
    path = path or cache_dir() / SPEEDS_FILE
    entries = [entry for entry in _entries(path) if entry.get("key") != asdict(key)]
    entries.append(
        {
            "key": asdict(key),
            "prompt": round(speeds.prompt, 2),
            "generated": round(speeds.generated, 2),
            "measured": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps({"format": _FORMAT, "entries": entries}, indent=1), encoding="utf-8")
        temporary.replace(path)
    except OSError:
        pass


def speeds_for(key: SpeedKey, judge_size: int, path: Path | None = None) -> KnownSpeeds:
    """Stored speeds for this key, else for the same judge on the same CPU, else the named defaults."""
    entries = _entries(path or cache_dir() / SPEEDS_FILE)
    exact = [entry for entry in entries if entry.get("key") == asdict(key)]
    if exact:
        return _stored(
            exact[-1], f"measured in this machine's last run of this judge ({exact[-1].get('measured', '?')})"
        )
    near = [
        entry
        for entry in entries
        if entry["key"].get("judge_sha256") == key.judge_sha256 and entry["key"].get("cpu") == key.cpu
    ]
    if near:
        other = near[-1]["key"]
        return _stored(
            near[-1],
            f"measured in a run of this judge on this CPU with {other.get('threads')} threads and "
            f"{other.get('n_gpu_layers')} GPU layers ({near[-1].get('measured', '?')}); "
            f"this run: {key.threads} threads, {key.n_gpu_layers} GPU layers",
        )
    known = default_speeds(key.judge_sha256, judge_size)
    if key.n_gpu_layers:
        return KnownSpeeds(known.speeds, known.source + "; CPU figures, though this run offloads layers to the GPU")
    return known


def default_speeds(judge_sha256: str, judge_size: int) -> KnownSpeeds:
    """Figures measured on a 2-core CPU: for a known judge its own, else the 1.5B judge's scaled by file size."""
    if judge_sha256 in _DEFAULTS:
        name, _, prompt, generated = _DEFAULTS[judge_sha256]
        return KnownSpeeds(
            Speeds(prompt, generated),
            f"default speeds for {name} on {_DEFAULT_CPU} (no run of this judge stored here yet)",
        )
    name, size, prompt, generated = _REFERENCE
    scale = size / max(judge_size, 1)
    capped = scale > MAX_SCALE
    scale = min(scale, MAX_SCALE)
    return KnownSpeeds(
        Speeds(prompt * scale, generated * scale),
        f"default speeds for {name} on {_DEFAULT_CPU}, scaled by file size for this judge "
        f"({judge_size / 1e9:.2f} GB against {size / 1e9:.2f} GB"
        f"{f', at most {MAX_SCALE:g} times as fast' if capped else ''}; no run of it stored here yet)",
    )


def _stored(entry: dict[str, Any], source: str) -> KnownSpeeds:
    return KnownSpeeds(Speeds(float(entry["prompt"]), float(entry["generated"])), source)


def _entries(path: Path) -> list[dict[str, Any]]:
    """The stored entries; a missing, unreadable or foreign file holds none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict) or data.get("format") != _FORMAT or not isinstance(data.get("entries"), list):
        return []
    return [
        entry
        for entry in data["entries"]
        if isinstance(entry, dict)
        and isinstance(entry.get("key"), dict)
        and isinstance(entry.get("prompt"), (int, float))
        and isinstance(entry.get("generated"), (int, float))
        and entry["prompt"] > 0
        and entry["generated"] > 0
    ]
