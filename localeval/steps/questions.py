"""Questions that a response answers (answer_relevancy), and whether the response is evasive."""

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from localeval.steps.base import Aligned, Step
from localeval.steps.fitting import Fit


class Questions(BaseModel):
    questions: list[Annotated[str, Field(min_length=1, max_length=200)]]
    # Whether the response is evasive is a property of the response, so it is asked once, after the questions; a
    # flag on each question cost the 1.5B judge a third of the step's tokens.
    noncommittal: Literal[0, 1]


QUESTIONS = Step(
    name="questions",
    inputs=("response", "count"),
    output=Questions,
    max_tokens=24,
    description="Write `count` different questions that the response answers, then whether it is noncommittal.",
    # One call writes all the questions, so the judge sees the earlier ones and varies the later ones.
    aligned=Aligned(input_name="count", output_field="questions", tokens_per_item=70),
    fit=Fit("response"),
)
