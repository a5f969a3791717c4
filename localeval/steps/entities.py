"""Named entities of a text, copied as written (context_entity_recall)."""

from typing import Annotated

from pydantic import BaseModel, Field

from localeval.steps.base import Step
from localeval.steps.fitting import Fit


class Entities(BaseModel):
    entities: list[Annotated[str, Field(min_length=1, max_length=80)]] = Field(max_length=40)


ENTITIES = Step(
    name="entities",
    inputs=("text",),
    output=Entities,
    max_tokens=400,
    description="List the names, places, organisations, dates and numbers in a text, as written.",
    fit=Fit("text"),
)
