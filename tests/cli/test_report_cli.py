"""report.html from `localeval evaluate`, and `localeval report` (model-free runs: no model is loaded)."""

from click.testing import CliRunner
from conftest import write_jsonl

from localeval.cli import main
from localeval.results import html_report

ROWS = [{"id": "a", "response": "Paris", "reference": "Paris"}, {"id": "b", "response": "Lyon", "reference": "Rome"}]


def evaluate(tmp_path, *extra: str):
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    return CliRunner().invoke(
        main, ["evaluate", str(data), "--metrics", "exact_match", "--out", str(tmp_path / "out"), *extra]
    )


def test_evaluate_writes_the_report_beside_the_results(tmp_path):
    result = evaluate(tmp_path)
    assert result.exit_code == 0, result.output
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "<td>exact_match</td><td class='num'>0.500</td><td class='num'>[0.000, 1.000]</td>" in page


def test_report_rebuilds_the_page(tmp_path):
    evaluate(tmp_path)
    (tmp_path / "out" / "report.html").unlink()
    result = CliRunner().invoke(main, ["report", str(tmp_path / "out")])
    assert (result.exit_code, result.output) == (0, f"Report written to {tmp_path / 'out' / 'report.html'}\n")
    assert (tmp_path / "out" / "report.html").is_file()


def test_a_folder_that_is_not_a_results_folder_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert (result.exit_code, result.output) == (
        1,
        f"Error: {tmp_path} is not a results folder: it has no samples.jsonl.\n",
    )


def test_a_report_that_cannot_be_written_costs_no_result(tmp_path, monkeypatch):
    def disk_full(folder, write):
        write("<!doctype html>")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(html_report, "write_page", disk_full)
    result = evaluate(tmp_path)
    assert result.exit_code == 0, result.output
    assert (
        f"Warning: Could not write {tmp_path / 'out' / 'report.html'}: No space left on device. The results are "
        f"saved; `localeval report {tmp_path / 'out'}` builds the page from them."
    ) in result.output
    assert (tmp_path / "out" / "summary.json").is_file() and not (tmp_path / "out" / "report.html").exists()
    assert not (tmp_path / "out" / "report.html.tmp").exists()
