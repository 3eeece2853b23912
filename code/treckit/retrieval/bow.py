"""The deterministic bag-of-words baseline of the RQ metric.

Documents and queries become term-frequency vectors over lower-cased word tokens (Unicode ``\\w+``);
a document's score is the cosine similarity with the query.  Documents are ranked by descending
cosine, ties in corpus order (the order of the corpus file: the story order the RQ metric document
asks for, so ``s2`` stays before ``s10`` when the file lists it first); documents sharing no term
with the query (cosine 0) are not returned.
"""
from __future__ import annotations

import re

from ..dependencies import deferred
from .corpus import Corpus

np = deferred("numpy")

_TOKEN = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class BowRetriever:
    """``retrieve(query, k)`` -> [(doc_id, cosine)] best first; build once, query many times."""

    def __init__(self, corpus: Corpus):
        from scipy.sparse import csr_matrix

        self.ids = corpus.ids
        self.vocab: dict[str, int] = {}
        indptr, indices, data = [0], [], []
        for text in corpus.texts:
            counts: dict[int, int] = {}
            for t in tokens(text):
                j = self.vocab.setdefault(t, len(self.vocab))
                counts[j] = counts.get(j, 0) + 1
            indices.extend(counts), data.extend(counts.values())
            indptr.append(len(indices))
        m = csr_matrix((np.asarray(data, np.float64), np.asarray(indices, np.int64), np.asarray(indptr, np.int64)),
                       shape=(len(self.ids), max(len(self.vocab), 1)))
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        self.matrix = m.multiply(1.0 / norms[:, None]).tocsr()

    def retrieve(self, query: str, k: int = 100) -> list[tuple[str, float]]:
        all_counts: dict[str, int] = {}
        for t in tokens(query):
            all_counts[t] = all_counts.get(t, 0) + 1
        known = {self.vocab[t]: c for t, c in all_counts.items() if t in self.vocab}
        if not known:
            return []
        cols = np.fromiter(known, np.int64)
        q = np.fromiter(known.values(), np.float64)
        q /= np.sqrt(sum(c * c for c in all_counts.values()))       # the query's whole vector, unknown terms too
        scores = self.matrix[:, cols] @ q
        hit = np.flatnonzero(scores > 0)
        order = hit[np.argsort(-scores[hit], kind="stable")][:k]     # stable: ties stay in corpus order
        return [(self.ids[i], float(scores[i])) for i in order]
