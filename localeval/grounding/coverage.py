"""Grounding that code computes, with no model: how much of a statement its contexts cover, and where.

A statement is broken into units: character bigrams for Japanese and Chinese (no spaces to split
words on), casefolded words for everything else, after NFKC and without punctuation. Coverage is
the share of a statement's units found in the contexts. It is the model-free floor that judge-based
faithfulness must beat, and a signal the judge's verdict is combined with. The evidence finder picks
the few context sentences that cover a statement best, so the judge reads those instead of every
passage in full.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from localeval.data.text import CJK_CLASS, split_sentences

_CJK = re.compile(CJK_CLASS)
_CJK_OR_NOT = re.compile(f"{CJK_CLASS}+|[^{CJK_CLASS[1:-1]}]+")
_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# English function words: a statement's "the" and "of" are in any context and prove nothing.
_STOPWORDS = frozenset(
    """a an the of in on at to for from by with and or but is are was were be been being it its
this that these those as which who whom whose what when where how than then there their they them he she his her him
i we you our your us do does did has have had not no so if into over about also can could would should will may
might must such very just only more most other some any each""".split()
)


def units(text: str) -> frozenset[str]:
    """Comparable pieces of `text`: CJK character bigrams and non-CJK words, after NFKC and casefolding."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    found: set[str] = set()
    for run in re.split(r"[^\w]+|_", folded):
        if not run:
            continue
        if _CJK.search(run):
            found.update(_cjk_units(run))
        elif run not in _STOPWORDS:
            found.add(run)
    return frozenset(found)


def _cjk_units(run: str) -> set[str]:
    """Bigrams across the run; a lone character counts as itself. Latin words inside the run stay whole."""
    found: set[str] = set()
    for piece in _CJK_OR_NOT.findall(run):
        if not _CJK.match(piece):
            found.add(piece)
        elif len(piece) == 1:
            found.add(piece)
        else:
            found.update(piece[i : i + 2] for i in range(len(piece) - 1))
    return found


def coverage(statement: str, covering: frozenset[str] | Passages | Sequence[str]) -> float:
    """Share of the statement's units that occur in `covering` (contexts, or their units); 1.0 for no units."""
    wanted = units(statement)
    if not wanted:
        return 1.0
    have = covering if isinstance(covering, frozenset) else _passages(covering).units
    return len(wanted & have) / len(wanted)


def uncovered_numbers(statement: str, contexts: Passages | Sequence[str]) -> list[str]:
    """Numbers in the statement that appear nowhere in the contexts: the commonest real error, seen for free."""
    haystack = _passages(contexts).numbers
    numbers = [_plain_number(n) for n in _NUMBER.findall(unicodedata.normalize("NFKC", statement))]
    return [n for n in dict.fromkeys(numbers) if n not in haystack]


def _plain_number(number: str) -> str:
    """1,230 and 1230 are the same number; 3.5 keeps its point."""
    return re.sub(r",(?=\d{3}\b)", "", number)


@dataclass(frozen=True)
class Evidence:
    """The context sentences that best cover a statement, in reading order, and how much they cover."""

    sentences: tuple[str, ...]
    coverage: float  # of the statement by these sentences
    context_coverage: float  # of the statement by all the contexts


class Passages:
    """Contexts split into sentences, with their units and numbers worked out once for all their statements."""

    def __init__(self, contexts: Sequence[str]):
        self.sentences = [s for context in contexts for s in split_sentences(context)]
        self.sentence_units = [units(s) for s in self.sentences]
        self.units = units("\n".join(contexts))
        text = unicodedata.normalize("NFKC", "\n".join(contexts))
        self.numbers = frozenset(_plain_number(n) for n in _NUMBER.findall(text))


def _passages(contexts: Passages | Sequence[str]) -> Passages:
    return contexts if isinstance(contexts, Passages) else Passages(contexts)


def find_evidence(statement: str, contexts: Passages | Sequence[str], max_sentences: int = 3) -> Evidence:
    """Greedy cover: the sentence that covers most of the statement, then the one that adds most, and so on."""
    passages = _passages(contexts)
    wanted = units(statement)
    sentence_units = passages.sentence_units
    chosen: list[int] = []
    covered: frozenset[str] = frozenset()
    while len(chosen) < max_sentences:
        gains = [(len((wanted & su) - covered), -len(su), i) for i, su in enumerate(sentence_units) if i not in chosen]
        if not gains:
            break
        gain, _, best = max(gains)
        if gain == 0 and chosen:
            break
        chosen.append(best)
        covered |= wanted & sentence_units[best]
    share = len(covered) / len(wanted) if wanted else 1.0
    context_share = len(wanted & passages.units) / len(wanted) if wanted else 1.0
    return Evidence(tuple(passages.sentences[i] for i in sorted(chosen)), share, context_share)


def lowest_coverage(text: str, contexts: Sequence[str]) -> float:
    """The model-free floor for a whole response: the coverage of its least covered sentence."""
    have = units("\n".join(contexts))
    return min((coverage(sentence, have) for sentence in split_sentences(text)), default=1.0)
