"""RQ, the retrieval-quality acceptance metric.

RQ is the MRR over the labelled queries (those with at least one doc of grade > 0): a query's RR
is 1 / rank of its first relevant doc within its top k (the query's ``topK`` when set, else ``k``,
default 5), else 0.  Recall@k is reported alongside.  The test passes when MRR > threshold
(default 0.6; strictly greater: exactly 0.6 fails).  Without labelled queries RQ is undefined:
``value`` and ``pass`` are None (null), never 0.  Ranks are the engine's (trec_eval's order for a
run; list order for a retrieval function or the baseline).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .load import TestSet
from .measures import per_query_values

DEFAULT_K = 5
DEFAULT_THRESHOLD = 0.6


def rq(test_set: TestSet, run, *, k: int = DEFAULT_K, threshold: float = DEFAULT_THRESHOLD, warn=None) -> dict[str, Any]:
    """The RQ report for ``run`` (a Run) on ``test_set``; the evaluation's warnings go to ``warn`` (None:
    InputWarning)."""
    labelled = [q for q in test_set.queries if any(d.grade > 0 for d in q.relevant_docs)]
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
            "k": k, "threshold": threshold,
            "recall_at_k": float(np.mean([p["recall_at_k"] for p in per_query])) if per_query else None,
            "num_labeled": len(per_query), "per_query": per_query}


def baseline_run(test_set: TestSet, corpus, k: int):
    """The deterministic bag-of-words baseline's run over ``corpus`` for the test set's queries."""
    from ..retrieval.bow import BowRetriever
    from .runner import run_from_rankings
    depth = max([k] + [q.topK or 0 for q in test_set.queries])
    bow = BowRetriever(corpus)
    return run_from_rankings({q.query_id: bow.retrieve(q.query_text, depth) for q in test_set.queries}, "bow")
