"""`localeval metrics`: every metric with its required fields, models, judge steps, score range and cards."""

from __future__ import annotations

import click

from localeval.metrics.cards import AGREEMENT_BAR, describe, validated_in
from localeval.metrics.selection import REQUIRED_SUITE, expand, known_metrics
from localeval.steps.criteria import criterion_names
from localeval.steps.prompts import LANGUAGES


@click.command("metrics")
@click.option(
    "--criterion", "criterion_items", multiple=True, metavar="NAME[=DEFINITION]", help="Also list aspect_critique:NAME."
)
def metrics(criterion_items: tuple[str, ...]) -> None:
    """List every metric: fields, models, judge steps, score range, and its agreement with people per language."""
    criteria = criterion_names(criterion_items)
    known = known_metrics(criteria)
    for name in dict.fromkeys([*expand(REQUIRED_SUITE, criteria), *known]):
        metric = known[name]
        low, high = metric.score_range
        marker = "*" if validated_in(name, LANGUAGES) else " "
        click.echo(f"{marker} {metric.name}  [{low:g}–{high:g}]")
        click.echo(f"    {metric.description}")
        click.echo(
            f"    fields: {', '.join(metric.required)}; models: {', '.join(metric.models) or 'none'}"
            + (f"; judge steps: {', '.join(metric.steps)}" if metric.steps else "")
        )
        click.echo(f"    agreement with people: {describe(name, LANGUAGES)}")
    click.echo(
        "* validated in a language: without --metrics, a run scores it on that language's samples. Validated: its "
        f"agreement's 95% interval lies above its model-free floor (a metric with no floor: reaches {AGREEMENT_BAR:.2f})."
    )
