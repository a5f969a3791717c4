"""A real judge with a log: which step each call ran, with which seed and temperature.

Not a fake: every answer comes from the wrapped model. Tests use it to count calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from localeval.judge.gguf import Message
from localeval.judge.protocol import Generation, JudgeBackend
from localeval.steps.prompts import LANGUAGES, PromptLibrary


@dataclass(frozen=True)
class Recorded:
    step: str
    lang: str
    sample_input: str  # the last user message: the sample's rendered inputs
    seed: int
    temperature: float


class RecordingJudge:
    """Passes every call to `judge` and records it; the step is recognised by its prompt's instruction."""

    def __init__(self, judge: JudgeBackend):
        self.judge = judge
        self.n_ctx = judge.n_ctx
        self.calls: list[Recorded] = []
        library = PromptLibrary()
        self._steps = {library.get(step, lang).instruction.strip(): (step, lang) for step, lang in library.available()}
        assert set(LANGUAGES) >= {lang for _, lang in self._steps.values()}

    def generate(
        self, messages: list[Message], schema: dict[str, Any], max_tokens: int, seed: int, temperature: float
    ) -> Generation:
        step, lang = self._steps[messages[0]["content"]]
        self.calls.append(Recorded(step, lang, messages[-1]["content"], seed, temperature))
        return self.judge.generate(messages, schema, max_tokens, seed, temperature)

    def steps(self) -> list[str]:
        return [call.step for call in self.calls]
