"""The model registry (`models/registry.toml`): which models exist, where their files come from, their checksums."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval._resources import registry_path
from localeval.errors import ModelFileError

ROLES = ("judge", "embedder")
SOURCES = ("chunks", "package_file", "package_dir")

_REQUIRED = ("role", "description", "license", "upstream", "source", "packages", "sha256", "size")
_OPTIONAL = ("file", "path", "weights")
_OPTIONAL_OTHER = ("plumbing", "files")
_NEEDED_BY_SOURCE = {"chunks": ("file",), "package_file": ("path",), "package_dir": ("path", "weights")}
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class ModelEntry:
    """One model of the registry; `packages` are "dist==version" pins in order."""

    name: str
    role: str
    description: str
    license: str
    upstream: str
    source: str
    packages: tuple[str, ...]
    sha256: str
    size: int
    file: str | None = None
    path: str | None = None
    weights: str | None = None
    plumbing: bool = False  # a judge for tests of the machinery: its verdicts mean nothing
    files: Mapping[str, str] = field(default_factory=dict, hash=False)  # package_dir: every file's sha256

    @property
    def pins(self) -> tuple[tuple[str, str], ...]:
        """The packages as (distribution, version) pairs, for lookups in importlib.metadata."""
        return tuple(_split_pin(pin) for pin in self.packages)


@dataclass(frozen=True)
class Registry:
    """All registry entries by name, plus the default judge and embedder names."""

    entries: Mapping[str, ModelEntry]
    default_judge: str
    default_embedder: str
    source: Path

    def get(self, name: str) -> ModelEntry:
        """The entry called `name`; an unknown name lists the known ones so a typo is easy to fix."""
        try:
            return self.entries[name]
        except KeyError:
            known = ", ".join(sorted(self.entries))
            raise ModelFileError(f"Unknown model {name!r}. Known models: {known}") from None

    def default_name(self, role: str) -> str:
        """The default model name for `role` ("judge" or "embedder")."""
        return self.default_judge if role == "judge" else self.default_embedder


def load_registry(path: Path | None = None) -> Registry:
    """Read and validate the registry, so later code can trust every field."""
    path = Path(path) if path is not None else registry_path()
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise ModelFileError(f"Model registry not found: {path}") from None
    except OSError as error:
        raise ModelFileError(f"Cannot read model registry {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ModelFileError(f"Model registry {path} is not valid TOML: {error}") from None
    try:
        return _parse(data, path)
    except ValueError as error:
        raise ModelFileError(f"Model registry {path}: {error}") from None


def _parse(data: dict[str, Any], path: Path) -> Registry:
    """Build the registry from the TOML document, raising ValueError on the first problem."""
    _reject_unknown(data, ("default_judge", "default_embedder", "models"), "top level")
    models = data.get("models")
    if not isinstance(models, dict) or not models:
        raise ValueError('no [models."<name>"] tables')
    entries = {name: _entry(name, table) for name, table in models.items()}
    defaults = {role: _text(data, f"default_{role}", "top level") for role in ROLES}
    for role, name in defaults.items():
        if name not in entries:
            raise ValueError(f"default_{role} {name!r} is not a model of the registry")
        if entries[name].role != role:
            raise ValueError(f"default_{role} {name!r} has role {entries[name].role!r}")
    return Registry(entries, defaults["judge"], defaults["embedder"], path)


def _entry(name: str, table: Any) -> ModelEntry:
    """Validate one [models."<name>"] table."""
    where = f"model {name!r}"
    if not isinstance(table, dict):
        raise ValueError(f"{where} must be a table")
    _reject_unknown(table, _REQUIRED + _OPTIONAL + _OPTIONAL_OTHER, where)
    fields = {key: _text(table, key, where) for key in _REQUIRED if key not in ("packages", "size")}
    _choose(fields["role"], ROLES, f"{where}: role")
    _choose(fields["source"], SOURCES, f"{where}: source")
    if not _SHA256.match(fields["sha256"]):
        raise ValueError(f"{where}: sha256 must be 64 lowercase hex digits")
    size = table.get("size")
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise ValueError(f"{where}: size must be a positive number of bytes")
    packages = _packages(table.get("packages"), fields["source"], where)
    optional = {key: _text(table, key, where) for key in _OPTIONAL if key in table}
    for key in _NEEDED_BY_SOURCE[fields["source"]]:
        if key not in optional:
            raise ValueError(f"{where}: source {fields['source']!r} needs the field {key!r}")
    if fields["role"] == "judge" and "file" not in optional:
        raise ValueError(f"{where}: a judge needs the field 'file'")
    plumbing = table.get("plumbing", False)
    if not isinstance(plumbing, bool):
        raise ValueError(f"{where}: plumbing must be true or false")
    files = _file_digests(table.get("files"), fields["source"], where)
    if files and files.get(str(optional.get("weights"))) != fields["sha256"]:
        raise ValueError(f"{where}: files must list the weights file {optional.get('weights')!r} with its sha256")
    return ModelEntry(name=name, packages=packages, size=size, plumbing=plumbing, files=files, **fields, **optional)


def _file_digests(value: Any, source: str, where: str) -> dict[str, str]:
    """A packaged folder lists every file with its sha256, so `models verify` can check all of them."""
    if source != "package_dir":
        if value is not None:
            raise ValueError(f"{where}: files is only for source 'package_dir'")
        return {}
    if not isinstance(value, dict) or not value:
        raise ValueError(f'{where}: source \'package_dir\' needs a files table of "relative/path" = "sha256"')
    for relative, digest in value.items():
        if not isinstance(digest, str) or not _SHA256.match(digest):
            raise ValueError(f"{where}: files: {relative!r} needs a sha256 of 64 lowercase hex digits")
    return dict(value)


def _packages(value: Any, source: str, where: str) -> tuple[str, ...]:
    """Check the pins: "dist==version" strings, exactly one unless the file is split into chunks."""
    if not isinstance(value, list) or not value or not all(isinstance(pin, str) for pin in value):
        raise ValueError(f'{where}: packages must be a non-empty list of "dist==version" strings')
    for pin in value:
        _split_pin(pin, where)
    if source != "chunks" and len(value) != 1:
        raise ValueError(f"{where}: source {source!r} takes exactly one package")
    return tuple(value)


def _split_pin(pin: str, where: str = "package pin") -> tuple[str, str]:
    """("dist", "version") from "dist==version"."""
    match = _PIN.match(pin)
    if not match:
        raise ValueError(f'{where}: {pin!r} is not of the form "dist==version"')
    return match.group(1), match.group(2)


def _text(table: dict[str, Any], key: str, where: str) -> str:
    """A required non-empty string field."""
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: missing or empty field {key!r}")
    return value


def _choose(value: str, allowed: tuple[str, ...], what: str) -> None:
    """Reject a value outside a fixed set, listing the allowed ones."""
    if value not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}, not {value!r}")


def _reject_unknown(table: dict[str, Any], known: tuple[str, ...], where: str) -> None:
    """Unknown keys are usually typos; refusing them beats ignoring a misspelt checksum."""
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {', '.join(unknown)}")
