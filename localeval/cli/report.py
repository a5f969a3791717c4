"""`localeval report RESULTS_DIR`: rebuild a results folder's report.html."""

from __future__ import annotations

from pathlib import Path

import click

from localeval.results.html_report import write_html_report


@click.command()
@click.argument("results_dir", type=click.Path(path_type=Path, file_okay=False))
def report(results_dir: Path) -> None:
    """Write RESULTS_DIR/report.html: summary, charts and every sample with its evidence, in one offline page."""
    click.echo(f"Report written to {write_html_report(results_dir)}")
