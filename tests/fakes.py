"""A scripted judge for plumbing and fault-injection tests; it never loads a model.

`FakeJudge` implements the `Judge` protocol. Each call is recorded, then answered by the next
scripted reply, or by `respond(call)` once the script is used up. A reply is a text (a complete,
untruncated answer), a `Generation`, or an exception to raise (TimeoutError, ContextOverflow,
KeyboardInterrupt, ...).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Union

from localeval.judge.gguf import Message
from localeval.judge.protocol import Generation, GenerationRequest

Reply = Union[str, Generation, BaseException]


@dataclass(frozen=True)
class JudgeCall(GenerationRequest):
    @property
    def step(self) -> str:
        """Which step asked, told apart by the answer's schema."""
        return "statements" if "statements" in self.schema["properties"] else "statement_support"

    @property
    def last_user(self) -> str:
        return self.messages[-1]["content"]


def answer(
    text: str, prompt_tokens: int = 100, completion_tokens: int = 10, seconds: float = 0.5, truncated: bool = False
) -> Generation:
    return Generation(text, prompt_tokens, completion_tokens, seconds, truncated)


def as_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


class FakeJudge:
    """Scripted answers and faults, with every call recorded in `calls`."""

    def __init__(
        self, replies: Iterable[Reply] = (), respond: Callable[[JudgeCall], Reply] | None = None, n_ctx: int = 4096
    ):
        self.n_ctx = n_ctx
        self.replies = list(replies)
        self.respond = respond
        self.calls: list[JudgeCall] = []

    def generate(
        self, messages: list[Message], schema: dict[str, Any], max_tokens: int, seed: int, temperature: float
    ) -> Generation:
        call = JudgeCall(messages, schema, max_tokens, seed, temperature)
        self.calls.append(call)
        if self.replies:
            reply = self.replies.pop(0)
        elif self.respond is not None:
            reply = self.respond(call)
        else:
            raise AssertionError(f"unexpected judge call #{len(self.calls)}")
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, str):
            return answer(reply)
        return reply


class FakeBatchJudge(FakeJudge):
    """A FakeJudge that also takes several calls at once, as a GGUF judge with batch_decode > 1 does: each is answered
    or failed as generate() would, and `batches` records how many came together."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.batches: list[int] = []

    def generate_many(self, requests: list[GenerationRequest]) -> list[Generation | Exception]:
        self.batches.append(len(requests))
        results: list[Generation | Exception] = []
        for r in requests:
            try:
                results.append(self.generate(r.messages, r.schema, r.max_tokens, r.seed, r.temperature))
            except Exception as error:
                results.append(error)
        return results
