"""The GGUF judge: a local model run by llama-cpp-python, answering in JSON constrained by a grammar."""

from __future__ import annotations

import contextlib
import io
import json
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from localeval.errors import ConfigError, ModelFileError
from localeval.judge.chat_template import (
    ChatTemplate,
    Message,
    Segment,
    tokenize_segments,
)
from localeval.judge.estimate import shared_prefix
from localeval.judge.protocol import (
    ContextOverflow,
    Generation,
    GenerationRequest,
    JudgeConfig,
    JudgeTimings,
    generate_alone,
)

if TYPE_CHECKING:
    from llama_cpp import CreateCompletionResponse, LlamaGrammar

    from localeval.judge.batch_decoding import Request


@dataclass
class GGUFJudge:
    """A GGUF model loaded from a local file. Only local paths: nothing is ever downloaded."""

    path: Path
    config: JudgeConfig = field(default_factory=JudgeConfig)

    def __post_init__(self) -> None:
        from localeval.judge.grammar_sampling import GrammarCheckedLlama
        from localeval.judge.prefix_states import PrefixStates
        from localeval.judge.prompt_lookup import PromptLookup

        check_gpu_offload(self.config.n_gpu_layers)

        drafts = PromptLookup(max_draft=self.config.draft_tokens) if self.config.draft_tokens else None
        try:
            with _weight_repacking(self.config.weight_repacking), parallel_sequences(self.config.batch_decode):
                self._llm = GrammarCheckedLlama(
                    model_path=str(self.path),
                    n_ctx=self.config.n_ctx,
                    n_threads=self.config.threads(),
                    n_threads_batch=self.config.threads(),
                    n_gpu_layers=self.config.n_gpu_layers,
                    seed=self.config.seed,
                    verbose=False,
                    prompt_lookup=drafts,
                )
        except (ValueError, RuntimeError) as error:
            raise ModelFileError(f"llama.cpp could not load {self.path}: {error}") from None
        self.n_ctx = self._llm.n_ctx()
        self._prefixes = PrefixStates(self._llm, self.config.prefix_state_mib * 2**20)
        self._call_seconds = 0.0
        self._generated_tokens = 0
        self.tokenizer = JudgeTokenizer(self._llm, self.config.chat_template, self.path)

    @property
    def template_sha256(self) -> str:
        return self.tokenizer.template.sha256

    def prompt_tokens(self, messages: list[Message]) -> list[int]:
        return self.tokenizer.prompt_tokens(messages)

    def forget_context(self) -> None:
        """Drop the KV cache, so that the next prompt shares no prefix with the last one and is evaluated whole."""
        self._llm.reset()

    def close(self) -> None:
        """Free the model and its context now rather than at garbage collection (the last grammar sampler first)."""
        self._llm.last_sampler = None
        self._llm.close()

    def timings(self) -> JudgeTimings:
        """Since the load: llama.cpp's own prompt counters (less drafted batches, which are generation), tokens
        generated, and the seconds all calls took."""
        import llama_cpp

        perf = llama_cpp.llama_perf_context(self._llm._ctx.ctx)
        llm = self._llm
        return JudgeTimings(
            perf.n_p_eval - llm.draft_tokens_checked,
            perf.t_p_eval_ms / 1000 - llm.draft_seconds,
            self._generated_tokens,
            self._call_seconds,
        )

    def generate(
        self, messages: list[Message], schema: dict[str, Any], max_tokens: int, seed: int, temperature: float
    ) -> Generation:
        from llama_cpp import StoppingCriteriaList

        tokens, prefix_length = self.tokenizer.prompt_and_prefix(messages)
        if len(tokens) + max_tokens > self.n_ctx:
            raise ContextOverflow(len(tokens), max_tokens, self.n_ctx)
        started = time.perf_counter()
        reused = self._prefixes.prepare(tokens, prefix_length)
        self._llm.last_sampler = None
        deadline = None if self.config.timeout is None else _Deadline(started + self.config.timeout)
        # Not streamed, so one response (create_completion's type also allows the stream's iterator).
        reply = cast(
            "CreateCompletionResponse",
            self._llm.create_completion(
                prompt=tokens,
                max_tokens=max_tokens,
                temperature=temperature,
                seed=seed,
                grammar=_grammar(json.dumps(schema)),
                stopping_criteria=StoppingCriteriaList([deadline]) if deadline else None,
            ),
        )
        seconds = time.perf_counter() - started
        self._call_seconds += seconds
        self._generated_tokens += reply["usage"]["completion_tokens"]
        choice = reply["choices"][0]
        usage = reply["usage"]
        if deadline is not None and deadline.passed:
            raise TimeoutError(
                f"no answer within the judge timeout of {self.config.timeout:g} s: stopped after "
                f"{seconds:.1f} s and {usage['completion_tokens']} tokens"
            )
        sampler = self._llm.last_sampler
        return Generation(
            text=choice["text"],
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            seconds=seconds,
            reused_prompt_tokens=min(reused, len(tokens) - 1),  # the last one is always evaluated
            truncated=choice["finish_reason"] == "length",
            choice_probabilities=tuple(sampler.choice_probabilities.get("digit", ())) if sampler else (),
            yes_probabilities=tuple(sampler.choice_probabilities.get("word", ())) if sampler else (),
        )

    def generate_many(self, requests: list[GenerationRequest]) -> list[Generation | Exception]:
        """Each request's generation, or the exception generate() would raise for it (ContextOverflow,
        TimeoutError, or the error of a failed decode). Calls are decoded together in batches of up to
        config.batch_decode, in order, each of calls with the same instructions and examples (one step in one
        language), whose kept prefix state the batch starts from; a batch of one is decoded alone, exactly as
        generate() does."""
        from localeval.judge.batch_decoding import Request

        results: list[Generation | Exception] = [RuntimeError("not decoded")] * len(requests)
        batch: list[_Batched] = []
        for n, request in enumerate(requests):
            tokens, prefix_length = self.tokenizer.prompt_and_prefix(request.messages)
            if len(tokens) + request.max_tokens > self.n_ctx:
                results[n] = ContextOverflow(len(tokens), request.max_tokens, self.n_ctx)
                continue
            grammar = _grammar(json.dumps(request.schema))
            call = _Batched(
                n, prefix_length, Request(tokens, grammar, request.max_tokens, request.seed, request.temperature)
            )
            if batch and call.prefix != batch[0].prefix:
                self._decode_batch(batch, requests, results)
                batch = []
            batch.append(call)
            if len(batch) == self.config.batch_decode:
                self._decode_batch(batch, requests, results)
                batch = []
        if batch:
            self._decode_batch(batch, requests, results)
        return results

    def _decode_batch(
        self, batch: list[_Batched], requests: list[GenerationRequest], results: list[Generation | Exception]
    ) -> None:
        from localeval.judge.batch_decoding import decode_together, held_lengths, kv_cells_needed

        if len(batch) == 1:
            results[batch[0].index] = generate_alone(self, requests[batch[0].index])
            return
        started = time.perf_counter()
        first = batch[0].request.tokens
        self._prefixes.prepare(first, batch[0].prefix_length)  # at least the step's instructions in sequence 0
        llm = self._llm
        held = held_lengths(list(llm.input_ids[: llm.n_tokens]), [b.request for b in batch])
        if kv_cells_needed([b.request for b in batch], held) > self.n_ctx:  # too long together: in halves
            half = len(batch) // 2
            self._decode_batch(batch[:half], requests, results)
            self._decode_batch(batch[half:], requests, results)
            return
        deadline = None if self.config.timeout is None else started + self.config.timeout
        llm.last_sampler = None
        try:
            decoded = decode_together(llm, [b.request for b in batch], deadline, llm.prompt_lookup)
        except Exception as error:  # a failed decode costs this batch's calls, not the run
            for b in batch:
                results[b.index] = error
            return
        finally:
            elapsed = time.perf_counter() - started
            self._call_seconds += elapsed
        decoding = sum(out.seconds for out in decoded) or 1.0  # the batch's time less the prefix's: share it all
        for b, out in zip(batch, decoded):
            self._generated_tokens += out.completion_tokens
            llm.drafted_tokens += out.drafted_tokens
            llm.kept_draft_tokens += out.kept_draft_tokens
            if out.finish == "timeout":
                results[b.index] = TimeoutError(
                    f"no answer within the judge timeout of {self.config.timeout:g} s: stopped after "
                    f"{elapsed:.1f} s and {out.completion_tokens} tokens, decoded with {len(batch) - 1} other calls"
                )
                continue
            results[b.index] = Generation(
                text=out.text,
                prompt_tokens=len(b.request.tokens),
                completion_tokens=out.completion_tokens,
                seconds=out.seconds * elapsed / decoding,
                reused_prompt_tokens=out.reused_prompt_tokens,
                truncated=out.finish == "length",
                choice_probabilities=tuple(out.choice_probabilities.get("digit", ())),
                yes_probabilities=tuple(out.choice_probabilities.get("word", ())),
            )


@dataclass(frozen=True)
class _Batched:
    """A request of generate_many on its way to decode_together: its index, and where its step's prefix ends."""

    index: int
    prefix_length: int
    request: Request

    @property
    def prefix(self) -> Sequence[int]:
        return self.request.tokens[: self.prefix_length]


class JudgeTokenizer:
    """The judge's chat template and tokenizer: a prompt's tokens exactly as the judge reads them."""

    def __init__(self, llm: Any, chat_template: Path | None, path: Path):
        model = llm._model
        self._llm = llm
        self._control_texts = _control_texts(model)
        self.template = ChatTemplate(
            _chat_template_source(llm, chat_template, path),
            bos_token=model.token_get_text(model.token_bos()),
            eos_token=model.token_get_text(model.token_eos()),
            origin=str(chat_template or path),
        )

    def prompt_tokens(self, messages: list[Message]) -> list[int]:
        """The template writes BOS and the turn markers itself; text in the messages never becomes one."""
        return tokenize_segments(self.template.segments(messages), self._tokenize, self._control_texts)

    def prompt_and_prefix(self, messages: list[Message]) -> tuple[list[int], int]:
        """The prompt's tokens, and how many of them come before the last message's content: for a judge step,
        its instructions and examples, which every call of the step repeats."""
        segments = self.template.segments(messages)
        tokens = tokenize_segments(segments, self._tokenize, self._control_texts)
        prefix = self._prefix_tokens(tuple(segments[:-2]))
        return tokens, shared_prefix(tokens, prefix)

    @lru_cache(maxsize=64)
    def _prefix_tokens(self, segments: tuple[Segment, ...]) -> list[int]:
        return tokenize_segments(list(segments), self._tokenize, self._control_texts)

    def _tokenize(self, text: str, special: bool) -> list[int]:
        return self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def count(self, text: str) -> int:
        """Tokens of plain text, such as an answer the judge would write."""
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def load_tokenizer(path: Path, chat_template: Path | None = None) -> JudgeTokenizer:
    """The judge's vocabulary and chat template without its weights: loads in well under a second."""
    from llama_cpp import Llama

    try:
        # llama.cpp warns that a vocabulary-only model has no training context; expected here, so kept quiet.
        with contextlib.redirect_stderr(io.StringIO()):
            llm = Llama(model_path=str(path), vocab_only=True, verbose=False)
    except (ValueError, RuntimeError) as error:
        raise ModelFileError(f"llama.cpp could not read the vocabulary of {path}: {error}") from None
    return JudgeTokenizer(llm, chat_template, path)


def _chat_template_source(llm: Any, chat_template: Path | None, path: Path) -> str:
    if chat_template is not None:
        try:
            return chat_template.read_text(encoding="utf-8")
        except OSError as error:
            raise ModelFileError(f"Cannot read chat template {chat_template}: {error.strerror}") from None
    template = llm.metadata.get("tokenizer.chat_template")
    if not template:
        raise ModelFileError(
            f"{path} has no chat template in its metadata; give one with --chat-template FILE (a Jinja chat template)."
        )
    return template


def _control_texts(model: Any) -> tuple[str, ...]:
    """The text of every token that tokenizing with special tokens on turns into one (as llama.cpp decides)."""
    import llama_cpp

    special = (
        llama_cpp.LLAMA_TOKEN_ATTR_CONTROL
        | llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED
        | llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN
    )
    texts = (model.token_get_text(token) for token in range(model.n_vocab()) if model.token_get_attr(token) & special)
    return tuple(text for text in texts if text)


def check_gpu_offload(n_gpu_layers: int) -> None:
    """A CPU build ignores n_gpu_layers without a word; a user who asked for the GPU should hear so."""
    from localeval.judge.system import llama_build

    if n_gpu_layers < -1:
        raise ConfigError(f"--gpu-layers {n_gpu_layers}: give a number of layers, 0 for none or -1 for all")
    if n_gpu_layers and not llama_build().gpu_offload:
        raise ConfigError(
            f"--gpu-layers {n_gpu_layers}: this llama-cpp-python is a CPU build, with no GPU offload. "
            'Rebuild it for the GPU (CMAKE_ARGS="-DGGML_CUDA=on" scripts/setup.sh), '
            "or leave --gpu-layers out to run on the CPU."
        )


class _Deadline:
    """A llama-cpp-python stopping criterion, checked after each sampled token: stop once the deadline has passed.

    The prompt's evaluation comes before the first check, so a call runs at least that long.
    """

    def __init__(self, at: float):
        self.at = at
        self.passed = False

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        self.passed = self.passed or time.perf_counter() >= self.at
        return self.passed


def parallel_sequences(n_seq_max: int) -> AbstractContextManager[None]:
    """Load with room for `n_seq_max` sequences decoded together, in one KV buffer so that a shared prefix's cells
    serve each; 1 leaves llama.cpp's defaults as they are."""
    fields = {"n_seq_max": n_seq_max, "kv_unified": True} if n_seq_max > 1 else {}
    return _llama_defaults("llama_context_default_params", fields)


def _weight_repacking(enabled: bool) -> AbstractContextManager[None]:
    return _llama_defaults("llama_model_default_params", {} if enabled else {"use_extra_bufts": False})


@contextmanager
def _llama_defaults(function: str, fields: dict[str, Any]) -> Iterator[None]:
    """llama-cpp-python's Llama has no argument for some llama.cpp parameters (use_extra_bufts), or sets them only
    for embeddings (n_seq_max), so they are set on the default parameters that `Llama` starts from, for the
    duration of one load."""
    if not fields:
        yield
        return
    from llama_cpp import llama as llama_module

    low_level = llama_module.llama_cpp
    original = getattr(low_level, function)

    def with_fields() -> Any:
        params = original()
        for name, value in fields.items():
            setattr(params, name, value)
        return params

    setattr(low_level, function, with_fields)
    try:
        yield
    finally:
        setattr(low_level, function, original)


@lru_cache(maxsize=64)
def _grammar(schema_json: str) -> LlamaGrammar:
    """Grammars are compiled once per schema, not once per call."""
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_json_schema(schema_json, verbose=False)
