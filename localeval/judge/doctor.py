"""`localeval doctor`: every thing a run depends on, checked, ending with a real generation by the judge.

The judge runs in a child process (judge_check), so a build that crashes is reported with what to
do, instead of killing the doctor too. Findings are yielded as they are made: hashing a model or
loading the judge takes seconds, and the user sees each result as it comes.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path

from localeval.errors import LocalevalError
from localeval.judge.check import (
    REBUILD,
    JudgeCheck,
    check_with_fallback,
    explain_attempts,
)
from localeval.judge.protocol import JudgeConfig
from localeval.judge.server import connect, is_server_url
from localeval.judge.system import cpu, llama_build
from localeval.models import (
    ModelStatus,
    check_gguf,
    load_registry,
    model_statuses,
    resolve_judge,
)

OK, WARN, FAIL, INFO = "ok", "warn", "FAIL", "info"


@dataclass(frozen=True)
class Finding:
    section: str
    label: str
    detail: str
    status: str = INFO


def diagnose(
    judge: str | None = None,
    config: JudgeConfig | None = None,
    embedders: bool = True,
    check_command: list[str] | None = None,
    batch_curve: bool = True,
) -> Iterator[Finding]:
    """Findings about this installation; the judge check last (`check_command` replaces its child in tests), then,
    if it passed, the judge's speed with calls decoded together (`batch_curve`), which --batch-decode is chosen by."""
    config = config or JudgeConfig()
    yield Finding(
        "localeval",
        "version",
        f"localeval {_version('localeval')}, Python {platform.python_version()}, {platform.platform(terse=True)}",
    )
    yield from _cpu_findings()
    yield from _build_findings()
    statuses = model_statuses()
    yield from _model_findings(statuses)
    if embedders:
        yield from _embedder_findings(statuses)
    yield from _judge_findings(judge, statuses, config, check_command, batch_curve)


def _cpu_findings() -> Iterator[Finding]:
    info = cpu()
    yield Finding("CPU", "model", info.model)
    yield Finding("CPU", "features", " ".join(info.simd()) or "none that llama.cpp uses")
    yield Finding("CPU", "AMX", "yes" if info.has_amx else "no")


def _build_findings() -> Iterator[Finding]:
    try:
        build = llama_build()
    except (ImportError, OSError) as error:
        yield Finding("llama.cpp", "llama-cpp-python", f"cannot be imported ({error}): {REBUILD}", FAIL)
        return
    yield Finding("llama.cpp", "llama-cpp-python", build.version)
    stamp = build.setup_stamp
    if stamp is None:
        yield Finding("llama.cpp", "built by", "not by scripts/setup.sh: its build flags are unknown", INFO)
    elif stamp.get("cpu") != _cpu_identity():
        yield Finding(
            "llama.cpp",
            "built by",
            f"scripts/setup.sh, but on another CPU ({stamp.get('cpu', '?')[:60]}): {REBUILD}",
            WARN,
        )
    else:
        flags = " ".join(part for part in (stamp.get("cmake_args"), f"CFLAGS={stamp.get('cflags', '')}") if part)
        yield Finding("llama.cpp", "built by", f"scripts/setup.sh for this CPU ({flags})", OK)
    yield Finding("llama.cpp", "system info", build.system_info)
    yield Finding("llama.cpp", "GPU offload", "yes" if build.gpu_offload else "no (a CPU build)")
    if build.uses_amx:
        yield Finding(
            "llama.cpp",
            "AMX backend",
            "compiled in; it crashes on some CPUs (ggml-org/llama.cpp#20824). "
            "If the judge check below crashes: " + REBUILD,
            WARN,
        )
    else:
        yield Finding("llama.cpp", "AMX backend", "not compiled in", OK)


def _model_findings(statuses: list[ModelStatus]) -> Iterator[Finding]:
    for status in statuses:
        entry = status.entry
        label = f"{entry.name} ({entry.role})"
        if status.location is None:
            hint = status.hint if len(status.hint) < 100 else "`localeval models list` says how to install it"
            yield Finding("models", label, f"not installed: {hint}")
            continue
        try:
            if entry.role == "judge":
                check_gguf(status.location, entry.sha256, entry.size)
            else:
                from localeval.models import resolve_embedder_dir

                resolve_embedder_dir(entry.name)
        except LocalevalError as error:
            yield Finding("models", label, str(error), FAIL)
            continue
        yield Finding("models", label, f"{status.location} (size and sha256 match the registry)", OK)


def _embedder_findings(statuses: list[ModelStatus]) -> Iterator[Finding]:
    from localeval.models.encoders import load_embedder

    for status in statuses:
        if status.entry.role != "embedder" or status.location is None:
            continue
        started = time.perf_counter()
        try:
            vectors = load_embedder(status.entry.name, "en").embed(["Where does the Rhine flow?", "ライン川"])
        except LocalevalError as error:
            yield Finding("embedders", status.entry.name, str(error), FAIL)
            continue
        yield Finding(
            "embedders",
            status.entry.name,
            f"{vectors.shape[1]}-d vectors, loaded and run in {time.perf_counter() - started:.1f} s",
            OK,
        )


def _server_finding(url: str, config: JudgeConfig) -> Finding:
    """Whether the server answers, serves the model, enforces a schema and returns logprobs."""
    try:
        judge = connect(url, config)
    except LocalevalError as error:
        return Finding("judge", url, str(error), FAIL)
    found = (
        f"{judge.model} at {judge.base_url}, {judge.n_ctx}-token context; answers held to the step's schema "
        f"by response_format {judge.schema_form}"
    )
    if judge.logprobs:
        return Finding("judge", judge.model, f"{found}; P(supported) from its logprobs", OK)
    return Finding(
        "judge",
        judge.model,
        f"{found}; it returns no logprobs, so P(supported) is the written verdict (0 or 1) and scores are coarser",
        WARN,
    )


def _judge_findings(
    judge: str | None,
    statuses: list[ModelStatus],
    config: JudgeConfig,
    check_command: list[str] | None,
    batch_curve: bool,
) -> Iterator[Finding]:
    name = judge or _installed_judge(statuses)
    if name is None:
        yield Finding(
            "judge",
            "judge",
            "no judge is installed: run scripts/setup.sh, or "
            "`localeval models install NAME` (see `localeval models list`)",
            FAIL,
        )
        return
    if is_server_url(name):
        yield _server_finding(name, config)
        return
    try:
        resolved = resolve_judge(name)
    except LocalevalError as error:
        yield Finding("judge", name, str(error), FAIL)
        return
    label = resolved.entry.name if resolved.entry else str(resolved.path)
    attempts = check_with_fallback(resolved.path, config, check_command)
    final = attempts[-1]
    if final.ok and len(attempts) == 1:
        yield Finding("judge", label, _generation_summary(final), OK)
    elif final.ok:
        yield Finding(
            "judge",
            label,
            f"{attempts[0].problem}. Without llama.cpp's repacked weights it runs "
            f"({_generation_summary(final)}), and `localeval evaluate` falls back to that, "
            "which is slower on most CPUs",
            WARN,
        )
    else:
        yield Finding("judge", label, explain_attempts(attempts).rstrip("."), FAIL)
    if final.ok and batch_curve:
        yield _batch_curve_finding(resolved.path, replace(config, weight_repacking=final.weight_repacking))


def _batch_curve_finding(path: Path, config: JudgeConfig) -> Finding:
    """Loaded in this process: the check above has shown that these settings run."""
    from localeval.judge.batch_curve import MIN_GAIN, describe_curve, measure_curve, recommended_batch

    try:
        curve = measure_curve(path, config)
    except (LocalevalError, RuntimeError, ValueError) as error:
        return Finding("judge", "calls decoded together", f"could not be measured: {error}", WARN)
    chosen = recommended_batch(curve)
    if chosen == 1:
        advice = f"keep --batch-decode 1 (the default): no size gains x{MIN_GAIN:g} here"
    else:
        # The curve overstates a run's gain: at x1.70 a run on long contexts was 10% slower (docs/install.md).
        advice = (
            f"try --batch-decode {chosen} (the default is 1): answers decode faster here, but a run also "
            "evaluates prompts, so time one both ways"
        )
    return Finding("judge", "calls decoded together", f"{describe_curve(curve)}; {advice}", INFO)


def _generation_summary(check: JudgeCheck) -> str:
    return (
        f"generated {check.completion_tokens} tokens after a {check.prompt_tokens}-token prompt in "
        f"{check.seconds:.2f} s (loaded in {check.load_seconds:.1f} s) in a child process: {check.answer}"
    )


def _installed_judge(statuses: list[ModelStatus]) -> str | None:
    """The default judge if it is installed, else the first installed one."""
    default = load_registry().default_judge
    installed = [status.entry.name for status in statuses if status.entry.role == "judge" and status.location]
    return default if default in installed else next(iter(installed), None)


def _cpu_identity() -> str:
    """As scripts/install_llama_cpp.py records it."""
    info = cpu()
    return f"{info.model} | {' '.join(sorted(info.flags))}"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"
