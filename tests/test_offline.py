"""A whole evaluation with the network cut: nothing at run time may reach out."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import EXAMPLE_DATA

LOCALEVAL = [sys.executable, "-m", "localeval.cli"]
# Fallback where `unshare -n` is not allowed: every socket connection raises in the child process.
_BLOCK_SOCKETS = """
import socket
def _refuse(*args, **kwargs):
    raise OSError("network access attempted during an offline run")
socket.socket.connect = socket.socket.connect_ex = _refuse
socket.create_connection = socket.getaddrinfo = _refuse
"""


def _network_cut_prefix(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    if shutil.which("unshare") and subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0:
        return ["unshare", "-n"], {}
    (tmp_path / "sitecustomize.py").write_text(_BLOCK_SOCKETS, encoding="utf-8")
    return [], {"PYTHONPATH": str(tmp_path)}


JAPANESE_ROW = {"id": "fuji", "user_input": "富士山の高さは？", "response": "富士山の高さは3776メートルです。",
                "retrieved_contexts": ["富士山は標高3776メートルの日本最高峰である。"], "reference": "3776メートルです。"}


def test_evaluation_runs_with_no_network(tmp_path: Path):
    prefix, extra_env = _network_cut_prefix(tmp_path)
    out = tmp_path / "results"
    # The English example plus a Japanese row: both embedders (MiniLM, multilingual e5) load offline.
    data = tmp_path / "data.jsonl"
    data.write_text(EXAMPLE_DATA.read_text(encoding="utf-8") + json.dumps(JAPANESE_ROW, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **extra_env}  # no HF_HUB_OFFLINE: the code must not try
    completed = subprocess.run(
        [*prefix, *LOCALEVAL, "evaluate", str(data), "--metrics", "faithfulness,answer_relevancy,bleu",
         "--judge", "smollm2-135m", "--out", str(out), "--n-ctx", "4096"],
        capture_output=True, text=True, env=env, timeout=900)
    assert completed.returncode == 0, completed.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["faithfulness"]["count"] >= 1
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert any(r["evidence"].get("faithfulness", {}).get("statements") for r in records)
    assert records[-1]["lang"] == "ja"
    assert summary["metrics"]["answer_relevancy"]["count"] + summary["metrics"]["answer_relevancy"]["nan_count"] == 7
