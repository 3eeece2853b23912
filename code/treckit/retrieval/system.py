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

Every stage yields per-query rankings in trec_eval's order of its scores (:mod:`.ranking`; a
function's answer in its list order) and, where something was called, per-query latency.

Latency (:func:`run_systems`: one system, or the systems of an A/B on the same queries):

* everything is built before any timing: corpora read, indexes built or loaded, functions imported,
  embeddings loaded;
* warm-up: the whole pipeline runs untimed on the first :data:`WARMUP_QUERIES` queries, so first
  calls (imports such as pandas for fusion, bm25s' and numpy's first calls, a function's lazy
  loading) are paid before the clock runs, and by no system in particular;
* then per query, the components of all systems take turns in an order that rotates every query
  (query r starts with the r-th), as do the rerank stages, so a slow spell or a cache one of them
  warmed falls on all alike;
* a component's latency for a query is its call's wall time (a batch function's time is shared
  evenly over the queries); the fusion stage's is the sum of its components' plus its own time (one
  call over all queries, timed in rounds with the systems in turns, the least shared evenly); the
  rerank stage's is its input stage's plus its own call;
* every timed call runs with Python's garbage collector quiet (:func:`treckit.console.timing.quiet_collector`:
  collected before, off during, on after), so a collection that falls due is paid between calls, by none.
"""
from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter            # looked up at each run: tests put a fake clock here
from typing import Any, Callable

from ..console.errors import InputError, content_hidden, warning_without_content
from ..console.timing import quiet_collector
from ..console.messages import warn_python
from ..console.progress import Meter
from .. import thresholds
from ..inputs.bounded import load_yaml_mapping
from ..inputs.held import shared
from ..inputs.reading import read_run
from ..inputs.sources import PathLike, content_digest, display_name, file_digest
from .bm25 import BM25Params, BM25Retriever
from .bow import BowRetriever
from .callables import ask, ask_batch, call, check_arguments, function_name, load_callable, ranking_of
from .corpus import read_corpus
from .dense import DenseRetriever, load_matrix
from .fusion import RRF_K, fuse
from .ranking import rankings_of_run, run_of, through_ties, trec_ranked
from .system_config import DEFAULT_RERANK_DEPTH, FUSION_KEYS, check_system_config

WARMUP_QUERIES = 3           # queries every stage of every system answers untimed before the timed pass
FUSION_ROUNDS = 3            # timings of each fusion call (over all queries), the systems in turns: the least counts


@dataclass
class StageResult:
    rankings: dict[str, list[tuple[str, float]]]
    latency_ms: dict[str, float] | None


@dataclass
class _Component:
    """A component ready to run: ``one(qid, text)`` answers one query (a timed call), or ``whole(queries,
    clock)`` answers them all at once; ``function``: the user's function whose answers are rankings in list
    order (checked as its code: :func:`.callables.ranking_of`)."""
    one: Callable[[str, Any], Any] | None = None
    whole: Callable[[dict, Callable[[], float]], StageResult] | None = None
    function: Callable | None = None


@dataclass
class _Plan:
    """A system ready to run on given queries: its components (those asked for) and its reranker."""
    components: dict[str, _Component]
    later_stages: bool                              # fusion and rerank too (not some components only)
    rerank: tuple[Callable, int] | None = None      # (function, depth)


class System:
    """A retrieval system described by a config mapping (``base`` resolves its relative paths)."""

    def __init__(self, config: dict, base: Path = Path("."), name: str | None = None, source: str | None = None):
        check_system_config(config, source)           # the whole config, before anything is read or built
        self.config, self.base, self.source = config, base, source
        self.name = name or str(config.get("name") or "system")
        self.digest = content_digest(config)
        self.components = {str(n): spec for n, spec in config["components"].items()}
        self.fusion = {k: config[k] for k in FUSION_KEYS if k in config} or None
        self.rerank = config.get("rerank")
        self._built: dict[str, tuple[str, Any]] = {}        # name -> (its corpus's digest, its search)
        self._callables: dict[str, Callable] = {}           # function spec -> the function, loaded once
        self._lock = threading.Lock()

    # -------------------------------------------------------------- components
    def _path(self, p) -> Path:
        p = Path(str(p))
        return p if p.is_absolute() else self.base / p

    def _named(self):
        """A block in which a file the config names is read: its content is never shown, since it is no input."""
        return content_hidden(self._why())

    def _why(self) -> str:
        return f"the file is named by the system config{' ' + self.source if self.source else ''}"

    @property
    def needs_texts(self) -> bool:
        """Whether running the system reads the queries' texts: every component but a run file does,
        and so does a reranker."""
        return bool(self.rerank) or any("run" not in spec for spec in self.components.values())

    def _retriever(self, name: str, spec: dict):
        """The component's ``search(texts, n)`` (:func:`method_search`), built once for each content of its
        corpus file (a system kept by a server rebuilds it when the file changes)."""
        corpus_path = spec.get("corpus") or self.config.get("corpus")
        if corpus_path is None:
            raise InputError(f"component {name!r} needs a corpus", fix="add corpus: docs.jsonl (top level or component)")
        digest = file_digest(self._path(corpus_path))
        built = self._built.get(name)
        if built is not None and built[0] == digest:
            return built[1]
        params = None
        if spec["method"] == "bm25":
            params = BM25Params(**{k: spec[k] for k in ("k1", "b", "variant", "stopwords", "stemmer") if k in spec})
        index = self._path(spec["index"]) if spec.get("index") else None
        with self._named():
            search = method_search(spec["method"], read_corpus(self._path(corpus_path)), params, index)
        self._built[name] = (digest, search)
        return search

    def callable(self, spec, role: str = "function", arguments: int | None = None) -> Callable:
        """The function ``spec`` (``module:function`` or ``file.py:function``) names, loaded once for this
        system (the code its stages call is the code its cache key digests); with ``arguments``, its
        signature checked for what treckit passes it as a ``role``."""
        spec = str(spec)
        with self._lock:
            if spec not in self._callables:      # its messages name the config's own words (module, function)
                self._callables[spec] = load_callable(spec, role)    # and quote nothing of the code's file
            fn = self._callables[spec]
        if arguments is not None:
            check_arguments(fn, arguments, role, spec)
        return fn

    def inputs(self, only: list[str] | None = None) -> tuple[list[tuple[str, Path]], list[tuple[str, str]]]:
        """What running the stages (``only``: those components') reads and calls, as the config names it:
        ([(where in the config, path)] of every file, [(where, spec)] of every function).  A BM25 index
        is not listed: it is checked against its corpus, parameters and files, and rebuilt when it differs
        (:mod:`.bm25`), so its answers are the corpus's."""
        files: list[tuple[str, Path]] = []
        functions: list[tuple[str, str]] = []
        for name in only or list(self.components):
            spec = self.components.get(name)
            if spec is None:
                continue
            if "run" in spec:
                files.append((f"{name}.run", self._path(spec["run"])))
            elif "method" in spec:
                corpus = spec.get("corpus") or self.config.get("corpus")
                if corpus is not None:
                    files.append((f"{name}.corpus", self._path(corpus)))
            elif "callable" in spec:
                functions.append((f"{name}.callable", str(spec["callable"])))
            elif isinstance(spec["dense"], dict):
                dense = spec["dense"]
                files += [(f"{name}.dense.{key}", self._path(dense[key])) for key in
                          ("embeddings", "ids", "query_embeddings", "query_ids") if dense.get(key) is not None]
                if dense.get("query_encoder") is not None:
                    functions.append((f"{name}.dense.query_encoder", str(dense["query_encoder"])))
        if self.rerank and not only:
            spec = self.rerank if isinstance(self.rerank, dict) else {"callable": self.rerank}
            if spec.get("callable") is not None:
                functions.append(("rerank.callable", str(spec["callable"])))
        return files, functions

    def _ready(self, name: str, queries: dict[str, Any], k: int) -> _Component:
        """Component ``name`` built and loaded (untimed), ready to answer ``queries``."""
        spec = self.components[name]
        if "run" in spec:
            # read once, untimed
            runs = sum("run" in s for s in self.components.values())
            read = _rankings_of_run(self._path(spec["run"]), spec.get("format"), list(queries), k, self._why(), runs)
            return _Component(whole=lambda qs, clock: StageResult({q: read[q] for q in qs}, None))
        if "dense" in spec:
            return self._dense(name, spec["dense"], queries, k)
        if "callable" in spec:
            batch = bool(spec.get("batch"))
            fn = self.callable(spec["callable"], "batch function" if batch else "retrieval function", 1)
            if batch:
                return _Component(whole=lambda qs, clock: _batch_stage(fn, qs, k, clock))
            return _Component(one=lambda qid, text: ask(fn, qid, text, most=k), function=fn)
        search = self._retriever(name, spec)
        return _Component(one=lambda qid, text: through_ties(search, [text], k)[0])

    def _dense(self, name: str, spec: dict, queries: dict[str, Any], k: int) -> _Component:
        import numpy as np

        with self._named():
            docs, ids = load_matrix(self._path(spec["embeddings"]), self._path(spec["ids"]), "document")
        r = DenseRetriever(docs, ids, spec.get("similarity", "cosine"))

        def search(embeddings: list, n: int):
            return r.search(np.vstack(embeddings), n)
        if "query_embeddings" in spec:
            with self._named():
                qm, qids = load_matrix(self._path(spec["query_embeddings"]), self._path(spec["query_ids"]), "query")
            row = {q: i for i, q in enumerate(qids)}
            missing = [q for q in queries if q not in row]
            if missing:
                raise InputError(f"component {name!r}: no query embedding for {', '.join(missing[:10])}",
                                 fix="embed every query of the test set")
            return _Component(one=lambda qid, text: through_ties(search, [qm[row[qid]][None, :]], k)[0])
        enc = self.callable(spec["query_encoder"], "query encoder", 1)
        return _Component(one=lambda qid, text: through_ties(search, [_embedded(enc, qid, text)], k)[0])

    def _plan(self, queries: dict[str, Any], k: int, only: list[str] | None) -> _Plan:
        names = only or list(self.components)
        unknown = [n for n in names if n not in self.components]
        if unknown:
            raise InputError(f"unknown components: {', '.join(unknown)}", fix=f"the config has {', '.join(self.components)}")
        plan = _Plan({n: self._ready(n, queries, k) for n in names}, later_stages=not only)
        if self.rerank and not only:
            spec = self.rerank if isinstance(self.rerank, dict) else {"callable": self.rerank}
            plan.rerank = (self.callable(spec["callable"], "reranker", 2), int(spec.get("depth", DEFAULT_RERANK_DEPTH)))
        return plan

    # -------------------------------------------------------------- stages
    def run(self, queries: dict[str, str], k: int = 100, only: list[str] | None = None) -> dict[str, StageResult]:
        """Each component's stage (``only``: just those), then ``fusion`` and ``fusion+rerank`` when configured."""
        return run_systems([self], queries, k, only)[0]

    def final_stage(self) -> str:
        return f"{self._reranked()}+rerank" if self.rerank else self._reranked()

    def _reranked(self) -> str:
        """The stage a reranker reads: the fusion, else the one component."""
        return "fusion" if self.fusion else next(iter(self.components))

    def _fused(self, stages: dict[str, StageResult], k: int, clock) -> tuple[Any, float]:
        """The fused Run of the component stages, and the seconds ``clock`` saw the fusion take."""
        names = list(self.components)
        runs = [run_of(stages[n].rankings) for n in names]
        w = self.fusion.get("weights")
        if w is not None:                  # one per component (checked with the config)
            w = [float(w[n]) for n in names]
        t0 = clock()
        fused = fuse(runs, str(self.fusion["fusion_method"]), k=int(self.fusion.get("rrf_k", RRF_K)), weights=w,
                     norm=self.fusion.get("norm"), depth=k)
        return fused, clock() - t0


def method_search(method: str, corpus, params=None, index=None, progress: bool = False):
    """``search(texts, n)`` -> each text's n best (doc, score), best first, of a built-in method over
    ``corpus``: ``bm25`` (``params``: :class:`.bm25.BM25Params`; ``index``: its directory) or ``bow``
    (the bag-of-words cosine of :mod:`.bow`).  Rank its answers with :mod:`.ranking`."""
    if method == "bm25":
        return BM25Retriever(corpus, params or BM25Params(), index, progress=progress).retrieve
    bow = BowRetriever(corpus)

    def search(texts, n):
        with Meter("bag-of-words search", len(texts), counts=True) if progress else contextlib.nullcontext() as bar:
            found = []
            for t in texts:
                found.append(bow.retrieve(t, n))
                if bar is not None:
                    bar.advance(1)
            return found
    return search


def run_systems(systems: list[System], queries: dict[str, Any], k: int = 100,
                only: list[str] | None = None) -> list[dict[str, StageResult]]:
    """Every stage of each of ``systems`` on ``queries`` ({qid: text}; the texts may be None when no
    component reads them: :attr:`System.needs_texts`), ``k`` docs a stage: built, warmed up, then
    timed in turns (the module's docstring).  ``only``: just those components of each system."""
    plans = [s._plan(queries, k, only) for s in systems]
    warm = dict(list(queries.items())[:WARMUP_QUERIES])
    _pass(systems, plans, warm, k, _untimed)
    return _pass(systems, plans, queries, k, perf_counter)


def _untimed() -> float:
    return 0.0


def _turns(seq: list, r: int) -> list:
    """``seq`` rotated to start at its r-th item (modulo its length): who goes first changes each query."""
    m = r % len(seq) if seq else 0
    return seq[m:] + seq[:m]


def _pass(systems: list[System], plans: list[_Plan], queries: dict[str, Any], k: int, clock) -> list[dict[str, StageResult]]:
    """One pass of every stage of ``systems`` over ``queries``, timed with ``clock`` (seconds)."""
    out: list[dict[str, StageResult]] = [{} for _ in systems]
    batched = [(i, n) for i, p in enumerate(plans) for n, c in p.components.items() if c.whole]
    per_query = [(i, n) for i, p in enumerate(plans) for n, c in p.components.items() if c.one]
    answers: dict[tuple, dict] = {t: {} for t in per_query}
    lat: dict[tuple, dict] = {t: {} for t in per_query}
    # queries asked, a whole component's all at once and the others' one by one, together
    with Meter(f"asking {len(batched) + len(per_query)} component(s)",
               len(queries) * (len(batched) + bool(per_query)), counts=True) as bar:
        whole = {}
        for i, n in batched:
            whole[i, n] = plans[i].components[n].whole(queries, clock)
            bar.advance(len(queries))
        for r, (qid, text) in enumerate(queries.items()):
            for i, n in _turns(per_query, r):
                with quiet_collector():
                    t0 = clock()
                    answers[i, n][qid] = plans[i].components[n].one(qid, text)
                    lat[i, n][qid] = (clock() - t0) * 1000
            bar.advance(1)
    for i, p in enumerate(plans):
        for n, c in p.components.items():
            if c.whole:
                out[i][n] = whole[i, n]
            else:
                got = answers[i, n]
                listed = c.function is not None
                hits = {q: ranking_of(c.function, got[q], q, k) for q in queries} if listed else got
                out[i][n] = StageResult(trec_ranked(hits, k, listed), lat[i, n])
    _fuse(systems, plans, out, queries, k, clock)
    _rerank(systems, plans, out, queries, clock)
    return out


def _fuse(systems: list[System], plans: list[_Plan], out: list[dict[str, StageResult]], queries: dict[str, Any],
          k: int, clock) -> None:
    """The fusion stages: each system's fusion is one call over all queries, timed in
    :data:`FUSION_ROUNDS` rounds, the systems in turns; its own time is the least a round took (the
    first call at full size pays for memory the later ones reuse), shared evenly over the queries and
    added to its components' latencies."""
    which = [i for i, (s, p) in enumerate(zip(systems, plans)) if s.fusion and p.later_stages]
    timed = {i: [st.latency_ms for st in out[i].values() if st.latency_ms is not None] for i in which}
    fused, took = {}, {}
    for r in range(FUSION_ROUNDS):
        for i in _turns([i for i in which if r == 0 or timed[i]], r):     # no latency to report: once
            with quiet_collector():
                fused[i], seconds = systems[i]._fused(out[i], k, clock)
            took[i] = min(took.get(i, seconds), seconds)
    for i in which:
        own = took[i] * 1000 / max(len(queries), 1)
        lat = {q: sum(t[q] for t in timed[i]) + own for q in queries} if timed[i] else None
        out[i]["fusion"] = StageResult(rankings_of_run(fused[i], list(queries), k), lat)


def _rerank(systems: list[System], plans: list[_Plan], out: list[dict[str, StageResult]], queries: dict[str, Any],
            clock) -> None:
    """The rerank stages, the systems' reranker calls taking turns query by query."""
    which = [i for i, p in enumerate(plans) if p.rerank]
    own: dict[int, dict] = {i: {} for i in which}
    answers: dict[int, dict] = {i: {} for i in which}
    for r, (qid, text) in enumerate(queries.items()):
        for i in _turns(which, r):
            fn, depth = plans[i].rerank
            cands = out[i][systems[i]._reranked()].rankings[qid][:depth]
            with quiet_collector():
                t0 = clock()
                answers[i][qid] = ask(fn, qid, text, cands, role="reranker", most=len(cands))
                own[i][qid] = (clock() - t0) * 1000
    for i in which:
        stage = out[i][systems[i]._reranked()]
        depth = plans[i].rerank[1]
        fn = plans[i].rerank[0]
        hits = {q: ranking_of(fn, answers[i][q], q, len(stage.rankings[q][:depth]), "reranker") for q in queries}
        lat = {q: own[i][q] + (stage.latency_ms[q] if stage.latency_ms else 0.0) for q in queries}
        out[i][f"{systems[i]._reranked()}+rerank"] = StageResult(trec_ranked(hits, depth, listed=True), lat)


def _batch_stage(fn, queries: dict[str, Any], k: int, clock) -> StageResult:
    """A batch function's stage: one call over all query texts, its time shared evenly."""
    with quiet_collector():
        t0 = clock()
        out = ask_batch(fn, list(queries), list(queries.values()), most=k)
        each = (clock() - t0) * 1000 / max(len(queries), 1)
    hits = {q: ranking_of(fn, r, q, k, "batch function") for q, r in zip(queries, out)}
    return StageResult(trec_ranked(hits, k, listed=True), {q: each for q in queries})


def _embedded(enc, qid: str, text: str):
    """A query encoder's embedding of one query text: a matrix of numbers (one row)."""
    import numpy as np


    def work():
        out = enc([text])
        try:
            return np.asarray(out, np.float64)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"the query encoder {function_name(enc)} returned a {type(out).__name__} for query "
                             f"{qid!r}, not a matrix of numbers",
                             fix="return one embedding (a row of numbers) per text") from None
    return call(enc, "query encoder", f"for query {qid!r}", work)


def _rankings_of_run(path: Path, fmt: str | None, qids: list[str], k: int, why: str, held_with: int = 1):
    """The rankings of the run file a component names; ``held_with``: how many such runs the system holds at once,
    each with its share of the memory budget (:data:`~treckit.thresholds.RUN_RANKINGS_SHARE`)."""
    with content_hidden(why), shared(held_with * thresholds.RUN_RANKINGS_SHARE):
        # a file named by a config is no input: its content is never shown
        # a config names no order
        run = read_run(path, fmt, order_option=False, warn=warning_without_content(warn_python, why))
        return rankings_of_run(run, qids, k, str(path))


def latency_summary(ms: dict[str, float]) -> dict[str, float]:
    """Per-query latencies (ms) summed up: p50, p95, mean, and their spread (interquartile range, min, max)."""
    import numpy as np
    a = np.fromiter(ms.values(), np.float64, len(ms))
    q25, q50, q75, q95 = np.percentile(a, [25, 50, 75, 95])
    return {"p50": float(q50), "p95": float(q95), "mean": float(a.mean()), "iqr": float(q75 - q25),
            "min": float(a.min()), "max": float(a.max())}


def load_system(path: PathLike) -> System:
    """A system from a YAML/JSON config file (read as bounded, plain YAML: :mod:`treckit.inputs.bounded`)."""
    data = load_yaml_mapping(path, what="system config", example="components: {bm25: {method: bm25}}")
    return System(data, Path(path).parent, name=str(data.get("name") or Path(path).stem), source=display_name(path))


def as_system(spec, name: str | None = None) -> System:
    if isinstance(spec, System):
        return spec
    if isinstance(spec, dict):
        return System(spec, Path("."), name)
    return load_system(spec)

