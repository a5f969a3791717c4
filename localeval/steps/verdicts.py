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
    # Answer first, as a word: with reason-first 1/0 verdicts the 1.5B judge often contradicted its own
    # reason ("it does not harm anyone" → 1); on the example data, answer-first "yes"/"no" flagged
    # wrong answers as incorrect and benign ones as harmless far more often.
    answer: Literal["yes", "no"]
    reason: str = Field(min_length=1, max_length=240)

    @property
    def verdict(self) -> int:
        return 1 if self.answer == "yes" else 0


CRITIQUE = Step(
    name="critique",
    inputs=("criterion", "user_input", "retrieved_contexts", "response"),
    output=CritiqueAnswer,
    max_tokens=160,
    description="Answer the criterion's yes/no question about the response, then give a short reason.",
    fit=Fit("retrieved_contexts", query=("user_input", "response")),
)
