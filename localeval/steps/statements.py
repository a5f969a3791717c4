"""Rewriting one sentence of a text as short, self-contained statements (faithfulness, correctness, recall).

Code splits the text into sentences and each sentence gets its own call, with the whole text shown
for context (pronouns). Asked for a whole text at once, a small judge rewrites all of it into every
sentence's group: wrong statements, and minutes of output for a long Japanese answer.
"""

from typing import Annotated, Literal

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

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


class StatedClaim(BaseModel):
    # The statement first, then whether it claims anything: shown one claim it had to write out, a 1.5B
    # judge wrote "no" as "X is not Y" where statements and answer_claim had written nothing for it.
    statement: Statement
    answer: Literal["yes", "no"]
    # The judge's own P(yes) where it wrote the answer; filled in by the step executor, None where unknown.
    probability: SkipJsonSchema[float | None] = None

    @property
    def p(self) -> float:
        return self.probability if self.probability is not None else float(self.answer == "yes")


# The second look at a text in which statements and answer_claim found no claim at all. On the 450 English
# dev answers (HaluEval QA, flat contradictions) the 1.5B judge wrote no statement for 13: "no" (4), "Bart Simpson", negations ("X is not about
# rock groups") and false claims ("Wenling is in Japan."), all of which are claims a user wants checked.
# Only "I don't know", a refusal or filler states nothing, and this step says which with its P(yes).
STATED_CLAIM = Step(
    name="stated_claim",
    inputs=("user_input", "text"),
    output=StatedClaim,
    max_tokens=96,
    description="For a text with no statement found: the claim it makes about the question, and does it claim anything?",
    restates=Restates(input_name="text", output_field="statement", factor=1.0, slack=200, tokens_per_char=3),
    fit=Fit("user_input", query=("text",)),
)
