"""`localeval calibrate`: fit P(supported) to the user's own labelled rows and say how well it agrees."""

from __future__ import annotations

import json
import math
from pathlib import Path

import click

from localeval.calibrate import calibrate as fit
from localeval.calibrate import read_labelled
from localeval.calibration import JUDGE_ONLY
from localeval.cli.judge_options import gpu_layers_option, n_ctx_option, threads_option
from localeval.dataset import read_dataset
from localeval.errors import ConfigError
from localeval.evaluation import EvaluationOptions, run_evaluation
from localeval.judge import JudgeConfig
from localeval.metrics import METRICS
from localeval.metrics.options import MetricOptions


@click.command()
@click.argument("labelled", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--out", "out_file", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="Calibration file to write; use it with `localeval evaluate --calibration FILE`.")
@click.option("--judge", help="Judge GGUF: a file path or a registry name (default: the registry's default judge).")
@click.option("--results", type=click.Path(path_type=Path, file_okay=False),
              help="Folder for the judge's faithfulness run on the rows (default: next to --out); a rerun reuses it.")
@click.option("--folds", default=5, show_default=True, help="Cross-validation folds (by row) for the agreement.")
@click.option("--evidence-sentences", default=0, show_default=True,
              help="As in `localeval evaluate`: evaluate with the same value the calibration was fitted with.")
@n_ctx_option
@threads_option
@gpu_layers_option
def calibrate(labelled: Path, out_file: Path, judge: str | None, results: Path | None, folds: int,
              evidence_sentences: int, n_ctx: int, threads: int | None, gpu_layers: int) -> None:
    """Fit P(supported) on LABELLED rows (JSONL) and print its cross-validated agreement.

    Each row has user_input, response, retrieved_contexts and one kind of label: `faithful` (true or
    false, for the response), `sentence_labels` ([{"sentence": ..., "faithful": ...}]) or
    `keyword_labels` ([{"keyword": ..., "reasonable": ...}]); they may also sit under `label`, as
    in the ../shared/metaeval files. The judge runs faithfulness on every row first.
    """
    if folds < 2:
        raise ConfigError(f"--folds must be 2 or more, not {folds}.")
    rows = read_labelled(labelled)
    results = results or out_file.with_name(out_file.stem + "-results")
    results.mkdir(parents=True, exist_ok=True)
    data = results / "rows.jsonl"
    data.write_text("".join(json.dumps({"id": str(i), "user_input": row.user_input, "response": row.response,
                                        "retrieved_contexts": row.retrieved_contexts}, ensure_ascii=False) + "\n"
                            for i, row in enumerate(rows)), encoding="utf-8")
    options = EvaluationOptions(
        data=data, out=results / "faithfulness", metrics=("faithfulness",), judge=judge,
        judge_config=JudgeConfig(n_ctx=n_ctx, n_threads=threads, n_gpu_layers=gpu_layers),
        metric_options=MetricOptions(evidence_sentences=evidence_sentences), calibration=JUDGE_ONLY)
    click.echo(f"Running faithfulness on {len(rows)} labelled rows (results in {results}) ...", err=True)
    run = run_evaluation(options, read_dataset(data), [METRICS["faithfulness"]])
    scored = [(rows[int(sample.sample.id)], sample.scores["faithfulness"]) for sample in run.samples]
    kept = [(row, score.evidence["statements"]) for row, score in scored if not math.isnan(score.value)]
    if not kept:
        raise ConfigError("No row could be scored (every faithfulness score is NaN); see "
                          f"{results / 'faithfulness' / 'samples.jsonl'} for the reasons.")
    judge_name = run.manifest["judge"]["name"] or run.manifest["judge"]["path"]
    fitted_on = (f"{labelled.name}: {len(kept)} rows ({rows[0].level}-level labels), judge {judge_name} "
                 f"sha256 {run.manifest['judge']['sha256'][:12]}, evidence_sentences={evidence_sentences}")
    fitted = fit([row for row, _ in kept], [statements for _, statements in kept], out_file.stem, fitted_on, folds)
    fitted.calibration.save(out_file)
    a = fitted.agreement
    click.echo(f"{len(kept)} rows scored, {len(rows) - len(kept)} not; {a.labels} {a.level} labels, "
               f"{a.unfaithful} unfaithful")
    click.echo(f"AUROC ({a.level} level, {folds}-fold cross-validated by row): combined {a.combined:.3f}; "
               f"judge alone {a.judge:.3f}; coverage alone {a.coverage:.3f}")
    weights = ", ".join(f"{name} {weight:+.3f}" for name, weight in fitted.calibration.weights.items())
    click.echo(f"Weights: {weights}; bias {fitted.calibration.bias:+.3f}")
    click.echo(f"Written to {out_file}")
