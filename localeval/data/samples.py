"""The evaluation sample: one row of a RAG dataset, with the common field names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

TEXT_FIELDS = ("user_input", "response", "reference")
LIST_FIELDS = ("retrieved_contexts", "reference_contexts", "retrieved_context_ids", "reference_context_ids")
FIELDS = TEXT_FIELDS + LIST_FIELDS
TextField = Literal["user_input", "response", "reference"]
ListField = Literal["retrieved_contexts", "reference_contexts", "retrieved_context_ids", "reference_context_ids"]
RUBRIC_FIELD = "rubric"  # rubric_score's rubric for the row
# Optional text columns kept in `extra` (no alias, no --map target), checked like the text fields when present.
EXTRA_TEXT_FIELDS = (RUBRIC_FIELD,)

# Older Ragas-style names, accepted so existing datasets load unchanged.
ALIASES = {
    "question": "user_input",
    "answer": "response",
    "contexts": "retrieved_contexts",
    "ground_truth": "reference",
}


@dataclass(frozen=True)
class Sample:
    """One row to evaluate. `id` is the row's own id, or its row number when it has none."""

    id: str
    row: int
    user_input: str | None = None
    response: str | None = None
    reference: str | None = None
    retrieved_contexts: tuple[str, ...] | None = None
    reference_contexts: tuple[str, ...] | None = None
    retrieved_context_ids: tuple[str, ...] | None = None
    reference_context_ids: tuple[str, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def has(self, name: str) -> bool:
        """True when the field is present and not empty (an empty list counts as present)."""
        value = getattr(self, name)
        if value is None:
            return False
        return isinstance(value, tuple) or value.strip() != ""

    def missing(self, names: tuple[str, ...]) -> list[str]:
        return [n for n in names if not self.has(n)]

    def text(self, name: TextField) -> str:
        """A text field that a metric requires: the runner scores a row without it NaN `missing_field` and never
        runs the metric on it, so a None here is a bug in the caller."""
        value: str | None = getattr(self, name)
        if value is None:
            raise ValueError(f"sample {self.id!r} has no {name}, which the metric requires")
        return value

    def texts(self, name: ListField) -> tuple[str, ...]:
        """A list field that a metric requires (see `text`)."""
        value: tuple[str, ...] | None = getattr(self, name)
        if value is None:
            raise ValueError(f"sample {self.id!r} has no {name}, which the metric requires")
        return value
