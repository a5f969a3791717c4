"""`localeval evaluate`: score a dataset file and write a results folder."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import click

from localeval.api import plan, run
from localeval.cli.judge_options import (
    JUDGE_HELP,
    batch_decode_option,
    draft_tokens_option,
    gpu_layers_option,
    judge_api_key_env_option,
    judge_timeout_option,
    n_ctx_option,
    threads_option,
)
from localeval.data.dataset import RowError, parse_field_map
from localeval.errors import ConfigError
from localeval.grounding.calibration import CalibrationFile
from localeval.judge.protocol import JudgeConfig
from localeval.metrics.options import MetricOptions
from localeval.metrics.selection import metric_names
from localeval.results.gating import (
    NAN_POLICIES,
    NanPolicy,
    check_gated_metrics,
    failure_line,
    gate,
    parse_bounds,
)
from localeval.results.outcome import judge_failures
from localeval.results.table import summary_markdown, summary_table
from localeval.run.dry_run import dry_run as estimate_run
from localeval.run.dry_run import dry_run_table
from localeval.run.options import DEFAULT_BATCH, EvaluationOptions, RayExecutor
from localeval.run.progress import RunProgress, format_duration
from localeval.steps.criteria import Definitions, parse_named, read_definitions

EXIT_JUDGE_FAILED = 3  # results written, but the judge failed on more than JUDGE_FAILURE_LIMIT of its scores
EXIT_BELOW_THRESHOLD = 4  # results written, but a --fail-under bound was not met
EXIT_INTERRUPTED = 130
_SHOWN_PROBLEMS = 10


@click.command()
@click.argument("data", type=click.Path(path_type=Path))
@click.option(
    "--metrics",
    "metric_list",
    help="Comma-separated metric names; 'aspect_critique' means every criterion (default: the metrics validated "
    "in the data's languages, where the data has the fields). `localeval metrics` lists them with their cards.",
)
@click.option("--judge", help=f"{JUDGE_HELP}; default: the registry's default judge.")
@judge_api_key_env_option
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("results"),
    show_default=True,
    help="Results folder, written as samples finish; rerunning into it reuses finished samples and judge calls.",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=DEFAULT_BATCH,
    show_default=True,
    help="Samples scored together: more keeps each step's prompt in the judge's cache longer, fewer "
    "writes finished samples sooner.",
)
@click.option("--prompts", "prompts_dir", type=click.Path(path_type=Path), help="Folder overriding any prompt files.")
@click.option("--map", "field_map", multiple=True, metavar="SOURCE=TARGET", help="Rename a dataset column to a field.")
@click.option(
    "--lang",
    type=click.Choice(["auto", "en", "ja", "zh"]),
    default="auto",
    show_default=True,
    help="Prompt language; auto: per sample (kana: ja, Han without kana: zh, else en).",
)
@click.option(
    "--embedder",
    help="Embedder: registry name, sentence-transformers folder or GGUF file "
    "(default: all-minilm-l6-v2 for en, multilingual-e5-small for ja/zh).",
)
@click.option(
    "--cross-encoder",
    type=click.Path(path_type=Path),
    help="Cross-encoder folder; answer_similarity then scores pairs with it instead of cosine.",
)
@click.option(
    "--strictness",
    default=3,
    show_default=True,
    help="answer_relevancy: the questions written back from the response.",
)
@click.option(
    "--criterion",
    "criterion_pairs",
    multiple=True,
    metavar="NAME=DEFINITION",
    help="Add an aspect_critique criterion (metric aspect_critique:NAME).",
)
@click.option(
    "--rubric",
    "rubric_pairs",
    multiple=True,
    metavar="NAME=TEXT",
    help="Replace a rubric_score rubric (reference_free or with_reference).",
)
@click.option(
    "--criteria-file",
    type=click.Path(path_type=Path, dir_okay=False),
    help='TOML file with [criteria] and [rubrics] tables of NAME = "definition".',
)
@click.option(
    "--calibration",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Calibration file for P(supported), as `localeval calibrate` writes, used in every language it "
    "covers (default: the packaged one fitted for this judge, else the judge's own probability).",
)
@click.option(
    "--evidence-sentences",
    default=0,
    show_default=True,
    help="Statement support: the judge reads only the N context sentences that cover the statement "
    "best (0: every context).",
)
@n_ctx_option
@threads_option
@gpu_layers_option
@judge_timeout_option
@draft_tokens_option
@batch_decode_option
@click.option("--seed", default=0, show_default=True, help="Judge sampling seed.")
@click.option(
    "--temperature",
    type=click.FloatRange(min=0.0),
    default=0.0,
    show_default=True,
    help="Judge temperature (0: greedy).",
)
@click.option(
    "--chat-template",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Jinja chat template, for GGUF files without one.",
)
@click.option(
    "--fail-under",
    "bound_pairs",
    multiple=True,
    metavar="METRIC=BOUND",
    help=f"Exit with code {EXIT_BELOW_THRESHOLD} when METRIC's mean is below BOUND (repeatable; for CI).",
)
@click.option(
    "--nan-policy",
    type=click.Choice(NAN_POLICIES),
    default="fail",
    show_default=True,
    help="--fail-under with NaN scores: fail the gate, or leave them out of the mean (no scores still fails).",
)
@click.option(
    "--summary-md",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also write the summary as a Markdown table to this file (for a pull request).",
)
@click.option(
    "--ray",
    "ray_address",
    metavar="ADDRESS",
    help="Score on a Ray cluster (pip install 'localeval[ray]'): 'local' starts one on this machine, "
    "'auto' joins the one `ray start` runs here, or a cluster's address. One actor per --threads "
    "cores; the results folder is the same as a local run's.",
)
@click.option(
    "--ray-actors",
    type=click.IntRange(min=1),
    help="With --ray: at most this many actors (default: as many as the cluster's CPUs hold).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the judge calls, tokens and estimated time per metric, and stop: no model is loaded and "
    "nothing is written.",
)
def evaluate(
    data: Path,
    metric_list: str | None,
    judge: str | None,
    judge_api_key_env: str | None,
    out: Path,
    prompts_dir: Path | None,
    field_map: tuple[str, ...],
    lang: str,
    embedder: str | None,
    cross_encoder: Path | None,
    strictness: int,
    criterion_pairs: tuple[str, ...],
    rubric_pairs: tuple[str, ...],
    criteria_file: Path | None,
    calibration: Path | None,
    evidence_sentences: int,
    n_ctx: int,
    threads: int | None,
    gpu_layers: int,
    judge_timeout: float | None,
    draft_tokens: int,
    batch_decode: int,
    seed: int,
    temperature: float,
    chat_template: Path | None,
    batch_size: int,
    bound_pairs: tuple[str, ...],
    nan_policy: NanPolicy,
    summary_md: Path | None,
    ray_address: str | None,
    ray_actors: int | None,
    dry_run: bool,
) -> None:
    """Score DATA (JSONL, JSON, CSV, Parquet or a saved `datasets` folder) and write per-sample results, a summary
    and a manifest."""
    config = JudgeConfig.from_options(
        n_ctx=n_ctx,
        threads=threads,
        gpu_layers=gpu_layers,
        seed=seed,
        temperature=temperature,
        chat_template=chat_template,
        timeout=judge_timeout,
        draft_tokens=draft_tokens,
        batch_decode=batch_decode,
        api_key_env=judge_api_key_env,
    )
    bounds = parse_bounds(bound_pairs)
    if ray_actors is not None and ray_address is None:
        raise click.UsageError("--ray-actors needs --ray.")
    requested = metric_names(metric_list)
    user = read_definitions(criteria_file) if criteria_file else Definitions()
    user = user.merged(Definitions(parse_named(criterion_pairs, "criterion"), parse_named(rubric_pairs, "rubric")))
    options = EvaluationOptions(
        data=data,
        out=out,
        metrics=requested,
        judge=judge,
        judge_config=config,
        prompts_dir=prompts_dir,
        field_map=parse_field_map(field_map),
        lang=lang,
        embedder=embedder,
        cross_encoder=cross_encoder,
        definitions=user,
        batch_size=batch_size,
        executor=RayExecutor(ray_address, ray_actors) if ray_address else None,
        metric_options=MetricOptions(strictness=strictness, evidence_sentences=evidence_sentences),
        calibration=CalibrationFile.load(calibration) if calibration else None,
    )
    planned = plan(options)
    check_gated_metrics(bounds, [metric.name for metric in planned.metrics])
    samples = f"{len(planned.dataset)} sample{'' if len(planned.dataset) == 1 else 's'}"
    click.echo(f"{samples} from {data}; metrics: {', '.join(m.name for m in planned.metrics)}", err=True)
    _explain_skipped(planned.skipped, planned.unvalidated)
    _show_row_problems(planned.dataset.row_errors, planned.dataset.row_warnings)
    if dry_run:
        click.echo(dry_run_table(estimate_run(options, planned.dataset, planned.metrics)))
        return
    result = run(planned, progress=_ProgressLine(), keep_samples=False)
    gates = gate(result.summaries, bounds, nan_policy) if bounds and not result.interrupted else []
    click.echo(summary_table(result))
    click.echo(f"\nResults written to {out}/")
    if summary_md:
        _write_summary_md(summary_md, summary_markdown(result, gates))
    if result.interrupted:
        click.echo("Interrupted. Rerun the same command to resume from the finished judge calls.", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if (failures := judge_failures(result, planned.metrics)).too_many:
        click.echo(f"Error: {failures.describe()}.", err=True)
        sys.exit(EXIT_JUDGE_FAILED)
    if any(not g.passed for g in gates):
        click.echo(failure_line(gates), err=True)
        sys.exit(EXIT_BELOW_THRESHOLD)


def _write_summary_md(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise ConfigError(
            f"Cannot write --summary-md {path}: {error.strerror or error}. The results folder is complete."
        ) from None


def _explain_skipped(skipped: dict[str, str], unvalidated: dict[str, str]) -> None:
    """Validated metrics the data cannot feed, one per line; the unvalidated ones on a single line."""
    for name, why in skipped.items():
        click.echo(f"  skipped {name}: {why}", err=True)
    if unvalidated:
        click.echo(
            f"  not validated in this data's languages, so run only when named with --metrics (`localeval metrics` "
            f"shows how each was measured): {', '.join(unvalidated)}",
            err=True,
        )


def _show_row_problems(errors: list[RowError], warnings: list[RowError]) -> None:
    """Bad values on stderr, the first few of each kind and a count, so 500 bad rows do not bury the table."""
    rows = len({error.row for error in errors})
    _show_first(errors, f"{rows} row{'' if rows == 1 else 's'} skipped for bad values", "row_errors")
    _show_first(
        warnings,
        f"{len(warnings)} bad value{'' if len(warnings) == 1 else 's'} in fields that the chosen "
        "metrics do not read; those rows run without them",
        "row_warnings",
    )


def _show_first(problems: list[RowError], headline: str, summary_key: str) -> None:
    if not problems:
        return
    click.echo(f"Warning: {headline}:", err=True)
    for problem in problems[:_SHOWN_PROBLEMS]:
        click.echo(f"  {problem}", err=True)
    if len(problems) > _SHOWN_PROBLEMS:
        click.echo(f"  ... and {len(problems) - _SHOWN_PROBLEMS} more (all in summary.json: {summary_key})", err=True)


class _ProgressLine:
    """One self-rewriting stderr line, only on a terminal: the step round, samples, judge work and the ETA."""

    REDRAW_SECONDS = 0.1  # model-free metrics finish thousands of samples a second

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self.width = 0
        self.drawn = -math.inf

    def __call__(self, state: RunProgress) -> None:
        finished = state.samples_done == state.total_samples
        if self.enabled and (finished or time.monotonic() - self.drawn >= self.REDRAW_SECONDS):
            self.drawn = time.monotonic()
            line = progress_line(state)
            click.echo("\r" + line.ljust(self.width), err=True, nl=False)
            self.width = len(line)
            if finished:
                click.echo("", err=True)


def progress_line(state: RunProgress) -> str:
    """`statements [######....] 12/40 | samples 32/200 | 143 judge calls, 61 tok/s | ETA 12m05s`."""
    parts = []
    if state.step_total:
        filled = 20 * state.step_done // state.step_total
        parts.append(f"{state.step} [{'#' * filled}{'.' * (20 - filled)}] {state.step_done}/{state.step_total}")
    parts.append(f"samples {state.samples_done}/{state.total_samples}")
    if state.judge_calls:
        speed = state.tokens_per_second()
        parts.append(f"{state.judge_calls} judge calls" + (f", {speed:.0f} tok/s" if speed else ""))
    eta = state.eta_seconds()
    parts.append("ETA " + ("after the first samples" if eta is None else format_duration(eta)))
    return "  " + " | ".join(parts)
