"""RQ, the retrieval-quality acceptance metric, as its metric document defines it.

RQ is the MRR over the labelled queries (those with at least one doc of grade > 0): a query's RR
is 1 / rank of its first relevant doc within its top k (the query's ``topK`` when set, else ``k``,
default 5), else 0.  Recall@k is reported alongside.  The test passes when MRR > threshold
(default 0.6; strictly greater: exactly 0.6 fails).  Unlabelled queries (no doc of grade > 0, or
no judgment at all: read with ``load_test_set(..., allow_unlabeled=True)``) are skipped, listed and
counted.  Without labelled queries RQ is skipped: ``value`` and ``pass`` are None (null), never 0.

Ranks are the engine's: trec_eval's order for a run (score descending, ties by doc id descending).
The bag-of-words baseline's list (cosine descending, ties in corpus order) becomes a run once, here,
with rank-derived scores (:func:`treckit.retrieval.ranking.run_from_rankings`), so the engine ranks it
in list order.
"""
from __future__ import annotations

from typing import Any

from ..dependencies import deferred
from ..console.errors import InputError, finite_number, shown_number
from ..measures.readable import MAX_CUTOFF
from ..measures.definitions import Definition
from ..retrieval.bow import BowRetriever
from ..retrieval.ranking import run_from_rankings
from .load import TestSet
from .measures import per_query_values

np = deferred("numpy")

DEFAULT_K = 5
DEFAULT_THRESHOLD = 0.6
RUN_RANKING = "trec_eval"             # keys of treckit.measures.definitions.RANKINGS
BOW_RANKING = "bow-corpus-order"


def check_threshold(threshold) -> None:
    """The RQ threshold: a finite number (NaN would fail every run, whatever its MRR)."""
    if not finite_number(threshold):
        raise InputError(f"the RQ threshold must be a finite number, got {repr(threshold)[:40]}",
                         fix="e.g. --threshold 0.6 (RQ passes when MRR@k is above it)")


def check_k(k) -> None:
    """RQ's cutoff: a whole number from 1 to the largest cutoff a test set takes (a query's topK has the same bound)."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_CUTOFF:
        raise InputError(f"the RQ cutoff k must be a whole number from 1 to {MAX_CUTOFF}, got {shown_number(k)[:40]}",
                         fix="e.g. --k 5 (a cutoff past a ranking's end counts every document)")


def rq(test_set: TestSet, run, *, k: int = DEFAULT_K, threshold: float = DEFAULT_THRESHOLD,
       ranking: str = RUN_RANKING, warn=None) -> dict[str, Any]:
    """The RQ report for ``run`` (a Run) on ``test_set``; ``ranking`` says how the run ranks its docs
    (:data:`BOW_RANKING` for :func:`baseline_run`); the evaluation's warnings go to ``warn`` (None:
    InputWarning)."""
    check_threshold(threshold)
    check_k(k)
    labelled = [q for q in test_set.queries if any(d.grade > 0 for d in q.relevant_docs)]
    unlabelled = [q.query_id for q in test_set.queries if not any(d.grade > 0 for d in q.relevant_docs)]
    cut = {q.query_id: q.topK or k for q in labelled}
    values: dict[int, dict[str, dict[str, float]]] = {}
    if labelled:
        qrels = test_set.to_qrels()
        for kk in sorted(set(cut.values())):
            values[kk] = per_query_values(qrels, run, [f"mrr_at_{kk}", f"recall_at_{kk}"], warn=warn)
    per_query = []
    for q in labelled:
        kk = cut[q.query_id]
        rr = values[kk][f"mrr_at_{kk}"][q.query_id]
        per_query.append({"qid": q.query_id, "query_type": q.query_type, "k": kk, "rr": rr,
                          "first_relevant_rank": int(round(1 / rr)) if rr > 0 else None,
                          "recall_at_k": values[kk][f"recall_at_{kk}"][q.query_id]})
    value = float(np.mean([p["rr"] for p in per_query])) if per_query else None
    return {"metric": "RQ", "value": value, "pass": (value > threshold) if value is not None else None,
            "k": k, "threshold": threshold, "ranking": ranking,
            "definitions": {n: d.to_dict() for n, d in definitions(k, ranking, any(cut[q] != k for q in cut)).items()},
            "recall_at_k": float(np.mean([p["recall_at_k"] for p in per_query])) if per_query else None,
            "num_labeled": len(per_query), "num_unlabeled": len(unlabelled), "unlabeled": unlabelled,
            "per_query": per_query}


def definitions(k: int, ranking: str, own_cutoffs: bool) -> dict:
    """The definitions of RQ's two numbers (``own_cutoffs``: some query sets its own ``topK``)."""
    params = "a query's topK replaces k" if own_cutoffs else ""
    return {"value": Definition("value", "recip_rank", k, None, 1, params, "labelled", ranking),
            "recall_at_k": Definition("recall_at_k", "recall", k, None, 1, params, "labelled", ranking)}


def baseline_run(test_set: TestSet, corpus, k: int):
    """The deterministic bag-of-words baseline's run over ``corpus`` for the test set's queries: each
    query's list (ties in corpus order) as rank-derived scores."""
    depth = max([k] + [q.topK or 0 for q in test_set.queries])
    bow = BowRetriever(corpus)
    return run_from_rankings({q.query_id: bow.retrieve(q.query_text, depth) for q in test_set.queries}, "bow")
