"""Keyphrase questions about a text, and whether a summary answers them (summarization_score)."""

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from localeval.steps.base import Aligned, Step
from localeval.steps.fitting import Fit


class KeyphraseQuestions(BaseModel):
    keyphrases: list[Annotated[str, Field(min_length=1, max_length=80)]] = Field(min_length=1, max_length=8)
    questions: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(min_length=1, max_length=8)


class SummaryAnswers(BaseModel):
    answers: list[Literal[0, 1]]


SUMMARY_QUESTIONS = Step(
    name="summary_questions",
    inputs=("text",),
    output=KeyphraseQuestions,
    max_tokens=700,
    description="Pick the text's keyphrases and write yes/no questions about them that the text answers with yes.",
    fit=Fit("text"),
)

SUMMARY_ANSWERS = Step(
    name="summary_answers",
    inputs=("summary", "questions"),
    output=SummaryAnswers,
    max_tokens=16,
    description="For each numbered question, 1 if the summary answers it with yes, else 0.",
    aligned=Aligned(input_name="questions", output_field="answers", tokens_per_item=3),
    fit=Fit("summary", query=("questions",)),
)
