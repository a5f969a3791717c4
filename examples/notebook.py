"""localeval from Python, cell by cell (the `# %%` cells open as a notebook in VS Code or with Jupytext).

    .venv/bin/python examples/notebook.py [JUDGE]

JUDGE is a registry name or a GGUF path; without it, the default judge that scripts/setup.sh installs.
"""

# %% Load the judge and the embedders once: every evaluate() below reuses them.
import json
import sys
import tempfile
from pathlib import Path

from localeval import Embedders, Judge, evaluate, load
from localeval.errors import ConfigError

HERE = Path(__file__).resolve().parent
judge = Judge(sys.argv[1] if len(sys.argv) > 1 else None)
embedders = Embedders()
print(judge)

# %% Evaluate a file of English samples.
result = evaluate(HERE / "rag_sample.jsonl", ["faithfulness", "answer_relevancy", "context_precision"],
                  judge=judge, embedders=embedders)
for name, summary in result.summaries.items():
    print(f"{name:<20} mean {summary.mean:.3f} over {summary.count} samples, {summary.nan_count} NaN")

# %% Japanese rows as a list of dicts, with the same judge: no model is loaded again.
rows = [json.loads(line) for line in (HERE / "rag_sample_ja.jsonl").open(encoding="utf-8")]
japanese = evaluate(rows, "faithfulness", judge=judge)
for scored in japanese.samples:
    score = scored.scores["faithfulness"]
    print(scored.sample.id, scored.lang, f"NaN ({score.reason})" if score.is_nan else f"{score.value:.3f}")

# %% Why a score is what it is: the statements, their verdicts and the evidence sentences.
evidence = result.samples[0].scores["faithfulness"].evidence
print(json.dumps(evidence, ensure_ascii=False, indent=1)[:1200])

# %% One row per sample as a pandas table (pip install 'localeval[pandas]').
try:
    table = result.to_pandas()
    print(table[["id", "lang", "faithfulness", "answer_relevancy", "context_precision"]].to_string(index=False))
except ConfigError as error:
    print(error)

# %% Save the results folder, as `localeval evaluate --out` writes it, and read it back.
with tempfile.TemporaryDirectory() as folder:
    result.save(folder)
    print("loaded back the same:", load(folder).summaries == result.summaries)
