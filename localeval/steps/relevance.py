"""Which sentences of one context are needed to answer the question (context_relevancy)."""

from typing import Literal

from pydantic import BaseModel
from pydantic.json_schema import SkipJsonSchema

from localeval.steps.base import Aligned, Step


class SentenceVerdicts(BaseModel):
    verdicts: list[Literal[0, 1]]
    # The judge's own P(1) for each mark, read where it wrote it; filled in by the step executor, None where
    # unknown. Not part of the answer's schema.
    probabilities: SkipJsonSchema[list[float] | None] = None

    @property
    def p(self) -> list[float]:
        """P(mark = 1) for each sentence: the judge's own where known, else the marks themselves."""
        return self.probabilities if self.probabilities is not None else [float(v) for v in self.verdicts]


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
