"""The results folder's guard: one run at a time, and what the next run learns about one that died."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from localeval.errors import ConfigError
from localeval.run.guard import CRASH_LOG, PREVIOUS_CRASH_LOG, RunGuard

DIE_INSIDE = """
import os, signal, sys
from pathlib import Path
from localeval.run.guard import RunGuard
with RunGuard(Path(sys.argv[1])):
    os.kill(os.getpid(), int(sys.argv[2]))
"""


def die_inside_a_guard(out: Path, signum: int) -> int:
    return subprocess.run(
        [sys.executable, "-c", DIE_INSIDE, str(out), str(int(signum))], capture_output=True
    ).returncode


def test_a_finished_run_leaves_nothing_to_report(tmp_path):
    with RunGuard(tmp_path / "out") as guard:
        assert guard.unfinished is None
    with RunGuard(tmp_path / "out") as guard:
        assert guard.unfinished is None
    assert not (tmp_path / "out" / CRASH_LOG).exists()


def test_a_run_that_raised_counts_as_finished(tmp_path):
    with pytest.raises(RuntimeError), RunGuard(tmp_path):
        raise RuntimeError("judge error")
    with RunGuard(tmp_path) as guard:
        assert guard.unfinished is None


def test_a_run_that_failed_before_writing_anything_leaves_no_folder_it_created(tmp_path):
    with pytest.raises(RuntimeError), RunGuard(tmp_path / "new"):
        raise RuntimeError("judge not found")
    assert not (tmp_path / "new").exists()


def test_a_failed_run_keeps_a_folder_that_holds_work_or_was_there_before(tmp_path):
    with pytest.raises(RuntimeError), RunGuard(tmp_path / "new"):
        (tmp_path / "new" / "judge_calls.jsonl").write_text("{}\n")
        raise RuntimeError("judge error")
    assert (tmp_path / "new" / "judge_calls.jsonl").exists()
    (tmp_path / "old").mkdir()
    with pytest.raises(RuntimeError), RunGuard(tmp_path / "old"):
        raise RuntimeError("judge error")
    assert (tmp_path / "old").is_dir()


def test_a_second_run_into_the_same_folder_is_refused(tmp_path):
    with RunGuard(tmp_path):
        with pytest.raises(ConfigError) as raised:
            RunGuard(tmp_path).__enter__()
    assert str(raised.value).startswith(f"Another localeval run (pid {os.getpid()}, started ")
    assert str(raised.value).endswith(f"is writing to {tmp_path}; wait for it to finish or choose another --out.")


def test_a_native_crash_is_reported_on_the_next_run(tmp_path):
    assert die_inside_a_guard(tmp_path, signal.SIGSEGV) == -signal.SIGSEGV
    with RunGuard(tmp_path) as guard:
        assert guard.unfinished is not None and guard.unfinished.crash == "Fatal Python error: Segmentation fault"
        message = guard.unfinished.describe(tmp_path)
    assert message.startswith(f"The previous run into {tmp_path} (pid {guard.unfinished.pid}, started ")
    assert f"crashed: Segmentation fault (its stack is in {tmp_path / PREVIOUS_CRASH_LOG})" in message
    assert message.endswith("`localeval doctor` checks it.")
    assert 'File "<string>", line 6 in <module>' in (tmp_path / PREVIOUS_CRASH_LOG).read_text()
    with RunGuard(tmp_path) as guard:
        assert guard.unfinished is None  # reported once; that run finished


def test_a_killed_run_is_told_from_a_crash(tmp_path):
    assert die_inside_a_guard(tmp_path, signal.SIGKILL) == -signal.SIGKILL
    with RunGuard(tmp_path) as guard:
        assert guard.unfinished is not None and guard.unfinished.crash is None
        assert "stopped without finishing: it was killed, or the machine went down" in guard.unfinished.describe(
            tmp_path
        )


def test_an_out_that_is_a_file_is_a_clear_error(tmp_path):
    target = tmp_path / "results"
    target.write_text("not a folder")
    with pytest.raises(ConfigError, match=r"--out .*results is a file, not a folder"):
        RunGuard(target).__enter__()
