"""The judge's KV states for the prompt prefixes that calls repeat: each step's instructions and examples.

llama-cpp-python reuses the KV cache only for what a prompt shares with the one before it, so every
switch from one step to another evaluated the new step's instructions and examples again (several
hundred tokens, seconds on a CPU): once per step per round of the runner. Here a step's prefix is
evaluated once, on its own from position 0, its KV state is kept in RAM (about 28 KB a token for
the 1.5B judge), and later calls that start with it restore the state instead.

Evaluating the prefix alone, never on top of whatever the previous call left, also makes its KV
state the same whichever call came first, so a resumed or reordered run starts from the same state.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from localeval.judge.estimate import shared_prefix

MIN_PREFIX = 64  # a shorter prefix costs less to evaluate than to keep track of
SEQUENCE = 0  # llama-cpp-python keeps one sequence in the KV cache


class PrefixStates:
    """KV states of prompt prefixes, least recently used dropped first once they take more than `budget_bytes`."""

    def __init__(self, llm: Any, budget_bytes: int):
        self._llm = llm
        self._budget = budget_bytes
        self._states: OrderedDict[tuple[int, ...], ctypes.Array[ctypes.c_uint8]] = OrderedDict()

    def prepare(self, tokens: Sequence[int], prefix_length: int) -> int:
        """Make the KV cache start with tokens[:prefix_length] where that saves work; returns how many of the
        prompt's tokens the cache then holds that this call will not evaluate."""
        llm = self._llm
        live = shared_prefix(llm.input_ids[: llm.n_tokens], tokens)
        if not worth_keeping(prefix_length, live) or self._budget <= 0:
            return live
        prefix = tuple(tokens[:prefix_length])
        state = self._states.get(prefix)
        if state is not None and self._restore(prefix, state):
            self._states.move_to_end(prefix)
            return prefix_length
        self._evaluate_and_keep(prefix)
        return 0

    def _restore(self, prefix: tuple[int, ...], state: ctypes.Array[ctypes.c_uint8]) -> bool:
        import llama_cpp

        llm = self._llm
        llm._ctx.kv_cache_seq_rm(SEQUENCE, 0, -1)
        llm.n_tokens = 0
        if not llama_cpp.llama_state_seq_set_data(llm._ctx.ctx, state, len(state), SEQUENCE):
            return False
        llm.input_ids[: len(prefix)] = prefix
        llm.n_tokens = len(prefix)
        llm._requires_eval = True  # the logits are not the prefix's last token's: generate() evaluates on from here
        return True

    def _evaluate_and_keep(self, prefix: tuple[int, ...]) -> None:
        import llama_cpp

        llm = self._llm
        llm.reset()
        llm.eval(prefix)
        size = llama_cpp.llama_state_seq_get_size(llm._ctx.ctx, SEQUENCE)
        if size > self._budget:
            return
        state = (ctypes.c_uint8 * size)()
        if llama_cpp.llama_state_seq_get_data(llm._ctx.ctx, state, size, SEQUENCE) != size:
            return
        self._states[prefix] = state
        while sum(len(kept) for kept in self._states.values()) > self._budget:
            self._states.popitem(last=False)


def worth_keeping(prefix_length: int, live: int) -> bool:
    """Should a call whose prompt shares `live` tokens with the KV cache start from its prefix's kept state?"""
    return prefix_length >= MIN_PREFIX and live < prefix_length
