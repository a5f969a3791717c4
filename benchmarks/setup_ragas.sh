#!/usr/bin/env bash
# Sets up what benchmarks/vs_ragas.py needs besides localeval's own .venv (run scripts/setup.sh first):
#   .venv-ragas/                Ragas 0.4.3 and the LangChain OpenAI client, in a venv of their own
#   .venv-ragas/server-libs/    llama-cpp-python's server extra (FastAPI, uvicorn, ...), put on PYTHONPATH
#                               only for the judge server, which runs on .venv's own llama-cpp-python build
# Neither is ever a dependency of localeval. `import ragas` 0.4.3 needs langchain-community 0.4.1.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || { echo "Run scripts/setup.sh first: the benchmark uses .venv's llama-cpp-python." >&2; exit 1; }
python=${PYTHON:-python3}
[ -x .venv-ragas/bin/python ] || "$python" -m venv .venv-ragas
pip=(--disable-pip-version-check --quiet)
.venv-ragas/bin/python -m pip install "${pip[@]}" ragas==0.4.3 langchain-community==0.4.1 langchain-openai==1.8.1
.venv/bin/python -m pip install "${pip[@]}" --target .venv-ragas/server-libs --upgrade \
    fastapi uvicorn sse-starlette starlette-context pydantic-settings
echo "Ragas is set up in .venv-ragas; run: .venv/bin/python benchmarks/vs_ragas.py"
