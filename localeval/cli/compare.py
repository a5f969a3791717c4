"""`localeval compare RUN_A RUN_B`: how the metric means moved from one results folder to another."""

from __future__ import annotations

from pathlib import Path

import click

from localeval.errors import ConfigError
from localeval.results.compare import compare_runs, comparison_html, comparison_text


@click.command()
@click.argument("run_a", type=click.Path(path_type=Path, file_okay=False))
@click.argument("run_b", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--top",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="How many of the samples that moved most to list.",
)
@click.option(
    "--html",
    "html_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also write the comparison as a self-contained HTML page.",
)
def compare(run_a: Path, run_b: Path, top: int, html_file: Path | None) -> None:
    """Per-metric difference B - A over the shared sample ids, with a paired-bootstrap interval."""
    comparison = compare_runs(run_a, run_b, top)
    click.echo(comparison_text(comparison))
    if html_file:
        try:
            html_file.write_text(comparison_html(comparison), encoding="utf-8")
        except OSError as error:
            raise ConfigError(f"Cannot write --html {html_file}: {error.strerror or error}.") from None
