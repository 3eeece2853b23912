"""Expected values over the random orders of tie groups, computed exactly (closed forms or exact sums over the
groups, never by sampling; McSherry & Najork, "Computing Information Retrieval Performance Measures Efficiently in
the Presence of Tied Scores", ECIR 2008, give P@k, recall@k, AP, DCG/nDCG and RR).

Notation, per tie group (:mod:`.layout`): ``s`` its start, ``n`` its size, ``m`` its retrieved slots, ``r`` its
relevant docs, ``A`` the relevant docs of the groups above it.  Each function takes the :class:`Layout` and the
measure's kernel parameters and options, and gives (V, columns) values, one row per virtual query.
"""
from __future__ import annotations

from typing import Callable

from ...dependencies import deferred
from ...fast.groups import expand_ranges
from ..gains import entry_gains, gain_pairs, level_gains
from ..ndcg import cut_gains
from ..rbp import persistence, rbp_gains
from ..segments import at_cutoff, discounted_prefix, ideal_matrix, powers, safe_div
from .layout import Layout, hypergeometric_pmf, run_starts

np = deferred("numpy")


class NoExpectation(Exception):
    """A measure whose expected value is not computed on these inputs, and why (the caller names the measure)."""


# ---------------------------------------------------------------- distributions and sums over ranks
def hypergeometric_sf(j, population, marked, draws) -> np.ndarray:
    """P(X > j) for X hypergeometric as in :func:`.layout.hypergeometric_pmf`: the pmf summed over the support
    above j (exactly 1 when the whole support is)."""
    j, N, K, n = np.broadcast_arrays(*(np.asarray(a, np.int64) for a in (j, population, marked, draws)))
    low, hi = np.maximum(0, n - (N - K)), np.minimum(K, n)
    lo = np.maximum(j + 1, low)
    count = np.maximum(hi - lo + 1, 0)
    which, x = expand_ranges(np.arange(j.size), lo, lo + count)
    out = np.zeros(j.size)
    np.add.at(out, which, hypergeometric_pmf(x, N[which], K[which], n[which]))
    return np.where(j < low, 1.0, out)


def prefix_sums(values: np.ndarray) -> np.ndarray:
    """F with F[p] = values[0] + ... + values[p-1]."""
    return np.concatenate(([0.0], np.cumsum(values)))


def positions(lay: Layout) -> int:
    """Ranks any virtual query retrieves, plus one."""
    return int(lay.num_ret.max()) + 1 if lay.V else 1


def discount_sums(lay: Layout) -> np.ndarray:
    """Prefix sums of 1/log2(rank0 + 2) over 0-based ranks."""
    return prefix_sums(1.0 / np.log2(np.arange(positions(lay)) + 2.0))


def linear_expectation(lay: Layout, group_weight: np.ndarray, sums: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """(V,) E[sum over docs of w * f(rank) for ranks < limit]: ``group_weight`` the sum of w over each group's
    docs, ``sums`` the prefix sums F of f over ranks, ``limit`` (V,) at most the docs retrieved.  Each doc is at
    each of its group's n places with probability 1/n: w (F[min(s + m, limit)] - F[s]) / n."""
    end = np.minimum(lay.group_start + lay.group_slots, limit[lay.group_query])
    end = np.maximum(end, lay.group_start)
    return lay.per_query(group_weight * (sums[end] - sums[lay.group_start]) / lay.group_size)


class Count:
    """The distribution of the number of docs of a class (``mask``) ranked above ``cut`` (V,), in every
    virtual query: a sure count from the groups above the cut, plus a hypergeometric draw from the group the
    cut falls in (its n docs, the class's K of them, the cut - s places above the cut)."""

    def __init__(self, lay: Layout, mask: np.ndarray, cut: np.ndarray) -> None:
        cut = np.minimum(np.asarray(cut, np.int64), lay.num_ret)
        in_group = lay.group_counts(mask)
        group_cut = cut[lay.group_query]
        whole = lay.group_start + lay.group_size <= group_cut
        self.sure = lay.per_query(np.where(whole, in_group, 0)).astype(np.int64)
        inside = (lay.group_start < group_cut) & ~whole & (in_group > 0)
        self.virtual = lay.group_query[inside]
        self.population, self.marked = lay.group_size[inside], in_group[inside]
        self.draws = group_cut[inside] - lay.group_start[inside]
        self.V = lay.V

    def expect(self, f: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
        """(V,) E[f(v, count)] (``f`` vectorized over virtual queries and counts)."""
        out = np.asarray(f(np.arange(self.V), self.sure), np.float64).copy()
        if self.virtual.size:
            lo = np.maximum(0, self.draws - (self.population - self.marked))
            hi = np.minimum(self.marked, self.draws)
            which, x = expand_ranges(np.arange(self.virtual.size), lo, hi + 1)
            p = hypergeometric_pmf(x, self.population[which], self.marked[which], self.draws[which])
            virtual = self.virtual[which]
            values = np.asarray(f(virtual, self.sure[virtual] + x), np.float64)
            out[self.virtual] = 0.0
            np.add.at(out, virtual, p * values)
        return out


def columns(blocks) -> np.ndarray:
    return np.stack(blocks, axis=1)


# ---------------------------------------------------------------- functions of a count
def _at_cutoffs(lay: Layout, mask: np.ndarray, cutoffs, value) -> np.ndarray:
    """One column per cutoff k: E[value(k, v, count of ``mask`` docs in the top k)]."""
    return columns([Count(lay, mask, np.full(lay.V, k)).expect(lambda v, x, k=k: value(k, v, x)) for k in cutoffs])


def _retrieved(lay: Layout, mask: np.ndarray, value) -> np.ndarray:
    """E[value(v, count of ``mask`` docs retrieved)] as one column."""
    return Count(lay, mask, lay.num_ret).expect(value)[:, None]


def _ex_Rprec(lay: Layout, params, **options):
    R = lay.num_rel
    look = np.minimum(lay.num_ret, R)
    return Count(lay, lay.isrel, look).expect(lambda v, x: np.where(look[v] > 0, safe_div(x, R[v]), 0.0))[:, None]


def _ex_Rprec_mult(lay: Layout, params, **options):
    out = []
    for multiple in params:
        cut = np.floor(multiple * lay.num_rel + 0.9).astype(np.int64)
        out.append(Count(lay, lay.isrel, cut).expect(
            lambda v, x, cut=cut: np.where(cut[v] > 0, safe_div(x, cut[v]), 0.0)))
    return columns(out)


def _ex_Judged(lay: Layout, params, **options):
    cutoff = options.get("cutoff")
    shown = lay.num_ret if cutoff is None else np.minimum(lay.num_ret, cutoff)
    return Count(lay, np.ones(lay.rel.size, bool), shown).expect(lambda v, x: safe_div(x, shown[v]))[:, None]


def _ex_set_F(lay: Layout, params, **options):
    beta, ret, R = params[0], lay.num_ret, lay.num_rel

    def f(v, x):
        precision, recall = safe_div(x, ret[v]), safe_div(x, R[v])
        return np.where(x > 0, safe_div((beta + 1.0) * precision * recall, beta * precision + recall), 0.0)
    return _retrieved(lay, lay.isrel, f)


def _ex_utility(lay: Layout, params, **options):
    a, b, c, d = params
    ret, R = lay.num_ret, lay.num_rel
    return _retrieved(lay, lay.isrel, lambda v, x: a * x + b * (ret[v] - x) + c * (R[v] - x)
                      + d * (lay.num_docs_in_coll + x - ret[v] - R[v]))


def _judged(lay: Layout) -> np.ndarray:
    return lay.rel >= 0


def _relative(lay: Layout, v, x, k):
    R = lay.num_rel[v]
    return np.where(R > 0, safe_div(x, np.minimum(k, R)), 0.0)


def _set_map(lay: Layout, v, x):
    return np.where(lay.num_rel[v] > 0, safe_div(x.astype(np.float64) * x,
                                                 lay.num_ret[v].astype(np.float64) * lay.num_rel[v]), 0.0)


# each measure that is a function of how many docs of a class rank above a cut: its expected value
COUNT_MEASURES: dict[str, Callable] = {
    "num_q": lambda lay, params, **o: np.ones((lay.V, 1)),
    "num_ret": lambda lay, params, **o: lay.num_ret.astype(np.float64)[:, None],
    "num_rel": lambda lay, params, **o: lay.num_rel.astype(np.float64)[:, None],
    "num_rel_ret": lambda lay, params, **o: _retrieved(lay, lay.isrel, lambda v, x: x.astype(np.float64)),
    "num_nonrel_judged_ret": lambda lay, params, **o: _retrieved(lay, _judged(lay) & ~lay.isrel,
                                                                 lambda v, x: x.astype(np.float64)),
    "P": lambda lay, params, **o: _at_cutoffs(lay, lay.isrel, params, lambda k, v, x: x / float(k)),
    "recall": lambda lay, params, **o: _at_cutoffs(lay, lay.isrel, params,
                                                   lambda k, v, x: safe_div(x, lay.num_rel[v])),
    "relative_P": lambda lay, params, **o: _at_cutoffs(lay, lay.isrel, params,
                                                       lambda k, v, x: _relative(lay, v, x, k)),
    "success": lambda lay, params, **o: _at_cutoffs(lay, lay.isrel, params,
                                                    lambda k, v, x: (x > 0).astype(np.float64)),
    "Rprec": _ex_Rprec,
    "Rprec_mult": _ex_Rprec_mult,
    "set_P": lambda lay, params, **o: _retrieved(lay, lay.isrel, lambda v, x: safe_div(x, lay.num_ret[v])),
    "set_recall": lambda lay, params, **o: _retrieved(lay, lay.isrel, lambda v, x: safe_div(x, lay.num_rel[v])),
    "set_relative_P": lambda lay, params, **o: _retrieved(lay, lay.isrel,
                                                          lambda v, x: _relative(lay, v, x, lay.num_ret[v])),
    "set_map": lambda lay, params, **o: _retrieved(lay, lay.isrel, lambda v, x: _set_map(lay, v, x)),
    "set_F": _ex_set_F,
    "utility": _ex_utility,
    "unj": lambda lay, params, **o: _at_cutoffs(lay, _judged(lay), params,
                                                lambda k, v, x: (np.minimum(lay.num_ret[v], k) - x) / float(k)),
    "Judged": _ex_Judged,
}


# ---------------------------------------------------------------- average precision, reciprocal rank
def ex_map(lay: Layout, params, **options):
    return safe_div(_ap_sum(lay, lay.num_ret), lay.num_rel)[:, None]


def ex_map_cut(lay: Layout, cutoffs, **options):
    return columns([safe_div(_ap_sum(lay, np.minimum(lay.num_ret, k)), lay.num_rel) for k in cutoffs])


def _harmonic(lay: Layout) -> np.ndarray:
    """H with H[x] = 1 + 1/2 + ... + 1/x."""
    return prefix_sums(1.0 / np.arange(1, positions(lay) + 1))


def _ap_sum(lay: Layout, cut: np.ndarray) -> np.ndarray:
    """(V,) E[sum over relevant docs ranked above ``cut`` of (relevant docs up to it) / rank] (McSherry &
    Najork): a relevant doc at the i-th place of its group (1-based, uniform) has, on average,
    (i-1)(r-1)/(n-1) of the group's other r-1 relevant docs above it, and A relevant docs above the group;
    over the group's k places above the cut, with H the harmonic sums and dH = H[s + k] - H[s]:
    r/n ((A + 1) dH + (r - 1)/(n - 1) (k - (s + 1) dH))."""
    H = _harmonic(lay)
    r = lay.group_counts(lay.isrel)
    A = lay.above(r)
    s, n = lay.group_start, lay.group_size
    k = np.clip(cut[lay.group_query] - s, 0, lay.group_slots)
    dH = H[s + k] - H[s]
    inner = np.where(n > 1, (r - 1) / np.maximum(n - 1, 1) * (k - (s + 1) * dH), 0.0)
    return lay.per_query(np.where(r > 0, r / n * ((A + 1) * dH + inner), 0.0))


def ex_recip_rank(lay: Layout, params, cutoff: int | None = None, **options):
    """E[1 / rank of the first relevant doc]: in the first group holding relevant docs (r of n, at s), the first
    of them is at its group's i-th place with probability C(n-i, r-1) / C(n, r)."""
    limit = lay.num_ret if cutoff is None else np.minimum(lay.num_ret, cutoff)
    r = lay.group_counts(lay.isrel)
    holding = np.flatnonzero(r > 0)
    first = holding[run_starts(lay.group_query[holding])]
    s, n, rr = lay.group_start[first], lay.group_size[first], r[first]
    top = np.clip(np.minimum(n - rr + 1, limit[lay.group_query[first]] - s), 0, None)
    which, i = expand_ranges(np.arange(first.size), np.ones(first.size, np.int64), top + 1)
    p = hypergeometric_pmf(np.zeros(which.size, np.int64), n[which], rr[which], i - 1) * rr[which] / (n[which] - i + 1)
    out = np.zeros(lay.V)
    np.add.at(out, lay.group_query[first][which], p / (s[which] + i))
    return out[:, None]


# ---------------------------------------------------------------- gains and discounts
def dcg_gains(lay: Layout, name: str, params, options) -> np.ndarray:
    """(E,) the gain each entry has for a DCG-family measure, as the engine's kernel gives it."""
    if name == "ndcg_cut":
        return cut_gains(lay, options.get("gains", ()), options.get("exponential", False))[1]
    if name in ("rbp", "rbp_resid"):
        return rbp_gains(lay, params)
    return entry_gains(lay, gain_pairs(params))


def ex_ndcg(lay: Layout, pairs, **options):
    custom = gain_pairs(pairs)
    lv = level_gains(lay, custom)
    dcg = linear_expectation(lay, lay.group_sums(entry_gains(lay, custom, lv)), discount_sums(lay), lay.num_ret)
    ideal = ideal_matrix(lay.rel_levels, lv) if lv.size else np.zeros((lay.V, 0))
    idcg = discounted_prefix(ideal)[:, -1] if ideal.shape[1] else np.zeros(lay.V)
    return np.where(idcg > 0, safe_div(dcg, idcg), 0.0)[:, None]


def ex_ndcg_cut(lay: Layout, cutoffs, exponential: bool = False, gains: tuple = (), **options):
    lv, g = cut_gains(lay, gains, exponential)
    ideal = discounted_prefix(ideal_matrix(lay.rel_levels, lv)) if lv.size else np.zeros((lay.V, 0))
    sums, group_gain = discount_sums(lay), lay.group_sums(g)
    out = []
    for k in cutoffs or (None,):
        dcg = linear_expectation(lay, group_gain, sums, lay.num_ret if k is None else np.minimum(lay.num_ret, k))
        idcg = at_cutoff(ideal, np.iinfo(np.int64).max if k is None else k)
        out.append(np.where(idcg > 0, safe_div(dcg, idcg), dcg))
    return columns(out)


def ex_rbp(lay: Layout, pairs, **options):
    p = persistence(pairs)
    sums = prefix_sums(powers(p, positions(lay) - 1))
    return ((1.0 - p) * linear_expectation(lay, lay.group_sums(rbp_gains(lay, pairs)), sums, lay.num_ret))[:, None]


def ex_rbp_resid(lay: Layout, pairs, **options):
    """rbp_resid = [some retrieved doc unjudged] p^num_ret + (1-p) sum of p^rank over unjudged retrieved ranks."""
    p = persistence(pairs)
    power = powers(p, positions(lay) - 1)
    sums = prefix_sums(power)
    judged = lay.rel >= 0
    ret = lay.num_ret
    unjudged_sum = sums[ret] - linear_expectation(lay, lay.group_counts(judged).astype(np.float64), sums, ret)
    some = Count(lay, judged, ret).expect(lambda v, x: (x < ret[v]).astype(np.float64))
    return np.where(ret > 0, some * power[ret] + (1 - p) * unjudged_sum, 0.0)[:, None]


def ex_Rndcg(lay: Layout, pairs, **options):
    """Linear in the run's DCG above fixed ranks (where the ideal ranking steps down a grade, and its end)."""
    custom = gain_pairs(pairs)
    lv = level_gains(lay, custom)
    group_gain = lay.group_sums(entry_gains(lay, custom, lv))
    ideal = ideal_matrix(lay.rel_levels, lv) if lv.size else np.zeros((lay.V, 0))
    iprefix = discounted_prefix(ideal)
    n_ideal = (ideal > 0).sum(axis=1)
    V, W = ideal.shape
    sums = discount_sums(lay)
    padded = np.concatenate([ideal, np.zeros((V, 1))], axis=1)
    steps = padded[:, 1:] != padded[:, :-1]
    total = np.zeros(V)
    changes = steps.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        for col in range(W):
            on = steps[:, col]
            if not on.any():
                continue
            run_dcg = linear_expectation(lay, group_gain, sums, np.minimum(col + 1, lay.num_ret))
            total += np.where(on, run_dcg / iprefix[:, col], 0.0)
        end = (lay.num_ret > n_ideal + 1) & (n_ideal > 0)
        if end.any():
            run_dcg = linear_expectation(lay, group_gain, sums, lay.num_ret)
            total += np.where(end, run_dcg / iprefix[np.arange(V), np.maximum(n_ideal - 1, 0)], 0.0)
            changes = changes + end
    return np.where((lay.num_rel > 0) & (changes > 0), safe_div(total, changes), 0.0)[:, None]


# ---------------------------------------------------------------- a relevant doc's rank among a class
def rank_among(lay: Layout, counted: np.ndarray, counted_above: np.ndarray,
               f: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """(V,) E[sum over retrieved relevant docs d of f(v, c(d))], c(d) the docs of a class ranked above d:
    ``counted`` (G,) the class's docs in each group (w), ``counted_above`` (G,) those above the group.  Among
    itself and its group's w docs of the class, a relevant doc's place is uniform: j of them above it, j = 0..w,
    each with probability 1/(w+1); it is retrieved when at least j+1 of those w+1 docs fall in the group's m
    retrieved slots (hypergeometric: n docs, w+1 marked, m drawn).  So, with r relevant docs in the group:
    r/(w+1) sum over j of P(retrieved | j) f(v, counted_above + j)."""
    relevant = lay.group_counts(lay.isrel)
    groups = np.flatnonzero(relevant > 0)
    class_docs = counted[groups]
    which, above_it = expand_ranges(np.arange(groups.size), np.zeros(groups.size, np.int64), class_docs + 1)
    group = groups[which]
    retrieved = hypergeometric_sf(above_it, lay.group_size[group], class_docs[which] + 1, lay.group_slots[group])
    virtual = lay.group_query[group]
    values = np.asarray(f(virtual, counted_above[group] + above_it), np.float64)
    out = np.zeros(lay.V)
    np.add.at(out, virtual, relevant[group] / (class_docs[which] + 1.0) * retrieved * values)
    return out


def ex_bpref(lay: Layout, params, **options):
    R = lay.num_rel
    nonrel = (lay.rel >= 0) & ~lay.isrel
    num_nonrel = lay.rel_levels[:, lay.grades < lay.level].sum(axis=1)
    in_group = lay.group_counts(nonrel)

    def f(v, nonrel_above):
        return np.where(nonrel_above > 0, 1.0 - safe_div(np.minimum(nonrel_above, R[v]),
                                                         np.minimum(num_nonrel[v], R[v])), 1.0)
    return safe_div(rank_among(lay, in_group, lay.above(in_group), f), R)[:, None]


def ex_binG(lay: Layout, params, **options):
    r = lay.group_counts(lay.isrel)
    others = lay.group_size - r
    above = lay.group_start - lay.above(r)      # docs above the group that are not relevant (outside the pool too)
    total = rank_among(lay, others, above, lambda v, j: 1.0 / np.log2(2.0 + j))
    some = Count(lay, lay.isrel, lay.num_ret).expect(lambda v, x: (x > 0).astype(np.float64))
    return np.where(some > 0, safe_div(total, lay.num_rel), 0.0)[:, None]


def ex_ndcg_rel(lay: Layout, pairs, **options):
    """Mean over the docs of positive gain of nDCG at their ranks (the ones not retrieved at the run's end).
    Given a doc's place in its group, the DCG down to it is linear in the other docs' places, so its
    expectation is a sum over its place; the end term needs E[(n_ideal - retrieved) * DCG], a covariance
    within the group the cut falls in."""
    custom = gain_pairs(pairs)
    lv = level_gains(lay, custom)
    gain = entry_gains(lay, custom, lv)
    if np.any(gain < 0) or np.any(lv < 0):
        raise NoExpectation("a negative gain makes its value (clipped at 0) non-linear")
    ideal = ideal_matrix(lay.rel_levels, lv) if lv.size else np.zeros((lay.V, 0))
    iprefix = discounted_prefix(ideal)
    n_ideal = (ideal > 0).sum(axis=1)
    W = ideal.shape[1]
    positive = gain > 0
    npos = lay.group_counts(positive).astype(np.float64)
    gpos = lay.group_sums(np.where(positive, gain, 0.0))
    gall = lay.group_sums(gain)
    s, n, m = lay.group_start, lay.group_size, lay.group_slots
    weights = 1.0 / np.log2(np.arange(positions(lay) + 1) + 2.0)
    F = prefix_sums(weights)
    mean_discount = (F[s + m] - F[s]) / n           # E[discount of one doc of the group, 0 if not retrieved]
    group_dcg = gall * mean_discount                # E[DCG of the group]
    dcg_above = lay.above(group_dcg)                # E[DCG above the group]
    with np.errstate(divide="ignore", invalid="ignore"):
        holding = np.flatnonzero(npos > 0)
        which, place = expand_ranges(np.arange(holding.size), np.ones(holding.size, np.int64), m[holding] + 1)
        g = holding[which]
        virtual = lay.group_query[g]
        rank0 = s[g] + place - 1
        here = weights[rank0]
        discount_above = F[rank0] - F[s[g]]
        num = npos[g] * dcg_above[g] + gpos[g] * here
        num = num + np.where(n[g] > 1, (npos[g] * gall[g] - gpos[g]) / np.maximum(n[g] - 1, 1) * discount_above, 0.0)
        col = np.clip(np.minimum(rank0, n_ideal[virtual] - 1), 0, max(W - 1, 0))
        idcg = iprefix[virtual, col] if W else np.zeros(virtual.size)
        terms = np.zeros(lay.V)
        np.add.at(terms, virtual, num / n[g] / idcg)
        # end term: (n_ideal - nrr) * DCG / IDCG
        ex = npos * np.minimum(m, n) / n            # E[positive-gain docs of the group retrieved]
        exy = (F[s + m] - F[s]) / n * (gpos + np.where(n > 1, (npos * gall - gpos) * (m - 1) / np.maximum(n - 1, 1), 0.0))
        EX, EY = lay.per_query(ex), lay.per_query(group_dcg)
        cov = lay.per_query(exy - ex * group_dcg)
        final = n_ideal * EY - EX * EY - cov
        full = iprefix[np.arange(lay.V), np.clip(n_ideal - 1, 0, max(W - 1, 0))] if W else np.zeros(lay.V)
        total = terms + final / full
        return np.where((n_ideal > 0) & (total > 0), total / n_ideal, 0.0)[:, None]
