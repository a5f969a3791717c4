"""Finds model files in the installed weight packages and assembles split judges, offline and without importing them."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from localeval._resources import models_dir
from localeval.errors import ModelFileError
from localeval.models.gguf_file import (
    GGUFInfo,
    check_checksum,
    check_gguf,
    file_sha256,
    remember_sha256,
    require_file,
)
from localeval.models.registry import ModelEntry, Registry, load_registry

Progress = Callable[[int, int], None]
_BLOCK = 8 * 1024 * 1024


@dataclass(frozen=True)
class ResolvedModel:
    """A checked judge file; `entry` is its registry entry, or None for a file the registry does not know."""

    path: Path
    entry: ModelEntry | None
    info: GGUFInfo


@dataclass(frozen=True)
class VerifiedModel:
    """What `localeval models verify` reports: the checked file and its sha256."""

    path: Path
    entry: ModelEntry | None
    info: GGUFInfo
    sha256: str


@dataclass(frozen=True)
class VerifiedFolder:
    """What `localeval models verify` reports for a packaged embedder: every file of the folder checked."""

    path: Path
    entry: ModelEntry
    files: int
    size: int


@dataclass(frozen=True)
class ModelStatus:
    """One row of `localeval models list`: where the model is, or how to install it."""

    entry: ModelEntry
    default: bool
    location: Path | None
    hint: str


def resolve_judge(name_or_path: str | None = None, registry: Registry | None = None) -> ResolvedModel:
    """A checked GGUF judge from a registry name, a file path, or (None) the default judge."""
    registry = registry or load_registry()
    name_or_path = name_or_path or registry.default_judge
    if name_or_path not in registry.entries and looks_like_path(name_or_path):
        return _resolve_path(Path(name_or_path).expanduser(), registry)
    entry = _registry_entry(registry, name_or_path)
    if entry.role != "judge":
        raise ModelFileError(f"{entry.name} is an embedder, not a judge model")
    path = _judge_path(entry)
    return ResolvedModel(path, entry, check_gguf(path, entry.sha256, entry.size))


def verify(name_or_path: str | None = None, registry: Registry | None = None) -> VerifiedModel | VerifiedFolder:
    """`models verify`: a judge file or a packaged embedder folder, every byte hashed now, never a remembered digest."""
    registry = registry or load_registry()
    entry = registry.entries.get(name_or_path or "")
    if entry is not None and entry.role == "embedder":
        return _verify_folder(entry)
    resolved = resolve_judge(name_or_path, registry)
    digest = file_sha256(resolved.path, remembered=False)
    if resolved.entry is not None and digest != resolved.entry.sha256:
        raise ModelFileError(
            f"{resolved.path} has sha256 {digest}, but the registry expects "
            f"{resolved.entry.sha256}: the file is corrupt or a different model"
        )
    return VerifiedModel(resolved.path, resolved.entry, resolved.info, digest)


def looks_like_path(text: str) -> bool:
    """Only text shaped like a path names a file, so a stray folder in the working directory never replaces a model."""
    separators = {os.sep, "/"} | ({os.altsep} if os.altsep else set())
    return text.startswith(("~", ".")) or any(sep in text for sep in separators) or text.endswith(".gguf")


def _registry_entry(registry: Registry, name: str) -> ModelEntry:
    """The registry entry `name`; when a file of that name is here, say how to choose it instead."""
    if name not in registry.entries and Path(name).exists():
        known = ", ".join(sorted(registry.entries))
        raise ModelFileError(
            f"{name!r} is not a registry model (known: {known}); to use the file or folder of that "
            f"name in this directory, write it as a path: ./{name}"
        )
    return registry.get(name)


def install(name: str, progress: Progress | None = None, registry: Registry | None = None) -> Path:
    """Make a registry model usable and return its path: join chunk packages, or check a packaged file or folder."""
    entry = (registry or load_registry()).get(name)
    if entry.source == "package_dir":
        return _checked_dir(entry)
    if entry.source == "package_file":
        path = _package_path(entry)
        check_gguf(path, entry.sha256, entry.size)
        return path
    target = _installed_path(entry)
    if target.is_file():
        try:
            check_gguf(target, entry.sha256, entry.size)
            return target
        except ModelFileError:
            pass
    _assemble(entry, _chunk_paths(entry), target, progress)
    return target


def resolve_embedder_dir(name: str | None = None, registry: Registry | None = None) -> Path:
    """The checked model folder of a packaged embedder (None: the default embedder)."""
    registry = registry or load_registry()
    entry = registry.get(name or registry.default_embedder)
    if entry.role != "embedder":
        raise ModelFileError(f"{entry.name} is a judge model, not an embedder")
    if entry.source != "package_dir":
        raise ModelFileError(f"{entry.name} is not a packaged model folder (source {entry.source!r})")
    return _checked_dir(entry)


def model_statuses(registry: Registry | None = None) -> list[ModelStatus]:
    """Every registry model with its location, without hashing anything, so listing stays instant."""
    registry = registry or load_registry()
    return [_status(entry, registry) for entry in registry.entries.values()]


def _status(entry: ModelEntry, registry: Registry) -> ModelStatus:
    default = registry.default_name(entry.role) == entry.name
    missing = _missing_pins(entry)
    if entry.source == "chunks":
        target = _installed_path(entry)
        if target.is_file():
            return ModelStatus(entry, default, target, "")
        hint = _pip_command(missing) if missing else f"run `localeval models install {entry.name}`"
        return ModelStatus(entry, default, None, hint)
    if missing:
        return ModelStatus(entry, default, None, _pip_command(missing))
    path = _package_path(entry)
    if path.exists():
        return ModelStatus(entry, default, path, "")
    return ModelStatus(entry, default, None, f"{path} is missing: {_reinstall(entry.packages)}")


def _resolve_path(path: Path, registry: Registry) -> ResolvedModel:
    """Check a user-given file and match it to the registry entry with the same size and sha256."""
    size = require_file(path)
    candidates = [e for e in registry.entries.values() if e.role == "judge" and e.size == size]
    info = check_gguf(path)
    digest = file_sha256(path) if candidates else None
    entry = next((e for e in candidates if e.sha256 == digest), None)
    return ResolvedModel(path, entry, info)


def _judge_path(entry: ModelEntry) -> Path:
    """Where a registry judge lives once installed; says how to install it when it is not there."""
    if entry.source == "chunks":
        target = _installed_path(entry)
        if not target.exists():
            raise ModelFileError(f"{entry.name} is not installed: run `localeval models install {entry.name}`")
        return target
    return _package_path(entry)


def _installed_path(entry: ModelEntry) -> Path:
    return models_dir() / str(entry.file)


def _package_path(entry: ModelEntry) -> Path:
    """The file or folder `path` inside the entry's single package, which must be installed as pinned."""
    _require_packages(entry)
    ((dist_name, _version),) = entry.pins
    return Path(str(metadata.distribution(dist_name).locate_file(str(entry.path))))


def _checked_dir(entry: ModelEntry) -> Path:
    """A packaged model folder whose weights file matches the registry (a remembered digest is enough here)."""
    folder = _package_folder(entry)
    weights = folder / str(entry.weights)
    require_file(weights)
    check_checksum(weights, entry.sha256, entry.size)
    return folder


def _verify_folder(entry: ModelEntry) -> VerifiedFolder:
    """Every file the registry lists, hashed in full, and no file it does not list."""
    folder = _package_folder(entry)
    problems, size = [], 0
    for relative, expected in sorted(entry.files.items()):
        path = folder / relative
        if not path.is_file():
            problems.append(f"{relative} is missing")
            continue
        size += path.stat().st_size
        if (actual := file_sha256(path, remembered=False)) != expected:
            problems.append(f"{relative} has sha256 {actual}, the registry expects {expected}")
    problems += [f"{relative} is not a file of this model" for relative in _folder_files(folder) - set(entry.files)]
    if problems:
        raise ModelFileError(
            f"{entry.name} ({folder}) does not match the registry: {'; '.join(problems)}. "
            f"{_reinstall(entry.packages).capitalize()}"
        )
    return VerifiedFolder(folder, entry, len(entry.files), size)


def _package_folder(entry: ModelEntry) -> Path:
    folder = _package_path(entry)
    if not folder.is_dir():
        raise ModelFileError(
            f"{entry.packages[0]} is installed but has no folder {folder}: {_reinstall(entry.packages)}"
        )
    return folder


def _folder_files(folder: Path) -> set[str]:
    """Relative paths of the folder's files, leaving out Python's byte-code caches."""
    return {
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def _chunk_paths(entry: ModelEntry) -> list[Path]:
    """The chunk files in order: <module>/data/partNN.bin of the NN-th package."""
    _require_packages(entry)
    paths = []
    for number, (pin, (dist_name, _version)) in enumerate(zip(entry.packages, entry.pins), start=1):
        relative = f"{dist_name.replace('-', '_').replace('.', '_')}/data/part{number:02d}.bin"
        path = Path(str(metadata.distribution(dist_name).locate_file(relative)))
        if not path.is_file():
            raise ModelFileError(f"{pin} is installed but has no file {path}: {_reinstall([pin])}")
        paths.append(path)
    return paths


def _assemble(entry: ModelEntry, chunks: list[Path], target: Path, progress: Progress | None) -> None:
    """Join the chunks into `<file>.part` while hashing, then rename, so a half-written file is never used."""
    scratch = target.with_name(target.name + ".part")
    digest, done = hashlib.sha256(), 0
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with scratch.open("wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as source:
                    while block := source.read(_BLOCK):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        if progress:
                            progress(done, entry.size)
        _check_assembled(entry, done, digest.hexdigest())
        os.replace(scratch, target)
    except BaseException as error:
        scratch.unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise ModelFileError(f"Cannot write {scratch}: {error.strerror or error}") from None
        raise
    remember_sha256(target, digest.hexdigest())


def _check_assembled(entry: ModelEntry, size: int, sha256: str) -> None:
    if size != entry.size or sha256 != entry.sha256:
        raise ModelFileError(
            f"The joined parts of {entry.name} have {size:,} bytes and sha256 {sha256}, but the registry expects "
            f"{entry.size:,} bytes and sha256 {entry.sha256}: {_reinstall(entry.packages)}"
        )


def _require_packages(entry: ModelEntry) -> None:
    """Fail with the exact pip command when a pinned package is missing or at another version."""
    missing = _missing_pins(entry)
    if missing:
        found = [_installed_version(pin.split("==")[0]) for pin in missing]
        listed = [pin if version is None else f"{pin} (installed: {version})" for pin, version in zip(missing, found)]
        raise ModelFileError(
            f"{entry.name} needs packages that are not installed: {', '.join(listed)}. "
            f"Install them with: {_pip_command(missing)}"
        )


def _missing_pins(entry: ModelEntry) -> list[str]:
    """The pins whose distribution is absent or at another version."""
    return [pin for pin, (dist, version) in zip(entry.packages, entry.pins) if _installed_version(dist) != version]


def _installed_version(dist_name: str) -> str | None:
    try:
        return metadata.version(dist_name)
    except metadata.PackageNotFoundError:
        return None


def _pip_command(pins: list[str] | tuple[str, ...]) -> str:
    return f"pip install --no-deps {' '.join(pins)}"


def _reinstall(pins: list[str] | tuple[str, ...]) -> str:
    return f"reinstall with `pip install --no-deps --force-reinstall {' '.join(pins)}`"
