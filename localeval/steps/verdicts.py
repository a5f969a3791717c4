"""Yes/no judgements: statement support (the verdict alone); context usefulness and critiques (a reason first)."""

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from localeval.steps.base import Step
from localeval.steps.fitting import Fit


class JudgeProbability:
    """P(verdict = 1): the judge's own probability where it is known, else the verdict itself."""

    if TYPE_CHECKING:  # fields of the models that mix this in (pydantic must not see them here)
        verdict: int
        probability: float | None

    @property
    def p(self) -> float:
        return self.probability if self.probability is not None else float(self.verdict)


class Verdict(JudgeProbability, BaseModel):
    # The reason comes before the verdict, and the reports show it. For statement_support a reason first
    # did not make P agree better with people (SupportVerdict). For context_usefulness and part_answered the
    # verdict alone ranked as well but called far more passages useful and non-answers answered, P's level that
    # a score is read by (docs/install.md, "Speed on a CPU"), so they keep it.
    reason: str = Field(min_length=1, max_length=240)
    verdict: Literal[0, 1]
    # The judge's own P(verdict = 1), read from its token probabilities where it wrote the verdict.
    # Not part of the answer's schema: the step executor fills it in; None where it is unknown.
    probability: SkipJsonSchema[float | None] = None


class SupportVerdict(JudgeProbability, BaseModel):
    # The verdict alone. Faithfulness reads only P(verdict = 1), and the grounding evidence shows why; the
    # reason a 1.5B judge wrote first took most of the call without making P agree better with people
    # (docs/install.md, "Speed on a CPU").
    verdict: Literal[0, 1]
    probability: SkipJsonSchema[float | None] = None  # as Verdict's


STATEMENT_SUPPORT = Step(
    name="statement_support",
    inputs=("retrieved_contexts", "statement"),
    output=SupportVerdict,
    max_tokens=16,
    description="Does the context support the statement? Verdict 1 or 0, no reason.",
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
    # The judge's own P(yes) where it wrote the answer; filled in by the step executor, None where unknown.
    probability: SkipJsonSchema[float | None] = None

    @property
    def p(self) -> float:
        """P(yes): the judge's own probability at the answer token where known, else the answer it wrote.

        Read as a probability, not as the drawn word: on benchmarks/injection.py (1.5B judge) a vote drawn at
        the vote temperature wrote the less likely answer in 57 of 594 votes, often against its own reason.
        """
        return self.probability if self.probability is not None else float(self.answer == "yes")


CRITIQUE = Step(
    name="critique",
    inputs=("criterion", "user_input", "retrieved_contexts", "response"),
    output=CritiqueAnswer,
    max_tokens=160,
    description="A short reason, then the yes/no answer to the criterion's question about the response.",
    fit=Fit("retrieved_contexts", query=("user_input", "response")),
)
