"""`localeval compare` on two real runs of judge-free metrics (no model is loaded)."""

import math

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import write_jsonl

from localeval.cli import main
from localeval.results.bootstrap import mean_interval as paired_bootstrap
from localeval.results.compare import compare_runs

REFERENCE = {"a": "Paris", "b": "Rome", "c": "Oslo", "d": "Bern"}
# Run B fixes b and c, breaks d; e is only in B. exact_match: A = 1, 0, 0, 1; B = 1, 1, 1, 0.
RESPONSES_A = {"a": "Paris", "b": "Lyon", "c": "Bergen", "d": "Bern"}
RESPONSES_B = {"a": "Paris", "b": "Rome", "c": "Oslo", "d": "Zurich", "e": "Lima"}


def run(tmp_path, name: str, responses: dict[str, str]):
    rows = [{"id": i, "response": r, "reference": REFERENCE.get(i, "Lima")} for i, r in responses.items()]
    data = write_jsonl(tmp_path / f"{name}.jsonl", rows)
    out = tmp_path / name
    result = CliRunner().invoke(main, ["evaluate", str(data), "--metrics", "exact_match,rouge_l", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def runs(tmp_path):
    return run(tmp_path, "a", RESPONSES_A), run(tmp_path, "b", RESPONSES_B)


def test_compare_pairs_the_shared_samples(runs):
    comparison = compare_runs(*runs)
    assert (comparison.shared, comparison.only_a, comparison.only_b) == (4, 0, 1)
    exact = next(d for d in comparison.metrics if d.metric == "exact_match")
    assert (exact.paired, exact.mean_a, exact.mean_b) == (4, 0.5, 0.75)
    assert exact.difference == pytest.approx(0.25)
    assert -1 <= exact.low < 0.25 < exact.high <= 1  # differences 0, 1, 1, -1: resampled means lie in [-1, 1]
    moved = [(m.id, m.metric) for m in comparison.moves if m.metric == "exact_match"]
    assert sorted(moved) == [("b", "exact_match"), ("c", "exact_match"), ("d", "exact_match")]


def test_compare_prints_the_table_and_writes_html(runs, tmp_path):
    result = CliRunner().invoke(main, ["compare", str(runs[0]), str(runs[1]), "--html", str(tmp_path / "c.html")])
    assert result.exit_code == 0, result.output
    assert "4 shared samples (0 only in A, 1 only in B)" in result.output
    line = next(line for line in result.output.splitlines() if line.startswith("exact_match"))
    assert line.split()[:4] == ["exact_match", "0.500", "0.750", "+0.250"]
    page = (tmp_path / "c.html").read_text()
    assert "<td>exact_match</td>" in page and "http" not in page and "<script" not in page


def test_the_same_runs_compare_the_same_way_twice(runs):
    assert compare_runs(*runs) == compare_runs(*runs)


def test_a_folder_without_results_is_a_clear_error(runs, tmp_path):
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(main, ["compare", str(runs[0]), str(tmp_path / "empty")])
    assert result.exit_code == 1 and "is not a results folder: it has no samples.jsonl" in result.output
    assert "Traceback" not in result.output


def test_runs_with_no_shared_sample_are_refused(tmp_path):
    a = run(tmp_path, "a", {"x": "Paris"})
    b = run(tmp_path, "b", {"y": "Paris"})
    result = CliRunner().invoke(main, ["compare", str(a), str(b)])
    assert result.exit_code == 1 and "share no sample id" in result.output


def test_bootstrap_of_constant_differences_is_that_constant():
    assert paired_bootstrap(np.array([0.2, 0.2, 0.2])) == pytest.approx((0.2, 0.2))
    assert paired_bootstrap(np.array([-0.5])) == (-0.5, -0.5)


def test_bootstrap_interval_is_the_percentiles_of_resampled_means():
    """Two values, 0 and 1: a resampled mean is k/2 with k ~ Binomial(2, 1/2), so 2.5% and 97.5% are 0 and 1."""
    low, high = paired_bootstrap(np.array([0.0, 1.0]))
    assert (low, high) == (0.0, 1.0)
    low, high = paired_bootstrap(np.arange(100) / 100)
    assert 0.43 < low < 0.45 and 0.54 < high < 0.56 and not math.isnan(low)
