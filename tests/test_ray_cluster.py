"""`--ray local`: the same results folder as a local run, through a lost actor, a killed driver and a missing model.

Each test starts a Ray cluster on this machine (loopback only) with two 1-thread actors and the SmolLM2 judge.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import EXAMPLE_DATA, write_jsonl

from localeval import Judge, RayExecutor, evaluate
from localeval.cli import main
from localeval.errors import ConfigError, ModelFileError
from localeval.judge.protocol import JudgeConfig
from localeval.run.ray_cluster import load_judge_on_node

pytest.importorskip("ray", reason="the ray extra is part of the test extra: pip install -e '.[test]'")
pytestmark = pytest.mark.ray

IDS = ("eiffel", "insulin", "photosynthesis")  # in file order
METRICS = "faithfulness,answer_relevancy"  # the judge and the embedder
RUN = ["--metrics", METRICS, "--judge", "smollm2-135m", "--n-ctx", "4096", "--threads", "1", "--batch-size", "1"]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    rows = [
        row for line in EXAMPLE_DATA.read_text(encoding="utf-8").splitlines() if (row := json.loads(line))["id"] in IDS
    ]
    return write_jsonl(tmp_path_factory.mktemp("ray") / "data.jsonl", rows)


@pytest.fixture(scope="module")
def local_run(data) -> Path:
    out = data.parent / "local"
    result = CliRunner().invoke(main, ["evaluate", str(data), *RUN, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def scored(out: Path) -> list[tuple]:
    return [
        (r["id"], r["scores"], r["nan_reasons"], r["evidence"])
        for r in map(json.loads, (out / "samples.jsonl").read_text(encoding="utf-8").splitlines())
    ]


def manifest(out: Path) -> dict:
    return {key: value for key, value in json.loads((out / "manifest.json").read_text()).items() if key != "created"}


@pytest.mark.slow
def test_a_local_cluster_writes_the_folder_a_local_run_writes(data, local_run, tmp_path):
    out = tmp_path / "ray"
    result = CliRunner().invoke(main, ["evaluate", str(data), *RUN, "--out", str(out), "--ray", "local"])
    assert result.exit_code == 0, result.output
    assert "Ray: 2 actors, 1 thread each." in result.output
    assert [record[0] for record in scored(out)] == list(IDS)
    assert any(value is not None for record in scored(out) for value in record[1].values())
    assert scored(out) == scored(local_run)
    assert manifest(out) == manifest(local_run)  # the same fingerprint: either run resumes the other
    summary, local = (json.loads((folder / "summary.json").read_text()) for folder in (out, local_run))
    assert summary["metrics"] == local["metrics"]
    assert (summary["judge"]["calls"], summary["judge"]["cached_calls"]) == (local["judge"]["calls"], 0)
    assert sorted((out / "judge_calls.jsonl").read_text().splitlines()) == sorted(
        (local_run / "judge_calls.jsonl").read_text().splitlines()
    )
    assert (out / "report.html").is_file()


def actor_pids() -> list[int]:
    """Ray names an actor's process after its class (`ray::ScoringActor...`)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().startswith(b"ray::ScoringActor"):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


@pytest.mark.slow
def test_lost_actors_are_restarted_and_their_batches_scored_once(data, local_run, tmp_path):
    killed: list[int] = []

    def kill_the_actors(state) -> None:
        if state.samples_done == 1 and not killed:  # the other two batches are in flight
            killed.extend(actor_pids())
            for pid in killed:
                os.kill(pid, signal.SIGKILL)

    out = tmp_path / "ray"
    result = evaluate(
        data,
        METRICS,
        "smollm2-135m",
        out,
        n_ctx=4096,
        threads=1,
        batch_size=1,
        executor=RayExecutor("local"),
        progress=kill_the_actors,
    )
    assert len(killed) == 2
    assert [sample.sample.id for sample in result.samples] == list(IDS)
    assert scored(out) == scored(local_run)


@pytest.mark.slow
def test_a_killed_driver_resumes_without_scoring_a_finished_sample_again(data, local_run, tmp_path):
    out = tmp_path / "ray"
    command = [sys.executable, "-m", "localeval.cli", "evaluate", str(data), *RUN, "--out", str(out), "--ray", "local"]
    env = {**os.environ, "HOME": str(tmp_path)}
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    samples = out / "samples.jsonl"
    deadline = time.monotonic() + 600
    while not (samples.exists() and samples.read_text().count("\n") >= 1) and time.monotonic() < deadline:
        assert driver.poll() is None, driver.stderr.read().decode()
        time.sleep(0.2)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    finished = [json.loads(line)["id"] for line in samples.read_text().splitlines()]
    assert 1 <= len(finished) < len(IDS)

    rerun = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    assert rerun.returncode == 0, rerun.stderr
    assert "stopped without finishing" in rerun.stderr
    assert f"Resuming: {len(finished)} of {len(IDS)} samples are already scored." in rerun.stderr
    assert scored(out) == scored(local_run)  # each sample once, in file order, as a local run scores it


@pytest.mark.slow
def test_a_node_without_the_judge_is_named_and_nothing_is_scored(data, tmp_path, monkeypatch):
    """The nodes (here: this machine's actors) look for registry judges in their own models folder."""
    monkeypatch.setenv("LOCALEVAL_MODELS_DIR", str(tmp_path / "no-models"))
    out = tmp_path / "ray"
    result = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(data),
            "--metrics",
            "faithfulness",
            "--judge",
            "qwen2.5-coder-0.5b",
            "--threads",
            "1",
            "--out",
            str(out),
            "--ray",
            "local",
        ],
    )
    assert result.exit_code == 1
    assert "Error: 1 Ray node cannot score:" in result.output  # 3 rows: one batch, so one actor
    assert "qwen2.5-coder-0.5b is not installed: run `localeval models install qwen2.5-coder-0.5b`" in result.output
    assert "(127.0.0.1)" in result.output  # the node's address
    assert "Traceback" not in result.output
    assert not out.exists()  # a run that fails before scoring leaves no folder behind


def test_a_judge_file_that_differs_from_the_runs_is_refused_before_loading(smollm_path, tmp_path):
    copy = tmp_path / "judge.gguf"
    shutil.copyfile(smollm_path, copy)
    with pytest.raises(ModelFileError, match="has sha256 .*, but the run's judge has 0{64}: a different or corrupt"):
        load_judge_on_node(str(copy), JudgeConfig(n_ctx=2048, n_threads=1), "0" * 64, recheck=False)


def test_models_loaded_here_cannot_travel_to_a_cluster(data, tmp_path, smollm_path):
    judge = Judge(smollm_path, n_ctx=2048, threads=1)
    try:
        with pytest.raises(ConfigError, match="A Ray run loads the judge and embedders on each actor"):
            evaluate(data, "faithfulness", judge, tmp_path / "out", executor=RayExecutor("local"))
    finally:
        judge.close()


def test_without_ray_installed_the_error_says_how_to_install_it(data, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    result = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(data),
            "--metrics",
            "faithfulness",
            "--judge",
            "smollm2-135m",
            "--out",
            str(tmp_path / "out"),
            "--ray",
            "local",
        ],
    )
    assert result.exit_code == 1
    assert "Error: --ray needs Ray, an optional extra: pip install 'localeval[ray]'" in result.output


def test_ray_actors_needs_ray(data, tmp_path):
    result = CliRunner().invoke(main, ["evaluate", str(data), "--ray-actors", "2", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "--ray-actors needs --ray." in result.output


def _machine_only_tools() -> str | None:
    """What the offline proof below needs and this machine lacks, if anything."""
    if not (shutil.which("unshare") and shutil.which("ip") and shutil.which("strace")):
        return "needs unshare, ip and strace"
    if subprocess.run(["unshare", "-rn", "ip", "link", "set", "lo", "up"], capture_output=True).returncode != 0:
        return "`unshare -rn` is not allowed here"
    return None


@pytest.mark.slow
@pytest.mark.skipif(_machine_only_tools() is not None, reason=str(_machine_only_tools()))
def test_a_local_cluster_connects_to_nothing_but_this_machine(data, tmp_path):
    """In a network namespace with only a loopback interface, every socket connect of the driver, Ray's own
    processes and the actors (traced by strace) goes to the loopback address."""
    trace = tmp_path / "connects.strace"
    run = f"{sys.executable} -m localeval.cli evaluate {data} {' '.join(RUN)} --out {tmp_path / 'ray'} --ray local"
    completed = subprocess.run(
        ["unshare", "-rn", "sh", "-c", f"ip link set lo up && strace -f -qq -e trace=connect -o {trace} {run}"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=900,
    )
    assert completed.returncode == 0, completed.stderr
    addresses = re.findall(
        r'sa_family=AF_INET6?, .*?(?:inet_addr|inet_pton)\((?:AF_INET6, )?"([^"]+)"', trace.read_text()
    )
    assert "127.0.0.1" in addresses  # the trace saw Ray's own traffic
    assert set(addresses) <= {"127.0.0.1", "::1", "::ffff:127.0.0.1"}
    assert len(scored(tmp_path / "ray")) == len(IDS)


def test_a_run_without_ray_never_imports_it(data, tmp_path):
    code = (
        "import sys; from localeval.cli import main\n"
        "try:\n    main(sys.argv[1:], standalone_mode=False)\nfinally:\n    print('ray' in sys.modules)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code, "evaluate", str(data), "--metrics", "exact_match", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines()[-1] == "False"
    assert (tmp_path / "out" / "samples.jsonl").read_text().count("\n") == len(IDS)
