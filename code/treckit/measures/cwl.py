"""The C/W/L family as cwl-eval computes it for ir_measures' names: INST, INSQ, RBP, BPM, SDCG and NERR8-11
(Moffat et al., "C/W/L framework", and Azzopardi et al., ICTIR 2021, for NERR).

A user reads rank i and continues to rank i + 1 with probability C_i (each measure defines its C vector); the
weight of rank i is W_i = prod_{j<i} C_j / sum_k prod_{j<k} C_j, and the measure is the expected utility per
document, sum_i W_i * g_i.  As ir_measures' cwl_eval provider sets it up:

* gains: a judgment is first clipped below at 0; measures with ``min_rel``/``max_rel`` clip it into that range
  and scale it to (g - min_rel) / (max_rel - min_rel); RBP takes ``rel`` and counts 1 at or above it, else 0;
  a document without a judgment gains 0;
* every ranking is cut or padded (gain 0, cost 1) to 1000 ranks (cwl-eval's max_n), and every document costs 1;
* documents are ranked by score descending, ties in the order the run lists them; queries without judgments
  get no value.

Each kernel follows cwl-eval's operations, so the values are its doubles: squares through the C library's pow
as cwl-eval's Python loops take them (``np.float_power``: numpy's ``**`` and ``np.power`` square by multiplying, a last bit
apart now and then), the weights' sum and the dot product through the same numpy calls.
"""
from __future__ import annotations

from ..dependencies import deferred

np = deferred("numpy")


MAX_N = 1000
NAMES = ("INST", "INSQ", "RBP", "BPM", "SDCG", "NERR8", "NERR9", "NERR10", "NERR11")


def gains(grades, *, rel: int | None = None, min_rel: int | None = None, max_rel: int | None = None) -> np.ndarray:
    """Judgments to gains as ir_measures hands them to cwl-eval: clipped below at 0, then either binary at
    ``rel`` or clipped into [min_rel, max_rel] and scaled to [0, 1]."""
    g = np.maximum(np.asarray(grades, dtype=np.float64), 0)
    if rel is not None:
        return (g >= rel).astype(np.float64)
    g = np.minimum(np.maximum(g, min_rel), max_rel)
    return (g - min_rel) / (max_rel - min_rel)


def gain_vector(ranked: np.ndarray) -> np.ndarray:
    """A ranking's gains cut or padded with 0 to :data:`MAX_N` ranks."""
    ranked = np.asarray(ranked, dtype=np.float64)[:MAX_N]
    return np.pad(ranked, (0, MAX_N - len(ranked)), "constant", constant_values=0.0)


def c_vector(name: str, g: np.ndarray, params: dict) -> np.ndarray:
    """The continuation probabilities of measure ``name`` over the gain vector ``g`` (cwl-eval's c_vector)."""
    n = len(g)
    rank = np.arange(1, n + 1, dtype=np.float64)
    if name == "INST":
        t = params.get("T", 1.0)
        left = t - np.cumsum(g)
        return np.float_power((rank + t + left - 1.0) / (rank + t + left), 2.0)
    if name == "INSQ":
        t = params.get("T", 1.0)
        return np.float_power((rank + (2.0 * t) - 1.0) / (rank + (2.0 * t)), 2.0)
    if name == "RBP":
        return np.dot(np.ones(n), params.get("p", 0.8))
    if name == "BPM":
        total_gain, total_cost = np.cumsum(g), np.cumsum(np.ones(n))
        c = np.zeros(n)
        c[:_first_false(total_gain < params.get("T", 1.0))] = 1.0
        c[_first_false(total_cost < params["cutoff"]):] = 0.0
        return c
    if name == "SDCG":
        k = params["cutoff"]
        c = np.zeros(n)
        i = np.arange(1, min(k - 1, n) + 1, dtype=np.float64)
        c[:len(i)] = [_log2_ratio(x) for x in i]
        return c
    if name in ("NERR8", "NERR9"):
        c = np.zeros(n)
        top = max(0, min(n, params["cutoff"] - 1))
        c[:top] = 1 - g[:top] if name == "NERR8" else (1.0 * rank[:top] / (rank[:top] + 1.0)) * (1.0 - g[:top])
        return c
    if name == "NERR10":
        return params.get("p", 0.9) * (1 - g)
    if name == "NERR11":
        t = params.get("T", 1.0)
        return np.float_power((rank + (2.0 * t) - 1.0) / (rank + (2.0 * t)), 2.0) * (1.0 - g)
    raise ValueError(f"not a C/W/L measure: {name}")


def _first_false(mask: np.ndarray) -> int:
    """How many leading entries of ``mask`` are true (cwl-eval's ``while ... and cond: i += 1``)."""
    stop = np.flatnonzero(~mask)
    return int(stop[0]) if len(stop) else len(mask)


def _log2_ratio(i: float) -> float:
    import math
    return math.log(i + 1, 2.0) / math.log(i + 2, 2.0)


def expected_utility(name: str, ranked_gains, params: dict) -> float:
    """The measure's value for one ranking (gains in rank order): cwl-eval's W vector dotted with the gains."""
    g = gain_vector(ranked_gains)
    c = c_vector(name, g, params)
    if name in ("INST", "NERR8", "NERR9", "NERR10", "NERR11") and (g.min() < 0.0 or g.max() > 1.0):
        raise ValueError(f"{name} needs gains from 0 to 1")
    prod = np.pad(np.cumprod(c[0:-1]), (1, 0), "constant", constant_values=1.0)
    first = np.divide(1.0, np.sum(prod))
    w = np.append(first, np.multiply(prod[1:len(prod)], first))
    return float(np.sum(np.dot(w, g)))


def evaluate(qrels_rows, run: dict, name: str, params: dict) -> dict[str, float]:
    """{query: value} of measure ``name`` with ir_measures' parameters ``params`` (``rel`` for RBP; ``min_rel``
    (default 0) and ``max_rel`` for the others; ``T``, ``p``, ``cutoff`` as each takes them), for the queries of
    ``run`` ({query: {doc: score}}, in the order its documents are listed) that have judgments.  ``qrels_rows``:
    (query, doc, judgment); a document judged twice keeps its last judgment."""
    binary = name == "RBP"
    judged: dict[str, dict] = {}
    for q, d, g in qrels_rows:
        judged.setdefault(q, {})[d] = g
    out = {}
    for q, scored in run.items():
        docs = judged.get(q)
        if docs is None:
            continue
        ranked = [d for d, _ in sorted(scored.items(), key=lambda x: x[1], reverse=True)]
        grades = np.array([docs.get(d, 0) for d in ranked], dtype=np.float64)
        if binary:
            g = gains(grades, rel=params["rel"])
        else:
            g = gains(grades, min_rel=params.get("min_rel", 0), max_rel=params["max_rel"])
        g[[d not in docs for d in ranked]] = 0.0
        out[q] = expected_utility(name, g, params)
    return out


# ------------------------------------------------------------------ by name, on the ranked-and-judged view
def by_name(v, params: tuple = (), *, measure: str, **settings) -> np.ndarray:
    """Measure ``measure`` (one of :data:`NAMES`) with ir_measures' parameters ``settings`` for each query of the
    view ``v`` (:class:`~treckit.ranking.judged.RankedJudged`, built with ``listed_ties``: documents ranked by
    score descending, ties in the run's line order, as ir_measures ranks for cwl-eval).  A judged document gains
    by its judgment (clipped below at 0, as :func:`gains`); a retrieved document outside the qrels gains 0."""
    if v.listed_pos is None:
        raise RuntimeError("the C/W/L measures need the view's line-order ranks (rank_and_judge(listed_ties=True))")
    grades = np.maximum(v.rel, 0)
    if measure == "RBP":
        g = gains(grades, rel=settings["rel"])
    else:
        g = gains(grades, min_rel=settings["min_rel"], max_rel=settings["max_rel"])
    matrix = np.zeros((v.Q, MAX_N))
    keep = v.listed_pos < MAX_N
    matrix[v.q[keep], v.listed_pos[keep]] = g[keep]
    return np.array([expected_utility(measure, row, settings) for row in matrix])
