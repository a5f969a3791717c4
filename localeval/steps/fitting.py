"""Fitting a judge step's input into the context window: keep the sentences that matter most, say what was left out.

A step declares one input that may shrink (`Fit`) and, optionally, the inputs that tell which of its
sentences matter: those that share most words (character bigrams for Japanese and Chinese) with them
are kept, in reading order, as many as fit. Without a query the first sentences are kept. A gap where
sentences were left out is marked with "…", so the judge knows the text is not whole. A sentence
longer than the room left is cut at a character.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from localeval.data.text import is_cjk, split_sentences
from localeval.grounding.coverage import units

GAP = "…"
StepInput = str | Sequence[str]


@dataclass(frozen=True)
class Fit:
    """`input_name` shrinks to fit the window, keeping the sentences closest to the `query` inputs."""

    input_name: str
    query: tuple[str, ...] = ()

    def describe(self) -> str:
        if not self.query:
            return f"{self.input_name}: its first sentences"
        return f"{self.input_name}: the sentences closest to {' and '.join(self.query)}"


@dataclass(frozen=True)
class Cut:
    """What fitting left out of one call's input, for the sample's record."""

    input_name: str
    kept_chars: int
    total_chars: int
    kept_sentences: int
    total_sentences: int

    def as_dict(self) -> dict[str, int | str]:
        return {
            "input": self.input_name,
            "kept_chars": self.kept_chars,
            "total_chars": self.total_chars,
            "kept_sentences": self.kept_sentences,
            "total_sentences": self.total_sentences,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Cut:
        return cls(
            data["input"], data["kept_chars"], data["total_chars"], data["kept_sentences"], data["total_sentences"]
        )


def shrink(fit: Fit, inputs: Mapping[str, StepInput], max_chars: int) -> tuple[dict[str, StepInput], Cut]:
    """The inputs with `fit.input_name` cut to at most `max_chars` characters of its most relevant sentences."""
    value = inputs[fit.input_name]
    passages = [value] if isinstance(value, str) else list(value)
    sentences = [(p, s) for p, passage in enumerate(passages) for s in split_sentences(passage)]
    query = units(" ".join(_text(inputs[name]) for name in fit.query))
    order = _ranked(sentences, query) if query else list(range(len(sentences)))
    kept: set[int] = set()
    room = max_chars
    for index in order:
        size = len(sentences[index][1]) + 1
        if size <= room:
            kept.add(index)
            room -= size
    truncated = None
    if not kept and sentences and max_chars > len(GAP) + 1:  # not even the best sentence fits: cut it
        best = order[0]
        truncated = (best, sentences[best][1][: max_chars - len(GAP) - 1] + GAP)
        kept.add(best)
    rebuilt = [
        passage
        if all(i in kept for i, (p, _) in enumerate(sentences) if p == number)
        and not (truncated and sentences[truncated[0]][0] == number)
        else text
        for number, (passage, text) in enumerate(zip(passages, _rebuild(passages, sentences, kept, truncated)))
    ]
    shrunk = rebuilt[0] if isinstance(value, str) else [p for p in rebuilt if p]
    cut = Cut(fit.input_name, input_chars(shrunk), input_chars(value), len(kept), len(sentences))
    return {**inputs, fit.input_name: shrunk}, cut


def _ranked(sentences: list[tuple[int, str]], query: frozenset[str]) -> list[int]:
    """Most shared units first; ties keep reading order."""
    overlap = [len(units(sentence) & query) for _, sentence in sentences]
    return sorted(range(len(sentences)), key=lambda i: (-overlap[i], i))


def _rebuild(
    passages: list[str], sentences: list[tuple[int, str]], kept: set[int], truncated: tuple[int, str] | None
) -> list[str]:
    """Each passage from its kept sentences, with "…" wherever sentences were left out; empty if none was kept."""
    pieces: list[list[str]] = [[] for _ in passages]
    for index, (passage, sentence) in enumerate(sentences):
        if index in kept:
            pieces[passage].append(truncated[1] if truncated and truncated[0] == index else sentence)
        elif not pieces[passage] or not pieces[passage][-1].endswith(GAP):
            pieces[passage].append(GAP)
    rebuilt = []
    for parts in pieces:
        joined = _join(parts) if any(part != GAP for part in parts) else ""
        rebuilt.append(joined)
    return rebuilt


def _join(parts: list[str]) -> str:
    """Sentences of space-less scripts (Japanese, Chinese) join without spaces."""
    text = ""
    for part in parts:
        if text and not (_is_cjk_end(text[-1]) and _is_cjk_end(part[0])):
            text += " "
        text += part
    return text


def _is_cjk_end(char: str) -> bool:
    """A CJK character, CJK or full-width punctuation, or a gap: what needs no space beside another one."""
    return is_cjk(char) or "\u3000" <= char <= "\u303f" or "\uff00" <= char <= "\uffef" or char == GAP


def input_chars(value: StepInput) -> int:
    return len(value) if isinstance(value, str) else sum(len(item) for item in value)


def _text(value: StepInput) -> str:
    return value if isinstance(value, str) else " ".join(value)
