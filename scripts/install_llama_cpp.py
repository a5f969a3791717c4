"""Build llama-cpp-python for this machine's CPU, without llama.cpp's AMX backend, and install it.

Run by scripts/setup.sh with the virtual environment's Python; standard library only.

Why not a plain `pip install llama-cpp-python`:
- Its build uses -march=native. On CPUs with AMX that compiles llama.cpp's AMX backend, which
  segfaults in the first batched matmul on some of them (ggml-org/llama.cpp#20824). GCC and clang
  let an explicit -mno-amx-* win over -march=native, so we keep every other native instruction
  (AVX-512, VNNI, ...) and the repacked weight kernels, and drop only AMX.
- pip caches the wheel it built under a key of the source archive alone: a changed CMAKE_ARGS, or
  a cache carried to a CPU with other features, silently reuses a wheel built for something else.
  We bypass pip's cache and keep our own, keyed on everything that shapes the build: version,
  CMAKE_ARGS, CFLAGS, compiler, Python and CPU.

Environment: CMAKE_ARGS and CFLAGS/CXXFLAGS are passed to the build (for example
CMAKE_ARGS="-DGGML_CUDA=on" for NVIDIA GPUs); LOCALEVAL_WHEEL_CACHE moves the wheel cache
(default $XDG_CACHE_HOME/localeval/wheels, or ~/.cache/...); CC and CXX choose the compilers.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VERSION = "0.3.36"
PACKAGE = "llama-cpp-python"
NO_AMX = ("-mno-amx-tile", "-mno-amx-int8", "-mno-amx-bf16")
STAMP = Path(sys.prefix) / "localeval-llama-build.json"  # read back by `localeval doctor`


def main() -> int:
    cflags = _with_no_amx(os.environ.get("CFLAGS", ""), os.environ.get("CC", "cc"))
    cxxflags = _with_no_amx(os.environ.get("CXXFLAGS", ""), os.environ.get("CXX", "c++"))
    build = {
        "package": PACKAGE,
        "version": VERSION,
        "cmake_args": os.environ.get("CMAKE_ARGS", ""),
        "cflags": cflags,
        "cxxflags": cxxflags,
        "compiler": _first_line([os.environ.get("CXX", "c++"), "--version"]),
        "python": f"{sys.implementation.name}{sys.version_info.major}{sys.version_info.minor}",
        "machine": platform.machine(),
        "cpu": _cpu_identity(),
    }
    key = hashlib.sha256(json.dumps(build, sort_keys=True).encode()).hexdigest()[:16]
    if _installed_key() == key and _installed_version() == VERSION:
        print(f"{PACKAGE} {VERSION} is already built for this machine ({key}).")
        return 0
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = Path(os.environ.get("LOCALEVAL_WHEEL_CACHE") or cache_home / "localeval" / "wheels")
    folder = cache / f"{PACKAGE}-{VERSION}-{key}"
    wheels = sorted(folder.glob("*.whl"))
    if wheels:
        print(f"Using the {PACKAGE} wheel built earlier for this machine: {wheels[0]}")
    else:
        wheels = [_build(folder, build)]
    _pip("install", "--no-deps", "--force-reinstall", str(wheels[0]))
    STAMP.write_text(json.dumps({**build, "key": key, "wheel": str(wheels[0])}, indent=2) + "\n", encoding="utf-8")
    return 0


def _with_no_amx(flags: str, compiler: str) -> str:
    """The user's flags plus -mno-amx-*, where the target is x86-64 and the compiler knows them."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return flags
    probe = subprocess.run([compiler, *NO_AMX, "-x", "c", "-E", "-"], input="", capture_output=True, text=True)
    if probe.returncode != 0:  # a compiler that predates AMX cannot emit it under -march=native either
        return flags
    return " ".join(part for part in (flags, *NO_AMX) if part)


def _build(folder: Path, build: dict[str, str]) -> Path:
    print(f"Building {PACKAGE} {VERSION} for this CPU, without AMX (5-10 minutes on 2 cores) ...", flush=True)
    print(f"  CMAKE_ARGS={build['cmake_args']!r} CFLAGS={build['cflags']!r}", flush=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    log = staging / "build.log"
    env = {**os.environ, "CFLAGS": build["cflags"], "CXXFLAGS": build["cxxflags"]}
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as output:
        # --no-cache-dir: never take (or leave) a wheel in pip's cache, whose key ignores the flags.
        completed = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--disable-pip-version-check",
                "--no-deps",
                "--no-cache-dir",
                "--no-binary",
                PACKAGE,
                f"{PACKAGE}=={VERSION}",
                "-w",
                str(staging),
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
        )
    if completed.returncode != 0:
        print(log.read_text(encoding="utf-8", errors="replace")[-6000:], file=sys.stderr)
        sys.exit(f"Building {PACKAGE} failed (full log: {log}). It needs a C/C++ compiler and CMake 3.21+.")
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)  # only a finished build ever appears under the key
    print(f"Built in {time.monotonic() - started:.0f} s; kept in {folder}", flush=True)
    return sorted(folder.glob("*.whl"))[0]


def _cpu_identity() -> str:
    """Model name and feature flags: a native build is only valid on a CPU with the same features."""
    try:
        lines = Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return f"{platform.processor() or platform.machine()} | "
    fields = [line.split(":", 1) for line in lines if ":" in line]
    model = next((value.strip() for key, value in fields if key.strip() == "model name"), platform.machine())
    flags = next((value.split() for key, value in fields if key.strip() in ("flags", "Features")), [])
    return f"{model} | {' '.join(sorted(flags))}"  # as localeval.judge.system.cpu() reads it, for `localeval doctor`


def _first_line(command: list[str]) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True).stdout.partition("\n")[0]
    except OSError:
        return "unknown"


def _installed_key() -> str | None:
    try:
        return json.loads(STAMP.read_text(encoding="utf-8")).get("key")
    except (OSError, ValueError):
        return None


def _installed_version() -> str | None:
    """The version that imports, so a wheel replaced by hand since is noticed."""
    completed = subprocess.run(
        [sys.executable, "-c", "import llama_cpp; print(llama_cpp.__version__)"], capture_output=True, text=True
    )
    return completed.stdout.strip() if completed.returncode == 0 else None


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", *args], check=True)


if __name__ == "__main__":
    sys.exit(main())
