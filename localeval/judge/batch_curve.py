"""How fast the judge answers with N calls decoded together on this machine: the curve --batch-decode is chosen from.

Each point times real judge calls through GGUFJudge.generate_many, as a run makes them: a shared instruction
prefix, a question of their own, an answer held to a JSON schema by the grammar. So the curve counts what batching
does not share (each call's own prompt tokens, grammar sampling) as well as what it does (the weights read once
per decode step), and its gain is what a run can expect from the decode steps, not the raw kernel's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from localeval.judge.chat_template import Message
from localeval.judge.protocol import JudgeConfig

CURVE_SIZES = (1, 2, 4, 8)
# A batch size is worth recommending over 1 only from this gain in answer tokens/s: a run also evaluates prompts,
# which batching does not speed up, and its batches are often smaller than N (a step with fewer calls left). On a
# 2-core EPYC, 1.23x here gave a run 1.04x (docs/install.md, "Calls decoded together").
MIN_GAIN = 1.5
ANSWER_TOKENS = 40
_INSTRUCTIONS = (
    "You summarise a passage for a reader. Answer in JSON with one field, summary: one long sentence in your own "
    "words that covers the question's subject.\n\nPassage: The Rhine rises in the Swiss Alps, flows through "
    "Germany and the Netherlands, and reaches the North Sea near Rotterdam. It is about 1,230 kilometres long and "
    "has carried barge traffic since Roman times; Cologne, Düsseldorf and Basel stand on its banks."
)
_QUESTIONS = (
    "Where does the river rise?",
    "Which countries does it cross?",
    "Where does it reach the sea?",
    "How long is it?",
    "Since when has it carried barges?",
    "Which cities stand on it?",
    "What is it known for?",
    "Which sea does it reach?",
)
_SCHEMA = {
    "type": "object",
    "properties": {"summary": {"type": "string", "minLength": 200, "maxLength": 400}},
    "required": ["summary"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class CurvePoint:
    sequences: int
    answer_tokens: int
    seconds: float

    @property
    def tokens_per_second(self) -> float:
        return self.answer_tokens / self.seconds if self.seconds > 0 else 0.0


def measure_curve(path: Path, config: JudgeConfig, sizes: tuple[int, ...] = CURVE_SIZES) -> list[CurvePoint]:
    """Answer tokens per second of the judge at path with each number of calls decoded together (same settings
    as config otherwise), after one warm-up call that puts the shared prefix in the judge's kept states."""
    from localeval.judge.gguf import GGUFJudge
    from localeval.judge.protocol import GenerationRequest

    largest = max(sizes)
    judge = GGUFJudge(path, replace(config, n_ctx=1024 + largest * (ANSWER_TOKENS + 32), batch_decode=largest))
    try:
        requests = [
            GenerationRequest(_messages(question), _SCHEMA, ANSWER_TOKENS, config.seed, 0.0)
            for question in _QUESTIONS[:largest]
        ]
        judge.generate_many(requests[:1])
        curve = []
        for size in sizes:
            started = time.perf_counter()
            generations = judge.generate_many(requests[:size])
            seconds = time.perf_counter() - started
            tokens = 0
            for generation in generations:
                if isinstance(generation, Exception):
                    raise generation
                tokens += generation.completion_tokens
            curve.append(CurvePoint(size, tokens, seconds))
        return curve
    finally:
        judge.close()


def recommended_batch(curve: list[CurvePoint]) -> int:
    """The fastest number of sequences where it gains at least MIN_GAIN over one; else 1."""
    single = _single(curve)
    best = max(curve, key=lambda p: p.tokens_per_second)
    return best.sequences if single and best.tokens_per_second >= MIN_GAIN * single else 1


def describe_curve(curve: list[CurvePoint]) -> str:
    """'1: 29.6, 2: 29.3, 4: 36.4 (x1.23), 8: 33.9 (x1.15) answer tokens/s', the gains over one sequence."""
    single = _single(curve)
    parts = []
    for point in curve:
        gain = f" (x{point.tokens_per_second / single:.2f})" if single and point.sequences > 1 else ""
        parts.append(f"{point.sequences}: {point.tokens_per_second:.1f}{gain}")
    return ", ".join(parts) + " answer tokens/s"


def _single(curve: list[CurvePoint]) -> float:
    """Answer tokens/s with one call at a time; 0 where the curve lacks that point."""
    return next((p.tokens_per_second for p in curve if p.sequences == 1), 0.0)


def _messages(question: str) -> list[Message]:
    return [{"role": "system", "content": _INSTRUCTIONS}, {"role": "user", "content": f"Question: {question}"}]
