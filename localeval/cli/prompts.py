"""`localeval prompts`: see and export the judge prompt files."""

from __future__ import annotations

from pathlib import Path

import click

from localeval.steps import STEPS
from localeval.steps.prompts import PromptLibrary


@click.group()
def prompts() -> None:
    """List, show and export the judge prompt files."""


@prompts.command("list")
@click.option("--prompts", "prompts_dir", type=click.Path(path_type=Path), help="Folder overriding prompt files.")
def list_prompts(prompts_dir: Path | None) -> None:
    """List every judge step with its languages and prompt files."""
    library = PromptLibrary(prompts_dir)
    for step, lang in library.available():
        template = library.get(step, lang)
        marker = " (override)" if library.is_override(step, lang) else ""
        click.echo(f"{step:<22} {lang}  {template.sha256[:12]}  {template.path}{marker}")
        if lang == "en":
            click.echo(f"{'':<22}     {STEPS[step].description}")


@prompts.command("show")
@click.argument("step")
@click.option("--lang", default="en", show_default=True)
@click.option("--prompts", "prompts_dir", type=click.Path(path_type=Path), help="Folder overriding prompt files.")
def show_prompt(step: str, lang: str, prompts_dir: Path | None) -> None:
    """Print the prompt file used for STEP."""
    library = PromptLibrary(prompts_dir)
    template = library.get(step, lang)
    click.echo(f"# {template.path} (sha256 {template.sha256})")
    click.echo(template.path.read_text(encoding="utf-8"), nl=False)


@prompts.command("export")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
def export_prompts(directory: Path) -> None:
    """Write the default prompt files into DIRECTORY, ready to edit and pass with --prompts."""
    written = PromptLibrary().export(directory)
    click.echo(f"Wrote {len(written)} prompt files to {directory}/")
