"""Exact dense retrieval over embeddings you computed elsewhere (no model is loaded here).

Documents: an ``.npy`` matrix (one row per document) and a text file of their ids (one per line, in
row order).  Queries: a precomputed ``.npy`` matrix with its ids file, or a callable
(``module:function``) that embeds a list of query texts.  Similarity: inner product (``dot``) or
``cosine``; top-k by exact scoring in chunks of documents, so memory stays bounded by the chunk.
"""
from __future__ import annotations

from pathlib import Path

from ..dependencies import deferred
from ..console.errors import InputError
from .. import thresholds
from ..inputs.formats.common import numbered_lines, text_lines

np = deferred("numpy")


def read_ids(path) -> list[str]:
    ids = [line.rstrip("\r") for _, line in numbered_lines(path, text_lines)]
    while ids and ids[-1] == "":
        ids.pop()
    return ids


def load_matrix(path, ids_path, what: str) -> tuple[np.ndarray, list[str]]:
    try:
        m = np.load(Path(path), allow_pickle=False, mmap_mode="r")
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the {what} matrix ({exc})", path=str(path), fix="save it with numpy.save") from None
    ids = read_ids(ids_path)
    if m.ndim != 2 or m.shape[0] != len(ids):
        raise InputError(f"the {what} matrix has shape {m.shape} for {len(ids)} ids", path=str(path),
                         fix="one row per id, in the order of the ids file")
    return m, ids


class DenseRetriever:
    def __init__(self, doc_matrix: np.ndarray, doc_ids: list[str], similarity: str = "cosine"):
        if similarity not in ("cosine", "dot"):
            raise InputError(f"unknown similarity {similarity!r}", fix="use cosine or dot")
        self.ids, self.similarity, self.docs = doc_ids, similarity, doc_matrix

    def search(self, queries: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        q = np.asarray(queries, np.float64)
        if q.ndim != 2 or q.shape[1] != self.docs.shape[1]:
            raise InputError(f"query embeddings of shape {q.shape} do not match documents of dimension {self.docs.shape[1]}",
                             fix="embed queries with the model that embedded the documents")
        if self.similarity == "cosine":
            q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-300)
        k = min(k, len(self.ids))
        best_s = np.full((q.shape[0], 0), -np.inf)
        best_i = np.zeros((q.shape[0], 0), np.int64)
        step = thresholds.DENSE_DOC_CHUNK_ROWS
        for a in range(0, len(self.ids), step):
            d = np.asarray(self.docs[a:a + step], np.float64)
            if self.similarity == "cosine":
                d = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-300)
            s = q @ d.T
            idx = np.broadcast_to(np.arange(a, a + d.shape[0]), s.shape)
            best_s = np.concatenate([best_s, s], axis=1)
            best_i = np.concatenate([best_i, idx], axis=1)
            if best_s.shape[1] > k:
                # keep the k best, ties by document row (canonical order), so results never depend on chunking
                order = np.lexsort((best_i, -best_s), axis=1)[:, :k]
                best_s = np.take_along_axis(best_s, order, 1)
                best_i = np.take_along_axis(best_i, order, 1)
        order = np.lexsort((best_i, -best_s), axis=1)
        best_s, best_i = np.take_along_axis(best_s, order, 1), np.take_along_axis(best_i, order, 1)
        return [[(self.ids[int(i)], float(s)) for i, s in zip(ri, rs)] for ri, rs in zip(best_i, best_s)]
