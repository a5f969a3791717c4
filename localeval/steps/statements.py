"""Splitting a text into short, self-contained statements (faithfulness, correctness, recall).

The text is split into sentences by code first; the judge then rewrites each sentence as its
statements, one group per sentence, so it cannot invent statements past the end of the text.
"""

from typing import Annotated

from pydantic import BaseModel, Field

from localeval.steps.base import Aligned, Step

Statement = Annotated[str, Field(min_length=1, max_length=300)]


class Statements(BaseModel):
    statements: list[Annotated[list[Statement], Field(max_length=6)]]

    def flat(self) -> list[str]:
        """All statements in order, without repeats."""
        return list(dict.fromkeys(s.strip() for group in self.statements for s in group if s.strip()))


STATEMENTS = Step(
    name="statements",
    inputs=("user_input", "sentences"),
    output=Statements,
    max_tokens=32,
    description="Rewrite each sentence of a text as self-contained statements, pronouns resolved.",
    aligned=Aligned(input_name="sentences", output_field="statements", tokens_per_item=120),
)
