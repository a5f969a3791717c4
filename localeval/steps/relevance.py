"""Which sentences of one context are needed to answer the question (context_relevancy)."""

from typing import Literal

from pydantic import BaseModel

from localeval.steps.base import Aligned, Step


class SentenceVerdicts(BaseModel):
    verdicts: list[Literal[0, 1]]


SENTENCE_RELEVANCE = Step(
    name="sentence_relevance",
    inputs=("user_input", "sentences"),
    output=SentenceVerdicts,
    max_tokens=16,
    description="Mark each numbered sentence of a context 1 if it is needed to answer the question, else 0.",
    # Code splits the context into sentences and the judge marks them, so what counts as "extracted"
    # is always a real sentence of the context, never a paraphrase.
    aligned=Aligned(input_name="sentences", output_field="verdicts", tokens_per_item=3),
)
