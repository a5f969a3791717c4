"""The pure parts of report.html: interval, histogram, escaping, and reading a results folder."""

import json
import math
from collections import Counter

import numpy as np
import pytest

from localeval.errors import ConfigError
from localeval.results.bootstrap import mean_interval
from localeval.results.html_report import (
    Histogram,
    embed_json,
    histogram,
    histogram_svg,
    metric_stats,
    read_results_folder,
    report_html,
)

ATTACK = "</script><script>alert(1)</script> <b>bold</b> & <!--"


def record(sample_id: str, scores: dict, nan: dict | None = None, evidence: dict | None = None, lang: str = "en"):
    return {
        "id": sample_id,
        "row": 1,
        "lang": lang,
        "scores": scores,
        "nan_reasons": nan or {},
        "evidence": evidence or {},
    }


def write_folder(path, records, tail: str = ""):
    path.mkdir()
    (path / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records) + tail, encoding="utf-8")
    return path


def test_interval_of_two_values_is_the_two_values():
    """Resampled means of (0.2, 0.6) are 0.2, 0.4 and 0.6 with chances 1/4, 1/2, 1/4: 2.5% and 97.5% are the ends."""
    assert mean_interval(np.array([0.2, 0.6])) == pytest.approx((0.2, 0.6))
    assert mean_interval(np.array([0.7])) == (0.7, 0.7)
    assert mean_interval(np.array([0.3, 0.3, 0.3])) == pytest.approx((0.3, 0.3))


def test_interval_is_the_same_every_time_and_chunked_for_many_samples():
    values = np.random.default_rng(1).random(5000)
    low, high = mean_interval(values)
    assert mean_interval(values) == (low, high)
    assert low < values.mean() < high and high - low < 0.03  # sd 0.29 / sqrt(5000) = 0.004; 95%: about ±0.008


def test_metric_stats_count_nan_with_their_reasons(tmp_path):
    records = [
        record("a", {"f": 0.2}),
        record("b", {"f": 0.6}),
        record("c", {"f": None}, {"f": "judge_timeout"}),
        record("d", {"f": None}, {"f": "judge_timeout"}),
        record("e", {"f": None}),
    ]
    folder = read_results_folder(write_folder(tmp_path / "run", records))
    stats = metric_stats("f", folder.scores["f"], folder.nan_reasons["f"])
    assert (stats.mean, stats.count, stats.nan_count) == (pytest.approx(0.4), 2, 3)
    assert (stats.low, stats.high) == pytest.approx((0.2, 0.6))
    assert stats.nan_reasons == {"judge_timeout": 2, "no reason recorded": 1}


def test_a_metric_with_no_score_has_no_mean():
    stats = metric_stats("f", np.array([math.nan]), Counter({"empty_contexts": 1}))
    assert math.isnan(stats.mean) and stats.count == 0 and stats.nan_reasons == {"empty_contexts": 1}


def test_a_metric_first_met_in_a_later_record_is_nan_before_it(tmp_path):
    folder = read_results_folder(
        write_folder(tmp_path / "run", [record("a", {"f": 1.0}), record("b", {"f": 0.0, "g": 0.5})])
    )
    assert folder.metrics == ["f", "g"] and np.isnan(folder.scores["g"][0]) and folder.scores["g"][1] == 0.5
    assert folder.nan_reasons["g"] == {"no reason recorded": 1}


def test_histogram_bins_over_zero_to_one_with_the_last_bin_closed():
    assert histogram([0.0, 0.05, 0.1, 0.95, 1.0]) == Histogram(0.0, 1.0, [2, 1, 0, 0, 0, 0, 0, 0, 0, 2])


def test_histogram_widens_to_hold_scores_above_one():
    assert histogram([1, 3, 5], bins=5) == Histogram(0.0, 5, [0, 1, 0, 1, 1])


def test_histogram_svg_has_a_bar_per_bin_with_its_count():
    svg = histogram_svg(Histogram(0.0, 1.0, [2, 0]))
    assert svg.count("<rect") == 2
    assert "<title>0.000–0.500: 2</title>" in svg and "<title>0.500–1.000: 0</title>" in svg


def test_embedded_json_cannot_close_the_script_and_reads_back():
    text = embed_json({"response": ATTACK})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"response": ATTACK}


def test_the_page_embeds_untrusted_text_only_as_escaped_data(tmp_path):
    folder = write_folder(tmp_path / "run", [record("x<b>", {"f": 0.5}, evidence={"f": {"sentence": ATTACK}})])
    page = report_html(read_results_folder(folder))
    assert page.count("</script") == 2  # the data block's end and the page script's end
    assert "<b>" not in page and "alert(1)" in page
    assert "http" not in page  # nothing fetched from elsewhere


def test_a_single_language_has_no_split_and_two_have_one(tmp_path):
    one = write_folder(tmp_path / "one", [record("a", {"f": 1.0}), record("b", {"f": 0.0})])
    assert "By language" not in report_html(read_results_folder(one))
    two = write_folder(tmp_path / "two", [record("a", {"f": 1.0}), record("b", {"f": 0.0}, lang="ja")])
    assert "<th>en (1)</th><th>ja (1)</th>" in report_html(read_results_folder(two))


def test_a_folder_without_samples_is_not_a_results_folder(tmp_path):
    with pytest.raises(ConfigError, match=f"^{tmp_path} is not a results folder: it has no samples.jsonl.$"):
        read_results_folder(tmp_path)


def test_a_line_cut_short_by_a_kill_is_left_out_and_said(tmp_path):
    folder = write_folder(tmp_path / "run", [record("a", {"f": 1.0})], tail='{"id": "b", "sco')
    results = read_results_folder(folder)
    assert results.count == 1 and results.cut_short
    page = report_html(results)
    assert "The last line of samples.jsonl was cut short" in page and "No summary.json" in page


def test_a_bad_line_in_the_middle_is_a_clear_error(tmp_path):
    folder = write_folder(tmp_path / "run", [record("a", {"f": 1.0})], tail="not json\n" + json.dumps(record("b", {})))
    with pytest.raises(ConfigError, match=r"samples.jsonl, line 2: not a sample record"):
        read_results_folder(folder)


def test_metrics_follow_the_summary_then_any_the_records_add(tmp_path):
    folder = write_folder(tmp_path / "run", [record("a", {"g": 1.0, "f": 0.5, "h": 0.0})])
    (folder / "summary.json").write_text(json.dumps({"metrics": {"f": {}, "g": {}}}), encoding="utf-8")
    assert read_results_folder(folder).metrics == ["f", "g", "h"]
