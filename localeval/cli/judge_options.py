"""The judge's command-line options, shared by the commands that run it, with the values each accepts."""

from __future__ import annotations

import click

MIN_N_CTX = 512  # below this not even a step's instruction fits

n_ctx_option = click.option(
    "--n-ctx",
    type=click.IntRange(min=MIN_N_CTX),
    default=8192,
    show_default=True,
    help=f"Judge context window in tokens (at least {MIN_N_CTX}).",
)
threads_option = click.option(
    "--threads", type=click.IntRange(min=1), help="CPU threads for the judge (default: all available)."
)
gpu_layers_option = click.option(
    "--gpu-layers",
    type=click.IntRange(min=-1),
    default=0,
    show_default=True,
    help="Judge layers to offload to the GPU: 0 none, -1 all (needs a GPU build of llama-cpp-python; see docs/install.md).",
)
judge_timeout_option = click.option(
    "--judge-timeout",
    type=click.FloatRange(min=0.0, min_open=True),
    metavar="SECONDS",
    help="Stop a judge call still generating after SECONDS; its score is NaN judge_timeout (default: no limit).",
)
draft_tokens_option = click.option(
    "--draft-tokens",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Judge tokens guessed from the prompt and checked in one pass (prompt-lookup decoding; 0: off).",
)
batch_decode_option = click.option(
    "--batch-decode",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Judge calls of one step decoded together, sharing each decode step (1: one at a time, bit for bit as "
    "older runs; more rounds the last bits differently, see docs/install.md). A server judge is sent N calls at "
    "once, for its parallel slots.",
)
JUDGE_HELP = (
    "Judge: a GGUF file path, a registry name, or an OpenAI-compatible server's URL "
    "(http://HOST:PORT/v1; add #MODEL where it serves several)"
)
judge_api_key_env_option = click.option(
    "--judge-api-key-env",
    metavar="NAME",
    help="A server judge's API key is read from the environment variable NAME "
    "(it is sent only to the --judge URL and never recorded).",
)
