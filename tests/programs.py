"""Driving a metric program by hand in tests: the step outputs are given, no judge runs."""

from __future__ import annotations

import math

import pytest

from localeval.metrics import MetricProgram, Score
from localeval.steps import Call
from localeval.steps.statements import StatedClaim, Statements

# The second look's answer on a text that claims nothing ("I don't know"): the text stays without statements.
NO_CLAIM = StatedClaim(statement="The answer does not say.", answer="no", probability=0.02)


def finish(program: MetricProgram, value: object) -> Score:
    """Send the last result; the program must return its Score."""
    with pytest.raises(StopIteration) as info:
        program.send(value)
    return info.value.value


def view(score: Score) -> tuple:
    """A score as comparable values: NaN is not equal to itself."""
    return ("NaN" if math.isnan(score.value) else score.value, score.reason, score.evidence)


def support(context: str, statement: str) -> Call:
    """The statement_support call against a single text (a reference, a response or one context)."""
    return Call.of("statement_support", retrieved_contexts=[context], statement=statement)


def per_sentence(*groups: list[str]) -> list[Statements]:
    """The statements step's outputs for a text: one call, so one output, per sentence."""
    return [Statements(statements=list(group)) for group in groups]


def brief(score: Score, key: str = "statements") -> tuple:
    """A statement-support score as (value, reason, [(statement, verdict)]): the rest is tested apart."""
    rows = [(row["statement"], row["verdict"]) for row in score.evidence.get(key, [])]
    return ("NaN" if math.isnan(score.value) else score.value, score.reason, rows)


def joined(outputs: list[Statements]) -> list[str]:
    """The statements of a text's sentences, in order, without repeats."""
    return list(dict.fromkeys(s.strip() for output in outputs for s in output.statements if s.strip()))
