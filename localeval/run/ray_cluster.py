"""A run's batches scored on a Ray cluster: one actor per `--threads` cores, each loading the models once.

This process stays the driver of the run: it holds the results folder's lock, writes the manifest,
samples.jsonl and judge_calls.jsonl as batches come back, and resumes exactly as a local run does, so
`report`, `compare` and `--fail-under` read a Ray run's folder unchanged. Actors receive whole batches
(see batch_scoring.py: a batch's scores do not depend on which process scored it or what it scored
before) and return their scores with the judge calls they made.

A lost actor is restarted and its batches run again (Ray's retries); a batch is only recorded once it
is back here, so nothing is written twice. Each actor checks the judge file on its own node against the
registry's sha256 (or this machine's copy) before it loads it, and names its node when it cannot.

Ray is imported only here, and only for a Ray run. Nothing leaves the machine on a `local` cluster: its
processes listen on the loopback address, usage reports are off, and the cloud-metadata probe that Ray's
dashboard process makes at start goes to a closed loopback port.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from localeval.data.samples import Sample
from localeval.errors import ConfigError, LocalevalError, ModelFileError
from localeval.judge.protocol import CallUsage, JudgeConfig
from localeval.judge.server import is_server_url
from localeval.metrics import Metric
from localeval.metrics.options import MetricOptions
from localeval.models import file_sha256, load_registry, looks_like_path, resolve_judge
from localeval.models.encoders import EncoderPool
from localeval.results.sample_scores import SampleScores
from localeval.run.batch_scoring import BatchScorer
from localeval.run.judges import (
    LoadedJudge,
    load_judge,
    load_server_judge,
    remember_speeds,
)
from localeval.run.manifest import version_of
from localeval.run.options import CALL_CACHE_FILE, EvaluationOptions
from localeval.run.planning import Prepared
from localeval.run.step_executor import CallCache, StepExecutor
from localeval.steps.prompts import PromptLibrary

log = logging.getLogger("localeval")
LOCAL = "local"  # start a cluster on this machine for the run, and stop it after
MAX_RESTARTS = 3  # an actor lost more often than this ends the run (the finished samples stay in the folder)
START_TIMEOUT_S = 900  # actors hash, check and load the judge; a 1.5B file on a slow disk takes minutes
BATCHES_PER_ACTOR = 2  # in flight at once, so that an actor never waits for the driver between batches
# Packages whose version can change a score: every node must run the driver's.
SCORING_PACKAGES = ("localeval", "llama-cpp-python", "sentence-transformers", "torch", "numpy")
_CLOSED_PORT = "http://127.0.0.1:9"  # the discard port: nothing listens there


@dataclass(frozen=True)
class ActorJob:
    """What every actor needs, sent once: settled on the driver, so nodes need no prompt or data files."""

    judge: str | None  # a path or a registry name, resolved on each node; None: the registry's default judge
    needs_judge: bool
    judge_config: JudgeConfig  # with n_threads set: the CPUs Ray gives the actor
    expected_sha256: str | None  # None: the driver cannot see the file, so the first node's copy sets it
    encoders: tuple[str | None, Path | None] | None  # (embedder, cross-encoder); None: no metric embeds
    langs: tuple[str, ...]  # loaded at start, so that a node without an embedder says so before any scoring
    prompts: PromptLibrary  # every template the run uses is loaded already (see evaluation.prepare)
    metrics: list[Metric]
    metric_options: MetricOptions
    recheck: bool  # the previous run into the folder crashed: a remembered judge check no longer counts
    versions: dict[str, str | None] = field(default_factory=dict)


@dataclass
class BatchDone:
    results: list[SampleScores]
    calls: list[tuple[str, dict[str, Any]]]  # the judge calls the batch made, for the run's call cache file
    encoders: dict[str, Any]


class ScoringActor:
    """Loads the judge and embedders once; a load failure is kept and told by `ready()`, naming the node."""

    def __init__(self, job: ActorJob):
        self.node = node_name()
        self.error: str | None = None
        self.judge: LoadedJudge | None = None
        try:
            mismatched = [
                f"{name} {mine} here, {job.versions[name]} on the driver"
                for name in SCORING_PACKAGES
                if (mine := version_of(name)) != job.versions.get(name)
            ]
            if mismatched:
                raise ConfigError(
                    f"other package versions than the driver's ({'; '.join(mismatched)}): install "
                    "the same localeval environment on every node"
                )
            if job.needs_judge:
                self.judge = load_judge_on_node(job.judge, job.judge_config, job.expected_sha256, job.recheck)
            self.encoders = EncoderPool(*job.encoders) if job.encoders else None
            if self.encoders is not None:
                for lang in job.langs:
                    self.encoders(lang)
        except LocalevalError as error:
            self.error = str(error)
            return
        executor = (
            StepExecutor(self.judge.judge, self.judge.identity, job.prompts, self.judge.config) if self.judge else None
        )
        self.scorer = BatchScorer(job.metrics, executor, self.encoders, job.metric_options)
        self.calls_sent = 0

    def ready(self) -> dict[str, Any]:
        return {"node": self.node, "error": self.error, "judge": self.judge.manifest if self.judge else None}

    def score(self, batch: list[Sample], langs: dict[str, str]) -> BatchDone:
        """The batch's scores, with the judge calls made since the last batch (an identical call from an
        earlier batch is answered from the actor's cache, as a local run answers it from the run's)."""
        results = self.scorer(batch, langs)
        calls = []
        if (executor := self.scorer.executor) is not None:
            calls = executor.cache.items()[self.calls_sent :]
            self.calls_sent += len(calls)
            if self.judge is not None:  # always, with an executor: it is built on the judge
                remember_speeds(self.judge)
        return BatchDone(results, calls, self.encoders.manifest() if self.encoders else {})


def node_name() -> str:
    """The host name and the address Ray knows the node by (a worker cannot tell its own address reliably)."""
    import ray

    node_id = ray.get_runtime_context().get_node_id()
    address = next((node["NodeManagerAddress"] for node in ray.nodes() if node["NodeID"] == node_id), node_id)
    return f"{socket.gethostname()} ({address})"


def load_judge_on_node(
    name_or_path: str | None, config: JudgeConfig, expected_sha256: str | None, recheck: bool
) -> LoadedJudge:
    """The node's own copy of the judge, hashed and compared before llama.cpp loads it; or the judge server, which
    every node reaches at the same URL."""
    if is_server_url(name_or_path):
        return load_server_judge(str(name_or_path), config)
    resolved = resolve_judge(name_or_path)
    if expected_sha256 is not None and (found := file_sha256(resolved.path)) != expected_sha256:
        raise ModelFileError(
            f"{resolved.path} has sha256 {found}, but the run's judge has {expected_sha256}: "
            "a different or corrupt file"
        )
    return load_judge(resolved, config, recheck=recheck)


class RayScoring:
    """The driver's side: actors started and checked, batches handed out and their results taken back."""

    reports_calls = False  # calls are served on the actors: progress counts judge work per finished sample

    def __init__(
        self, actors: list[Any], reports: list[dict[str, Any]], calls: CallCache | None, disconnect: Callable[[], None]
    ):
        self.actors = actors
        self.judge_manifest = next((report["judge"] for report in reports if report["judge"]), None)
        self.calls = calls
        self.calls_done = len(calls) if calls is not None else 0
        self._disconnect = disconnect
        self._encoders: dict[str, Any] = {}

    def score(
        self,
        batches: Iterator[list[Sample]],
        langs: Mapping[str, str],
        call_served: Callable[[str, int, int, CallUsage], None] | None,
    ) -> Iterator[list[SampleScores]]:
        """`BATCHES_PER_ACTOR` batches in flight per actor; each result as soon as it is back."""
        import ray

        free = [actor for _ in range(BATCHES_PER_ACTOR) for actor in self.actors]  # round robin at the start
        running: dict[Any, tuple[Any, list[Sample]]] = {}
        pending = iter(batches)
        while True:
            while free and (batch := next(pending, None)) is not None:
                actor = free.pop(0)
                reference = actor.score.remote(batch, {sample.id: langs[sample.id] for sample in batch})
                running[reference] = (actor, batch)
            if not running:
                return
            [reference], _ = ray.wait(list(running), num_returns=1)
            actor, batch = running.pop(reference)
            free.append(actor)
            try:
                done: BatchDone = ray.get(reference)
            except ray.exceptions.RayActorError as error:
                raise LocalevalError(
                    f"A Ray actor was lost more than {MAX_RESTARTS} times while scoring the samples "
                    f"{batch[0].id} to {batch[-1].id} ({_message(error)}). The samples finished so far are "
                    "kept: rerun the same command to resume."
                ) from None
            except ray.exceptions.RayTaskError as error:
                raise LocalevalError(f"Scoring failed on a Ray actor: {_message(error)}") from None
            if self.calls is not None:
                for key, entry in done.calls:
                    if self.calls.get(key) is None:
                        self.calls.put(key, entry)
            self._encoders.setdefault("embedder_by_language", {}).update(done.encoders.get("embedder_by_language", {}))
            self._encoders.setdefault("cross_encoder", done.encoders.get("cross_encoder"))
            yield done.results

    def encoders_manifest(self) -> dict[str, Any]:
        if not self._encoders:
            return {}
        return {**self._encoders, "embedder_by_language": dict(sorted(self._encoders["embedder_by_language"].items()))}

    def close(self) -> None:
        import ray

        for actor in self.actors:
            ray.kill(actor, no_restart=True)
        self._disconnect()


def start_ray_scoring(
    options: EvaluationOptions, metrics: list[Metric], prepared: Prepared, needs_judge: bool, recheck: bool
) -> RayScoring:
    """Connect (or start a local cluster), start the actors and wait until each has loaded its models."""
    executor = options.executor
    assert executor is not None
    disconnect = connect(executor.address)
    try:
        import ray

        threads = options.judge_config.n_threads or _smallest_node_cpus()
        batches = -(-len(prepared.lang_of) // options.batch_size)
        count = _actor_count(threads, executor.actors, batches)
        needs_encoders = any("embedder" in metric.models for metric in metrics)
        job = ActorJob(
            judge=options.judge,
            needs_judge=needs_judge,
            judge_config=replace(options.judge_config, n_threads=threads),
            expected_sha256=expected_judge_sha256(options.judge) if needs_judge else None,
            encoders=(options.embedder, options.cross_encoder) if needs_encoders else None,
            langs=tuple(prepared.langs),
            prompts=prepared.prompts,
            metrics=metrics,
            metric_options=prepared.metric_options,
            recheck=recheck,
            versions={name: version_of(name) for name in SCORING_PACKAGES},
        )
        actor_class = ray.remote(num_cpus=threads, max_restarts=MAX_RESTARTS, max_task_retries=MAX_RESTARTS)(
            ScoringActor
        )
        log.warning(
            "Ray: %d actor%s, %d thread%s each.", count, "" if count == 1 else "s", threads, "" if threads == 1 else "s"
        )
        # Any, as in RayScoring: ray types an actor method's `.remote` only for methods decorated with @ray.method,
        # which would import ray with this module
        actors: list[Any] = [actor_class.remote(job) for _ in range(count)]
        try:
            reports = ray.get([actor.ready.remote() for actor in actors], timeout=START_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:
            raise ConfigError(
                f"The Ray actors did not start within {START_TIMEOUT_S} s: `ray status` shows "
                "whether the cluster has the CPUs they ask for."
            ) from None
        _require_ready(reports)
        calls = CallCache(options.out / CALL_CACHE_FILE) if needs_judge else None
        return RayScoring(actors, reports, calls, disconnect)
    except BaseException:
        disconnect()
        raise


def _require_ready(reports: list[dict[str, Any]]) -> None:
    """Every actor loaded its models, and every node has the same judge file."""
    failed = {report["node"]: report["error"] for report in reports if report["error"]}
    if failed:
        lines = "\n".join(f"  on {node}: {error}" for node, error in failed.items())
        raise ConfigError(f"{len(failed)} Ray node{'s' if len(failed) > 1 else ''} cannot score:\n{lines}")
    digests = {report["node"]: report["judge"].sha256 for report in reports if report["judge"]}
    if len(set(digests.values())) > 1:
        lines = "\n".join(f"  {node}: sha256 {digest}" for node, digest in digests.items())
        raise ConfigError(f"The Ray nodes have different judge files under the same name:\n{lines}")


def expected_judge_sha256(name_or_path: str | None) -> str | None:
    """The registry's digest for a registry name; this machine's copy's for a path it can see; else None."""
    registry = load_registry()
    name_or_path = name_or_path or registry.default_judge
    if (entry := registry.entries.get(name_or_path)) is not None and entry.sha256:
        return entry.sha256
    path = Path(name_or_path).expanduser()
    return file_sha256(path) if looks_like_path(name_or_path) and path.is_file() else None


def _smallest_node_cpus() -> int:
    """Without --threads: the CPUs of the smallest node, so that every node can hold an actor."""
    import ray

    cpus = [int(node["Resources"].get("CPU", 0)) for node in ray.nodes() if node["Alive"]]
    return max(1, min((count for count in cpus if count > 0), default=1))


def _actor_count(threads: int, wanted: int | None, batches: int) -> int:
    """As many actors as the nodes' CPUs hold at `threads` each, no more than asked for or than batches to score."""
    import ray

    nodes = [node for node in ray.nodes() if node["Alive"]]
    fits = sum(int(node["Resources"].get("CPU", 0)) // threads for node in nodes)
    if fits == 0:
        sizes = ", ".join(f"{node['NodeManagerAddress']}: {int(node['Resources'].get('CPU', 0))}" for node in nodes)
        raise ConfigError(
            f"No Ray node has {threads} CPUs for an actor with --threads {threads} (CPUs per node: "
            f"{sizes}); use fewer --threads."
        )
    if wanted is not None and wanted > fits:
        log.warning(
            "Ray: %d actors asked for, but the cluster's CPUs hold %d at %d threads each.", wanted, fits, threads
        )
    return max(1, min(wanted or fits, fits, batches))


def connect(address: str) -> Callable[[], None]:
    """Join the cluster (or start a local one); returns what ends this process's part in it."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # read by every Ray process this one starts
    try:
        import ray
    except ImportError:
        raise ConfigError("--ray needs Ray, an optional extra: pip install 'localeval[ray]'") from None
    if ray.is_initialized():  # the caller connected already (a notebook): leave the connection to them
        return lambda: None
    options: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.WARNING,
        "namespace": "localeval",
    }
    try:
        if address == LOCAL:
            with _machine_only():
                ray.init(address="local", num_cpus=len(os.sched_getaffinity(0)), **options)
        else:
            ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise ConfigError(
            f"Could not connect to the Ray cluster at {address!r}: {_message(error).rstrip('.')}. Start one "
            "with `ray start --head`, or use --ray local."
        ) from None
    return ray.shutdown


@contextmanager
def _machine_only() -> Iterator[None]:
    """While a local cluster starts: its processes take the loopback address (Ray's switch for a machine that
    is no cluster node, read at import, so set on the module too), and a proxy on a closed loopback port. Ray's
    dashboard process asks cloud-metadata addresses which cloud it runs on, usage reports or not: the proxy
    keeps those requests on the machine."""
    from ray._private import ray_constants

    names = (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "http_proxy",
        "https_proxy",
        "NO_PROXY",
        "no_proxy",
        ray_constants.ENABLE_RAY_CLUSTERS_ENV_VAR,
    )
    saved = {name: os.environ.pop(name, None) for name in names}
    saved_switch = ray_constants.ENABLE_RAY_CLUSTER
    os.environ.update({name: _CLOSED_PORT for name in names[:4]})
    os.environ[ray_constants.ENABLE_RAY_CLUSTERS_ENV_VAR] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved_switch
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _message(error: BaseException) -> str:
    """The last line of Ray's error text: the exception itself, after the remote traceback."""
    text = str(error).strip()
    return text.splitlines()[-1] if text else type(error).__name__
