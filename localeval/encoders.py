"""Embedders and cross-encoders, on-device, loaded from local folders only.

Metrics ask for vectors or pair scores with `Embed` and `Similarity` requests; the runner gathers
the requests of a round into one batch, and each distinct text is embedded once per run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from localeval.errors import ModelFileError

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

    def __init__(self, path: Path, batch_size: int = 32):
        from sentence_transformers import SentenceTransformer

        _require_dir(path, "Embedder")
        self.name = str(path)
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


class CrossEncoderScorer:
    """A sentence-transformers cross-encoder folder; scores pass through its activation (sigmoid: 0..1)."""

    def __init__(self, path: Path, seed: int = 0, batch_size: int = 32):
        import torch
        from sentence_transformers import CrossEncoder

        _require_dir(path, "Cross-encoder")
        torch.manual_seed(seed)  # a folder without a trained head gets a seeded, reproducible one
        self.name = str(path)
        self.batch_size = batch_size
        self._model = CrossEncoder(str(path), num_labels=1, device="cpu", local_files_only=True)

    def score(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        scores = self._model.predict(list(pairs), batch_size=self.batch_size, show_progress_bar=False)
        return np.asarray(scores, dtype=np.float64).reshape(len(pairs))


@dataclass
class Encoders:
    """The embedder and optional cross-encoder of a run, with a per-run memo of embedded texts."""

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

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0)
        if self.cross_encoder is not None:
            return self.cross_encoder.score(pairs)
        vectors = self.embed([text for pair in pairs for text in pair])
        return np.einsum("ij,ij->i", vectors[0::2], vectors[1::2]).astype(np.float64)


def _require_dir(path: Path, what: str) -> None:
    if not path.exists():
        raise ModelFileError(f"{what} not found: {path}")
    if not path.is_dir():
        raise ModelFileError(f"{what} {path} is not a folder (expected a sentence-transformers model folder).")
