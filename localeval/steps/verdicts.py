"""Deciding whether retrieved contexts support one statement, with a short reason first."""

from typing import Literal

from pydantic import BaseModel, Field

from localeval.steps.base import Step


class SupportVerdict(BaseModel):
    # The reason comes before the verdict: small judges decide more accurately after explaining.
    reason: str = Field(min_length=1, max_length=240)
    verdict: Literal[0, 1]


STATEMENT_SUPPORT = Step(
    name="statement_support",
    inputs=("retrieved_contexts", "statement"),
    output=SupportVerdict,
    max_tokens=160,
    description="Does the context support the statement? Short reason, then verdict 1 or 0.",
)
