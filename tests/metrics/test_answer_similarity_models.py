"""answer_similarity on real encoders: the MiniLM bi-encoder, and a MiniLM cross-encoder saved with a fresh head.

The cross-encoder's head is freshly initialised and saved (no package ships trained cross-encoder
weights), so its scores are checked for range, shape and determinism only, never for quality.
"""

from __future__ import annotations

import numpy as np
import pytest

from localeval.data.samples import Sample
from localeval.metrics import METRICS
from localeval.models import resolve_embedder_dir
from localeval.models.encoders import (
    CrossEncoderScorer,
    Encoders,
    SentenceTransformerEmbedder,
)
from localeval.run.runner import run_metrics

PAIRS = [
    ("The Eiffel Tower is 330 metres tall.", "The Eiffel Tower has a height of 330 m."),
    ("The Eiffel Tower is 330 metres tall.", "Bananas are rich in potassium."),
    ("Insulin was discovered in 1921.", "The Eiffel Tower has a height of 330 m."),
]
SAMPLES = [Sample(str(i), i, response=r, reference=ref) for i, (r, ref) in enumerate(PAIRS, start=1)]


class CountingEmbedder:
    """A real embedder that records each batch it is asked to embed."""

    def __init__(self, embedder: SentenceTransformerEmbedder):
        self.embedder, self.name, self.batches = embedder, embedder.name, []

    def embed(self, texts):
        self.batches.append(list(texts))
        return self.embedder.embed(texts)


@pytest.fixture(scope="module")
def minilm_dir():
    return resolve_embedder_dir("all-minilm-l6-v2")


@pytest.fixture(scope="module")
def minilm(minilm_dir):
    return SentenceTransformerEmbedder(minilm_dir)


@pytest.fixture(scope="module")
def cross_encoder_dir(minilm_dir, tmp_path_factory):
    """MiniLM with a one-score head, saved as a sentence-transformers CrossEncoder folder."""
    import torch
    from sentence_transformers import CrossEncoder

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("cross-encoder")
    CrossEncoder(str(minilm_dir), num_labels=1, device="cpu", local_files_only=True).save(str(folder))
    return folder


def similarity_scores(encoders: Encoders) -> list[float]:
    results = run_metrics(
        SAMPLES, [METRICS["answer_similarity"]], None, lambda sample: "en", encoders=lambda lang: encoders
    )
    return [r.scores["answer_similarity"].value for r in results]


def test_bi_encoder_embeds_each_distinct_text_once_in_one_batch(minilm):
    counting = CountingEmbedder(minilm)
    scores = similarity_scores(Encoders(counting))
    distinct = list(dict.fromkeys(text for pair in PAIRS for text in pair))
    assert counting.batches == [distinct]  # 6 texts asked for, 4 distinct, one batch
    assert scores[0] > 0.8 and scores[1] < 0.3 and scores[0] > scores[2]
    assert all(0.0 <= s <= 1.0 for s in scores)


def test_cross_encoder_scores_pairs_in_range_deterministically(cross_encoder_dir, minilm):
    counting = CountingEmbedder(minilm)
    first = similarity_scores(Encoders(counting, CrossEncoderScorer(cross_encoder_dir)))
    again = similarity_scores(Encoders(counting, CrossEncoderScorer(cross_encoder_dir)))
    assert counting.batches == []  # the cross-encoder replaces the embeddings
    assert len(first) == len(PAIRS)
    assert all(0.0 <= s <= 1.0 for s in first)
    assert first == again


def test_cross_encoder_returns_one_score_per_pair(cross_encoder_dir):
    scores = CrossEncoderScorer(cross_encoder_dir).score(PAIRS * 3)
    assert scores.shape == (9,) and np.isfinite(scores).all()
    assert np.allclose(scores[:3], scores[3:6])
