"""What this machine is, as far as running the judge goes: the CPU's features and the llama.cpp build."""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

# The CPU features llama.cpp's x86 kernels are built for, in the order people know them.
SIMD_FLAGS = (
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "bmi2",
    "avx_vnni",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512_vbmi",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "amx_tile",
    "amx_int8",
    "amx_bf16",
    "asimd",
    "sve",
    "i8mm",
)
BUILD_STAMP = "localeval-llama-build.json"  # written into the environment by scripts/install_llama_cpp.py


@dataclass(frozen=True)
class CPU:
    model: str
    flags: frozenset[str]

    @property
    def has_amx(self) -> bool:
        return "amx_int8" in self.flags

    def simd(self) -> list[str]:
        return [flag for flag in SIMD_FLAGS if flag in self.flags]


@dataclass(frozen=True)
class LlamaBuild:
    """The llama-cpp-python that imports here, and how it was built."""

    version: str
    system_info: str  # llama.cpp's own list of the features it was compiled with
    gpu_offload: bool
    library_files: tuple[tuple[str, int, int], ...]  # (name, size, mtime_ns) of its shared libraries
    setup_stamp: dict[str, Any] | None  # what scripts/setup.sh recorded, or None for a build made elsewhere

    @property
    def uses_amx(self) -> bool:
        return "AMX_INT8 = 1" in self.system_info

    def identity(self) -> str:
        """Changes whenever the installed libraries do, so a check that passed is not trusted after a rebuild."""
        return hashlib.sha256(json.dumps([self.version, self.library_files]).encode()).hexdigest()[:16]


@lru_cache(maxsize=1)
def cpu() -> CPU:
    try:
        lines = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return CPU(platform.processor() or platform.machine(), frozenset())
    fields = [line.split(":", 1) for line in lines if ":" in line]
    model = next((value.strip() for key, value in fields if key.strip() == "model name"), platform.machine())
    flags = next((value.split() for key, value in fields if key.strip() in ("flags", "Features")), [])
    return CPU(model, frozenset(flags))


@lru_cache(maxsize=1)
def llama_build() -> LlamaBuild:
    import llama_cpp

    package = Path(llama_cpp.__file__).resolve().parent
    libraries = sorted(path for pattern in ("*.so*", "*.dylib", "*.dll") for path in (package / "lib").glob(pattern))
    files = tuple((path.name, path.stat().st_size, path.stat().st_mtime_ns) for path in libraries)
    return LlamaBuild(
        version=llama_cpp.__version__,
        system_info=llama_cpp.llama_print_system_info().decode("utf-8", errors="replace").strip(),
        gpu_offload=bool(llama_cpp.llama_supports_gpu_offload()),
        library_files=files,
        setup_stamp=_setup_stamp(),
    )


def _setup_stamp() -> dict[str, Any] | None:
    try:
        stamp = json.loads((Path(sys.prefix) / BUILD_STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) else None
