"""Tie-aware values of the measures whose best order depends on the data (``infAP``, ``G``): exact sums and
dynamic programmes over each tie group's composition lattice.

A group's docs fall in L classes (relevant, judged non-relevant, ... or gain classes) with ``counts`` docs each;
a *composition* S counts, for a prefix of the group's order, how many docs of each class came first (its length
t = sum of S).  A doc of class l that comes after composition S, at rank s + t, adds ``term(l, group, S, rank)``.
Every order is a path through the lattice; the expected value weights each step by the probability of taking it,
the best and the worst follow the best and the worst path.
"""
from __future__ import annotations

from typing import Callable

from ...dependencies import deferred
from ... import thresholds
from ..ap import INFAP_EPSILON
from ..gains import entry_gains, gain_pairs, level_gains
from ..segments import ideal_matrix, safe_div
from .layout import Layout, TieGroupTooLarge, ln_comb

np = deferred("numpy")


class Lattice:
    """Every composition of a prefix of each group, for groups with docs of L classes (``counts``, (G, L)):
    ``compositions`` (T, L), ``length`` (T,) the docs placed, ``group`` (T,), ``first`` each group's first state
    and ``stride`` (G, L) the index step of adding one doc of each class (mixed radix)."""

    def __init__(self, counts: np.ndarray) -> None:
        self.counts = counts
        G, L = counts.shape
        radix = counts + 1
        states = np.prod(radix, axis=1)
        self.first = np.cumsum(states) - states
        self.group = np.repeat(np.arange(G), states)
        local = np.arange(int(states.sum())) - self.first[self.group]
        stride = np.ones((G, L), np.int64)
        for cls in range(L - 2, -1, -1):
            stride[:, cls] = stride[:, cls + 1] * radix[:, cls + 1]
        self.stride = stride
        self.compositions = (local[:, None] // stride[self.group]) % radix[self.group]
        self.length = self.compositions.sum(axis=1)


def lattice_values(groups: np.ndarray, counts: np.ndarray, starts: np.ndarray, slots: np.ndarray,
                   term: Callable, mode: str) -> np.ndarray:
    """(G',) per group: the expected (or best, or worst) sum of ``term(l, group, S, rank)`` over the docs placed,
    docs placed at ranks below ``starts + slots`` only; ``term`` gives class l's value when a doc of it comes
    next after composition S at ``rank``."""
    out = np.zeros(groups.size)
    if not groups.size:
        return out
    states = np.prod(counts + 1, axis=1)
    worst = int(np.argmax(states))
    if states[worst] > thresholds.TIE_LATTICE_MAX_STATES:
        raise TieGroupTooLarge(f"a tie group of {int(counts[worst].sum())} documents ({', '.join(map(str, counts[worst]))} "
                               f"of each kind) is too large for an exact tie-aware value ({int(states[worst])} states)",
                               fix="round the scores less coarsely, or ask for measures other than infAP and G")
    bounds = np.cumsum(states)
    begin = 0
    while begin < groups.size:
        end = int(np.searchsorted(bounds, (bounds[begin - 1] if begin else 0) + thresholds.TIE_LATTICE_CHUNK_STATES,
                                  side="right"))
        end = max(end, begin + 1)
        part = slice(begin, end)
        out[part] = _lattice_chunk(counts[part], starts[part], slots[part], groups[part], term, mode)
        begin = end
    return out


def _lattice_chunk(counts, starts, slots, groups, term, mode) -> np.ndarray:
    lattice = Lattice(counts)
    G, L = counts.shape
    n = counts.sum(axis=1)
    length, group, S = lattice.length, lattice.group, lattice.compositions
    live = length < slots[group]
    terms = np.zeros((length.size, L))
    rank = starts[group] + length
    for cls in range(L):
        can = live & (S[:, cls] < counts[group, cls])
        if can.any():
            terms[can, cls] = term(cls, groups[group[can]], S[can], rank[can])
    if mode == "expected":
        return _expected_chunk(counts, n, lattice, live, terms, G)
    return _extreme_chunk(counts, lattice, terms, np.maximum if mode == "best" else np.minimum)


def _expected_chunk(counts, n, lattice: Lattice, live, terms, G) -> np.ndarray:
    """Each state reached with probability prod C(counts, S) / C(n, t); the next doc is of class l with
    probability (counts_l - S_l) / (n - t)."""
    length, group, S = lattice.length, lattice.group, lattice.compositions
    logp = ln_comb(counts[group], S).sum(axis=1) - ln_comb(n[group], length)
    prob = np.exp(logp)
    left = np.maximum(n[group] - length, 1)
    contrib = prob * ((counts[group] - S) / left[:, None] * terms).sum(axis=1)
    return np.bincount(group, weights=np.where(live, contrib, 0.0), minlength=G)


def _extreme_chunk(counts, lattice: Lattice, terms, better) -> np.ndarray:
    """The best (or worst) path, states worked from the longest compositions back to the empty one."""
    length, group, S = lattice.length, lattice.group, lattice.compositions
    value = np.zeros(length.size)
    order = np.argsort(-length, kind="stable")
    levels = length[order]
    cuts = np.flatnonzero(np.r_[True, levels[1:] != levels[:-1]])
    for k in range(cuts.size):
        at = order[cuts[k]:(cuts[k + 1] if k + 1 < cuts.size else order.size)]
        at_group = group[at]
        best = np.full(at.size, np.nan)
        for cls in range(counts.shape[1]):
            can = S[at, cls] < counts[at_group, cls]
            if not can.any():
                continue
            candidate = terms[at[can], cls] + value[at[can] + lattice.stride[at_group[can], cls]]
            current = best[can]
            best[can] = np.where(np.isnan(current), candidate, better(current, candidate))
        value[at] = np.where(np.isnan(best), 0.0, best)
    return value[lattice.first]


# ---------------------------------------------------------------- infAP
def _infap_parts(lay: Layout):
    """Classes of the infAP lattice (relevant, judged non-relevant, pooled unjudged, outside the pool), the
    counts per group and above each group, and the term of a relevant doc."""
    rel = lay.isrel
    nonrel = (lay.rel >= 0) & ~rel
    unjudged = lay.rel < 0
    relevant, nonrelevant, pooled = lay.group_counts(rel), lay.group_counts(nonrel), lay.group_counts(unjudged)
    outside = lay.group_size - relevant - nonrelevant - pooled
    relevant_above, nonrelevant_above = lay.above(relevant), lay.above(nonrelevant)
    pooled_above = lay.above(pooled)
    eps = INFAP_EPSILON

    def term(cls, g, S, rank):
        if cls != 0:
            return np.zeros(g.size)
        k1 = (relevant_above[g] + S[:, 0]).astype(np.float64)
        nonrel_ = (nonrelevant_above[g] + S[:, 1]).astype(np.float64)
        unj_ = (pooled_above[g] + S[:, 2]).astype(np.float64)
        j = rank.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            later = (1.0 / (j + 1.0) + (j / (j + 1.0)) * ((k1 + nonrel_ + unj_) / j)
                     * ((k1 + eps) / ((k1 + nonrel_) + 2 * eps)))
        return np.where(j == 0, 1.0, later)
    return np.stack([relevant, nonrelevant, pooled, outside], axis=1), term


def infap(lay: Layout, mode: str) -> np.ndarray:
    counts, term = _infap_parts(lay)
    g = np.flatnonzero(counts[:, 0] > 0)
    c = counts[g]
    starts, slots = lay.group_start[g].copy(), lay.group_slots[g].copy()
    if mode == "expected":
        values = lattice_values(g, c, starts, slots, term, mode)
    else:
        # docs outside the pool only lower the terms of relevant docs below them: best last, worst first
        outside = c[:, 3]
        if mode == "best":
            slots = np.minimum(slots, lay.group_size[g] - outside)
        else:
            starts, slots = starts + outside, np.maximum(slots - outside, 0)
        values = lattice_values(g, c[:, :3], starts, slots, term, mode)
    total = np.bincount(lay.group_query[g], weights=values, minlength=lay.V)
    return safe_div(total, lay.num_rel)[:, None]


# ---------------------------------------------------------------- G
def gain_G(lay: Layout, pairs, mode: str) -> np.ndarray:
    """trec_eval's G: gain / log2(2 + ideal cost so far - gain so far), over the ideal's gain.  A doc's term
    depends on the gains above it in its group, so the lattice of each group's gain classes."""
    custom = gain_pairs(pairs)
    lv = level_gains(lay, custom)
    gain = entry_gains(lay, custom, lv)
    ideal = ideal_matrix(lay.rel_levels, lv) if lv.size else np.zeros((lay.V, 0))
    V, W = ideal.shape
    cost = np.cumsum(np.maximum(ideal, 1.0), axis=1) if W else np.zeros((V, 0))
    classes = np.unique(np.r_[0.0, gain])                 # class 0 holds gain 0 (and the docs outside the pool)
    cls_of = np.searchsorted(classes, gain)
    L = classes.size
    counts = np.stack([np.bincount(lay.entry_group[cls_of == cls], minlength=lay.G) for cls in range(L)],
                      axis=1).astype(np.int64)
    zero = int(np.searchsorted(classes, 0.0))
    counts[:, zero] += lay.group_size - counts.sum(axis=1)
    gain_above = lay.above(lay.group_sums(gain))
    g = np.flatnonzero(counts[:, np.arange(L) != zero].sum(axis=1) > 0)

    def term(cls, groups, S, rank):
        if classes[cls] == 0.0:
            return np.zeros(groups.size)
        v = lay.group_query[groups]
        results = gain_above[groups] + S @ classes + classes[cls]
        if W:
            inside = rank < W
            at = np.where(inside, cost[v, np.minimum(rank, W - 1)], cost[v, W - 1] + (rank - W + 1))
        else:
            at = (rank + 1).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return classes[cls] / np.log2(2 + at - results)
    values = lattice_values(g, counts[g], lay.group_start[g], lay.group_slots[g], term, mode)
    total = np.bincount(lay.group_query[g], weights=values, minlength=V)
    sum_ideal = np.cumsum(ideal, axis=1)[:, -1] if W else np.zeros(V)
    return np.where(sum_ideal > 0, safe_div(total, sum_ideal), 0.0)[:, None]
