"""A 1-5 grade of a response against a rubric (rubric_score)."""

from typing import Literal

from pydantic import BaseModel, Field

from localeval.steps.base import Step
from localeval.steps.fitting import Fit


class RubricGrade(BaseModel):
    reason: str = Field(min_length=1, max_length=300)
    score: Literal[1, 2, 3, 4, 5]


RUBRIC = Step(
    name="rubric",
    inputs=("rubric", "user_input", "response", "reference"),
    output=RubricGrade,
    max_tokens=200,
    description="Grade the response 1-5 against the rubric. Short reason, then the score.",
    fit=Fit("response", query=("user_input", "reference")),
)
