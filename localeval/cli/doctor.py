"""`localeval doctor`: print what the installation consists of, and fail when the judge cannot generate."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from localeval.cli.judge_options import (
    gpu_layers_option,
    judge_api_key_env_option,
    threads_option,
)
from localeval.judge.doctor import FAIL, INFO, OK, WARN, diagnose
from localeval.judge.protocol import JudgeConfig


@click.command()
@click.option(
    "--judge",
    help="Judge to check: a GGUF path, a registry name or a server URL (default: the default "
    "judge if it is installed, else the first installed one).",
)
@judge_api_key_env_option
@threads_option
@gpu_layers_option
@click.option(
    "--chat-template",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Jinja chat template, for GGUF files without one.",
)
@click.option("--no-embedders", is_flag=True, help="Skip loading the embedders.")
@click.option(
    "--batch-curve/--no-batch-curve",
    default=True,
    help="After the judge check, time its answers with 1, 2, 4 and 8 calls decoded together, and say which "
    "--batch-decode suits this machine (some 20 s with the default judge on 2 cores).",
)
def doctor(
    judge: str | None,
    judge_api_key_env: str | None,
    threads: int | None,
    gpu_layers: int,
    chat_template: Path | None,
    no_embedders: bool,
    batch_curve: bool,
) -> None:
    """Check the llama.cpp build, the CPU, the models and the embedders, then let the judge generate.

    The judge runs in a child process, so a crash in llama.cpp is reported. If it runs, its answer speed with
    1, 2, 4 and 8 calls decoded together follows, with the --batch-decode that suits this machine. Exits 1 when
    anything failed, for instance when the judge cannot generate.
    """
    config = JudgeConfig.from_options(
        threads=threads, gpu_layers=gpu_layers, chat_template=chat_template, api_key_env=judge_api_key_env
    )
    section, failures, warnings = None, 0, 0
    for finding in diagnose(judge, config, embedders=not no_embedders, batch_curve=batch_curve):
        if finding.section != section:
            click.echo(("\n" if section else "") + finding.section)
            section = finding.section
        click.echo(f"  {_MARKERS[finding.status]:<4} {finding.label + ':':<30} {finding.detail}")
        failures += finding.status == FAIL
        warnings += finding.status == WARN
    if failures:
        click.echo(f"\n{_count(failures, 'problem')} found (marked FAIL).", err=True)
        sys.exit(1)
    noted = f" ({_count(warnings, 'warning')})" if warnings else ""
    click.echo(f"\nAll checks passed{noted}.")


_MARKERS = {OK: "ok", WARN: "warn", FAIL: "FAIL", INFO: ""}


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
