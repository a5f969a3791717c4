"""Prompt-lookup decoding: guess the judge's next tokens from text it has already read, and check the guess in one pass.

On a CPU the judge writes one token per forward pass, yet a pass over a few tokens costs little more
than a pass over one (the 1.5B judge on 2 cores: 60 ms for 1 token, 113 ms for 4, 205 ms for 8).
Much of what a judge writes is copied: statements repeat the words of the sentence they rewrite,
reasons quote the context, and the JSON keys repeat the examples'. So after each token the last few
tokens are looked up earlier in the prompt and the answer, and what followed them there is proposed.
The judge evaluates the proposal in one batch and keeps it up to the first token it would not have
picked itself; the token it picks there comes for free. The answer is the judge's own, token for
token: every token is still chosen by the sampler from the judge's logits at its position.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


class PromptLookup:
    """Proposes the tokens that followed the latest earlier occurrence of the last `ngram` tokens (longest first)."""

    def __init__(self, max_ngram: int = 3, min_ngram: int = 2, max_draft: int = 8):
        self.max_ngram, self.min_ngram, self.max_draft = max_ngram, min_ngram, max_draft

    def __call__(self, input_ids: np.ndarray) -> np.ndarray:
        return draft(np.asarray(input_ids), self.max_ngram, self.min_ngram, self.max_draft)


def draft(tokens: np.ndarray, max_ngram: int, min_ngram: int, max_draft: int) -> np.ndarray:
    """What followed the latest earlier match of the longest tail n-gram (max_ngram down to min_ngram); empty if none.

    The latest match wins because the nearest text is the likeliest to be copied on: the sentence being
    rewritten comes after the examples, and the answer's own words after both.
    """
    for n in range(min(max_ngram, tokens.size - 1), min_ngram - 1, -1):
        tail = tokens[-n:]
        windows = sliding_window_view(tokens[:-1], n)  # the tail itself is not an earlier occurrence
        matches = np.flatnonzero((windows == tail).all(axis=1))
        if matches.size:
            start = int(matches[-1]) + n
            return tokens[start : start + max_draft].copy()
    return tokens[:0].copy()
