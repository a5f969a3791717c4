"""samples.jsonl as a run writes it: what a later run into the folder may reuse, and what it must score again."""

import json
from pathlib import Path

from localeval.run.sample_log import FINGERPRINT_KEY, SampleLog, fingerprint


def record(sample_id: str, reason: str | None = None) -> dict:
    return {
        "id": sample_id,
        "row": 1,
        "lang": "en",
        "scores": {"m": None if reason else 0.5},
        "nan_reasons": {"m": reason} if reason else {},
        "evidence": {},
        "judge": {"calls": 2},
    }


def folder(tmp_path: Path, lines: list[str], run_fingerprint: str | None = "f1") -> Path:
    (tmp_path / "samples.jsonl").write_text("".join(lines), encoding="utf-8")
    if run_fingerprint:
        (tmp_path / "manifest.json").write_text(json.dumps({FINGERPRINT_KEY: run_fingerprint}), encoding="utf-8")
    return tmp_path


def line(data: dict) -> str:
    return json.dumps(data) + "\n"


def test_whole_finished_records_are_reused_and_the_file_keeps_only_them(tmp_path):
    out = folder(
        tmp_path,
        [
            line(record("a")),
            line(record("b", "interrupted")),
            line(record("c")),
            line(record("a")),
            line(record("gone")),
            "not json\n",
            line(record("d"))[:30],
        ],
    )
    reused = SampleLog(out).reusable("f1", ["a", "b", "c", "d"])
    assert list(reused) == ["a", "c"]  # b was interrupted, d cut short, "gone" is no longer in the data
    assert (out / "samples.jsonl").read_text(encoding="utf-8") == line(record("a")) + line(record("c"))


def test_another_fingerprint_or_no_manifest_reuses_nothing_and_empties_the_file(tmp_path):
    for run_fingerprint in ("f0", None):
        (tmp_path / "manifest.json").unlink(missing_ok=True)
        out = folder(tmp_path, [line(record("a"))], run_fingerprint)
        assert SampleLog(out).reusable("f1", ["a"]) == {}
        assert (out / "samples.jsonl").read_text(encoding="utf-8") == ""


def test_appended_records_are_on_disk_before_close(tmp_path):
    log = SampleLog(tmp_path)
    log.reusable("f1", [])
    log.append(record("a"))
    log.sync()
    assert (tmp_path / "samples.jsonl").read_text(encoding="utf-8") == line(record("a"))
    log.close()


def test_fingerprint_changes_with_any_setting_and_not_with_key_order():
    assert fingerprint({"a": 1, "b": [1, 2]}) == fingerprint({"b": [1, 2], "a": 1})
    assert fingerprint({"a": 1, "b": [1, 2]}) != fingerprint({"a": 1, "b": [2, 1]})


def test_failures_a_rerun_may_not_repeat_and_malformed_lines_are_scored_again(tmp_path):
    reasons = ("judge_timeout", "judge_error", "metric_error", "encoder_nan")
    lines = [line(record(f"s{i}", reason)) for i, reason in enumerate(reasons)]
    lines += [line({"id": ["a"], "scores": {}}), line({"id": "a", "lang": "en"}), line(["a"]), line(record("kept"))]
    out = folder(tmp_path, lines)
    assert list(SampleLog(out).reusable("f1", ["s0", "s1", "s2", "s3", "a", "kept"])) == ["kept"]


def test_a_reused_record_is_read_back_from_its_offset(tmp_path):
    out = folder(tmp_path, [line(record("a")), line(record("b", "interrupted")), line(record("c"))])
    log = SampleLog(out)
    assert log.reusable("f1", ["a", "b", "c"]) == {"a": 0, "c": len(line(record("a")))}
    assert log.reused("c") == record("c")


def test_finish_puts_the_records_in_the_data_order_only_when_they_are_out_of_it(tmp_path):
    out = folder(tmp_path, [line(record("b"))])
    log = SampleLog(out)
    log.reusable("f1", ["a", "b", "c"])
    log.append(record("a"))
    log.append(record("c"))
    log.finish(["a", "b", "c"])
    assert (out / "samples.jsonl").read_text(encoding="utf-8") == "".join(line(record(i)) for i in "abc")
    inode = (out / "samples.jsonl").stat().st_ino
    SampleLog(out).finish(["a", "b", "c"])
    assert (out / "samples.jsonl").stat().st_ino == inode  # already in order: not rewritten
