"""Compat: the compatibility of a ranking with an ideal ranking (Clarke, Vtyurina & Smucker, "Assessing top-k
preferences", TOIS 2021), at the numbers of ir_measures' compat provider (its only one).

For a query whose run ranks n documents (score descending, ties to the lesser doc id) and whose ideal ranking lists
its L documents judged above 0 (judgment descending, then run score descending, a document not retrieved counting
0.0, then the qrels' line order), with depth = max(n, L):

    RBO = (sum over i < depth of p^i * |top i+1 of the run ∩ top i+1 of the ideal| / (i + 1))
          / (sum over i < depth of p^i)

and Compat = RBO, divided by the ideal's RBO with itself when ``normalize`` (the default) and that is above 0.
p (persistence) defaults to 0.95.  Every sum runs in rank order and p^i is a running product, as the provider's
loop computes them, so the values are its doubles; the loop runs over ranks once for all queries at a time.
"""
from __future__ import annotations

from ..dependencies import deferred
from ..fast.strings import take
from ..ranking.order import sort_key

np = deferred("numpy")

REFERENCE = "ir_measures 0.4 (its compat provider)"


def asked(requests) -> list:
    return [r for r in requests if r.measure.name == "Compat"]


def blocks(qrels, run, base, requests, options) -> dict:
    """{request's key: (Q,) values} of the Compat ``requests`` for the queries of ``base`` (the view built with
    ``ascending_ties``, every judged query in its order; 0 for one the run lacks).  The ideal ranking orders ties
    by the run's scores (as float32 with ``options.float32``, as the ranking reads them)."""
    if not requests:
        return {}
    t = qrels.table
    order: dict[str, list[tuple[str, int]]] = {}
    for q, d, g in zip(*(t.column(c).to_pylist() for c in ("qid", "docid", "grade"))):
        if g > 0:
            order.setdefault(q, []).append((d, g))
    score = sort_key(run.table, "score", options.float32)
    docs = take(run.table.column("docid"), base.row).to_pylist() if base.q.size else []
    mine: dict[int, dict[str, tuple[int, float]]] = {}
    for e, d in enumerate(docs):
        mine.setdefault(int(base.q[e]), {})[d] = (int(base.ascending_pos[e]), float(score[base.row[e]]))
    depth = np.zeros(base.Q, np.int64)
    ideal_len = np.zeros(base.Q, np.int64)
    meets: list[tuple[int, int]] = []            # (query, the first rank whose two tops both hold the document)
    for qi, qid in enumerate(base.qids):
        if base.missing[qi]:
            continue
        ranked = mine.get(qi, {})
        ideal = order.get(qid, [])
        ideal = sorted(range(len(ideal)), key=lambda i: (-ideal[i][1], -ranked.get(ideal[i][0], (0, 0.0))[1], i))
        rel = order.get(qid, [])
        for t_pos, i in enumerate(ideal):
            hit = ranked.get(rel[i][0])
            if hit is not None:
                meets.append((qi, max(hit[0], t_pos)))
        depth[qi] = max(int(base.num_ret[qi]), len(ideal))
        ideal_len[qi] = len(ideal)
    out = {}
    for r in requests:
        opts = dict(r.options)
        out[r.key] = _compat(depth, ideal_len, meets, opts.get("p", 0.95), opts.get("normalize", True))
    return out


def _compat(depth: np.ndarray, ideal_len: np.ndarray, meets: list, p: float, normalize: bool) -> np.ndarray:
    """The provider's ``rbo`` loop, every query at once: ``meets`` gives, per retrieved relevant document, the rank
    from which it is in both tops."""
    q = len(depth)
    longest = int(depth.max(initial=0))
    arrivals = np.zeros((q, longest + 1), np.int64)
    for qi, rank in meets:
        arrivals[qi, rank] += 1
    count = np.zeros(q, np.int64)
    score, best, norm = np.zeros(q), np.zeros(q), np.zeros(q)
    weight = 1.0
    for i in range(longest):
        active = i < depth
        count += arrivals[:, i]
        score += np.where(active, weight * count / (i + 1), 0.0)
        best += np.where(active, weight * np.minimum(i + 1, ideal_len) / (i + 1), 0.0)
        norm += np.where(active, weight, 0.0)
        weight *= p
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(norm > 0, score / np.where(norm > 0, norm, 1.0), 0.0)
        if normalize:
            top = np.where(norm > 0, best / np.where(norm > 0, norm, 1.0), 0.0)
            value = np.where(top > 0.0, value / np.where(top > 0.0, top, 1.0), value)
    return value
