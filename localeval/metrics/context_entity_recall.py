"""Context entity recall: how many of the reference's entities the retrieved contexts contain."""

import math

from localeval.data.samples import Sample
from localeval.metrics.base import MetricProgram, Score, metric
from localeval.metrics.claims import nonblank
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.metrics.scoring import entity_recall
from localeval.steps import Call


@metric("context_entity_recall", required=("reference", "retrieved_contexts"), steps=("entities",), models=("judge",))
def context_entity_recall(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Share of the reference's entities found among the contexts' entities, after NFKC, case and space normalisation.

    An entity also counts as found when it appears verbatim (normalised) in the contexts' text,
    because a small judge often lists "Paris, France" where the reference says "Paris".
    """
    contexts = nonblank(sample.retrieved_contexts)
    if not contexts:
        return Score.nan("empty_contexts")
    text = "\n\n".join(contexts)
    reference, found = yield [Call.of("entities", text=sample.text("reference")), Call.of("entities", text=text)]
    evidence = {"reference_entities": reference.entities, "context_entities": found.entities}
    value = entity_recall(reference.entities, found.entities, text)
    if math.isnan(value):
        return Score.nan("no_entities", **evidence)
    return Score(value, evidence=evidence)
