"""Where a component's answers become rankings: the one rule every retrieval stage is ranked by.

A stage's ranking is trec_eval's order of its scores (:mod:`treckit.ranking.order`: score descending,
then doc id descending on its written form, the escaped id), top ``k`` -- the order ``treckit eval``
gives the run the stage is written to, so a stage measured in memory and its run measured from the
file agree.  Every stage ends in :func:`rankings_of_run`: BM25, bag-of-words and dense answers through
:func:`trec_ranked`, run files and fusion directly; a function's answer (a ``callable`` component, a reranker) is ranked by its list
order, which is turned into scores n, n-1, ..., 1 once, here (``listed=True``, by
:func:`run_from_rankings`), so its own scores are not used for ranking or
fusion.

Which documents make the top ``k`` is trec_eval's rule too: :func:`through_ties` asks a component
for more than ``k`` until every document tied with the ``k``-th is in, so the component's own order
among equal scores (bm25s' selection, the bag-of-words corpus order, the dense row order) decides
nothing.
"""
from __future__ import annotations

from typing import Callable, Sequence

from ..model import Run
from ..ranking.judged import duplicate_doc
from ..ranking.order import run_ranks

Hits = list[tuple[str, float]]


def through_ties(search: Callable[[list, int], Sequence[Hits]], items: list, k: int) -> list[Hits]:
    """``search(items, n)`` gives, for each item (a query text or embedding), its ``n`` best (doc, score)
    best first, fewer when no more score.  Each item's answer is asked for with one more than ``k``,
    and again with twice as many while its last one still ties with its ``k``-th: then every
    document tied with the ``k``-th is in the answer."""
    out: list[Hits] = [[] for _ in items]
    pending, n = list(range(len(items))), k + 1
    while pending:
        got = search([items[i] for i in pending], n)
        again = []
        for i, hits in zip(pending, got):
            if len(hits) < n or hits[-1][1] < hits[k - 1][1]:
                out[i] = list(hits)
            else:
                again.append(i)
        pending, n = again, 2 * n
    return out


def trec_ranked(hits: dict[str, Hits], k: int, listed: bool = False) -> dict[str, Hits]:
    """Each query's (doc, score) pairs as its ranking: trec_eval's order of the scores, top ``k``.
    ``listed``: the list order is the ranking (a function's answer), its scores become n, ..., 1."""
    run = run_from_rankings(hits, "component") if listed else run_of(hits)
    return rankings_of_run(run, list(hits), k)


def run_of(rankings: dict[str, Hits], tag: str = "component"):
    """Rankings as a Run with their scores (in trec_eval's order of them, what the ranking is)."""
    rows = [(q, d, float(s)) for q, ranking in rankings.items() for d, s in ranking]
    return Run.from_columns([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], tag=tag)


def rankings_of_run(run, qids: list[str], k: int, source: str | None = None) -> dict[str, Hits]:
    """Per-query rankings of a Run in trec_eval's order, top ``k``, for ``qids`` (in that order).  A doc listed
    twice for one of ``qids`` is refused, as trec_eval refuses it (``source`` names the run)."""
    t = run.table
    out: dict[str, Hits] = {q: [] for q in qids}
    rows = sorted(zip(t.column("qid").to_pylist(), run_ranks(run).tolist(), t.column("docid").to_pylist(),
                      t.column("score").to_pylist()))
    seen: set[tuple[str, str]] = set()
    for q, r, d, s in rows:
        if q in out:
            if (q, d) in seen:
                raise duplicate_doc(d, q, source)
            seen.add((q, d))
            if r < k:
                out[q].append((d, s))
    return out


def run_from_rankings(rankings: dict[str, list[tuple[str, float | None]]], tag: str = "testset"):
    """A Run whose scores are rank-derived (n, n-1, ..., 1), so every tool ranks it in list order."""
    q, d, s, r = [], [], [], []
    for qid, ranking in rankings.items():
        n = len(ranking)
        for i, (doc, _) in enumerate(ranking):
            q.append(qid), d.append(doc), s.append(float(n - i)), r.append(i + 1)
    return Run.from_columns(q, d, s, r, tag)
