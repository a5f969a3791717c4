"""Write docs/cli.md: the `--help` text of `localeval` and of every command, as click prints it.

    python scripts/cli_docs.py           # write docs/cli.md
    python scripts/cli_docs.py --check   # exit 1 if docs/cli.md differs from what this would write

The help is formatted at a fixed width of 100 columns, whatever the terminal, so the file is
byte-identical on every machine; tests/test_docs.py holds it to the commands as they are now.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

REPO = Path(__file__).resolve().parent.parent
CLI_DOCS = REPO / "docs" / "cli.md"
WIDTH = 100
OUT_OF_DATE = "docs/cli.md is out of date: run python scripts/cli_docs.py"

HEADER = """\
# Command-line reference

Every `localeval` command's full `--help`, generated from the code by `scripts/cli_docs.py`; do not edit by hand.

Back to the [README](../README.md).
"""


def help_pages() -> list[tuple[str, str]]:
    """(command path, help text) for the group and every command under it, in the order click lists them."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from localeval.cli import main

    pages: list[tuple[str, str]] = []

    def visit(command: click.Command, name: str, parent: click.Context | None) -> None:
        ctx = click.Context(command, info_name=name, parent=parent, terminal_width=WIDTH, max_content_width=WIDTH)
        pages.append((ctx.command_path, command.get_help(ctx)))
        if isinstance(command, click.Group):
            for sub_name in command.list_commands(ctx):
                sub = command.get_command(ctx, sub_name)
                if sub is not None and not sub.hidden:
                    visit(sub, sub_name, ctx)

    visit(main, "localeval", None)
    return pages


def render() -> str:
    """The whole of docs/cli.md."""
    sections = [HEADER]
    for path, text in help_pages():
        sections.append(f"## {path}\n\n```text\n{text}\n```\n")
    return "\n".join(sections)


def main(argv: list[str]) -> int:
    if argv not in ([], ["--check"]):
        print("usage: python scripts/cli_docs.py [--check]", file=sys.stderr)
        return 2
    text = render()
    if argv == ["--check"]:
        current = CLI_DOCS.read_text(encoding="utf-8") if CLI_DOCS.is_file() else None
        if current != text:
            print(OUT_OF_DATE, file=sys.stderr)
            return 1
        print("docs/cli.md is up to date.")
        return 0
    CLI_DOCS.parent.mkdir(exist_ok=True)
    CLI_DOCS.write_text(text, encoding="utf-8", newline="\n")
    print(f"Wrote {CLI_DOCS.relative_to(REPO)}.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
