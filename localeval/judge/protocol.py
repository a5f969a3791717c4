"""What every judge is to the rest of localeval: its settings, one generation and its cost, and the protocol that the
GGUF judge, the server judge and the tests' fault-injecting fakes all follow."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from localeval.errors import ConfigError
from localeval.judge.chat_template import Message

# The judge options as users name them (CLI flags, API keywords) and the JudgeConfig field each sets.
USER_OPTIONS = {
    "n_ctx": "n_ctx",
    "threads": "n_threads",
    "gpu_layers": "n_gpu_layers",
    "seed": "seed",
    "temperature": "temperature",
    "chat_template": "chat_template",
    "timeout": "timeout",
    "draft_tokens": "draft_tokens",
    "batch_decode": "batch_decode",
    "api_key_env": "api_key_env",
}


@dataclass(frozen=True)
class JudgeConfig:
    """Everything that changes what the judge says or how fast it says it."""

    n_ctx: int = 8192
    n_threads: int | None = None  # None: every core this process may use
    n_gpu_layers: int = 0  # -1 offloads every layer when llama-cpp-python is built with CUDA
    seed: int = 0
    temperature: float = 0.0
    vote_temperature: float = 0.7  # for sampled votes (Call.vote > 0: benchmarks/critiques.py --calls)
    chat_template: Path | None = None  # Jinja file, for GGUF files that carry no chat template
    # llama.cpp's repacked CPU weight layouts; off only where they crash (see judge_check)
    weight_repacking: bool = True
    # Seconds a call may run before generation stops and it fails as judge_timeout; None: no limit.
    timeout: float | None = None
    # At most this many tokens guessed from the prompt and checked in one pass (prompt_lookup.py); 0: none.
    draft_tokens: int = 3
    # At most this many calls of one step decoded together (batch_decoding.py); 1: one at a time, as before.
    batch_decode: int = 1
    # RAM for the KV states of the steps' instructions and examples (prefix_states.py); 0: none kept.
    prefix_state_mib: int = 256
    # A server judge's API key is read from this environment variable; the key itself is never stored.
    api_key_env: str | None = None

    def threads(self) -> int:
        return self.n_threads or len(os.sched_getaffinity(0))

    @classmethod
    def from_options(cls, **options: Any) -> JudgeConfig:
        """The settings from the options users give: the CLI's flags and the API's keywords share these names
        (USER_OPTIONS); an option left as None keeps its default."""
        if unknown := sorted(set(options) - set(USER_OPTIONS)):
            raise ConfigError(
                f"Unknown judge option(s): {', '.join(unknown)}; judge options: {', '.join(USER_OPTIONS)}."
            )
        values = {USER_OPTIONS[name]: value for name, value in options.items() if value is not None}
        if values.get("chat_template"):
            values["chat_template"] = Path(values["chat_template"])
        return cls(**values)


@dataclass(frozen=True)
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    truncated: bool  # stopped by the token budget before the model closed its answer
    # The model's P(1) wherever it wrote a 0 or 1 token, in order: a verdict written last is the last one.
    choice_probabilities: tuple[float, ...] = ()
    # Likewise its P(yes) against P(no) wherever it wrote one of those words: an answer written last is the last one.
    yes_probabilities: tuple[float, ...] = ()
    # Prompt tokens already in the KV cache when the call began (from the previous call or a kept prefix state).
    reused_prompt_tokens: int = 0


@dataclass(frozen=True)
class JudgeTimings:
    """A judge's work so far: prompt tokens evaluated (not those reused from the KV cache) and their seconds by
    llama.cpp's own count, tokens generated, and the seconds every call took in all."""

    prompt_tokens: int
    prompt_seconds: float
    generated_tokens: int
    call_seconds: float


@dataclass(frozen=True)
class GenerationRequest:
    """One call's generation, for a judge that decodes several at once (generate_many)."""

    messages: list[Message]
    schema: dict[str, Any]
    max_tokens: int
    seed: int
    temperature: float


class ContextOverflow(Exception):
    """The prompt plus the output budget does not fit the context window."""

    def __init__(self, prompt_tokens: int, max_tokens: int, n_ctx: int):
        super().__init__(f"prompt {prompt_tokens} + output {max_tokens} tokens > context {n_ctx}")
        self.prompt_tokens = prompt_tokens


class JudgeBackend(Protocol):
    """What runs a judge step, in process (GGUFJudge) or on a server (ServerJudge); tests inject faults with their own.

    Distinct from the API's `localeval.Judge`, which loads one of these and keeps it for many runs."""

    n_ctx: int

    def generate(
        self, messages: list[Message], schema: dict[str, Any], max_tokens: int, seed: int, temperature: float
    ) -> Generation: ...


def generate_alone(judge: JudgeBackend, request: GenerationRequest) -> Generation | Exception:
    """One request decoded on its own, or the exception that stopped it: as in a batch, its failure is its own."""
    try:
        return judge.generate(request.messages, request.schema, request.max_tokens, request.seed, request.temperature)
    except Exception as error:
        return error


@dataclass(frozen=True)
class CallUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    attempts: int = 0
    cached: bool = False
