"""Faithfulness: the share of the response's statements that the retrieved contexts support."""

from localeval.metrics.base import MetricProgram, Score, metric
from localeval.metrics.options import DEFAULT_OPTIONS, MetricOptions
from localeval.metrics.scoring import fraction
from localeval.samples import Sample
from localeval.steps import Call
from localeval.text import split_sentences


@metric("faithfulness", required=("user_input", "response", "retrieved_contexts"),
        steps=("statements", "statement_support"), models=("judge",))
def faithfulness(sample: Sample, options: MetricOptions = DEFAULT_OPTIONS) -> MetricProgram:
    """Share of the response's statements supported by the retrieved contexts.

    Each statement is judged on its own call (contexts first, statement last), which keeps the
    verdicts aligned with the statements and lets the KV cache reuse the contexts between calls.
    """
    contexts = [c for c in sample.retrieved_contexts if c.strip()]
    if not contexts:
        return Score.nan("empty_contexts")
    extracted = yield Call.of("statements", user_input=sample.user_input, sentences=split_sentences(sample.response))
    statements = extracted.flat()
    if not statements:
        return Score.nan("no_statements")
    verdicts = yield [Call.of("statement_support", retrieved_contexts=contexts, statement=s) for s in statements]
    evidence = [{"statement": s, "verdict": v.verdict, "reason": v.reason} for s, v in zip(statements, verdicts)]
    return Score(fraction(sum(v.verdict for v in verdicts), len(verdicts)), evidence={"statements": evidence})
