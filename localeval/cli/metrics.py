"""`localeval metrics`: every metric with its required fields, models, judge steps and score range."""

from __future__ import annotations

import click

from localeval.metrics.selection import REQUIRED_SUITE, expand, known_metrics
from localeval.steps.criteria import criterion_names


@click.command("metrics")
@click.option(
    "--criterion", "criterion_items", multiple=True, metavar="NAME[=DEFINITION]", help="Also list aspect_critique:NAME."
)
def metrics(criterion_items: tuple[str, ...]) -> None:
    """List every metric: required fields, models, judge steps and score range; * marks the default suite."""
    criteria = criterion_names(criterion_items)
    default = set(expand(REQUIRED_SUITE, criteria))
    for metric in known_metrics(criteria).values():
        low, high = metric.score_range
        marker = "*" if metric.name in default else " "
        click.echo(f"{marker} {metric.name}  [{low:g}–{high:g}]")
        click.echo(f"    {metric.description}")
        click.echo(
            f"    fields: {', '.join(metric.required)}; models: {', '.join(metric.models) or 'none'}"
            + (f"; judge steps: {', '.join(metric.steps)}" if metric.steps else "")
        )
    click.echo("* in the default suite (run when the dataset has the fields)")
