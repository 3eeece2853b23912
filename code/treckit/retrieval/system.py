"""Systems as configs: named components, an optional fusion and an optional rerank stage.

    corpus: docs.jsonl                      # for bm25 / bow components (relative to the config)
    components:
      bm25:   {method: bm25, k1: 0.9, b: 0.4}          # also variant, stopwords, stemmer, index, corpus
      splade: {run: runs/splade.trec}                  # any run file (format: to force one)
      dense:  {run: runs/dense.trec}
      mine:   {callable: my_pkg.search:search}         # query -> [(doc_id, score)] or [doc_id]; batch: true
      emb:    {dense: {embeddings: d.npy, ids: d.ids, query_embeddings: q.npy, query_ids: q.ids,
                       similarity: cosine}}            # or query_encoder: my_pkg.embed:embed
    fusion_method: weighted                  # rrf | weighted | combsum | combmnz | max
    weights: {bm25: 0.3, splade: 0.4, dense: 0.3}
    rrf_k: 60
    norm: minmax
    rerank: {callable: my_pkg.rerank:rerank, depth: 100}   # (query, [(doc, score)]) -> ranking

Every stage yields per-query rankings and, where something was called, per-query latency; the
fusion stage's latency is its components' plus its own, the rerank stage's the fusion's plus its own.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import PathLike

COMPONENT_KINDS = ("method", "run", "callable", "dense")
FUSION_KEYS = ("fusion_method", "rrf_k", "weights", "norm")
TOP_KEYS = set(FUSION_KEYS) | {"components", "corpus", "rerank", "name", "depth"}


@dataclass
class StageResult:
    rankings: dict[str, list[tuple[str, float | None]]]
    latency_ms: dict[str, float] | None


def _timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, (time.perf_counter() - t0) * 1000


class System:
    """A retrieval system described by a config mapping (``base`` resolves its relative paths)."""

    def __init__(self, config: dict, base: Path = Path("."), name: str | None = None):
        from ..compare.config import content_digest
        if not isinstance(config, dict):
            raise InputError("a system config must be a mapping", fix="see the README: systems as configs")
        unknown = set(config) - TOP_KEYS
        if unknown:
            raise InputError(f"unknown keys in the system config: {', '.join(sorted(unknown))}",
                             fix=f"use {', '.join(sorted(TOP_KEYS))}")
        self.config, self.base = config, base
        self.name = name or str(config.get("name") or "system")
        self.digest = content_digest(config)
        comps = config.get("components") or {}
        if not isinstance(comps, dict) or not comps:
            raise InputError("the system config names no components", fix="add components: {bm25: {method: bm25}}")
        self.components = {str(n): self._component(str(n), spec) for n, spec in comps.items()}
        self.fusion = {k: config[k] for k in FUSION_KEYS if k in config} or None
        if self.fusion and "fusion_method" not in self.fusion:
            raise InputError("fusion settings without fusion_method", fix="add fusion_method: rrf (or weighted, ...)")
        if self.fusion is None and len(self.components) > 1:
            raise InputError("several components need a fusion_method", fix="add fusion_method: rrf")
        self.rerank = config.get("rerank")
        self._built: dict[str, Any] = {}

    # -------------------------------------------------------------- components
    def _path(self, p) -> Path:
        p = Path(str(p))
        return p if p.is_absolute() else self.base / p

    def _component(self, name: str, spec) -> dict:
        if not isinstance(spec, dict) or sum(k in spec for k in COMPONENT_KINDS) != 1:
            raise InputError(f"component {name!r} must have exactly one of: {', '.join(COMPONENT_KINDS)}",
                             fix=f"e.g. {name}: {{method: bm25}} or {name}: {{run: runs/{name}.trec}}")
        return spec

    def _retriever(self, name: str, spec: dict):
        if name in self._built:
            return self._built[name]
        from .corpus import read_corpus
        corpus_path = spec.get("corpus") or self.config.get("corpus")
        if corpus_path is None:
            raise InputError(f"component {name!r} needs a corpus", fix="add corpus: docs.jsonl (top level or component)")
        corpus = read_corpus(self._path(corpus_path))
        if spec["method"] == "bm25":
            from .bm25 import BM25Params, BM25Retriever
            params = BM25Params(**{k: spec[k] for k in ("k1", "b", "variant", "stopwords", "stemmer") if k in spec})
            r = BM25Retriever(corpus, params, self._path(spec["index"]) if spec.get("index") else None)
            fn = lambda text, k: r.retrieve([text], k)[0]       # noqa: E731
        elif spec["method"] == "bow":
            from .bow import BowRetriever
            r = BowRetriever(corpus)
            fn = r.retrieve
        else:
            raise InputError(f"component {name!r}: unknown method {spec['method']!r}", fix="use bm25 or bow")
        self._built[name] = fn
        return fn

    def run_component(self, name: str, queries: dict[str, str], k: int) -> StageResult:
        spec = self.components[name]
        if "run" in spec:
            return StageResult(_rankings_of_run(self._path(spec["run"]), spec.get("format"), set(queries), k), None)
        if "dense" in spec:
            return self._dense(name, spec["dense"], queries, k)
        if "callable" in spec:
            from .callables import load_callable
            from ..testsets.runner import _as_ranking
            fn = load_callable(str(spec["callable"]))
            if spec.get("batch"):
                out, ms = _timed(fn, list(queries.values()))
                each = ms / max(len(queries), 1)
                return StageResult({q: _as_ranking(r, q, k) for q, r in zip(queries, out)}, {q: each for q in queries})
            rankings, lat = {}, {}
            for q, text in queries.items():
                res, lat[q] = _timed(fn, text)
                rankings[q] = _as_ranking(res, q, k)
            return StageResult(rankings, lat)
        fn = self._retriever(name, spec)
        rankings, lat = {}, {}
        for q, text in queries.items():
            rankings[q], lat[q] = _timed(fn, text, k)
        return StageResult(rankings, lat)

    def _dense(self, name: str, spec: dict, queries: dict[str, str], k: int) -> StageResult:
        from .dense import DenseRetriever, load_matrix
        docs, ids = load_matrix(self._path(spec["embeddings"]), self._path(spec["ids"]), "document")
        r = DenseRetriever(docs, ids, spec.get("similarity", "cosine"))
        if "query_embeddings" in spec:
            qm, qids = load_matrix(self._path(spec["query_embeddings"]), self._path(spec["query_ids"]), "query")
            row = {q: i for i, q in enumerate(qids)}
            missing = [q for q in queries if q not in row]
            if missing:
                raise InputError(f"component {name!r}: no query embedding for {', '.join(missing[:10])}",
                                 fix="embed every query of the test set")
            rankings, lat = {}, {}
            for q in queries:
                (res,), lat[q] = _timed(r.search, qm[row[q]][None, :], k)
                rankings[q] = res
            return StageResult(rankings, lat)
        if "query_encoder" in spec:
            from .callables import load_callable
            enc = load_callable(str(spec["query_encoder"]))
            rankings, lat = {}, {}
            for q, text in queries.items():
                (res,), lat[q] = _timed(lambda t: r.search(enc([t]), k), text)
                rankings[q] = res
            return StageResult(rankings, lat)
        raise InputError(f"component {name!r}: dense needs query_embeddings + query_ids, or a query_encoder",
                         fix="precompute query embeddings, or name a function that embeds texts")

    # -------------------------------------------------------------- stages
    def run(self, queries: dict[str, str], k: int = 100, only: list[str] | None = None) -> dict[str, StageResult]:
        """Each component's stage (``only``: just those), then ``fusion`` and ``fusion+rerank`` when configured."""
        names = only or list(self.components)
        unknown = [n for n in names if n not in self.components]
        if unknown:
            raise InputError(f"unknown components: {', '.join(unknown)}", fix=f"the config has {', '.join(self.components)}")
        out = {n: self.run_component(n, queries, k) for n in names}
        if only:
            return out
        last = names[0]
        if self.fusion:
            out["fusion"] = self._fuse(out, queries, k)
            last = "fusion"
        if self.rerank:
            out[f"{last}+rerank"] = self._rerank(out[last], queries)
        return out

    def final_stage(self) -> str:
        last = "fusion" if self.fusion else next(iter(self.components))
        return f"{last}+rerank" if self.rerank else last

    def _fuse(self, stages: dict[str, StageResult], queries: dict[str, str], k: int) -> StageResult:
        from .fusion import RRF_K, fuse
        names = list(self.components)
        runs = [_as_run(stages[n].rankings) for n in names]
        w = self.fusion.get("weights")
        if isinstance(w, dict):
            missing = [n for n in names if n not in w]
            if missing or set(w) - set(names):
                raise InputError(f"weights name {sorted(w)} but the components are {names}",
                                 fix="give every component one weight")
            w = [float(w[n]) for n in names]
        t0 = time.perf_counter()
        fused = fuse(runs, str(self.fusion["fusion_method"]), k=int(self.fusion.get("rrf_k", RRF_K)), weights=w,
                     norm=self.fusion.get("norm"), depth=k)
        own = (time.perf_counter() - t0) * 1000 / max(len(queries), 1)
        rankings = _rankings_of(fused, set(queries), k)
        lat = None
        timed = [stages[n].latency_ms for n in names if stages[n].latency_ms is not None]
        if timed:
            lat = {q: sum(t[q] for t in timed) + own for q in queries}
        return StageResult(rankings, lat)

    def _rerank(self, stage: StageResult, queries: dict[str, str]) -> StageResult:
        from .callables import load_callable
        from ..testsets.runner import _as_ranking
        spec = self.rerank if isinstance(self.rerank, dict) else {"callable": self.rerank}
        fn = load_callable(str(spec["callable"]))
        depth = int(spec.get("depth", 100))
        rankings, lat = {}, {}
        for q, text in queries.items():
            cands = stage.rankings[q][:depth]
            res, ms = _timed(fn, text, cands)
            rankings[q] = _as_ranking(res, q, len(cands))
            lat[q] = ms + (stage.latency_ms[q] if stage.latency_ms else 0.0)
        return StageResult(rankings, lat)


def _as_run(rankings):
    """Rankings with scores keep them (fusion normalises them); rank-only ones get n..1."""
    from ..model import Run
    q, d, s = [], [], []
    for qid, ranking in rankings.items():
        n = len(ranking)
        for i, (doc, score) in enumerate(ranking):
            q.append(qid), d.append(doc), s.append(float(n - i) if score is None else score)
    return Run.from_columns(q, d, s, tag="component")


def _rankings_of(run, qids: set[str], k: int) -> dict[str, list[tuple[str, float]]]:
    """Per-query rankings of a Run in trec_eval's order, top k, for the given queries."""
    from ..trec_order import run_ranks as trec_ranks
    t = run.table
    ranks = trec_ranks(run)
    rows = sorted(zip(t.column("qid").to_pylist(), ranks.tolist(), t.column("docid").to_pylist(),
                      t.column("score").to_pylist()))
    out: dict[str, list[tuple[str, float]]] = {q: [] for q in qids}
    for q, r, d, s in rows:
        if q in out and r < k:
            out[q].append((d, s))
    return out


def _rankings_of_run(path: Path, fmt: str | None, qids: set[str], k: int):
    from ..api import read_run
    return _rankings_of(read_run(path, fmt, order_option=False), qids, k)     # a config names no order


def load_system(path: PathLike) -> System:
    """A system from a YAML/JSON config file (read as bounded, plain YAML: :mod:`treckit.yamlsafe`)."""
    from ..yamlsafe import load_yaml_mapping
    data = load_yaml_mapping(path)
    return System(data, Path(path).parent, name=str(data.get("name") or Path(path).stem))


def as_system(spec, name: str | None = None) -> System:
    if isinstance(spec, System):
        return spec
    if isinstance(spec, dict):
        return System(spec, Path("."), name)
    return load_system(spec)

