"""Rewriting one sentence of a text as short, self-contained statements (faithfulness, correctness, recall).

Code splits the text into sentences and each sentence gets its own call, with the whole text shown
for context (pronouns). Asked for a whole text at once, a small judge rewrites all of it into every
sentence's group: wrong statements, and minutes of output for a long Japanese answer.
"""

from typing import Annotated

from pydantic import BaseModel, Field

from localeval.steps.base import Restates, Step
from localeval.steps.fitting import Fit

Statement = Annotated[str, Field(min_length=1, max_length=300)]


class Statements(BaseModel):
    statements: list[Statement] = Field(max_length=6)


STATEMENTS = Step(
    name="statements",
    inputs=("user_input", "text", "sentence"),
    output=Statements,
    max_tokens=96,
    description="Rewrite one sentence of a text as self-contained statements, pronouns resolved.",
    # No statement is longer than its sentence plus resolved names; 3 tokens per character of the
    # sentence leave room for several statements in Japanese, where a character is about one token.
    restates=Restates(input_name="sentence", output_field="statements", factor=1.0, slack=40, tokens_per_char=3),
    fit=Fit("text", query=("sentence",)),
)

# A short answer ("Arthur's Magazine", "1889") claims something only together with its question: alone, a
# name that the contexts mention is "supported" whether or not it answers the question.
ANSWER_CLAIM = Step(
    name="answer_claim",
    inputs=("user_input", "text"),
    output=Statements,
    max_tokens=96,
    description="Write a short answer (a name, a number, a phrase) as the statement it makes about the question.",
    # The statement is the answer with words of the question around it: room for a question of 200 characters.
    restates=Restates(input_name="text", output_field="statements", factor=1.0, slack=200, tokens_per_char=3),
    fit=Fit("user_input", query=("text",)),
)
