"""BM25 over a corpus through bm25s (Lù, 2024), with its index saved to and loaded from disk.

Parameters: ``k1``, ``b``, ``variant`` (bm25s' ``method``: lucene, robertson, atire, bm25l, bm25+),
``stopwords`` (``en`` or none), ``stemmer`` (a Snowball language such as ``english``, or none; the text
``none`` means none too).  The saved index records the corpus digest and the parameters: a mismatch
rebuilds it rather than answer from another corpus.  Documents that share no term with the query
(score 0) are not returned.  The corpus is indexed sorted by id (byte order), so neither the index, its
digest nor the results depend on the order of the corpus file.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from .corpus import Corpus

VARIANTS = ("lucene", "robertson", "atire", "bm25l", "bm25+")
MANIFEST = "treckit-index.json"


@dataclass(frozen=True)
class BM25Params:
    k1: float = 0.9
    b: float = 0.4
    variant: str = "lucene"
    stopwords: str | None = "en"
    stemmer: str | None = "english"

    def __post_init__(self):
        for name in ("stopwords", "stemmer"):          # "none" (a command line, a config) and "" mean none
            if getattr(self, name) in ("", "none"):
                object.__setattr__(self, name, None)
        if self.variant not in VARIANTS:
            raise InputError(f"unknown BM25 variant {self.variant!r}", fix=f"use one of {', '.join(VARIANTS)}")
        if self.k1 < 0 or not 0 <= self.b <= 1:
            raise InputError(f"BM25 needs k1 >= 0 and 0 <= b <= 1 (got k1={self.k1}, b={self.b})", fix="e.g. k1 0.9, b 0.4")


def corpus_digest(corpus: Corpus) -> str:
    """SHA-256 of the documents (ids and texts) in the order given: the order they are indexed in."""
    import hashlib
    h = hashlib.sha256()
    for d, t in zip(corpus.ids, corpus.texts):
        h.update(d.encode("utf-8", "surrogatepass") + b"\0" + t.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


class BM25Retriever:
    """Index once (or load the saved index), then ``retrieve(queries, k)``."""

    def __init__(self, corpus: Corpus, params: BM25Params = BM25Params(), index_dir: str | Path | None = None,
                 progress: bool = False):
        import bm25s

        corpus = corpus.by_id()         # an index row is a position in this order: the same for any file order
        self.ids, self.params, self.progress = corpus.ids, params, progress
        self._stem = self._stemmer()
        digest = corpus_digest(corpus)
        manifest = {"corpus": digest, "params": asdict(params), "documents": len(corpus.ids)}
        self.loaded = False
        if index_dir is not None and (Path(index_dir) / MANIFEST).is_file():
            from ..bounded import config_read_limit, read_json
            try:
                saved = read_json(Path(index_dir) / MANIFEST, limit=config_read_limit(), what="index manifest",
                                  fix="remove the index folder; it is built again")
            except InputError:               # unreadable: the index is built again
                saved = None
            if saved == manifest:
                self.model = bm25s.BM25.load(str(index_dir))
                self.loaded = True
        if not self.loaded:
            tokens = bm25s.tokenize(corpus.texts, stopwords=params.stopwords or [], stemmer=self._stem,
                                    return_ids=False, show_progress=progress)
            self.model = bm25s.BM25(k1=params.k1, b=params.b, method=params.variant)
            self.model.index(tokens, show_progress=progress)
            if index_dir is not None:
                Path(index_dir).mkdir(parents=True, exist_ok=True)
                self.model.save(str(index_dir), show_progress=False)
                (Path(index_dir) / MANIFEST).write_text(json.dumps(manifest))

    def _stemmer(self):
        if not self.params.stemmer:
            return None
        import Stemmer
        try:
            return Stemmer.Stemmer(self.params.stemmer).stemWords
        except KeyError:
            raise InputError(f"no Snowball stemmer for {self.params.stemmer!r}",
                             fix="e.g. --stemmer english, or --stemmer none") from None

    def retrieve(self, queries: list[str], k: int = 100) -> list[list[tuple[str, float]]]:
        import bm25s

        if not queries:
            return []
        tokens = bm25s.tokenize(queries, stopwords=self.params.stopwords or [], stemmer=self._stem,
                                return_ids=False, show_progress=False)
        kk = min(k, len(self.ids))
        docs, scores = self.model.retrieve(tokens, k=kk, show_progress=self.progress, n_threads=0)
        out = []
        for drow, srow in zip(docs, scores):
            keep = srow > 0
            out.append([(self.ids[int(d)], float(s)) for d, s in zip(drow[keep], np.asarray(srow[keep], np.float64))])
        return out
