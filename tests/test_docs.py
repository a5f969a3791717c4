"""The documentation: a short README, docs/cli.md as the commands print their help now, links and anchors that
resolve, and the README's test command the one CI runs."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from localeval.metrics.cards import markdown_table

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)


def cli_docs_module():
    spec = importlib.util.spec_from_file_location("cli_docs", ROOT / "scripts" / "cli_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def without_code_blocks(text: str) -> str:
    return FENCE.sub("", text)


def github_slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation but `-` and `_` dropped, spaces to `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading's anchor, with GitHub's -1, -2 ... for repeated headings."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(without_code_blocks(page.read_text(encoding="utf-8"))):
        slug = github_slug(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def relative_links(page: Path) -> list[str]:
    targets = LINK.findall(without_code_blocks(page.read_text(encoding="utf-8")))
    return [target for target in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I)]


def test_cli_docs_are_what_the_commands_print_now():
    module = cli_docs_module()
    assert (DOCS / "cli.md").read_text(encoding="utf-8") == module.render(), module.OUT_OF_DATE


def test_cli_docs_cover_every_command():
    from localeval.cli import main

    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert "## localeval\n" in text
    for name in main.list_commands(None):
        assert f"## localeval {name}\n" in text


def test_readme_is_at_most_200_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_docs_pages_start_with_a_title_and_link_back_to_the_readme():
    for page in sorted(DOCS.glob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("# "), page.name
        assert lines[1] == "" and lines[2] and lines[3] == "", page.name  # a one-line summary
        assert "../README.md" in "\n".join(lines[:8]), page.name


def test_the_readme_links_every_docs_page():
    linked = {target.split("#")[0] for target in relative_links(README)}
    assert {f"docs/{page.name}" for page in DOCS.glob("*.md")} <= linked


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_relative_links_and_anchors_resolve(page):
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading with that anchor")
    assert broken == []


def test_github_slug():
    assert github_slug("Faithfulness: support as a probability, with its evidence") == (
        "faithfulness-support-as-a-probability-with-its-evidence"
    )
    assert github_slug("Before it runs: `--dry-run`") == "before-it-runs---dry-run"
    assert github_slug("statement_support answers with its verdict alone") == (
        "statement_support-answers-with-its-verdict-alone"
    )
    assert github_slug("On a cluster (Ray)") == "on-a-cluster-ray"


def readme_commands() -> list[str]:
    blocks = re.findall(r"^```sh\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)
    return [block.strip() for block in blocks]


def ci_command() -> str:
    """The commands .ci/run runs, joined with && (under `set -e` a line after another runs only if it passed)."""
    commands = []
    for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or re.match(r"(set|cd|echo|exit)\b|\w+=", line):
            continue
        line = re.sub(r"\s*\|\|\s*status=\$\?$", "", line)
        commands.extend(part.strip() for part in line.split("&&"))
    return " && ".join(commands)


def test_the_readme_test_command_is_the_one_ci_runs():
    test_commands = [command for command in readme_commands() if "pytest" in command]
    assert test_commands == [ci_command()]
    assert ci_command() == "scripts/setup.sh --tests && .venv/bin/python -m pytest"


def test_the_readme_first_command_sets_up_and_evaluates_the_example():
    assert "scripts/setup.sh && .venv/bin/localeval evaluate examples/rag_sample.jsonl --out results" in (
        readme_commands()
    )


def test_the_metric_cards_in_the_docs_are_the_shipped_cards():
    text = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    start = text.index("<!-- cards table:")
    table = text[text.index("\n", start) + 1 : text.index("<!-- end of cards table -->")].strip()
    assert table == markdown_table(), "docs/validation.md: paste `benchmarks/metaeval.py cards`'s table"
