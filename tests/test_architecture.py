"""The package's shape: every import, at any depth of a module, goes down the layers, and no module imports itself
back through others. A reader who opens `localeval/` sees the data flow in this order."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "localeval"

# Lowest first: an area may import from its own layer and those before it, never from one after it.
LAYERS = (
    ("errors", "reasons", "_resources"),  # shared leaves
    ("models",),  # model files: the registry, installing and checking them, embedders and cross-encoders
    ("data",),  # rows in: readers, checks, samples, text
    ("judge",),  # the judge, in process or on a server
    ("grounding",),  # coverage and calibrations: no model
    ("steps",),  # judge steps, their schemas and prompt files
    ("metrics",),  # what a metric reads, asks and scores
    ("results",),  # what a run leaves and what is made from it
    ("run",),  # driving a run
    ("api", "__init__"),  # the front door
    ("cli",),  # the commands, on top of the front door
)
LAYER_OF = {area: rank for rank, areas in enumerate(LAYERS) for area in areas}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def area_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """Every localeval module `path` imports, at module level, in functions, under TYPE_CHECKING or through
    importlib.import_module("..."), alike."""
    found = set()
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
            names = [arg.value for arg in node.args[:1] if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        found.update(name for name in names if name.split(".")[0] == "localeval")
    return {name if name in modules else name.rpartition(".")[0] for name in found} - {module_name(path)}


def import_graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(path) for path in paths}
    return {module_name(path): imports_of(path, modules) & modules for path in paths}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_back_through_others() -> None:
    assert cycles(import_graph()) == []


def test_every_import_goes_down_the_layers() -> None:
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph().items()
        for target in targets
        if LAYER_OF[area_of(target)] > LAYER_OF[area_of(module)]
    )
    assert upward == []


def test_every_module_lives_in_an_area() -> None:
    top_level = sorted(path.stem for path in PACKAGE.glob("*.py"))
    assert top_level == ["__init__", "_resources", "api", "errors", "reasons"]
    assert {area_of(module) for module in import_graph()} <= set(LAYER_OF)


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
