"""Where the bundled prompt files and model registry live, in a wheel or in a source checkout."""

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
_BUNDLED = _PACKAGE_DIR / "_bundled"  # filled by the wheel build (see pyproject.toml)
_CHECKOUT = _PACKAGE_DIR.parent


def project_path(name: str) -> Path:
    """Path of a top-level project folder (`prompts`, `models`), packaged copy first."""
    packaged = _BUNDLED / name
    return packaged if packaged.exists() else _CHECKOUT / name


def bundled_prompts_dir() -> Path:
    return project_path("prompts")


def registry_path() -> Path:
    return project_path("models") / "registry.toml"


def models_dir() -> Path:
    """Folder for assembled GGUF files: $LOCALEVAL_MODELS_DIR, the checkout's models/, or a user folder."""
    if env := os.environ.get("LOCALEVAL_MODELS_DIR"):
        return Path(env).expanduser()
    if not (_BUNDLED / "models").exists() and (_CHECKOUT / "models" / "registry.toml").exists():
        return _CHECKOUT / "models"
    data_home = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share"))
    return data_home / "localeval" / "models"


def cache_dir() -> Path:
    """Folder for things worth keeping between runs but safe to delete: $LOCALEVAL_CACHE_DIR, else the XDG cache."""
    if env := os.environ.get("LOCALEVAL_CACHE_DIR"):
        return Path(env).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "localeval"
