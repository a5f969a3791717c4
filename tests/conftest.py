"""Shared fixtures: the real small models, each loaded once per test session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.judge.gguf import GGUFJudge
from localeval.judge.protocol import JudgeConfig
from localeval.models import resolve_judge

EXAMPLE_DATA = Path(__file__).resolve().parent.parent / "examples" / "rag_sample.jsonl"
_MODEL_FIXTURES = {"smollm_path", "qwen05_path", "smollm_judge", "qwen05_judge"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that takes a model fixture is slow, so the fast tier (`pytest -m "not slow"`) leaves it out."""
    for item in items:
        if _MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def smollm_path() -> Path:
    """SmolLM2-135M: fast, for plumbing; its verdicts mean nothing."""
    return resolve_judge("smollm2-135m").path


@pytest.fixture(scope="session")
def qwen05_path() -> Path:
    """Qwen2.5-Coder-0.5B: the smallest judge whose verdicts make sense."""
    return resolve_judge("qwen2.5-coder-0.5b").path


@pytest.fixture(scope="session")
def smollm_judge(smollm_path: Path) -> GGUFJudge:
    return GGUFJudge(smollm_path, JudgeConfig(n_ctx=4096))


@pytest.fixture(scope="session")
def qwen05_judge(qwen05_path: Path) -> GGUFJudge:
    return GGUFJudge(qwen05_path, JudgeConfig(n_ctx=4096))


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path
