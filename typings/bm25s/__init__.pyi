# Types for the parts of bm25s the discovery search uses; the package ships none.
# Names and signatures follow bm25s/__init__.py of bm25s 0.3.
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

class BM25:
    scores: dict[str, Any]
    vocab_dict: dict[str, int]
    def __init__(
        self,
        k1: float = 1.5,
        b: float = 0.75,
        delta: float = 0.5,
        method: str = "lucene",
        idf_method: str | None = None,
        dtype: str = "float32",
        int_dtype: str = "int32",
        corpus: Sequence[Any] | None = None,
        backend: str = "numpy",
        csc_backend: str = "numpy",
        auto_compile: bool = True,
    ) -> None: ...
    def index(
        self,
        corpus: Sequence[Sequence[str]],
        create_empty_token: bool = True,
        show_progress: bool = True,
        leave_progress: bool = False,
    ) -> None: ...
    def get_scores_from_ids(
        self,
        query_tokens_ids: Sequence[int],
        weight_mask: npt.NDArray[np.float32] | None = None,
    ) -> npt.NDArray[np.float32]: ...
