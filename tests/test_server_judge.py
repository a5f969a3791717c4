"""Server judges: a real llama-cpp-python server with the 0.5B judge scores as the same judge does in process, and
small stand-in servers bring the failures a network judge can have (invalid JSON, timeouts, refused schemas)."""

from __future__ import annotations

import json
import math
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from localeval import Judge, evaluate
from localeval.cli import main
from localeval.errors import ConfigError
from localeval.judge.protocol import GenerationRequest, JudgeConfig
from localeval.judge.server import ServerError, connect, verdict_probabilities

ROWS = [
    {
        "id": "en",
        "user_input": "When was the Eiffel Tower completed?",
        "response": "The Eiffel Tower was completed in 1889. It was designed by Gustave Eiffel's company.",
        "retrieved_contexts": [
            "The Eiffel Tower, on the Champ de Mars in Paris, was completed in 1889 for the World's "
            "Fair. It was built by the company of the engineer Gustave Eiffel."
        ],
    },
    {
        "id": "ja",
        "user_input": "富士山の高さはどれくらいですか？",
        "response": "富士山の高さは5000メートルです。日本で一番高い山です。",
        "retrieved_contexts": ["富士山は静岡県と山梨県にまたがる活火山で、標高は3776メートルです。日本の最高峰です。"],
    },
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(qwen05_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's own OpenAI-compatible server with the 0.5B judge, on 127.0.0.1 only."""
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    with log.open("w") as output:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(qwen05_path),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "2048",
                "--n_threads",
                "2",
                "--verbose",
                "false",
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(url + "/models", timeout=5).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"llama_cpp.server did not start: {log.read_text()[-2000:]}")
                time.sleep(1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def _statement_ps(result: Any) -> dict[str, list[float]]:
    return {
        sample.sample.id: [statement["judge_p"] for statement in sample.scores["faithfulness"].evidence["statements"]]
        for sample in result.samples
    }


@pytest.mark.slow
def test_a_served_judge_scores_as_the_same_judge_in_process(llama_server: str, tmp_path: Path) -> None:
    served = evaluate(ROWS, ["faithfulness"], judge=Judge(llama_server), out=tmp_path / "served")
    local = evaluate(
        ROWS, ["faithfulness"], judge=Judge("qwen2.5-coder-0.5b", n_ctx=2048, threads=2), out=tmp_path / "local"
    )

    for sample_served, sample_local in zip(served.samples, local.samples):
        assert sample_served.scores["faithfulness"].value == pytest.approx(
            sample_local.scores["faithfulness"].value, abs=0.02
        ), sample_served.sample.id
    served_ps, local_ps = _statement_ps(served), _statement_ps(local)
    assert served_ps.keys() == {"en", "ja"}
    for sample_id, ps in served_ps.items():
        assert len(ps) == len(local_ps[sample_id]) > 0
        assert ps == pytest.approx(local_ps[sample_id], abs=0.02)
        assert any(0.0 < p < 1.0 for p in ps), "P must be the judge's own probability, not the written verdict"

    # every answer the server gave was held to its step's schema: each cached call is a validated output
    calls = [json.loads(line) for line in (tmp_path / "served" / "judge_calls.jsonl").read_text().splitlines()]
    assert calls and all("output" in call["entry"] for call in calls)
    manifest = json.loads((tmp_path / "served" / "manifest.json").read_text())
    assert manifest["judge"]["url"] == llama_server
    assert manifest["judge"]["server"] == {"schema_form": "json_object", "probabilities": "logprobs"}


# --- stand-in servers for the failures -------------------------------------------------------------------------


def _instance(schema: dict[str, Any]) -> Any:
    """A small value that meets `schema` (the shapes the steps' schemas use)."""
    if "enum" in schema:
        return schema["enum"][-1]
    kind = schema.get("type")
    if kind == "object":
        return {name: _instance(schema["properties"][name]) for name in schema.get("required", [])}
    if kind == "array":
        return [_instance(schema["items"]) for _ in range(max(1, schema.get("minItems", 1)))]
    if kind == "integer":
        return 1
    if kind == "string":
        return "The answer holds."
    raise AssertionError(f"no instance for {schema}")


class StandIn:
    """An OpenAI-compatible server on 127.0.0.1 whose chat answers come from `answer(request)`."""

    def __init__(
        self,
        answer: Callable[[dict[str, Any]], tuple[int, Any] | None],
        models: tuple[str, ...] = ("m",),
        key: str | None = None,
    ):
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: Any) -> None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except BrokenPipeError:
                    pass  # the client gave up first (the timeout test)

            def do_GET(self) -> None:
                stand_in.headers.append(dict(self.headers))
                if key is not None and self.headers.get("Authorization") != f"Bearer {key}":
                    self._reply(401, {"error": {"message": "Invalid API key"}})
                elif self.path.endswith("/models"):
                    self._reply(200, {"data": [{"id": model} for model in models]})
                else:
                    self._reply(404, {"detail": "Not Found"})

            def do_POST(self) -> None:
                stand_in.headers.append(dict(self.headers))
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stand_in.requests.append(request)
                status, body = answer(request) or (200, None)
                self._reply(status, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _schema_of(request: dict[str, Any]) -> dict[str, Any] | None:
    response_format = request.get("response_format") or {}
    return response_format.get("schema") or (response_format.get("json_schema") or {}).get("schema")


def _chat(content: str, logprobs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    return {"choices": [choice], "usage": {"prompt_tokens": 50, "completion_tokens": 5}}


def _valid(request: dict[str, Any]) -> tuple[int, Any]:
    """A schema-true answer with no logprobs, as from a server that returns none."""
    return 200, _chat(json.dumps(_instance(_schema_of(request))))


def _then(after_probe: Callable[[dict[str, Any]], tuple[int, Any]]) -> Callable[[dict[str, Any]], tuple[int, Any]]:
    """Pass the connection probe, then answer every judge call with `after_probe`."""

    def answer(request: dict[str, Any]) -> tuple[int, Any]:
        schema = _schema_of(request) or {}
        if "check" in schema.get("properties", {}):
            return _valid(request)
        return after_probe(request)

    return answer


@pytest.fixture
def stand_in() -> Iterator[Callable[..., StandIn]]:
    servers: list[StandIn] = []

    def start(answer: Callable[[dict[str, Any]], tuple[int, Any] | None], **kwargs: Any) -> StandIn:
        servers.append(StandIn(answer, **kwargs))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def test_an_answer_out_of_schema_costs_its_score_with_the_local_reason(
    stand_in: Callable[..., StandIn], tmp_path: Path
) -> None:
    server = stand_in(_then(lambda request: (200, _chat("Sure! The statements are: {oops"))))
    result = evaluate(ROWS[:1], ["faithfulness"], judge=server.url, out=tmp_path / "run")
    score = result.samples[0].scores["faithfulness"]
    assert math.isnan(score.value) and score.reason == "judge_unparseable"


@pytest.mark.slow
def test_a_server_slower_than_the_timeout_costs_its_score_as_judge_timeout(
    stand_in: Callable[..., StandIn], tmp_path: Path
) -> None:
    def slow(request: dict[str, Any]) -> tuple[int, Any]:
        time.sleep(2.0)
        return _valid(request)

    server = stand_in(_then(slow))
    started = time.monotonic()
    result = evaluate(ROWS[:1], ["faithfulness"], judge=server.url, out=tmp_path / "run", timeout=0.5)
    score = result.samples[0].scores["faithfulness"]
    assert math.isnan(score.value) and score.reason == "judge_timeout"
    assert time.monotonic() - started < 30  # each call gave up at the timeout; the run went on


def test_a_server_without_logprobs_gives_the_written_verdict_and_the_manifest_says_so(
    stand_in: Callable[..., StandIn], tmp_path: Path
) -> None:
    server = stand_in(_valid)
    result = evaluate(ROWS[:1], ["faithfulness"], judge=server.url, out=tmp_path / "run")
    assert result.samples[0].scores["faithfulness"].value == 1.0
    assert all(p in (0.0, 1.0) for p in _statement_ps(result)["en"])
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["judge"]["server"]["probabilities"] == "written verdict"
    # every judge call asked for its step's schema: the statements' list, then the support verdict
    asked = [_schema_of(request) for request in server.requests[1:]]  # after the connection's probe
    required = [schema["required"] for schema in asked]
    assert required[0] == ["statements"] and ["verdict"] in required
    assert all(fields in (["statements"], ["verdict"]) for fields in required)


def test_the_api_key_goes_to_the_server_only(
    stand_in: Callable[..., StandIn], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("JUDGE_KEY", "s3cret-token")
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # a proxy in the environment is never used
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    server = stand_in(_valid)
    evaluate(ROWS[:1], ["faithfulness"], judge=server.url, out=tmp_path / "run", api_key_env="JUDGE_KEY")
    assert server.headers and all(headers.get("Authorization") == "Bearer s3cret-token" for headers in server.headers)
    written = "".join(path.read_text(errors="replace") for path in (tmp_path / "run").rglob("*") if path.is_file())
    assert "s3cret" not in written and "s3cret" not in caplog.text


class InFlight:
    """Counts the requests a stand-in is answering at once, each held for `seconds`."""

    def __init__(self, seconds: float):
        self.seconds, self.now, self.most = seconds, 0, 0
        self._lock = threading.Lock()

    def hold(self) -> None:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.seconds)
        with self._lock:
            self.now -= 1


def test_calls_decoded_together_go_to_the_server_at_once_each_answer_to_its_call(
    stand_in: Callable[..., StandIn],
) -> None:
    """A server with parallel slots decodes what it is sent at once; one call's error costs that call alone."""
    in_flight = InFlight(0.3)

    def answer(request: dict[str, Any]) -> tuple[int, Any]:
        in_flight.hold()
        question = request["messages"][-1]["content"]
        if question == "fail":
            return 500, {"error": {"message": "slot 2 crashed"}}
        return 200, _chat(json.dumps({"echo": question}))

    judge = connect(stand_in(_then(answer)).url, JudgeConfig())
    schema = {"type": "object", "properties": {"echo": {"type": "string"}}, "required": ["echo"]}
    questions = ("a", "b", "fail", "d")
    results = judge.generate_many(
        [GenerationRequest([{"role": "user", "content": q}], schema, 20, 0, 0.0) for q in questions]
    )
    assert in_flight.most == 4
    assert [json.loads(r.text)["echo"] for r in results if not isinstance(r, Exception)] == ["a", "b", "d"]
    assert isinstance(results[2], ServerError) and results[2].status == 500


def test_a_run_with_batch_decode_sends_a_steps_calls_to_the_server_together(
    stand_in: Callable[..., StandIn], tmp_path: Path
) -> None:
    in_flight = InFlight(0.1)

    def answer(request: dict[str, Any]) -> tuple[int, Any]:
        in_flight.hold()
        return _valid(request)

    server = stand_in(_then(answer))
    result = evaluate(ROWS, ["faithfulness"], judge=server.url, out=tmp_path / "run", batch_decode=4)
    assert in_flight.most > 1
    assert all(not math.isnan(s.scores["faithfulness"].value) for s in result.samples)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (lambda request: (400, {"error": {"message": "response_format is not supported"}}), "does not constrain"),
        (lambda request: (200, _chat("I am a helpful assistant.")), "answered outside the schema"),
    ],
)
def test_a_server_that_refuses_or_ignores_schemas_is_stopped_before_any_work(
    stand_in: Callable[..., StandIn], tmp_path: Path, answer: Callable, message: str
) -> None:
    server = stand_in(answer)
    outcome = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(_rows_file(tmp_path)),
            "--metrics",
            "faithfulness",
            "--judge",
            server.url,
            "--out",
            str(tmp_path / "run"),
        ],
    )
    assert outcome.exit_code == 1 and isinstance(outcome.exception, SystemExit)
    assert message in outcome.output and "json_schema" in outcome.output and "Traceback" not in outcome.output
    assert not (tmp_path / "run" / "samples.jsonl").exists()


def test_an_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    outcome = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(_rows_file(tmp_path)),
            "--metrics",
            "faithfulness",
            "--judge",
            url,
            "--out",
            str(tmp_path / "run"),
        ],
    )
    assert outcome.exit_code == 1 and isinstance(outcome.exception, SystemExit) and "Traceback" not in outcome.output
    assert f"Could not reach the judge server at {url}" in outcome.output


def test_a_server_with_several_models_needs_one_named(stand_in: Callable[..., StandIn]) -> None:
    server = stand_in(_valid, models=("qwen:7b", "llama:8b"))
    with pytest.raises(ConfigError, match=r"serves 2 models \(llama:8b, qwen:7b\).*#"):
        connect(server.url, JudgeConfig())
    assert connect(server.url + "#qwen:7b", JudgeConfig()).model == "qwen:7b"
    with pytest.raises(ConfigError, match="does not serve 'mistral'"):
        connect(server.url + "#mistral", JudgeConfig())


def test_a_wrong_key_is_a_clear_error(stand_in: Callable[..., StandIn], monkeypatch: pytest.MonkeyPatch) -> None:
    server = stand_in(_valid, key="right")
    monkeypatch.setenv("JUDGE_KEY", "wrong")
    with pytest.raises(
        ConfigError, match=r"refused to list its models: HTTP 401: Invalid API key.*--judge-api-key-env"
    ):
        connect(server.url, JudgeConfig(api_key_env="JUDGE_KEY"))


def test_a_key_in_the_url_or_a_missing_key_variable_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="--judge-api-key-env"):
        connect("http://user:pw@127.0.0.1:1/v1", JudgeConfig())
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    with pytest.raises(ConfigError, match="NO_SUCH_KEY is not set"):
        connect("http://127.0.0.1:1/v1", JudgeConfig(api_key_env="NO_SUCH_KEY"))


def test_verdict_probabilities_read_the_verdict_tokens_top_logprobs() -> None:
    content = [
        {"token": '{"', "logprob": -0.1, "top_logprobs": []},
        # P(1) = e^-0.5 / (e^-0.5 + e^-1.5 + e^-3) with "0" and " 0" counted together
        {
            "token": "1",
            "logprob": -0.5,
            "top_logprobs": [
                {"token": "1", "logprob": -0.5},
                {"token": "0", "logprob": -1.5},
                {"token": " 0", "logprob": -3.0},
                {"token": "2", "logprob": -2.0},
            ],
        },
        {"token": "yes", "logprob": -0.2, "top_logprobs": [{"token": "yes", "logprob": -0.2}]},  # "no" not in the top
    ]
    digits, words = verdict_probabilities(content)
    one, zero = math.exp(-0.5), math.exp(-1.5) + math.exp(-3.0)
    assert digits == pytest.approx((one / (one + zero),))
    assert words == (1.0,)


def _rows_file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in ROWS[:1]), encoding="utf-8")
    return path


def test_doctor_reports_what_a_server_judge_can_do(stand_in: Callable[..., StandIn]) -> None:
    server = stand_in(_valid)
    checked = CliRunner().invoke(main, ["doctor", "--judge", server.url, "--no-embedders"])
    assert checked.exit_code == 0, checked.output
    assert "m at " + server.url in checked.output and "response_format json_schema" in checked.output
    assert "no logprobs, so P(supported) is the written verdict" in checked.output

    unreachable = CliRunner().invoke(
        main, ["doctor", "--judge", f"http://127.0.0.1:{_free_port()}/v1", "--no-embedders"]
    )
    assert unreachable.exit_code == 1 and "Could not reach the judge server" in unreachable.output
