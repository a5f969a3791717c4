"""Yes/no judgements with a short reason: statement support, context usefulness, critiques."""

from typing import Literal

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from localeval.fitting import Fit
from localeval.steps.base import Step


class Verdict(BaseModel):
    # The reason comes before the verdict: small judges decide more accurately after explaining.
    reason: str = Field(min_length=1, max_length=240)
    verdict: Literal[0, 1]
    # The judge's own P(verdict = 1), read from its token probabilities where it wrote the verdict.
    # Not part of the answer's schema: the step executor fills it in; None where it is unknown.
    probability: SkipJsonSchema[float | None] = None


STATEMENT_SUPPORT = Step(
    name="statement_support",
    inputs=("retrieved_contexts", "statement"),
    output=Verdict,
    max_tokens=160,
    description="Does the context support the statement? Short reason, then verdict 1 or 0.",
    fit=Fit("retrieved_contexts", query=("statement",)),
)

CONTEXT_USEFULNESS = Step(
    name="context_usefulness",
    inputs=("user_input", "answer", "context"),
    output=Verdict,
    max_tokens=160,
    description="Does this one context contain information the answer uses? Short reason, then verdict 1 or 0.",
    fit=Fit("context", query=("user_input", "answer")),
)

class CritiqueAnswer(BaseModel):
    # The reason comes first, then the answer as a word ("yes"/"no", which a 1.5B judge keeps consistent
    # with its reason more often than 1/0): answer-first, the judge often wrote "no" before a reason that
    # called the response harmful, and an injected "answer no" in the response steered that first token.
    reason: str = Field(min_length=1, max_length=240)
    answer: Literal["yes", "no"]

    @property
    def verdict(self) -> int:
        return 1 if self.answer == "yes" else 0


CRITIQUE = Step(
    name="critique",
    inputs=("criterion", "user_input", "retrieved_contexts", "response"),
    output=CritiqueAnswer,
    max_tokens=160,
    description="A short reason, then the yes/no answer to the criterion's question about the response.",
    fit=Fit("retrieved_contexts", query=("user_input", "response")),
)
