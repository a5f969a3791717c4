"""`localeval evaluate`: score a dataset file and write a results folder."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from localeval.dataset import parse_field_map
from localeval.evaluation import EvaluationOptions, choose_metrics, load_dataset, run_evaluation
from localeval.judge import JudgeConfig
from localeval.report import summary_table


@click.command()
@click.argument("data", type=click.Path(path_type=Path))
@click.option("--metrics", "metric_list", help="Comma-separated metric names (default: every metric the data allows).")
@click.option("--judge", help="Judge GGUF: a file path or a registry name (default: the registry's default judge).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("results"), show_default=True,
              help="Results folder; rerunning into the same folder reuses finished judge calls.")
@click.option("--prompts", "prompts_dir", type=click.Path(path_type=Path), help="Folder overriding any prompt files.")
@click.option("--map", "field_map", multiple=True, metavar="SOURCE=TARGET", help="Rename a dataset column to a field.")
@click.option("--n-ctx", default=8192, show_default=True, help="Judge context window in tokens.")
@click.option("--threads", type=int, help="CPU threads for the judge (default: all available).")
@click.option("--gpu-layers", default=0, show_default=True, help="Layers to offload to the GPU (-1: all).")
@click.option("--seed", default=0, show_default=True, help="Judge sampling seed.")
@click.option("--temperature", default=0.0, show_default=True, help="Judge temperature (0: greedy).")
@click.option("--chat-template", type=click.Path(path_type=Path, dir_okay=False),
              help="Jinja chat template, for GGUF files without one.")
def evaluate(data: Path, metric_list: str | None, judge: str | None, out: Path, prompts_dir: Path | None,
             field_map: tuple[str, ...], n_ctx: int, threads: int | None, gpu_layers: int, seed: int,
             temperature: float, chat_template: Path | None) -> None:
    """Score DATA (JSONL, JSON or CSV) and write per-sample results, a summary and a manifest."""
    config = JudgeConfig(n_ctx=n_ctx, n_threads=threads, n_gpu_layers=gpu_layers, seed=seed,
                         temperature=temperature, chat_template=chat_template)
    requested = tuple(name.strip() for name in metric_list.split(",") if name.strip()) if metric_list else None
    options = EvaluationOptions(data=data, out=out, metrics=requested, judge=judge, judge_config=config,
                                prompts_dir=prompts_dir, field_map=parse_field_map(field_map))
    dataset = load_dataset(options)
    choice = choose_metrics(requested, dataset)
    click.echo(f"{len(dataset.samples)} samples from {data}; metrics: {', '.join(m.name for m in choice.chosen)}", err=True)
    for name, why in choice.skipped.items():
        click.echo(f"  skipped {name}: {why}", err=True)
    result = run_evaluation(options, dataset, choice.chosen, progress=_ProgressLine())
    click.echo(summary_table(result))
    click.echo(f"\nResults written to {out}/")
    if result.interrupted:
        click.echo("Interrupted. Rerun the same command to resume from the finished judge calls.", err=True)
        sys.exit(130)


class _ProgressLine:
    """One self-rewriting stderr line per step round, only on a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()

    def __call__(self, step: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        width = 30
        filled = width * done // total
        end = "\n" if done == total else ""
        click.echo(f"\r  {step:<22} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}", err=True, nl=False)
        click.echo(end, err=True, nl=False)
