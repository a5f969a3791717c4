"""The parts of a question, whether a response answers each, and which of its sentences stay on the question
(answer_completeness)."""

from typing import Annotated

from pydantic import BaseModel, Field

from localeval.steps.base import Aligned, Step
from localeval.steps.fitting import Fit
from localeval.steps.relevance import SentenceVerdicts
from localeval.steps.verdicts import Verdict

MAX_PARTS = 4


class QuestionParts(BaseModel):
    parts: list[Annotated[str, Field(min_length=1, max_length=160)]] = Field(min_length=1, max_length=MAX_PARTS)


QUESTION_PARTS = Step(
    name="question_parts",
    inputs=("user_input",),
    output=QuestionParts,
    max_tokens=240,
    description="Split the question into the separate things it asks for, each written as a short question.",
    fit=Fit("user_input"),
)

PART_ANSWERED = Step(
    name="part_answered",
    inputs=("user_input", "part", "response"),
    output=Verdict,
    max_tokens=160,
    description="Does the response answer this one part of the question? Short reason, then verdict 1 or 0.",
    fit=Fit("response", query=("part",)),
)

RESPONSE_FOCUS = Step(
    name="response_focus",
    inputs=("user_input", "sentences"),
    output=SentenceVerdicts,
    max_tokens=16,
    description="Mark each numbered sentence of a response 1 if it addresses the question, 0 if it is about "
    "something the question does not ask.",
    # Code splits the response into sentences and the judge marks them, as for sentence_relevance.
    aligned=Aligned(input_name="sentences", output_field="verdicts", tokens_per_item=3),
)
