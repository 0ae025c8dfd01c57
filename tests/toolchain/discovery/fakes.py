"""Embedders with vectors the tests control."""

from __future__ import annotations

from collections.abc import Sequence

from toolchain.discovery._embeddings import Vectors

# Concept axes: a text's vector has 1 on each axis one of whose words it contains.
CONCEPTS: dict[str, tuple[str, ...]] = {
    "image": ("image", "photo", "zdjęcie", "bild", "picture"),
    "page": ("page", "seite", "strona"),
    "weather": ("weather", "temperature", "pogoda", "wetter"),
    "mail": ("email", "mail", "message"),
    "language": ("translate", "language", "przetłumacz"),
    "section": ("section", "hero", "bereich"),
}


class ConceptEmbedder:
    """Vectors over ``CONCEPTS``; records every batch it was asked to embed."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        return [self.vector(text) for text in texts]

    @staticmethod
    def vector(text: str) -> list[float]:
        lowered = text.lower()
        return [float(any(w in lowered for w in words)) for words in CONCEPTS.values()]

    @property
    def queries(self) -> list[str]:
        """Texts embedded one at a time (the queries; tools come in one batch)."""
        return [batch[0] for batch in self.calls if len(batch) == 1]


class BrokenEmbedder:
    """Fails every call, as an unreachable embeddings API would."""

    async def embed(self, texts: Sequence[str]) -> Vectors:
        raise ConnectionError("embeddings endpoint unreachable")
