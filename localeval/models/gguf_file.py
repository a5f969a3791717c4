"""Reads GGUF headers and checks model files, so a bad file fails with a clear message before llama.cpp sees it."""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from localeval._resources import models_dir
from localeval.errors import ModelFileError

_MAGIC = b"GGUF"
_VERSIONS = (2, 3)
_MAX_DIMS = 4
_DEFAULT_ALIGNMENT = 32
_CACHE_NAME = ".verified.json"

# GGUF metadata value types: id -> little-endian struct of a fixed-size value.
_SCALARS = {kind: struct.Struct("<" + code) for kind, code in zip((0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12), "BbHhIif?Qqd")}
_STRING, _ARRAY, _U64 = 8, 9, _SCALARS[10]

# ggml tensor types: id -> (name, elements per block, bytes per block), as in ggml.h.
GGML_TYPES: dict[int, tuple[str, int, int]] = {
    0: ("F32", 1, 4),
    1: ("F16", 1, 2),
    2: ("Q4_0", 32, 18),
    3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22),
    7: ("Q5_1", 32, 24),
    8: ("Q8_0", 32, 34),
    9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84),
    11: ("Q3_K", 256, 110),
    12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176),
    14: ("Q6_K", 256, 210),
    15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66),
    17: ("IQ2_XS", 256, 74),
    18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50),
    20: ("IQ4_NL", 32, 18),
    21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82),
    23: ("IQ4_XS", 256, 136),
    24: ("I8", 1, 1),
    25: ("I16", 1, 2),
    26: ("I32", 1, 4),
    27: ("I64", 1, 8),
    28: ("F64", 1, 8),
    29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2),
    34: ("TQ1_0", 256, 54),
    35: ("TQ2_0", 256, 66),
    39: ("MXFP4", 32, 17),
}


@dataclass(frozen=True)
class GGUFInfo:
    """What the header says; `expected_size` is None only when a tensor type is newer than this table."""

    path: Path
    size: int
    version: int
    tensor_count: int
    architecture: str | None
    model_name: str | None
    chat_template: str | None
    context_length: int | None
    expected_size: int | None


class _HeaderEnd(Exception):
    """The header runs past the end of the file: a cut-off copy, or a garbage length."""


class _BadHeader(Exception):
    """The header holds something no GGUF writer produces."""


class _Reader:
    """Cursor over the mapped file; every read is bounds-checked so garbage cannot read past the end."""

    def __init__(self, buffer: mmap.mmap, size: int) -> None:
        self.buffer, self.size, self.pos = buffer, size, 0

    def take(self, count: int) -> int:
        start = self.pos
        if start + count > self.size:
            raise _HeaderEnd()
        self.pos = start + count
        return start

    def scalar(self, value_type: int) -> int | float | bool:
        layout = _SCALARS[value_type]
        return layout.unpack_from(self.buffer, self.take(layout.size))[0]

    def string(self) -> bytes:
        length = int(self.scalar(10))
        start = self.take(length)
        return self.buffer[start : start + length]

    def value(self, value_type: int) -> int | float | bool | str | None:
        """One metadata value; arrays are skipped (None) because only scalars are reported."""
        if value_type in _SCALARS:
            return self.scalar(value_type)
        if value_type == _STRING:
            return self.string().decode("utf-8", errors="replace")
        if value_type == _ARRAY:
            self.skip_array()
            return None
        raise _BadHeader(f"unknown metadata value type {value_type}")

    def skip_array(self) -> None:
        """Jump over an array without building it: tokenizer arrays hold ~150,000 strings."""
        element_type, count = int(self.scalar(4)), int(self.scalar(10))
        if element_type in _SCALARS:
            self.take(count * _SCALARS[element_type].size)
        elif element_type == _STRING:
            self.skip_strings(count)
        elif element_type == _ARRAY:
            for _ in range(count):
                self.skip_array()
        else:
            raise _BadHeader(f"unknown array element type {element_type}")

    def skip_strings(self, count: int) -> None:
        buffer, pos, size, unpack = self.buffer, self.pos, self.size, _U64.unpack_from
        for _ in range(count):
            if pos + 8 > size:
                raise _HeaderEnd()
            pos += 8 + unpack(buffer, pos)[0]
        self.pos = pos
        self.take(0)


def inspect_gguf(path: str | os.PathLike[str]) -> GGUFInfo:
    """Parse the GGUF header of `path`; raises ModelFileError when it is missing or not a readable GGUF file."""
    path = Path(path)
    size = require_file(path)
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
            if magic != _MAGIC:
                raise ModelFileError(f"{path} is not a GGUF model file: it starts with {magic!r}, expected b'GGUF'")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buffer:
                reader = _Reader(buffer, size)
                reader.take(4)
                return _parse_header(reader, path)
    except OSError as error:
        raise ModelFileError(f"Cannot read model file {path}: {error.strerror or error}") from None
    except _HeaderEnd:
        raise ModelFileError(
            f"{path} ends inside its GGUF header ({size:,} bytes): the file is truncated or corrupt; "
            "re-copy it or reinstall the model"
        ) from None
    except _BadHeader as error:
        raise ModelFileError(f"{path} has a corrupt GGUF header: {error}") from None


def check_gguf(
    path: str | os.PathLike[str], expected_sha256: str | None = None, expected_size: int | None = None
) -> GGUFInfo:
    """Everything short of loading: a GGUF header, all tensor data present, and the registry's size and sha256."""
    info = inspect_gguf(path)
    if info.expected_size is not None and info.size < info.expected_size:
        raise ModelFileError(
            f"{info.path} is truncated: the file has {info.size:,} bytes, its header describes "
            f"{info.expected_size:,}; re-copy it or reinstall the model"
        )
    check_checksum(info.path, expected_sha256, expected_size)
    return info


def check_checksum(path: Path, expected_sha256: str | None = None, expected_size: int | None = None) -> None:
    """Compare an existing file with the registry; the size first, since it costs nothing."""
    size = path.stat().st_size
    if expected_size is not None and size != expected_size:
        raise ModelFileError(
            f"{path} has {size:,} bytes, but the registry expects {expected_size:,}: "
            "it is a different file or an incomplete copy"
        )
    if expected_sha256 is not None:
        actual = file_sha256(path)
        if actual != expected_sha256.lower():
            raise ModelFileError(
                f"{path} has sha256 {actual}, but the registry expects {expected_sha256}: "
                "the file is corrupt or a different model"
            )


def require_file(path: Path) -> int:
    """The size of `path`, or the specific reason it cannot be a model file."""
    try:
        if path.is_dir():
            raise ModelFileError(f"{path} is a directory, not a GGUF model file")
        if not path.exists():
            raise ModelFileError(f"Model file not found: {path}")
        if not path.is_file():
            raise ModelFileError(f"{path} is not a regular file")
        size = path.stat().st_size
    except OSError as error:
        raise ModelFileError(f"Cannot read model file {path}: {error.strerror or error}") from None
    if size == 0:
        raise ModelFileError(f"{path} is empty (0 bytes), not a GGUF model file")
    return size


def _parse_header(reader: _Reader, path: Path) -> GGUFInfo:
    """Version, metadata and tensor infos, in file order."""
    version = int(reader.scalar(4))
    if version not in _VERSIONS:
        raise ModelFileError(f"{path} is GGUF version {version}; localeval reads versions 2 and 3")
    tensor_count, kv_count = int(reader.scalar(10)), int(reader.scalar(10))
    if tensor_count > reader.size or kv_count > reader.size:
        raise _BadHeader(f"impossible counts ({tensor_count} tensors, {kv_count} metadata entries)")
    metadata = _read_metadata(reader, kv_count)
    tensor_ends = [_read_tensor_end(reader) for _ in range(tensor_count)]
    known_ends = [end for end in tensor_ends if end is not None]
    alignment = metadata.get("general.alignment", _DEFAULT_ALIGNMENT)
    if not isinstance(alignment, int) or alignment <= 0 or alignment & (alignment - 1):
        raise _BadHeader(f"general.alignment is {alignment!r}, not a power of two")
    data_start = -(-reader.pos // alignment) * alignment
    text = {key: value for key, value in metadata.items() if isinstance(value, str)}
    architecture = text.get("general.architecture")
    context_length = metadata.get(f"{architecture}.context_length")
    return GGUFInfo(
        path=path,
        size=reader.size,
        version=version,
        tensor_count=tensor_count,
        architecture=architecture,
        model_name=text.get("general.name"),
        chat_template=text.get("tokenizer.chat_template"),
        context_length=context_length if type(context_length) is int else None,
        expected_size=None if len(known_ends) < len(tensor_ends) else data_start + max(known_ends, default=0),
    )


def _read_metadata(reader: _Reader, count: int) -> dict[str, int | float | bool | str | None]:
    metadata = {}
    for _ in range(count):
        try:
            key = reader.string().decode("utf-8")
        except UnicodeDecodeError:
            raise _BadHeader(f"metadata key at byte {reader.pos:,} is not UTF-8") from None
        metadata[key] = reader.value(int(reader.scalar(4)))
    return metadata


def _read_tensor_end(reader: _Reader) -> int | None:
    """Offset just past this tensor's data, relative to the data section; None for an unknown type."""
    name = reader.string().decode("utf-8", errors="replace")
    n_dims = int(reader.scalar(4))
    if n_dims > _MAX_DIMS:
        raise _BadHeader(f"tensor {name!r} has {n_dims} dimensions")
    elements = 1
    for _ in range(n_dims):
        elements *= int(reader.scalar(10))
    type_id, offset = int(reader.scalar(4)), int(reader.scalar(10))
    if type_id not in GGML_TYPES:
        return None
    type_name, block_size, block_bytes = GGML_TYPES[type_id]
    if elements % block_size:
        raise _BadHeader(f"tensor {name!r} has {elements} elements, not a multiple of {type_name} blocks")
    return offset + elements // block_size * block_bytes


def file_sha256(path: str | os.PathLike[str], remembered: bool = True) -> str:
    """sha256 of a file, remembered by path, size and mtime so a 1 GB judge is hashed once per run.

    `remembered=False` hashes every byte now: a file changed in place with its mtime restored fools the memo.
    """
    path = Path(path).resolve()
    stat = path.stat()
    known = _read_cache().get(str(path))
    if (
        remembered
        and isinstance(known, dict)
        and (known.get("size"), known.get("mtime_ns")) == (stat.st_size, stat.st_mtime_ns)
    ):
        if isinstance(known.get("sha256"), str):
            return known["sha256"]
    with path.open("rb") as handle:
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
    remember_sha256(path, digest)
    return digest


def remember_sha256(path: Path, digest: str) -> None:
    """Record a digest computed elsewhere (while assembling a file); a read-only models folder just skips it."""
    path = Path(path).resolve()
    cache_file = models_dir() / _CACHE_NAME
    try:
        stat = path.stat()
        cache = _read_cache()
        cache[str(path)] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": digest}
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        scratch = cache_file.with_name(f"{_CACHE_NAME}.{os.getpid()}.tmp")
        scratch.write_text(json.dumps(cache, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(scratch, cache_file)
    except OSError:
        pass


def _read_cache() -> dict[str, object]:
    try:
        cache = json.loads((models_dir() / _CACHE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return cache if isinstance(cache, dict) else {}
