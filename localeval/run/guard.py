"""One run at a time per results folder, and word on the next run of how the previous one ended.

A crash in native code (llama.cpp) or a `kill -9` cannot be caught, so a run marks the folder as
running and only a finished run (complete, interrupted or failed with an error) marks it done.
faulthandler writes the Python stack of a fatal signal into the folder, which tells a crash from a
kill. Finished judge calls are already on disk (judge_calls.jsonl), so the next run resumes.
"""

from __future__ import annotations

import faulthandler
import fcntl
import json
import os
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from localeval.errors import ConfigError

LOCK_FILE = ".localeval-run.json"
CRASH_LOG = "crash.log"
PREVIOUS_CRASH_LOG = "previous-crash.log"


@dataclass(frozen=True)
class UnfinishedRun:
    """A previous run into the folder that never marked itself done."""

    pid: int | None
    started: str | None
    crash: str | None  # the first line faulthandler wrote (e.g. "Fatal Python error: Segmentation fault"), if any

    def describe(self, out: Path) -> str:
        who = f"pid {self.pid}, started {self.started}" if self.pid else "an earlier run"
        if self.crash:
            return (
                f"The previous run into {out} ({who}) crashed: {self.crash.removeprefix('Fatal Python error: ')} "
                f"(its stack is in {out / PREVIOUS_CRASH_LOG}). A crash inside llama.cpp usually means a build "
                "that does not suit this CPU: `localeval doctor` checks it."
            )
        return (
            f"The previous run into {out} ({who}) stopped without finishing: it was killed, or the machine "
            "went down. If it crashed instead, `localeval doctor` checks the judge."
        )


class RunGuard:
    """Holds a results folder for one run: `with RunGuard(out) as guard:`; `guard.unfinished` is the previous run."""

    def __init__(self, out: Path):
        self.out = out
        self.unfinished: UnfinishedRun | None = None
        self._lock: IO[str] | None = None
        self._crash_log: IO[str] | None = None
        self._faulthandler_was_on = False
        self._created = False
        self._started = datetime.now(timezone.utc).isoformat(timespec="seconds")

    def __enter__(self) -> RunGuard:
        self._created = not self.out.exists()
        _make_folder(self.out)
        lock = (self.out / LOCK_FILE).open("a+", encoding="utf-8")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_state(lock)
            lock.close()
            raise ConfigError(
                f"Another localeval run (pid {holder.get('pid', '?')}, started "
                f"{holder.get('started', '?')}) is writing to {self.out}; wait for it to finish "
                "or choose another --out."
            ) from None
        self._lock = lock
        previous = _read_state(lock)
        crash_log = self.out / CRASH_LOG
        crash = _first_line(crash_log)
        if previous.get("state") == "running":
            self.unfinished = UnfinishedRun(previous.get("pid"), previous.get("started"), crash)
        if crash:
            os.replace(crash_log, self.out / PREVIOUS_CRASH_LOG)
        self._write_state("running")
        self._faulthandler_was_on = faulthandler.is_enabled()
        self._crash_log = crash_log.open("w", encoding="utf-8")
        faulthandler.enable(file=self._crash_log, all_threads=True)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc_info: object) -> None:
        faulthandler.disable()
        if self._faulthandler_was_on:
            # sys.__stderr__ is None only without a console, where faulthandler falls back to sys.stderr too
            faulthandler.enable(file=sys.__stderr__ or sys.stderr)
        if self._crash_log is not None:
            self._crash_log.close()
            if (self.out / CRASH_LOG).stat().st_size == 0:
                (self.out / CRASH_LOG).unlink()
        try:
            self._write_state("done")
        except OSError:
            pass  # a full disk: the next run may not learn how this one ended, which is all it costs
        try:
            if self._lock is not None:  # set by __enter__; _write_state above has checked it
                self._lock.close()  # releases the lock
        except OSError:
            pass  # closed all the same when its last flush fails
        if exc_type is not None and self._created:
            _remove_if_unused(self.out)

    def _write_state(self, state: str) -> None:
        assert self._lock is not None
        self._lock.seek(0)
        self._lock.truncate()
        self._lock.write(json.dumps({"state": state, "pid": os.getpid(), "started": self._started}) + "\n")
        self._lock.flush()


def _make_folder(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, not a folder; choose a folder for the results.")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"Cannot create the results folder {out}: {error.strerror or error}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        read_only = os.statvfs(out).f_flag & os.ST_RDONLY
        why = "is on a read-only file system" if read_only else "is not writable"
        raise ConfigError(f"The results folder {out} {why}; choose another --out.")


def _remove_if_unused(out: Path) -> None:
    """A run that failed before writing anything leaves no folder behind, only its error."""
    if {path.name for path in out.iterdir()} <= {LOCK_FILE}:
        (out / LOCK_FILE).unlink(missing_ok=True)
        out.rmdir()


def _read_state(lock: IO[str]) -> dict[str, Any]:
    lock.seek(0)
    try:
        state = json.loads(lock.read() or "{}")
    except ValueError:
        return {}
    return state if isinstance(state, dict) else {}


def _first_line(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return text.splitlines()[0] if text else None
