"""`localeval calibrate`: measure judges on the user's own labelled rows, side by side, and fit a calibration for each."""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from localeval import api
from localeval.cli.judge_options import (
    JUDGE_HELP,
    gpu_layers_option,
    judge_api_key_env_option,
    n_ctx_option,
    threads_option,
)
from localeval.errors import ConfigError
from localeval.grounding.calibration import UNCALIBRATED, CalibrationFile, JudgeIdentity
from localeval.judge.protocol import JudgeConfig
from localeval.judge.server import is_server_url
from localeval.metrics.options import MetricOptions
from localeval.models import load_registry
from localeval.results.agreement import (
    Agreement,
    LabelledRow,
    format_table,
    read_labelled,
)
from localeval.results.agreement import calibrate as fit


@dataclass(frozen=True)
class Labelled:
    file: Path
    rows: list[LabelledRow]


@click.command()
@click.argument("labelled", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--judge",
    "judges",
    multiple=True,
    help=f"{JUDGE_HELP}; repeat to compare judges (default: the registry's default judge).",
)
@judge_api_key_env_option
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Folder for one calibration file per judge (JUDGE.json; use it with `localeval evaluate "
    "--calibration`) and each judge's faithfulness run (JUDGE-results/; a rerun reuses its judge calls).",
)
@click.option(
    "--folds",
    default=5,
    show_default=True,
    help="Cross-validation folds; rows with the same question and contexts share a fold.",
)
@click.option(
    "--evidence-sentences",
    default=0,
    show_default=True,
    help="As in `localeval evaluate`: a calibration applies only to runs with the same value.",
)
@n_ctx_option
@threads_option
@gpu_layers_option
def calibrate(
    labelled: tuple[Path, ...],
    judges: tuple[str, ...],
    judge_api_key_env: str | None,
    out: Path,
    folds: int,
    evidence_sentences: int,
    n_ctx: int,
    threads: int | None,
    gpu_layers: int,
) -> None:
    """Measure each judge on LABELLED rows (JSONL files) and fit its calibration of P(supported).

    Each row has user_input, response, retrieved_contexts and one kind of label: `faithful` (true or
    false, for the response), `sentence_labels` ([{"sentence": ..., "faithful": ...}]) or
    `keyword_labels` ([{"keyword": ..., "reasonable": ...}]), at the top level or under `label`.
    Each judge runs faithfulness on every row; then, per language, the table gives the
    cross-validated AUROC of the judge alone, of the model-free floor, and of each combination, on
    the same rows, with 95% bootstrap intervals. A combination ships only where it is at least as
    good as the better of the judge alone and the floor alone; elsewhere the judge's own P does.
    """
    if folds < 2:
        raise ConfigError(f"--folds must be 2 or more, not {folds}.")
    sets = [Labelled(path, read_labelled(path)) for path in labelled]
    out.mkdir(parents=True, exist_ok=True)
    config = JudgeConfig.from_options(
        n_ctx=n_ctx, threads=threads, gpu_layers=gpu_layers, api_key_env=judge_api_key_env
    )
    table: list[tuple[str, str, Agreement, str]] = []
    for judge in judges or (load_registry().default_judge,):
        name = _slug(judge)
        results = out / f"{name}-results"
        click.echo(
            f"{name}: faithfulness on {sum(len(s.rows) for s in sets)} labelled rows (in {results}) ...", err=True
        )
        by_lang, identity, prompts = _judged(sets, judge, config, evidence_sentences, results)
        languages = {}
        for lang, scored in sorted(by_lang.items()):
            files = [s.file.name for s, _, _ in scored]
            fitted_on = f"{', '.join(dict.fromkeys(files))}: {len(scored)} rows, judge {identity.name}"
            fitted = fit(
                [row for _, row, _ in scored],
                [st for _, _, st in scored],
                f"{name}-{lang}",
                fitted_on,
                folds,
                sources=files,
            )
            languages[lang] = fitted.calibration
            for file, agreement in fitted.by_source.items():
                table.append((f"{lang}: {file} ({agreement.level} labels)", name, agreement, fitted.calibration.form))
            if len(fitted.by_source) > 1:
                table.append((f"{lang}: all of the above", name, fitted.agreement, fitted.calibration.form))
        path = out / f"{name}.json"
        CalibrationFile(identity, evidence_sentences, languages, {lang: prompts[lang] for lang in languages}).save(path)
        click.echo(f"Written to {path}", err=True)
    _print_tables(table, folds)


def _judged(
    sets: Sequence[Labelled],
    judge: str,
    config: JudgeConfig,
    evidence_sentences: int,
    results: Path,
) -> tuple[dict[str, list[tuple[Labelled, LabelledRow, list[dict[str, Any]]]]], JudgeIdentity, dict[str, str]]:
    """Faithfulness on every row with the judge's own P; per language, each scored row with its statements."""
    results.mkdir(parents=True, exist_ok=True)
    data = results / "rows.jsonl"
    index = {f"{n}:{i}": (labelled, row) for n, labelled in enumerate(sets) for i, row in enumerate(labelled.rows)}
    data.write_text(
        "".join(
            json.dumps(
                {
                    "id": key,
                    "user_input": row.user_input,
                    "response": row.response,
                    "retrieved_contexts": row.retrieved_contexts,
                },
                ensure_ascii=False,
            )
            + "\n"
            for key, (_, row) in index.items()
        ),
        encoding="utf-8",
    )
    options = api.EvaluationOptions(
        data=data,
        out=results / "faithfulness",
        metrics=("faithfulness",),
        judge=judge,
        judge_config=config,
        metric_options=MetricOptions(evidence_sentences=evidence_sentences),
        calibration=UNCALIBRATED,
    )
    run = api.run(api.plan(options))
    by_lang: dict[str, list[tuple[Labelled, LabelledRow, list[dict[str, Any]]]]] = defaultdict(list)
    reasons: dict[str, int] = defaultdict(int)
    for sample in run.samples:
        labelled, row = index[sample.sample.id]
        score = sample.scores["faithfulness"]
        if math.isnan(score.value):
            reasons[score.reason or "nan"] += 1
        else:
            by_lang[sample.lang].append((labelled, row, score.evidence["statements"]))
    scored = sum(len(rows) for rows in by_lang.values())
    not_scored = ", ".join(f"{count} {reason}" for reason, count in sorted(reasons.items()))
    click.echo(f"{scored} rows scored" + (f"; not scored: {not_scored}" if not_scored else ""), err=True)
    if not by_lang:
        raise ConfigError(
            "No row could be scored (every faithfulness score is NaN); see "
            f"{options.out / 'samples.jsonl'} for the reasons."
        )
    recorded = run.manifest.judge
    if recorded is None:
        raise ConfigError("The calibration run recorded no judge.")  # faithfulness cannot run without one
    identity = recorded.identity
    prompts = {lang: run.manifest.prompt_sha256(lang, "statement_support") or "" for lang in by_lang}
    return by_lang, identity, prompts


def _print_tables(table: Sequence[tuple[str, str, Agreement, str]], folds: int) -> None:
    click.echo(
        f"\nAUROC by label ({folds}-fold cross-validated; a label scores its weakest statement), "
        "95% bootstrap interval by question:"
    )
    for line in format_table(table):
        click.echo(line)
    with_responses = [entry for entry in table if entry[2].responses]
    if with_responses:
        click.echo(
            "\nAUROC by response (faithfulness: the mean of its statements' P; the floor: its least covered sentence):"
        )
        for line in format_table(with_responses, by_response=True):
            click.echo(line)
        click.echo("\nUnfaithful responses that faithfulness scores below 0.5:")
        for label, judge, agreement, _ in with_responses:
            shares = ", ".join(
                f"{name} {share:.0%}" for name, share in agreement.below_half.items() if not math.isnan(share)
            )
            if shares:
                click.echo(f"  {label}, {judge}: {shares} of {agreement.unfaithful_responses}")
    click.echo(
        "\n`ships`: what the calibration file holds for that language: `judge` = the judge's own P (no "
        "combination beat the better of the judge alone and the floor alone)."
    )


def _slug(judge: str) -> str:
    """A file name for a judge: its registry name, its file's stem, or a server's host and model."""
    if is_server_url(judge):
        stem = judge.split("://", 1)[1]
    else:
        stem = Path(judge).stem if judge.lower().endswith(".gguf") else judge
    return re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-") or "judge"
