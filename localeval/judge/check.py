"""Run the judge once in a child process, so that a crash inside llama.cpp is reported, not suffered.

A segfault or an illegal instruction in native code cannot be caught in-process: it kills the
caller with no message. So before a run loads the judge, and in `localeval doctor`, a short
multi-token, grammar-constrained generation runs in a child process, and its exit status tells
whether this llama.cpp build can run this model on this CPU. If it crashes with llama.cpp's
repacked weights (as the AMX backend does on some CPUs, ggml-org/llama.cpp#20824), the check tries
again without them, which is slower but runs. Passes are remembered per judge file, build, CPU and
settings, so a run pays for the check once.

The child loads the native libraries a run loads beside llama.cpp, in the run's order: localeval's own
modules before the judge, torch after it. A llama.cpp built by another compiler than theirs can crash
only in their company (two C++ runtimes in one process; seen with a CUDA build on a GPU machine), and a
check of llama.cpp alone would pass there while every run crashed.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from localeval._resources import cache_dir
from localeval.errors import LocalevalError
from localeval.judge.protocol import JudgeConfig

CHECK_TIMEOUT = 300.0  # loading a 7B judge from a cold disk, then a short generation
REBUILD = "rebuild llama-cpp-python for this machine with scripts/setup.sh, then check with `localeval doctor`"
_CHECK_VERSION = 2  # bump when what the check proves changes: older remembered passes no longer count
_PROMPT = (
    "Read the passage and answer in JSON.\n\nPassage: The Rhine rises in the Swiss Alps, flows through "
    "Germany and the Netherlands, and reaches the North Sea near Rotterdam. It is about 1,230 kilometres "
    "long and has carried barge traffic since Roman times.\n\nQuestion: Into which sea does the Rhine flow?"
)
_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "maxLength": 60}},
    "required": ["answer"],
    "additionalProperties": False,
}
_MAX_TOKENS = 24
# The native libraries a run has loaded beside llama.cpp when the judge loads (torch comes after it: _TORCH_STAGE).
RUN_LIBRARIES = ("numpy", "pydantic_core", "rapidfuzz")
CHILD_COMMAND = [sys.executable, "-m", "localeval.judge.check"]  # run with the request as its one argument
_TORCH_STAGE = "when torch was loaded after the judge had run"
_CLASH_HINT = (
    "llama-cpp-python and those libraries bring different C++ runtimes (libstdc++), as a build made with "
    "another compiler does. Rebuild llama-cpp-python with this system's compiler (scripts/setup.sh), or "
    "start localeval with the runtime llama.cpp was linked against preloaded: "
    "LD_PRELOAD=$(ldd {libllama} | awk '/libstdc/{{print $3}}') localeval ..."
)

log = logging.getLogger("localeval")


class JudgeCrashError(LocalevalError):
    """llama.cpp cannot run the judge on this machine: the check process crashed or failed."""


@dataclass(frozen=True)
class JudgeCheck:
    """One child-process generation: whether it worked, with the figures or what went wrong."""

    ok: bool
    weight_repacking: bool
    problem: str = ""  # on failure: what happened, in a sentence the user can act on
    crashed: bool = False  # killed by a signal, as opposed to an error it reported itself
    system_info: str = ""
    load_seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    answer: str = ""


def check_judge(
    path: Path,
    config: JudgeConfig,
    command: list[str] | None = None,
    timeout: float = CHECK_TIMEOUT,
    alone: bool = False,
) -> JudgeCheck:
    """Generate a few tokens with the judge in a child process (`command` replaces the child in tests).

    `alone`: without the libraries a run loads beside llama.cpp, to tell whether they are what crashes.
    """
    request = {
        "path": str(path),
        "n_threads": config.threads(),
        "n_gpu_layers": config.n_gpu_layers,
        "weight_repacking": config.weight_repacking,
        "alone": alone,
        "chat_template": str(config.chat_template) if config.chat_template else None,
    }
    command = command or CHILD_COMMAND
    try:
        completed = subprocess.run(
            [*command, json.dumps(request)], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        return JudgeCheck(
            False,
            config.weight_repacking,
            f"the judge check on {path} did not finish in {timeout:.0f} s "
            "(a model far too large for this machine, or a hung build)",
        )
    reports = _reports(completed.stdout)
    system_info = reports.get("system_info", "")
    result = reports.get("result")
    if completed.returncode < 0:
        message = _crash_message(path, -completed.returncode, system_info, completed.stderr, reports.get("stage"))
        return JudgeCheck(False, config.weight_repacking, message, crashed=True, system_info=system_info)
    if completed.returncode != 0 or not result or not result.get("ok"):
        error = (result or {}).get("error") or _tail(completed.stderr) or f"exit status {completed.returncode}"
        return JudgeCheck(
            False, config.weight_repacking, f"the judge check on {path} failed: {error}", system_info=system_info
        )
    return JudgeCheck(
        True,
        config.weight_repacking,
        system_info=system_info,
        load_seconds=result["load_seconds"],
        prompt_tokens=result["prompt_tokens"],
        completion_tokens=result["completion_tokens"],
        seconds=result["seconds"],
        answer=result["answer"],
    )


def check_with_fallback(path: Path, config: JudgeConfig, command: list[str] | None = None) -> list[JudgeCheck]:
    """The check as configured; if that crashed with repacked weights, once more without them; and if every
    try crashed, once with llama.cpp alone, whose pass says the crash comes from its neighbours."""
    attempts = [check_judge(path, config, command)]
    if attempts[0].ok or not attempts[0].crashed:
        return attempts
    if config.weight_repacking:
        attempts.append(check_judge(path, replace(config, weight_repacking=False), command))
    if not attempts[-1].ok and attempts[-1].crashed and check_judge(path, config, command, alone=True).ok:
        attempts.append(
            JudgeCheck(
                False, config.weight_repacking, _clash_message(path), crashed=True, system_info=attempts[0].system_info
            )
        )
    return attempts


def ensure_judge_runs(
    path: Path, judge_sha256: str, config: JudgeConfig, trust_remembered: bool = True, command: list[str] | None = None
) -> JudgeConfig:
    """The settings to load the judge with in-process; raises JudgeCrashError when no setting runs.

    Loud about a fallback: the speed without repacked weights differs by CPU (benchmarks/judge_speed.py).
    """
    from localeval.judge.system import cpu, llama_build

    key_parts = [
        _CHECK_VERSION,
        judge_sha256,
        config.n_gpu_layers,
        config.weight_repacking,
        llama_build().identity(),
        cpu().model,
        sorted(cpu().flags),
    ]
    remembered = _remembered(key_parts) if trust_remembered else None
    if remembered is None:
        attempts = check_with_fallback(path, config, command)
        if not attempts[-1].ok:
            raise JudgeCrashError(explain_attempts(attempts))
        remembered = {"weight_repacking": attempts[-1].weight_repacking, "problem": attempts[0].problem}
        _remember(key_parts, remembered)
    if config.weight_repacking and not remembered["weight_repacking"]:
        log.warning(
            "%s. The judge runs without llama.cpp's repacked weights instead, which is slower on "
            "most CPUs; to fix it, %s.",
            remembered["problem"],
            REBUILD,
        )
    return replace(config, weight_repacking=remembered["weight_repacking"])


def explain_attempts(attempts: list[JudgeCheck]) -> str:
    """Every failed try in one message: as configured, without repacked weights, and the verdict on trying alone."""
    text = _sentence(attempts[0].problem)
    for attempt in attempts[1:]:
        without = attempt.weight_repacking != attempts[0].weight_repacking
        text += (" Without repacked weights it failed too: " if without else " ") + _sentence(attempt.problem)
    return text


def _crash_message(path: Path, signum: int, system_info: str, stderr: str, stage: str | None) -> str:
    name = _signal_name(signum)
    message = f"llama.cpp crashed while running the judge {path} ({name}{', ' + stage if stage else ''})"
    if stage == _TORCH_STAGE:
        hint = _CLASH_HINT.format(libllama=_libllama())
    elif signum == signal.SIGILL:
        hint = (
            "this llama-cpp-python was compiled for CPU instructions this CPU lacks, for instance on "
            f"another machine: {REBUILD}"
        )
    elif "AMX_INT8 = 1" in system_info:
        hint = (
            "this llama-cpp-python uses llama.cpp's AMX backend, which crashes on some CPUs "
            f"(ggml-org/llama.cpp#20824); scripts/setup.sh builds without it: {REBUILD}"
        )
    else:
        hint = REBUILD
    detail = _tail(stderr)
    return f"{message}: {hint}" + (f". Its last words: {detail}" if detail else "")


def _clash_message(path: Path) -> str:
    return (
        f"llama.cpp runs the judge {path} alone, but crashes in a process that has also loaded the native "
        f"libraries localeval runs with (numpy, rapidfuzz, torch): {_CLASH_HINT.format(libllama=_libllama())}"
    )


def _libllama() -> str:
    from importlib.util import find_spec

    spec = find_spec("llama_cpp")
    package = Path(spec.origin).parent if spec and spec.origin else Path("llama_cpp")
    return str(package / "lib" / "libllama.so")


def _signal_name(signum: int) -> str:
    try:
        name = signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
    description = signal.strsignal(signum)  # None for a signal the system has no description of
    return f"{name}, {description.lower()}" if description else name


def _tail(stderr: str, lines: int = 3) -> str:
    """The last lines the child wrote, where llama.cpp puts its assertion messages."""
    kept = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    return " | ".join(kept[-lines:])[:500]


def _sentence(text: str) -> str:
    return text if text.endswith(".") else text + "."


def _reports(stdout: str) -> dict[str, Any]:
    """The child's JSON lines; a crash leaves only those written before it."""
    reports: dict[str, Any] = {}
    for line in stdout.splitlines():
        try:
            reports.update(json.loads(line))
        except (ValueError, TypeError):
            continue
    return reports


def _remembered_path(key_parts: list[Any]) -> Path:
    key = hashlib.sha256(json.dumps(key_parts).encode()).hexdigest()[:24]
    return cache_dir() / "judge_checks" / f"{key}.json"


def _remembered(key_parts: list[Any]) -> dict[str, Any] | None:
    try:
        data = json.loads(_remembered_path(key_parts).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("weight_repacking"), bool) else None


def _remember(key_parts: list[Any], data: dict[str, Any]) -> None:
    """Best effort: a read-only home only means the check runs again next time."""
    path = _remembered_path(key_parts)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data) + "\n", encoding="utf-8")
    except OSError:
        pass


def _child(request: dict[str, Any]) -> int:
    """The check itself: report the build first, so a crash during the generation still leaves it."""
    import llama_cpp

    from localeval.judge.gguf import GGUFJudge

    _emit({"system_info": llama_cpp.llama_print_system_info().decode("utf-8", errors="replace").strip()})
    if not request.get("alone"):
        _emit({"stage": "with localeval's modules loaded"})
        for library in RUN_LIBRARIES:
            importlib.import_module(library)
    config = JudgeConfig(
        n_ctx=1024,
        n_threads=request["n_threads"],
        n_gpu_layers=request["n_gpu_layers"],
        weight_repacking=request["weight_repacking"],
        chat_template=Path(request["chat_template"]) if request["chat_template"] else None,
    )
    started = time.perf_counter()
    try:
        judge = GGUFJudge(Path(request["path"]), config)
    except LocalevalError as error:
        _emit({"result": {"ok": False, "error": str(error)}})
        return 2
    load_seconds = time.perf_counter() - started
    generation = judge.generate([{"role": "user", "content": _PROMPT}], _SCHEMA, _MAX_TOKENS, seed=0, temperature=0.0)
    if not request.get("alone"):
        _emit({"stage": _TORCH_STAGE})
        importlib.import_module("torch")  # the embedders load it after the judge
    _emit(
        {
            "result": {
                "ok": True,
                "load_seconds": round(load_seconds, 3),
                "prompt_tokens": generation.prompt_tokens,
                "completion_tokens": generation.completion_tokens,
                "seconds": round(generation.seconds, 3),
                "answer": generation.text,
            }
        }
    )
    return 0


def _emit(report: dict[str, Any]) -> None:
    print(json.dumps(report, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    sys.exit(_child(json.loads(sys.argv[1])))
