"""A whole evaluation with the network cut: nothing at run time may reach out.

The proof runs in a network namespace of its own (`unshare -n`), where no address outside the
process can be reached, from Python or from native code. Where `unshare -n` is not allowed, it falls
back to blocking Python's sockets, which native code (llama.cpp, tokenizers, torch) ignores: that
weaker run says so in its test id (`[python-sockets-only]`) and with a warning.
"""

import json
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import EXAMPLE_DATA

LOCALEVAL = [sys.executable, "-m", "localeval.cli"]
_BLOCK_SOCKETS = """
import socket
def _refuse(*args, **kwargs):
    raise OSError("network access attempted during an offline run")
socket.socket.connect = socket.socket.connect_ex = _refuse
socket.create_connection = socket.getaddrinfo = _refuse
"""
_REACH_OUT = "import socket; socket.create_connection(('192.0.2.1', 80), timeout=5)"  # TEST-NET-1: any address


@dataclass(frozen=True)
class NetworkCut:
    """How the child process is cut off: a command prefix, or Python code run at its start."""

    mode: str
    prefix: list[str] = field(default_factory=list)
    sitecustomize: str | None = None

    def command(self, args: list[str], tmp_path: Path) -> tuple[list[str], dict[str, str]]:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no HF_HUB_OFFLINE: the code must not try
        if self.sitecustomize is not None:
            (tmp_path / "sitecustomize.py").write_text(self.sitecustomize, encoding="utf-8")
            env["PYTHONPATH"] = str(tmp_path)
        return [*self.prefix, *args], env


def _network_cut() -> NetworkCut:
    if shutil.which("unshare") and subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0:
        return NetworkCut("unshare-n", prefix=["unshare", "-n"])
    return NetworkCut("python-sockets-only", sitecustomize=_BLOCK_SOCKETS)


CUT = _network_cut()
JAPANESE_ROW = {
    "id": "fuji",
    "user_input": "富士山の高さは？",
    "response": "富士山の高さは3776メートルです。",
    "retrieved_contexts": ["富士山は標高3776メートルの日本最高峰である。"],
    "reference": "3776メートルです。",
}


@pytest.fixture(params=[CUT], ids=[CUT.mode])
def cut(request, record_property) -> NetworkCut:
    """The mode shows in the test id and in the JUnit report's properties; the weak one warns too."""
    record_property("network_cut", request.param.mode)
    if request.param.mode != "unshare-n":
        warnings.warn(
            pytest.PytestWarning(
                "`unshare -n` is not allowed here: the offline proof only blocks Python's sockets, which native code "
                "ignores; run it where `unshare -n true` works for the real proof."
            )
        )
    return request.param


def test_the_cut_network_is_unreachable(cut: NetworkCut, tmp_path: Path):
    command, env = cut.command([sys.executable, "-c", _REACH_OUT], tmp_path)
    completed = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert completed.returncode != 0
    expected = {
        "unshare-n": "Network is unreachable",
        "python-sockets-only": "network access attempted during an offline run",
    }[cut.mode]
    assert expected in completed.stderr


@pytest.mark.slow
def test_evaluation_runs_with_no_network(cut: NetworkCut, tmp_path: Path):
    out = tmp_path / "results"
    # The English example plus a Japanese row: both embedders (MiniLM, multilingual e5) load offline.
    data = tmp_path / "data.jsonl"
    data.write_text(
        EXAMPLE_DATA.read_text(encoding="utf-8") + json.dumps(JAPANESE_ROW, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    command, env = cut.command(
        [
            *LOCALEVAL,
            "evaluate",
            str(data),
            "--metrics",
            "faithfulness,answer_relevancy,bleu",
            "--judge",
            "smollm2-135m",
            "--out",
            str(out),
            "--n-ctx",
            "4096",
        ],
        tmp_path,
    )
    completed = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    assert completed.returncode == 0, completed.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["faithfulness"]["count"] >= 1
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert any(r["evidence"].get("faithfulness", {}).get("statements") for r in records)
    assert records[-1]["lang"] == "ja"
    assert summary["metrics"]["answer_relevancy"]["count"] + summary["metrics"]["answer_relevancy"]["nan_count"] == 7
