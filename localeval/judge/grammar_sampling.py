"""Grammar-constrained sampling that checks the model's own choice first, as llama.cpp's common sampler does.

llama-cpp-python applies the grammar to every token of the vocabulary at every step (151,936 tokens
for Qwen), which made generation about three times slower than without a grammar. The model's
preferred token is almost always allowed, so we test that one token first and run the grammar over
the whole vocabulary only when it is rejected. The result is the same token: the best allowed token
when greedy, or a draw from the allowed tokens' renormalised distribution otherwise.

At a temperature above 0 the draw goes through llama.cpp's stock chain, with llama-cpp-python's
defaults: top-k 40, then top-p 0.95, then min-p 0.05, then the temperature.
"""

from __future__ import annotations

import ctypes
import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import llama_cpp
import numpy as np
from llama_cpp import Llama, LlamaGrammar
from llama_cpp.llama_speculative import LlamaDraftModel

from localeval.judge.prompt_lookup import PromptLookup

if TYPE_CHECKING:
    from llama_cpp._internals import LlamaSampler

# llama-cpp-python's create_completion defaults, which its own sampler chain applies before the temperature.
TOP_K, TOP_P, MIN_P = 40, 0.95, 0.05


@dataclass(frozen=True)
class Truncation:
    """llama.cpp's top-k, top-p and min-p samplers: which tokens a draw at a temperature above 0 may pick."""

    top_k: int = TOP_K
    top_p: float = TOP_P
    min_p: float = MIN_P

    def candidates(self, logits: np.ndarray) -> np.ndarray:
        """The token ids the three samplers keep, best first (at least one, as llama.cpp's min_keep=1).

        top-p and min-p read probabilities at temperature 1 over the tokens still kept, as in llama.cpp,
        where the temperature sampler comes after them.
        """
        finite = np.flatnonzero(np.isfinite(logits))  # a token the grammar rejects has a logit of -inf
        if 0 < self.top_k < finite.size:
            finite = finite[np.argpartition(-logits[finite], self.top_k - 1)[: self.top_k]]
        best = finite[np.argsort(-logits[finite], kind="stable")]
        kept = logits[best].astype(np.float64)
        if self.top_p < 1.0 and best.size:
            probabilities = np.exp(kept - kept[0])
            cumulative = np.cumsum(probabilities / probabilities.sum())
            keep = int(np.searchsorted(cumulative, self.top_p)) + 1  # through the first token that reaches top_p
            best, kept = best[:keep], kept[:keep]
        if self.min_p > 0.0 and best.size:
            best = best[kept >= kept[0] + math.log(self.min_p)]  # P >= min_p * P(best token)
        return best


def draw(logits: np.ndarray, temperature: float, rng: np.random.Generator, truncation: Truncation) -> int:
    """The next token as llama.cpp's chain picks it: the best at temperature 0, else a draw among the candidates."""
    if temperature <= 0:
        return int(np.argmax(logits))
    candidates = truncation.candidates(logits)
    weights = np.exp((logits[candidates].astype(np.float64) - float(logits[candidates[0]])) / temperature)
    return int(candidates[rng.choice(candidates.size, p=weights / weights.sum())])


@dataclass(frozen=True)
class BinaryChoice:
    """The tokens that spell a 0/1 (or no/yes) answer, so the sampler can report the model's P(1) where it writes one."""

    no: tuple[int, ...]
    yes: tuple[int, ...]

    @functools.cached_property
    def tokens(self) -> frozenset[int]:
        return frozenset(self.no + self.yes)

    def p_yes(self, logits: np.ndarray) -> float:
        """P(1) against P(0) at this position, from the raw logits (the grammar allows nothing else there)."""
        no, yes = np.logaddexp.reduce(logits[list(self.no)]), np.logaddexp.reduce(logits[list(self.yes)])
        return float(1.0 / (1.0 + np.exp(no - yes)))


class GrammarCheckedSampler:
    """Stands in for llama-cpp-python's sampler chain: `sample(ctx, idx)` returns the next token.

    Wherever it picks a token of one of `choices` (a 0 or a 1 for "digit", a no or a yes for "word"), it
    records the model's P(1) there in `choice_probabilities[name]`; for a verdict written last, the last
    entry is the verdict's.
    """

    def __init__(
        self,
        vocab: ctypes.c_void_p,
        grammar: LlamaGrammar,
        n_vocab: int,
        temperature: float,
        seed: int,
        choices: dict[str, BinaryChoice] | None = None,
        truncation: Truncation = Truncation(),
    ):
        self._grammar = llama_cpp.llama_sampler_init_grammar(
            vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self._grammar:
            raise ValueError("llama.cpp rejected the grammar built from the step's schema")
        self._n_vocab = n_vocab
        self._temperature = temperature
        self._truncation = truncation
        self._rng = np.random.default_rng(seed)
        self._one = (llama_cpp.llama_token_data * 1)()
        self._all = (llama_cpp.llama_token_data * n_vocab)()
        self._all_view = np.ctypeslib.as_array(self._all)
        self._all_view["id"] = np.arange(n_vocab, dtype=np.int32)
        self._choices = dict(choices or {})
        self.choice_probabilities: dict[str, list[float]] = {name: [] for name in self._choices}

    def sample(self, ctx: llama_cpp.llama_cpp.llama_context_p | object, idx: int) -> int:
        pointer = llama_cpp.llama_get_logits_ith(getattr(ctx, "ctx", ctx), idx)
        logits = np.ctypeslib.as_array(pointer, shape=(self._n_vocab,))
        token = self._choose(logits)
        if not self._allowed(token, float(logits[token])):
            token = self._choose(self._constrained(logits))
        llama_cpp.llama_sampler_accept(self._grammar, token)
        for name, choice in self._choices.items():
            if token in choice.tokens:
                self.choice_probabilities[name].append(choice.p_yes(logits))
        return token

    def _allowed(self, token: int, logit: float) -> bool:
        self._one[0].id = token  # type: ignore[assignment]  # llama_cpp types it c_int32; ctypes takes the int
        self._one[0].logit, self._one[0].p = logit, 0.0
        self._apply(self._one, 1)
        return math.isfinite(self._one[0].logit)  # the grammar sets a rejected token's logit to -inf

    def _constrained(self, logits: np.ndarray) -> np.ndarray:
        self._all_view["logit"] = logits
        self._all_view["p"] = 0.0
        self._apply(self._all, self._n_vocab)
        return self._all_view["logit"].copy()

    def _apply(self, data: ctypes.Array[llama_cpp.llama_token_data], size: int) -> None:
        candidates = llama_cpp.llama_token_data_array(
            data=ctypes.cast(data, llama_cpp.llama_token_data_p), size=size, selected=-1, sorted=False
        )
        llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(candidates))

    def _choose(self, logits: np.ndarray) -> int:
        return draw(logits, self._temperature, self._rng, self._truncation)

    def __del__(self) -> None:
        free = getattr(llama_cpp, "llama_sampler_free", None)  # None once the interpreter is tearing modules down
        if getattr(self, "_grammar", None) and callable(free):
            free(self._grammar)
            self._grammar = None


class _Drafter(LlamaDraftModel):
    """Llama's draft_model, which must be a LlamaDraftModel: hands Llama.generate's input ids to `draft`."""

    def __init__(self, draft: Callable[[np.ndarray], np.ndarray]):
        self._draft = draft

    def __call__(self, input_ids: np.ndarray, /, **kwargs: Any) -> np.ndarray:
        return self._draft(input_ids)


class GrammarCheckedLlama(Llama):
    """A Llama whose grammar-constrained generations use GrammarCheckedSampler; `last_sampler` is the latest one.

    With `prompt_lookup`, each generation checks drafted tokens in batches (see prompt_lookup.py).
    """

    last_sampler: GrammarCheckedSampler | None = None

    def __init__(self, *args: Any, prompt_lookup: PromptLookup | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        # Set after loading, not passed as Llama's draft_model: that would make it keep every position's logits for
        # every prompt (5 GB at a context of 8192), where only a draft's positions need them.
        self._prompt_lookup = prompt_lookup
        self.draft_model = _Drafter(self._draft) if prompt_lookup else None
        self._checking_draft = False
        # llama.cpp counts a drafted batch as prompt work; these let JudgeTimings count it as generation.
        self.draft_tokens_checked = 0
        self.draft_seconds = 0.0
        # Drafted tokens, and those the judge kept, over the drafts whose fate is known (not a generation's last).
        self.drafted_tokens = self.kept_draft_tokens = 0
        self._open_draft: tuple[int, int] | None = None  # (tokens read when drafted, draft length)

    @property
    def prompt_lookup(self) -> PromptLookup | None:
        """What guesses the next tokens of a generation; batched generations use it too (batch_decoding.py)."""
        return self._prompt_lookup

    def _draft(self, input_ids: np.ndarray) -> np.ndarray:
        """Called by Llama.generate after each accepted run of tokens; the next eval() checks what it returns."""
        assert self._prompt_lookup is not None
        if self._open_draft is not None:  # the tokens read since drafting are the kept ones plus one sampled
            read, length = self._open_draft
            self.drafted_tokens += length
            self.kept_draft_tokens += min(max(input_ids.size - read - 1, 0), length)
        proposed = self._prompt_lookup(input_ids)
        self._checking_draft = proposed.size > 0
        self._open_draft = (input_ids.size, proposed.size) if proposed.size else None
        return proposed

    def eval(self, tokens: Sequence[int]) -> None:
        """A drafted batch gets logits at every position, so the sampler can check each drafted token."""
        if not self._checking_draft:
            return super().eval(tokens)
        self._checking_draft = False
        started = time.perf_counter()
        self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
        self._batch.set_batch(batch=list(tokens), n_past=self.n_tokens, logits_all=True)
        self._ctx.decode(self._batch)
        self.draft_seconds += time.perf_counter() - started
        self.draft_tokens_checked += len(tokens)
        self.input_ids[self.n_tokens : self.n_tokens + len(tokens)] = tokens
        self.n_tokens += len(tokens)
        self._requires_eval = False

    def _init_sampler(  # type: ignore[override]  # keyword-only: Llama calls it with keywords alone
        self,
        *,
        temp: float = 0.8,
        grammar: LlamaGrammar | None = None,
        top_k: int = TOP_K,
        top_p: float = TOP_P,
        min_p: float = MIN_P,
        **kwargs: Any,
    ) -> LlamaSampler | GrammarCheckedSampler:
        self._checking_draft = False  # a new generation: no draft is pending
        self._open_draft = None
        if grammar is None:
            return super()._init_sampler(temp=temp, grammar=None, top_k=top_k, top_p=top_p, min_p=min_p, **kwargs)
        self.last_sampler = GrammarCheckedSampler(
            self._model.vocab,
            grammar,
            self._n_vocab,
            temp,
            self._seed,
            self.binary_choices,
            Truncation(top_k, top_p, min_p),
        )
        return self.last_sampler

    @functools.cached_property
    def binary_choices(self) -> dict[str, BinaryChoice]:
        """The single tokens that read "0" or "1" ("digit") and "no" or "yes" ("word"), with or without a leading
        space, in this vocabulary; a choice whose tokens the vocabulary lacks is left out."""

        def single_tokens(text: str) -> tuple[int, ...]:
            found = (self.tokenize(t.encode(), add_bos=False, special=False) for t in (text, " " + text))
            return tuple(sorted({tokens[0] for tokens in found if len(tokens) == 1}))

        pairs = {"digit": ("0", "1"), "word": ("no", "yes")}
        choices = {name: BinaryChoice(single_tokens(no), single_tokens(yes)) for name, (no, yes) in pairs.items()}
        return {name: choice for name, choice in choices.items() if choice.no and choice.yes}
