"""The arithmetic of a run's cost before it runs: tokens the judge must process, statements per sentence, seconds.

llama-cpp-python keeps the previous call's tokens in its KV cache and processes only what follows
the longest prefix a new prompt shares with them (always at least its last token). The runner
makes each step's calls in a row, so consecutive prompts share the step's instruction and
few-shot examples, and most prompt tokens cost nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from localeval.data.text import is_cjk

# Statements a judge writes per sentence grow with the sentence's length: one, and one more per WORDS_PER_STATEMENT
# words (CJK: characters), at most the step's limit of 6. Fitted to statement_support calls, which also lose
# statements that code drops or merges: benchmarks/data/vs_ragas.jsonl gives 5.4 a sample (a run of the
# 1.5B judge made 5.5), and its first 4 samples 26 (a run of the 0.5B judge made 23).
WORDS_PER_STATEMENT = 25
CJK_CHARS_PER_STATEMENT = 40
MAX_STATEMENTS = 6


@dataclass(frozen=True)
class Speeds:
    """Tokens per second: prompt tokens processed, and tokens generated (with sampling and grammar included)."""

    prompt: float
    generated: float


@dataclass
class Cost:
    """Judge work: calls, prompt tokens in all and not already in the KV cache, generated tokens."""

    calls: int = 0
    prompt_tokens: int = 0
    to_process: int = 0
    generated: int = 0
    estimated_calls: int = 0  # calls whose number depends on earlier judge answers, so estimated by code

    def add(self, other: Cost) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.to_process += other.to_process
        self.generated += other.generated
        self.estimated_calls += other.estimated_calls

    def seconds(self, speeds: Speeds) -> float:
        return seconds(self.to_process, self.generated, speeds)


def shared_prefix(previous: Sequence[int], current: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    shared = 0
    for mine, theirs in zip(previous, current):
        if mine != theirs:
            break
        shared += 1
    return shared


def tokens_to_process(previous: Sequence[int], current: Sequence[int]) -> int:
    """Prompt tokens llama.cpp evaluates after `previous` is in its cache: all past the shared prefix, at least one."""
    if not current:
        return 0
    return len(current) - min(shared_prefix(previous, current), len(current) - 1)


def seconds(to_process: int, generated: int, speeds: Speeds) -> float:
    """The judge's time: prompt tokens at the prompt speed plus generated tokens at the generation speed."""
    return to_process / speeds.prompt + generated / speeds.generated


def statement_count(sentence: str) -> int:
    """Statements a judge typically makes of one sentence: by its words, or by its characters in Japanese/Chinese."""
    words = len(sentence.split())
    cjk = sum(1 for char in sentence if is_cjk(char))
    count = cjk // CJK_CHARS_PER_STATEMENT if cjk > words else words // WORDS_PER_STATEMENT
    return max(1, min(MAX_STATEMENTS, 1 + count))


def split_evenly(items: Sequence[str], parts: int) -> list[list[str]]:
    """`items` in `parts` consecutive runs of near-equal length (earlier runs take the remainder); no run empty."""
    parts = max(1, min(parts, len(items)))
    size, extra = divmod(len(items), parts)
    runs, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        runs.append(list(items[start:end]))
        start = end
    return runs
