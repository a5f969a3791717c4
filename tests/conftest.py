"""Shared fixtures: the real small models, each loaded once per test session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.judge.gguf import GGUFJudge
from localeval.judge.protocol import JudgeConfig
from localeval.metrics import cards as cards_module
from localeval.metrics.cards import Card, Figure, write_cards
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


def card(metric: str, lang: str, validated: bool = True, judge: str | None = "qwen2.5-coder-1.5b") -> Card:
    """A card whose interval (0.85–0.95) lies above its floor (0.80), or straddles it (0.70–0.95)."""
    floor = Figure(0.8, 0.7, 0.9) if judge else None
    return Card(metric, lang, "AUROC", Figure(0.9, 0.85 if validated else 0.7, 0.95), floor, "", 50, "set", judge, "c")


@pytest.fixture
def shelf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Put cards of the test's own in place of the shipped ones: `shelf(card(...), ...)`."""

    def put(*found: Card) -> None:
        path = tmp_path / "cards.json"
        write_cards(found, path)
        monkeypatch.setattr(cards_module, "CARDS_FILE", path)

    yield put
    cards_module._read.cache_clear()
