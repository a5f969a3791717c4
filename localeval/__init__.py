"""localeval: evaluate RAG pipelines with local models only.

    from localeval import evaluate, Judge
    judge = Judge()                      # the default judge, checked and loaded once
    result = evaluate("data.jsonl", metrics=["faithfulness"], judge=judge, out="results")
    result.to_pandas()

Names are imported on first use, so `import localeval` stays quick and loads no model library.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__all__ = ["evaluate", "load", "Judge", "Embedders", "RunResult", "RayExecutor"]

_WHERE = {
    "evaluate": ("localeval.api", "evaluate"),
    "Judge": ("localeval.api", "Judge"),
    "Embedders": ("localeval.api", "Embedders"),
    "load": ("localeval.results.run_result", "load_results"),
    "RunResult": ("localeval.results.run_result", "RunResult"),
    "RayExecutor": ("localeval.run.options", "RayExecutor"),
}

if TYPE_CHECKING:
    from localeval.api import Embedders, Judge, evaluate
    from localeval.results.run_result import RunResult
    from localeval.results.run_result import load_results as load
    from localeval.run.options import RayExecutor


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'localeval' has no attribute {name!r}")
    module, attribute = _WHERE[name]
    return getattr(import_module(module), attribute)


def __dir__() -> list[str]:
    return sorted(__all__)
