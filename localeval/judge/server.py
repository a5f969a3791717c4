"""A judge served by an OpenAI-compatible server on the user's network: llama.cpp's llama-server, vLLM, Ollama's
`/v1` or llama-cpp-python's server. It answers through the same `Judge` protocol as the GGUF judge.

Every answer is still constrained to the step's JSON schema, through whichever request form the server enforces
(found once, at connection, by a probe no unconstrained model would answer correctly):

- `json_schema`: `response_format: {"type": "json_schema", "json_schema": {"schema": ...}}`, OpenAI's form, which
  llama-server, vLLM and Ollama (0.5 and later) accept;
- `json_object`: `response_format: {"type": "json_object", "schema": ...}`, which llama-cpp-python's server takes.

P(1) and P(yes) come from the returned `top_logprobs` at the verdict token, as the GGUF judge reads them from its
logits; a server that returns no logprobs leaves P to the written verdict.

Requests go to the given URL and nowhere else: proxy settings in the environment are ignored, and a redirect is
an error.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from localeval.errors import ConfigError
from localeval.judge.chat_template import Message
from localeval.judge.protocol import ContextOverflow, Generation, GenerationRequest, JudgeConfig, generate_alone

SCHEMA_FORMS = ("json_schema", "json_object")
TOP_LOGPROBS = 10  # enough to hold both a 0 and a 1 (or a no and a yes) wherever the judge writes one
DEFAULT_TIMEOUT = 600.0  # seconds a call waits for a server without --judge-timeout: a dead server must not hang a run
_RETRIED_STATUS = (429, 502, 503, 504)  # a busy or restarting server: the same request may succeed shortly
_RETRY_WAITS = (1.0, 2.0, 4.0)
_PROBE_ANSWER = "localeval schema check"
_CONTEXT_ERROR = re.compile(r"context (length|window|size)|exceeds? .*context|too many tokens", re.IGNORECASE)


def is_server_url(judge: str | None) -> bool:
    return judge is not None and judge.lower().startswith(("http://", "https://"))


class ServerError(Exception):
    """The server answered with an error status."""

    def __init__(self, status: int, message: str):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


@dataclass
class ServerJudge:
    """One model on an OpenAI-compatible server, as `connect` found it."""

    base_url: str  # ends in /v1 (or whatever prefix the server's OpenAI API has); no credentials, no fragment
    model: str  # the id the server reports
    n_ctx: int
    schema_form: str  # one of SCHEMA_FORMS
    logprobs: bool  # the server returns top_logprobs: P is the judge's own, else the written verdict
    timeout: float
    api_key: str | None = field(default=None, repr=False)

    @property
    def identity(self) -> str:
        """What the call cache knows this judge by: where it is served and which model answers."""
        return f"{self.base_url}#{self.model}"

    def generate(
        self, messages: list[Message], schema: dict[str, Any], max_tokens: int, seed: int, temperature: float
    ) -> Generation:
        request = _chat_request(
            self.model, messages, schema, self.schema_form, max_tokens, seed, temperature, self.logprobs
        )
        started = time.perf_counter()
        try:
            reply = _post(self.base_url + "/chat/completions", request, self.api_key, self.timeout)
        except ServerError as error:
            if error.status == 400 and _CONTEXT_ERROR.search(error.message):
                raise ContextOverflow(_prompt_tokens_in(error.message, messages), max_tokens, self.n_ctx) from None
            raise
        seconds = time.perf_counter() - started
        try:
            choice = reply["choices"][0]
            text = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError):
            raise ServerError(200, f"no answer in the reply: {json.dumps(reply)[:200]}") from None
        usage = reply.get("usage") or {}
        digits, words = verdict_probabilities((choice.get("logprobs") or {}).get("content") or [])
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        return Generation(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            seconds=seconds,
            truncated=choice.get("finish_reason") == "length",
            choice_probabilities=digits,
            yes_probabilities=words,
            reused_prompt_tokens=int(cached),
        )

    def generate_many(self, requests: list[GenerationRequest]) -> list[Generation | Exception]:
        """Each request's generation, or the exception generate() raises for it; all sent at once, so that a server
        with parallel slots (llama-server --parallel N, vLLM) decodes them together."""
        if len(requests) < 2:
            return [generate_alone(self, request) for request in requests]
        with ThreadPoolExecutor(max_workers=len(requests)) as pool:
            return list(pool.map(lambda request: generate_alone(self, request), requests))

    def close(self) -> None:
        """Nothing is held between calls."""

    def manifest(self) -> dict[str, Any]:
        """The judge as a run's manifest records it; the API key never appears."""
        return {
            "url": self.base_url,
            "name": self.model,
            "sha256": server_model_sha256(self.model),
            "chat_template": "applied by the server",
            "chat_template_sha256": "",
            "server": {
                "schema_form": self.schema_form,
                "probabilities": "logprobs" if self.logprobs else "written verdict",
            },
        }


def server_model_sha256(model: str) -> str:
    """A served model's stand-in for a file's sha256: calibrations and resumed runs know it by its model id."""
    return hashlib.sha256(f"openai-compatible server model {model}".encode("utf-8")).hexdigest()


def verdict_probabilities(content: list[dict[str, Any]]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """P(1) against P(0) at each generated 0 or 1 token, and P(yes) against P(no) at each yes or no, from the
    tokens' top_logprobs (as the GGUF judge reads them from its logits)."""
    pairs = {"digit": ("0", "1"), "word": ("no", "yes")}
    found: dict[str, list[float]] = {"digit": [], "word": []}
    for token in content:
        written = str(token.get("token", "")).strip()
        for name, (no, yes) in pairs.items():
            if written not in (no, yes):
                continue
            mass = {no: 0.0, yes: 0.0}
            for alternative in token.get("top_logprobs") or [{"token": written, "logprob": token.get("logprob")}]:
                text, logprob = str(alternative.get("token", "")).strip(), alternative.get("logprob")
                if text in mass and isinstance(logprob, (int, float)) and math.isfinite(logprob):
                    mass[text] += math.exp(logprob)
            if mass[no] + mass[yes] > 0:
                found[name].append(mass[yes] / (mass[no] + mass[yes]))
    return tuple(found["digit"]), tuple(found["word"])


def connect(url: str, config: JudgeConfig) -> ServerJudge:
    """The server at `url` (a `#MODEL` fragment picks one of its models), checked before any work: reachable, serving
    the model, enforcing a JSON schema in one of SCHEMA_FORMS, with or without logprobs."""
    base_url, model = _split(url)
    api_key = _api_key(config.api_key_env)
    timeout = config.timeout or DEFAULT_TIMEOUT
    try:
        listed = _get(base_url + "/models", api_key, timeout)
    except ServerError as error:
        if error.status != 404 or model is None:
            raise ConfigError(
                f"The judge server at {base_url} refused to list its models: {_describe(error)}. "
                "Check the URL (it ends with the server's OpenAI API prefix, usually /v1) and the "
                "API key (--judge-api-key-env)."
            ) from None
        listed = {}  # a server with no /models: the model named after '#' is taken on trust
    except OSError as error:
        raise ConfigError(
            f"Could not reach the judge server at {base_url}: {_describe(error)}. Check that it is "
            "running and that the URL ends with the server's OpenAI API prefix (usually /v1)."
        ) from None
    models = {entry.get("id"): entry for entry in listed.get("data") or [] if isinstance(entry, dict)}
    if model is None:
        if len(models) != 1:
            served = ", ".join(sorted(map(str, models))) or "none"
            raise ConfigError(
                f"The judge server at {base_url} serves {len(models)} models ({served}): name one "
                f"after a '#', e.g. --judge '{base_url}#{next(iter(models), 'MODEL')}'."
            )
        model = str(next(iter(models)))
    elif models and model not in models:
        raise ConfigError(
            f"The judge server at {base_url} does not serve '{model}'; it serves: "
            f"{', '.join(sorted(map(str, models)))}."
        )
    n_ctx = _served_context(base_url, models.get(model) or {}, api_key, timeout) or config.n_ctx
    form, logprobs = _probe(base_url, model, api_key, timeout)
    return ServerJudge(base_url, model, n_ctx, form, logprobs, timeout, api_key)


def _split(url: str) -> tuple[str, str | None]:
    """The API's base URL, without a trailing slash or fragment, and the model named in the fragment."""
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname:
        raise ConfigError(f"--judge {url}: a server judge needs a URL like http://HOST:PORT/v1")
    if parts.username or parts.password:
        raise ConfigError(
            "--judge: put the server's API key in an environment variable and name it with "
            "--judge-api-key-env, not in the URL (the URL is recorded in the run's manifest)."
        )
    base = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), parts.query, ""))
    return base, urllib.parse.unquote(parts.fragment) or None


def _api_key(env_name: str | None) -> str | None:
    if env_name is None:
        return None
    key = os.environ.get(env_name)
    if not key:
        raise ConfigError(f"--judge-api-key-env {env_name}: the environment variable {env_name} is not set or empty.")
    return key


def _probe(base_url: str, model: str, api_key: str | None, timeout: float) -> tuple[str, bool]:
    """The first schema form the server enforces, and whether it returns logprobs with it."""
    schema = {
        "type": "object",
        "properties": {"check": {"type": "string", "enum": [_PROBE_ANSWER]}},
        "required": ["check"],
    }
    messages = [{"role": "user", "content": "Reply with an empty JSON object: {}"}]
    tried = []
    for form in SCHEMA_FORMS:
        for logprobs in (True, False):
            request = _chat_request(model, messages, schema, form, 32, 0, 0.0, logprobs)
            try:
                reply = _post(base_url + "/chat/completions", request, api_key, timeout)
            except ServerError as error:
                tried.append(f"{form}{' with logprobs' if logprobs else ''}: {_describe(error)}")
                continue
            except OSError as error:
                raise ConfigError(f"The judge server at {base_url} stopped answering: {_describe(error)}.") from None
            choice = (reply.get("choices") or [{}])[0]
            answer = _json_or_none((choice.get("message") or {}).get("content"))
            if isinstance(answer, dict) and answer.get("check") == _PROBE_ANSWER:
                return form, logprobs and bool((choice.get("logprobs") or {}).get("content"))
            tried.append(f"{form}: answered outside the schema")
            break  # the form was taken but not enforced: logprobs would not change that
    raise ConfigError(
        f"The judge server at {base_url} does not constrain answers to a JSON schema, so its answers "
        f"could not be trusted to parse ({'; '.join(tried)}). localeval needs a server that enforces "
        "response_format json_schema (llama.cpp's llama-server, vLLM, Ollama 0.5 or later) or "
        "json_object with a schema (llama-cpp-python's server)."
    )


def _served_context(base_url: str, listed: dict[str, Any], api_key: str | None, timeout: float) -> int | None:
    """The context window the server reports: vLLM's max_model_len, or llama-server's /props; None if neither."""
    if isinstance(listed.get("max_model_len"), int):
        return listed["max_model_len"]
    root = base_url.rsplit("/", 1)[0] if base_url.endswith("/v1") else None
    if root is None:
        return None
    try:
        n_ctx = _get(root + "/props", api_key, timeout).get("default_generation_settings", {}).get("n_ctx")
    except (OSError, ServerError, AttributeError):
        return None
    return n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None


def _chat_request(
    model: str,
    messages: list[Message],
    schema: dict[str, Any],
    form: str,
    max_tokens: int,
    seed: int,
    temperature: float,
    logprobs: bool,
) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "seed": seed,
        # llama.cpp servers read these two; the GGUF judge applies no repetition penalty
        "repeat_penalty": 1.0,
        "stream": False,
    }
    if form == "json_schema":
        request["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": schema, "strict": True},
        }
    else:
        request["response_format"] = {"type": "json_object", "schema": schema}
    if logprobs:
        request["logprobs"], request["top_logprobs"] = True, TOP_LOGPROBS
    return request


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect would send the prompt to another address: it is an error instead."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        raise ServerError(code, f"the server redirects to {newurl}; give that URL with --judge instead")


# No ProxyHandler settings from the environment: nothing may go anywhere but the URL given.
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())


def _get(url: str, api_key: str | None, timeout: float) -> dict[str, Any]:
    return _send(urllib.request.Request(url, headers=_headers(api_key)), timeout)


def _post(url: str, body: dict[str, Any], api_key: str | None, timeout: float) -> dict[str, Any]:
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    request = urllib.request.Request(url, data=data, headers={**_headers(api_key), "Content-Type": "application/json"})
    return _send(request, timeout)


def _headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _send(request: urllib.request.Request, timeout: float) -> dict[str, Any]:
    """The reply's JSON; a busy server is asked again after a short wait, up to len(_RETRY_WAITS) times."""
    for wait in (*_RETRY_WAITS, None):
        try:
            with _opener.open(request, timeout=timeout) as response:
                body = response.read()
        except urllib.error.HTTPError as error:
            if error.code in _RETRIED_STATUS and wait is not None:
                time.sleep(wait)
                continue
            raise ServerError(error.code, _error_message(error.read())) from None
        except urllib.error.URLError as error:
            if isinstance(error.reason, (TimeoutError, socket.timeout)):
                raise TimeoutError(f"no answer from the judge server within {timeout:g} s") from None
            if isinstance(error.reason, ConnectionResetError) and wait is not None:
                time.sleep(wait)
                continue
            raise ConnectionError(str(error.reason)) from None
        except (TimeoutError, socket.timeout):
            raise TimeoutError(f"no answer from the judge server within {timeout:g} s") from None
        parsed = _json_or_none(body.decode("utf-8", errors="replace"))
        if not isinstance(parsed, dict):
            raise ServerError(response.status, f"the reply is not a JSON object: {body[:200]!r}")
        return parsed
    raise AssertionError("unreachable")


def _error_message(body: bytes) -> str:
    """The server's own message (OpenAI's {"error": {"message": ...}}, FastAPI's {"detail": ...}) or the raw body."""
    parsed = _json_or_none(body.decode("utf-8", errors="replace"))
    if isinstance(parsed, dict):
        error = parsed.get("error", parsed.get("detail", parsed))
        message = error.get("message", error) if isinstance(error, dict) else error
        return str(message)[:300]
    return body.decode("utf-8", errors="replace")[:300]


def _json_or_none(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else None
    except json.JSONDecodeError:
        return None


def _prompt_tokens_in(message: str, messages: list[Message]) -> int:
    """The prompt's length in tokens where the server's error gives it (llama-cpp-python: "Requested tokens (N)";
    vLLM: "N tokens in the messages"; llama-server: "request (N tokens)"); else a generous guess from its length."""
    for pattern in (r"Requested tokens \((\d+)\)", r"(\d+) tokens? in the messages", r"request \((\d+) tokens?\)"):
        if match := re.search(pattern, message):
            return int(match.group(1))
    return sum(len(message_["content"]) for message_ in messages) // 2


def _describe(error: BaseException) -> str:
    if isinstance(error, ServerError):
        return str(error)
    return str(error) or type(error).__name__
