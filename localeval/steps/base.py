"""A judge step: one prompt file, its named inputs, and the JSON schema its answer must follow."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from localeval.steps.fitting import Fit, StepInput


@dataclass(frozen=True)
class Aligned:
    """The answer's list `output_field` has exactly one item per element of the input `input_name`.

    The grammar then enforces the count, so a small judge can neither skip an item nor ramble past
    the last one, and the token budget grows with the input. An input that is a string instead of a
    list holds the count itself ("3 questions").
    """

    input_name: str
    output_field: str
    tokens_per_item: int

    def count(self, inputs: Mapping[str, StepInput]) -> int:
        value = inputs[self.input_name]
        return int(value) if isinstance(value, str) else len(value)


@dataclass(frozen=True)
class Restates:
    """Each string of the answer's `output_field` (a string, or a list of them) restates part of the input `input_name`.

    The grammar caps each string at `factor` times the input's length plus `slack` characters (room
    for resolved names: "he" becomes "Albert Einstein"), and the token budget grows with the input,
    so a small judge that starts copying the text around the input is cut short.
    """

    input_name: str
    output_field: str
    factor: float
    slack: int
    tokens_per_char: float

    def max_chars(self, inputs: Mapping[str, StepInput]) -> int:
        return int(len(inputs[self.input_name]) * self.factor) + self.slack

    def tokens(self, inputs: Mapping[str, StepInput]) -> int:
        return int(len(inputs[self.input_name]) * self.tokens_per_char)


@dataclass(frozen=True)
class Step:
    """What a judge call asks for. The prompt text lives in prompts/<lang>/<name>.toml."""

    name: str
    inputs: tuple[str, ...]
    output: type[BaseModel]
    max_tokens: int
    description: str
    aligned: Aligned | None = None
    restates: Restates | None = None
    fit: Fit | None = None  # the input cut down when the prompt does not fit the window

    def json_schema(self, inputs: Mapping[str, StepInput] | None = None) -> dict[str, Any]:
        schema = self.output.model_json_schema()
        if inputs is None:
            return schema
        schema = copy.deepcopy(schema)
        if self.aligned:
            count = self.aligned.count(inputs)
            schema["properties"][self.aligned.output_field].update(minItems=count, maxItems=count)
        if self.restates:
            field = schema["properties"][self.restates.output_field]
            items = field.get("items", field)
            items["maxLength"] = min(items.get("maxLength", math.inf), self.restates.max_chars(inputs))
        return schema

    def token_budget(self, inputs: Mapping[str, StepInput]) -> int:
        budget = self.max_tokens
        if self.aligned:
            budget += self.aligned.tokens_per_item * self.aligned.count(inputs)
        if self.restates:
            budget += self.restates.tokens(inputs)
        return budget


@dataclass(frozen=True)
class Call:
    """A request, made by a metric, to run one step on given inputs.

    `vote` distinguishes independent samples of the same step (benchmarks/critiques.py draws them):
    vote 0 is greedy decoding; other votes use their own seed at the configured vote temperature.
    """

    step: str
    inputs: tuple[tuple[str, StepInput], ...]
    vote: int = 0

    @classmethod
    def of(cls, step: str, vote: int = 0, **inputs: StepInput) -> Call:
        frozen = tuple(sorted((k, tuple(v) if isinstance(v, (list, tuple)) else v) for k, v in inputs.items()))
        return cls(step, frozen, vote)

    def input_dict(self) -> Mapping[str, StepInput]:
        return dict(self.inputs)
