"""The judge's shared command-line options, on a bare command: the values each accepts and refuses."""

import click
from click.testing import CliRunner

from localeval.cli.judge_options import judge_timeout_option


@click.command()
@judge_timeout_option
def show(judge_timeout: float | None) -> None:
    click.echo(repr(judge_timeout))


def test_judge_timeout_defaults_to_no_limit():
    result = CliRunner().invoke(show, [])
    assert (result.exit_code, result.output) == (0, "None\n")


def test_judge_timeout_takes_seconds():
    result = CliRunner().invoke(show, ["--judge-timeout", "2.5"])
    assert (result.exit_code, result.output) == (0, "2.5\n")


def test_judge_timeout_must_be_positive():
    result = CliRunner().invoke(show, ["--judge-timeout", "0"])
    assert result.exit_code == 2
    assert "Invalid value for '--judge-timeout': 0.0 is not in the range x>0.0." in result.output
