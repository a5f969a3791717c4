"""The NaN reasons: one list in localeval/reasons.py that the code keeps to and docs/evaluating.md documents."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from localeval.data.samples import Sample
from localeval.metrics import Metric, Score
from localeval.reasons import MISSING_FIELD, NAN_REASONS, is_nan_reason
from localeval.run.runner import run_metrics

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "localeval"


def documented_reasons() -> list[str]:
    """The codes in docs/evaluating.md's section "Scores that cannot be computed", `missing_field:<name>` as
    missing_field."""
    page = (ROOT / "docs" / "evaluating.md").read_text(encoding="utf-8")
    start = page.index("\n## Scores that cannot be computed\n")
    end = page.index("\n## ", start + 1)
    return re.findall(r"`([a-z_]+)(?::<name>)?`", page[start:end])


def package_trees() -> list[tuple[Path, ast.Module]]:
    return [
        (path, ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "reasons.py"
    ]


def test_the_docs_list_every_reason_and_no_other():
    listed = documented_reasons()
    assert sorted(listed) == sorted(NAN_REASONS)


def test_every_listed_reason_is_produced_somewhere_in_the_package():
    """A reason named only in the list (and the docs) is a promise that nothing keeps."""
    literals = {
        node.value
        for _, tree in package_trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    assert f"{MISSING_FIELD}:" in literals  # the f-string's constant part
    assert [reason for reason in NAN_REASONS if reason != MISSING_FIELD and reason not in literals] == []


def test_every_literal_reason_given_to_score_nan_is_listed():
    given = []
    for path, tree in package_trees():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "nan"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "Score"
                and node.args
            ):
                first = node.args[0]
                if isinstance(first, ast.JoinedStr):
                    first = first.values[0]
                if isinstance(first, ast.Constant):
                    given.append((path.name, first.value.rstrip(":")))
    assert len(given) >= 20
    assert [(name, reason) for name, reason in given if reason not in NAN_REASONS] == []


@pytest.mark.parametrize(
    ("reason", "known"),
    [
        ("empty_contexts", True),
        ("judge_timeout", True),
        ("missing_field:response", True),
        ("missing_field", False),
        ("empty_contexts:x", False),
        ("no_answer", False),
        ("", False),
    ],
)
def test_is_nan_reason(reason, known):
    assert is_nan_reason(reason) is known


def test_score_nan_refuses_an_unlisted_reason():
    with pytest.raises(ValueError, match="'no_answer' is not a NaN reason listed in localeval/reasons.py"):
        Score.nan("no_answer")


def test_a_metric_giving_an_unlisted_reason_costs_its_score_as_metric_error():
    def invents(sample: Sample, options) -> Score:
        return Score.nan("no_answer")

    metric = Metric("invents", ("response",), (), (), (0.0, 1.0), "Invents a reason.", invents)
    [result] = run_metrics([Sample("a", 1, response="Yes.")], [metric], None, lambda _: "en")
    score = result.scores["invents"]
    assert (score.reason, score.evidence) == (
        "metric_error",
        {"detail": "ValueError: 'no_answer' is not a NaN reason listed in localeval/reasons.py"},
    )
