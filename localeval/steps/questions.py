"""Questions that a response answers (answer_relevancy), each flagged when the response is evasive."""

from typing import Literal

from pydantic import BaseModel, Field

from localeval.steps.base import Aligned, Step
from localeval.steps.fitting import Fit


class GeneratedQuestion(BaseModel):
    question: str = Field(min_length=1, max_length=200)
    noncommittal: Literal[0, 1]


class Questions(BaseModel):
    questions: list[GeneratedQuestion]


QUESTIONS = Step(
    name="questions",
    inputs=("response", "count"),
    output=Questions,
    max_tokens=24,
    description="Write `count` different questions that the response answers, each with a noncommittal flag.",
    # One call writes all the questions, so the judge sees the earlier ones and varies the later ones.
    aligned=Aligned(input_name="count", output_field="questions", tokens_per_item=70),
    fit=Fit("response"),
)
