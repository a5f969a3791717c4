"""Text handling shared by steps and metrics: sentence splitting that knows CJK punctuation."""

from __future__ import annotations

import re
import unicodedata

_CLOSERS = {"「": "」", "『": "』", "（": "）", "(": ")", "【": "】", "〔": "〕", "《": "》", "〈": "〉"}
_CJK_ENDS = "。！？｡"
_LATIN_ENDS = ".!?"
_TRAILERS = "」』）)】〕》〉”’\"'"
# Abbreviations after which a full stop does not end an English sentence.
_ABBREVIATIONS = {
    "mr",
    "mrs",
    "ms",
    "dr",
    "prof",
    "st",
    "jr",
    "sr",
    "vs",
    "etc",
    "e.g",
    "i.e",
    "fig",
    "approx",
    "inc",
    "ltd",
    "co",
    "u.s",
    "u.k",
    "a.m",
    "p.m",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
}
# Words that abbreviate only before a number: "No. 5", but "The answer is no." ends its sentence.
_NUMBER_ABBREVIATIONS = {"no", "nos"}


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`, ending at . ! ? 。！？ and line breaks; quotes 「」『』 and brackets （） stay whole."""
    sentences: list[str] = []
    for line in re.split(r"\n+", text):
        sentences.extend(_split_line(line))
    return [s for s in (s.strip() for s in sentences) if s]


def _split_line(line: str) -> list[str]:
    pieces, start, depth_stack = [], 0, []
    i = 0
    while i < len(line):
        char = line[i]
        if char in _CLOSERS:
            depth_stack.append(_CLOSERS[char])
        elif depth_stack and char == depth_stack[-1]:
            depth_stack.pop()
        elif not depth_stack and _ends_sentence(line, i):
            end = i + 1
            while end < len(line) and (line[end] in _CJK_ENDS + _LATIN_ENDS or line[end] in _TRAILERS):
                end += 1
            pieces.append(line[start:end])
            start = i = end
            continue
        i += 1
    pieces.append(line[start:])
    return pieces


def _ends_sentence(line: str, i: int) -> bool:
    char = line[i]
    if char in _CJK_ENDS:
        return True
    if char not in _LATIN_ENDS:
        return False
    rest = line[i + 1 :]
    if rest and not rest[0].isspace() and rest[0] not in _TRAILERS and not _run_on(line[:i], rest):
        return False  # 3.5, e.g., www.example
    if char == ".":
        word = re.search(r"([\w.]+)$", line[:i])
        initial = word is not None and len(word.group(1)) == 1 and word.group(1).isalpha()  # not a digit: "is 8."
        if word and (word.group(1).lower() in _ABBREVIATIONS or initial):
            return False  # Dr. Smith, J. R. R. Tolkien
        if word and word.group(1).lower() in _NUMBER_ABBREVIATIONS and re.match(r"\s*\d", rest):
            return False  # No. 5
        if re.fullmatch(r"\s*\d+", line[:i]):
            return False  # a numbered list item: "1. ", "10. "
    return True


def _run_on(before: str, rest: str) -> bool:
    """A full stop with no space after it that still ends a sentence: "in 2014.PharmaCann is", "countries.The"
    (generated text often drops the space). Not "e.g.The" (an abbreviation) nor "example.com"."""
    word = re.search(r"([\w.]+)$", before)
    return (
        word is not None
        and len(word.group(1)) >= 2
        and word.group(1)[-1].isalnum()
        and word.group(1).lower() not in _ABBREVIATIONS
        and re.match(r"[A-Z][a-z]", rest) is not None
    )


def normalize(text: str) -> str:
    """NFKC (full-width to half-width), case-folded, whitespace collapsed: for comparing entities and strings."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


KANA = "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"  # hiragana, katakana and their extensions, half-width katakana
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs, extension A and compatibility ideographs
CJK_CLASS = f"[{KANA}{HAN}]"  # a regular-expression class: the one definition of a CJK character
_KANA = re.compile(f"[{KANA}]")
_HAN = re.compile(f"[{HAN}]")
_CJK = re.compile(CJK_CLASS)


def is_cjk(char: str) -> bool:
    """Kana or Han: a character of the space-less scripts, counted and compared one by one."""
    return bool(_CJK.fullmatch(char))


def detect_language(text: str) -> str:
    """'ja' when the text has kana, 'zh' when it has Han characters but no kana, else 'en'."""
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    return "en"
