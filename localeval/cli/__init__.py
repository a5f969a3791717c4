"""The `localeval` command: argument parsing and printing only; the work happens in the library."""

from __future__ import annotations

import logging
import sys
from typing import Any

import click

from localeval.errors import LocalevalError


class _Main(click.Group):
    """Turns library errors into `Error: ...` with exit 1, and Ctrl-C into exit 130, unless --debug."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LocalevalError as error:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"Error: {error}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            sys.exit(130)


@click.group(cls=_Main)
@click.option("--debug", is_flag=True, help="Show full tracebacks.")
@click.version_option(package_name="localeval")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Evaluate RAG pipelines with local models only."""
    ctx.ensure_object(dict)["debug"] = debug
    _show_library_warnings()


class _EchoWarnings(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        click.echo(f"Warning: {record.getMessage()}", err=True)


def _show_library_warnings() -> None:
    """The library reports what a user must know (a fallback, an unfinished previous run) as log warnings."""
    logger = logging.getLogger("localeval")
    if not any(isinstance(handler, _EchoWarnings) for handler in logger.handlers):
        logger.addHandler(_EchoWarnings(logging.WARNING))
    logger.setLevel(logging.WARNING)
    logger.propagate = False


def _register_commands() -> None:
    from localeval.cli import (
        calibrate,
        compare,
        doctor,
        evaluate,
        metrics,
        models,
        prompts,
        report,
    )

    main.add_command(calibrate.calibrate)
    main.add_command(compare.compare)
    main.add_command(doctor.doctor)
    main.add_command(evaluate.evaluate)
    main.add_command(metrics.metrics)
    main.add_command(models.models)
    main.add_command(prompts.prompts)
    main.add_command(report.report)


_register_commands()
