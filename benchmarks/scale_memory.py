"""Peak memory of `localeval evaluate` as the dataset grows: does a run stream, or hold everything?

Writes synthetic rows of realistic size (a question, a three-sentence answer and reference, three
passages of about 120 words each, in en, ja and zh) and runs the CLI on the first N of them with
model-free metrics, in a fresh process per N, reporting its peak RSS (ru_maxrss) and wall time.

    .venv/bin/python benchmarks/scale_memory.py                   # N = 1000 and 20000
    .venv/bin/python benchmarks/scale_memory.py --rows 1000 --rows 5000 --metrics exact_match
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click

METRICS = "exact_match,chrf,rouge_l,grounding_coverage"
PEAK_RSS = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, done.returncode, done.stderr[-400:].replace("\\n", " "))
"""
WORDS = {
    "en": "the river city bridge museum opened year built people north old new long station market".split(),
    "ja": "東京 大阪 川 橋 美術館 開館 年 建設 人々 北 古い 新しい 駅 市場".split(),
    "zh": "北京 上海 河 桥 博物馆 开放 年 建造 人们 北方 古老 新的 车站 市场".split(),
}


def row(i: int) -> dict:
    lang = ("en", "en", "ja", "zh")[i % 4]
    words = WORDS[lang]
    space = " " if lang == "en" else ""
    end = "." if lang == "en" else "。"

    def sentence(seed: int, length: int) -> str:
        return space.join(words[(seed * 7 + k * 3) % len(words)] for k in range(length)) + end

    def text(seed: int, sentences: int, length: int) -> str:
        return space.join(sentence(seed + s, length) for s in range(sentences))

    return {
        "id": f"r{i}",
        "user_input": sentence(i, 8).rstrip(".。") + "?",
        "response": text(i, 3, 12),
        "reference": text(i + 1, 3, 12),
        "retrieved_contexts": [text(i + p, 8, 15) for p in range(3)],
    }


@click.command()
@click.option("--rows", "sizes", multiple=True, type=int, default=(1000, 20000), show_default=True)
@click.option("--metrics", default=METRICS, show_default=True)
def main(sizes: tuple[int, ...], metrics: str) -> None:
    cli = [sys.executable, "-m", "localeval.cli"]
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        print(f"metrics: {metrics}")
        print(f"{'rows':>7}  {'peak RSS (MiB)':>14}  {'seconds':>8}  {'MiB per 1k rows':>15}")
        for size in sizes:
            data = work / f"rows-{size}.jsonl"
            with data.open("w", encoding="utf-8") as file:
                for i in range(size):
                    file.write(json.dumps(row(i), ensure_ascii=False) + "\n")
            started = time.perf_counter()
            measured = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    PEAK_RSS,
                    *cli,
                    "evaluate",
                    str(data),
                    "--metrics",
                    metrics,
                    "--out",
                    str(work / f"out-{size}"),
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split(" ", 2)
            seconds = time.perf_counter() - started
            peak_kib, code = int(measured[0]), int(measured[1])
            if code != 0:
                raise SystemExit(f"evaluate failed on {size} rows (exit {code}): {measured[2]}")
            lines = sum(1 for _ in (work / f"out-{size}" / "samples.jsonl").open(encoding="utf-8"))
            assert lines == size, f"{lines} records for {size} rows"
            print(f"{size:>7}  {peak_kib / 1024:>14.0f}  {seconds:>8.1f}  {peak_kib / 1024 / size * 1000:>15.1f}")


if __name__ == "__main__":
    main()
