"""Several grammar-constrained generations decoded together: one llama_decode per token step serves them all.

A decode step's cost on a CPU is mostly reading the weights, which happens once however many sequences the batch
holds (on a GPU the gap is wider still), so the independent calls of one judge step are decoded side by side.
What a call shares with the prompt the KV cache already holds (the step's instructions and examples, and often
the context, when the last call was about the same response) sits there once, in sequence 0, and its cells are
tagged with every sequence that starts with it rather than copied. Calls of the batch that share more than that
(the statements of one response, checked against the same contexts) share it too: the first of them is
evaluated, and the others take its cells and evaluate only their own tails, in a later pass. Afterwards sequence
0 holds the last call's prompt, so the next call on the same context, batched or not, evaluates only its own
tail, as a lone call reuses the previous call's KV cache. Each sequence keeps its own grammar state, its own
random draws and its own P(1) / P(yes) readings, exactly as a call decoded alone.

Each sequence also carries the tokens prompt lookup guesses it will write next (prompt_lookup.py), as a lone
call does: a step then checks them all, and a sequence keeps its guess up to the first token it would not have
picked. The batch's step costs a little more for them, and takes fewer steps: a batch lasts as long as its
longest answer, whose last steps often hold one or two sequences, where the guesses pay as they do alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import llama_cpp
import numpy as np

from localeval.judge.estimate import shared_prefix
from localeval.judge.grammar_sampling import GrammarCheckedLlama, GrammarCheckedSampler, Truncation
from localeval.judge.prefix_states import SEQUENCE as PREFIX_SEQUENCE  # where a lone call's prefix sits
from localeval.judge.prompt_lookup import PromptLookup

if TYPE_CHECKING:
    from llama_cpp import LlamaGrammar

Entry = tuple[int, int, int, bool]  # one token of a llama_batch: token, position, sequence, wants logits


@dataclass(frozen=True)
class Request:
    """One generation: the whole prompt, its grammar, its budget and its draw."""

    tokens: Sequence[int]
    grammar: LlamaGrammar
    max_tokens: int
    seed: int
    temperature: float


@dataclass
class Decoded:
    """What one sequence produced; `finish` is "stop" (the grammar closed), "length" or "timeout"."""

    text: str
    completion_tokens: int
    finish: str
    choice_probabilities: dict[str, list[float]]
    seconds: float = 0.0
    reused_prompt_tokens: int = 0  # taken from the KV cache: what it held before the batch, or an earlier call's prompt
    drafted_tokens: int = 0  # guessed by prompt lookup, and checked
    kept_draft_tokens: int = 0  # of those, the ones the judge picked itself


@dataclass
class _Sequence:
    request: Request
    sampler: GrammarCheckedSampler
    position: int
    generated: list[int] = field(default_factory=list)
    pending: int | None = None  # sampled, not yet in the KV cache
    finish: str | None = None
    drafted: int = 0
    kept: int = 0


# A call shares a longer prompt with an earlier one only where that saves at least this many tokens: below it,
# the extra pass of prompt evaluation that sharing needs costs more than it saves.
MIN_SHARED_TAIL = 16


@dataclass(frozen=True)
class Source:
    """Where a sequence's prompt comes from: tokens [0, length) from sequence `sequence`'s cells (itself: only what
    the KV cache held before the batch, and it evaluates the rest of its prompt first)."""

    sequence: int
    length: int


def held_lengths(held: Sequence[int], requests: Sequence[Request]) -> list[int]:
    """Per request, how many of its prompt's tokens the KV cache already holds (never the last: it is evaluated for
    the logits of the first answer token)."""
    return [min(shared_prefix(held, r.tokens), len(r.tokens) - 1) for r in requests]


def prompt_sources(requests: Sequence[Request], held: Sequence[int]) -> list[Source]:
    """Per request, the earlier request whose prompt it shares the longest part of, beyond the `held` tokens it
    takes from the KV cache; a request is evaluated a pass after the one it takes its cells from (prompt_passes)."""
    sources: list[Source] = []
    for n, request in enumerate(requests):
        best = Source(n, held[n])
        for earlier in range(n):
            length = min(shared_prefix(requests[earlier].tokens, request.tokens), len(request.tokens) - 1)
            if length > best.length:
                best = Source(earlier, length)
        sources.append(best if best.length - held[n] >= MIN_SHARED_TAIL else Source(n, held[n]))
    return sources


def prompt_passes(sources: Sequence[Source]) -> list[list[int]]:
    """The requests whose prompts each pass evaluates: first those that take cells only from the KV cache, then
    those that take an earlier pass's cells."""
    depth: list[int] = []
    for n, source in enumerate(sources):
        depth.append(0 if source.sequence == n else depth[source.sequence] + 1)
    return [[n for n, d in enumerate(depth) if d == level] for level in range(max(depth, default=-1) + 1)]


def kv_cells_needed(requests: Sequence[Request], held: Sequence[int]) -> int:
    """KV cells the batch takes: the held cells it uses once, then each sequence's own prompt tail and answer."""
    sources = prompt_sources(requests, held)
    return max(held) + sum(len(r.tokens) - s.length + r.max_tokens for r, s in zip(requests, sources))


def decode_together(
    llm: GrammarCheckedLlama,
    requests: Sequence[Request],
    deadline: float | None = None,
    drafts: PromptLookup | None = None,
) -> list[Decoded]:
    """Decode `requests` side by side, sequence i for request i, each step checking what `drafts` guesses.

    Before, sequence 0 holds the prompt llm.input_ids[:llm.n_tokens] says, and the other sequences nothing; each
    request takes from it what it shares. Afterwards sequence 0 holds the last request's prompt (as llm.input_ids
    and llm.n_tokens say) and the others nothing again, so the next call, batched or not, starts from it.
    `deadline` (time.perf_counter()) stops every sequence still writing, as "timeout".
    """
    if not 0 < len(requests) <= llama_cpp.llama_n_seq_max(llm.ctx):
        raise ValueError(f"{len(requests)} requests for a context of {llama_cpp.llama_n_seq_max(llm.ctx)} sequences")
    started = time.perf_counter()
    memory = llama_cpp.llama_get_memory(llm.ctx)
    held = held_lengths(list(llm.input_ids[: llm.n_tokens]), requests)
    for sequence in range(1, len(requests)):  # tagged before sequence 0 lets go of what its request does not share
        llama_cpp.llama_memory_seq_cp(memory, PREFIX_SEQUENCE, sequence, 0, held[sequence])
    llama_cpp.llama_memory_seq_rm(memory, PREFIX_SEQUENCE, held[0], -1)
    sources = prompt_sources(requests, held)
    sequences = [
        _Sequence(
            r,
            GrammarCheckedSampler(
                llm._model.vocab, r.grammar, llm.n_vocab(), r.temperature, r.seed, llm.binary_choices, Truncation()
            ),
            source.length,
        )
        for r, source in zip(requests, sources)
    ]
    batch = llama_cpp.llama_batch_init(llm.n_batch, 0, 1)
    decoded = False
    try:
        for which in prompt_passes(sources):
            for n in which:  # the cells of the earlier prompt it starts with, tagged with this sequence too
                if sources[n].sequence != n:
                    llama_cpp.llama_memory_seq_cp(memory, sources[n].sequence, n, held[n], sources[n].length)
            _evaluate_prompts(llm, batch, sequences, which)
        decoded = True
        while live := [(n, s) for n, s in enumerate(sequences) if s.finish is None]:
            if deadline is not None and time.perf_counter() >= deadline:
                for _, s in live:
                    s.finish = "timeout"
                break
            _step(llm, memory, batch, live, drafts)
    finally:
        llama_cpp.llama_batch_free(batch)
        if decoded:
            _keep_prompt(llm, memory, len(requests) - 1, requests[-1].tokens, len(requests))
        else:  # prompts half evaluated: sequence 0 keeps only what it held before
            _keep_prompt(llm, memory, PREFIX_SEQUENCE, requests[0].tokens[: held[0]], len(requests))
    seconds = time.perf_counter() - started
    written = sum(len(s.generated) + 1 for s in sequences)
    return [
        Decoded(
            llm.detokenize(s.generated, prev_tokens=list(s.request.tokens)).decode("utf-8", errors="ignore"),
            len(s.generated),
            s.finish or "timeout",
            s.sampler.choice_probabilities,
            seconds * (len(s.generated) + 1) / written,  # the batch's time, shared by the tokens each wrote
            source.length,
            s.drafted,
            s.kept,
        )
        for s, source in zip(sequences, sources)
    ]


def _evaluate_prompts(
    llm: GrammarCheckedLlama, batch: llama_cpp.llama_batch, sequences: list[_Sequence], which: list[int]
) -> None:
    """The prompts of sequences `which` from where their cells end, in batches of llm.n_batch tokens; each
    sequence's first token is drawn as soon as the batch holding its prompt's last token is decoded."""
    entries = [
        (token, position, n, position == len(sequences[n].request.tokens) - 1)
        for n in which
        for position, token in enumerate(sequences[n].request.tokens)
        if position >= sequences[n].position
    ]
    for start in range(0, len(entries), llm.n_batch):
        chunk = entries[start : start + llm.n_batch]
        _decode(llm, batch, chunk, lambda i: sequences[chunk[i][2]])


def _step(
    llm: GrammarCheckedLlama,
    memory: llama_cpp.llama_memory_t,
    batch: llama_cpp.llama_batch,
    live: list[tuple[int, _Sequence]],
    drafts: PromptLookup | None,
) -> None:
    """One token step of the live sequences: each puts its pending token in the KV cache, with the tokens `drafts`
    guesses after it, and draws at every one of them while the draws agree with the guess. The cells of the guess
    past the first disagreement are dropped, and the token drawn there is the next step's pending one."""
    entries: list[Entry] = []
    guesses = []
    spare = llm.n_batch - len(live)  # a llama_batch's room, past the pending tokens
    for n, s in live:
        guess = _guess(s, drafts)[: max(spare, 0)]
        spare -= len(guess)
        entries.append((_pending(s), s.position, n, True))
        entries.extend((token, s.position + 1 + j, n, True) for j, token in enumerate(guess))
        guesses.append(guess)
    _run(llm, batch, entries)
    i = 0
    for (n, s), guess in zip(live, guesses):
        kept = 0
        while _draw(llm, s, i + kept) and kept < len(guess) and s.pending == guess[kept]:
            kept += 1
        s.position += kept + 1
        s.drafted, s.kept = s.drafted + len(guess), s.kept + kept
        if kept < len(guess):
            llama_cpp.llama_memory_seq_rm(memory, n, s.position, -1)
        i += len(guess) + 1


def _guess(s: _Sequence, drafts: PromptLookup | None) -> list[int]:
    """What prompt lookup proposes the sequence writes after its pending token, within the budget left."""
    room = s.request.max_tokens - len(s.generated) - 1  # every checked token can add one drawn token
    if drafts is None or room <= 0:
        return []
    proposed = drafts(np.asarray([*s.request.tokens, *s.generated], dtype=np.intc))
    return [int(token) for token in proposed[:room]]


def _decode(
    llm: GrammarCheckedLlama,
    batch: llama_cpp.llama_batch,
    entries: list[Entry],
    sequence_at: Callable[[int], _Sequence],
) -> None:
    """One llama_decode of a prompt pass's (token, position, sequence, wants logits) entries; at each entry that
    wants logits (a prompt's last token) its sequence draws its first token."""
    _run(llm, batch, entries)
    for i, (_, position, _, logits) in enumerate(entries):
        if logits:
            s = sequence_at(i)
            s.position = position + 1
            _draw(llm, s, i)


def _run(llm: GrammarCheckedLlama, batch: llama_cpp.llama_batch, entries: list[Entry]) -> None:
    fill_batch(batch, entries)
    if (status := llama_cpp.llama_decode(llm.ctx, batch)) != 0:
        raise RuntimeError(f"llama_decode failed ({status}) on a batch of {len(entries)} tokens")


def _draw(llm: GrammarCheckedLlama, s: _Sequence, i: int) -> bool:
    """The sequence draws its next token from the logits of batch entry `i`; False once it is finished: the answer
    closed or the budget spent."""
    token = s.sampler.sample(llm.ctx, i)
    if llama_cpp.llama_vocab_is_eog(llm._model.vocab, token):
        s.finish = "stop"
        return False
    s.generated.append(token)
    s.pending = token
    if len(s.generated) >= s.request.max_tokens:
        s.finish = "length"
        return False
    return True


def fill_batch(batch: llama_cpp.llama_batch, entries: list[Entry]) -> None:
    """Write (token, position, sequence, wants logits) entries into a llama_batch of one sequence id per token."""
    batch.n_tokens = len(entries)
    for i, (token, position, sequence, logits) in enumerate(entries):
        batch.token[i] = token
        batch.pos[i] = position  # type: ignore[call-overload]  # llama_cpp types pos as an array of arrays
        batch.n_seq_id[i] = 1
        batch.seq_id[i][0] = sequence
        batch.logits[i] = logits


def _pending(s: _Sequence) -> int:
    assert s.pending is not None  # a live sequence has drawn its next token
    return s.pending


def _keep_prompt(
    llm: GrammarCheckedLlama, memory: llama_cpp.llama_memory_t, sequence: int, prompt: Sequence[int], sequences: int
) -> None:
    """Sequence 0 keeps `sequence`'s cells for `prompt` (whose every token that sequence holds), and sequences 1 to
    `sequences` - 1 are emptied; llm.input_ids and llm.n_tokens say what sequence 0 holds, for the next call."""
    if sequence != PREFIX_SEQUENCE:
        llama_cpp.llama_memory_seq_rm(memory, PREFIX_SEQUENCE, -1, -1)
        llama_cpp.llama_memory_seq_cp(memory, sequence, PREFIX_SEQUENCE, 0, len(prompt))
    llama_cpp.llama_memory_seq_rm(memory, PREFIX_SEQUENCE, len(prompt), -1)
    for other in range(1, sequences):
        llama_cpp.llama_memory_seq_rm(memory, other, -1, -1)
    llm.input_ids[: len(prompt)] = prompt
    llm.n_tokens = len(prompt)
