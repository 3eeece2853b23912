"""Best and worst values over the orders of tie groups, where one order within each group is optimal for every
query: relevant docs first, or gains descending (a rearrangement argument, or pointwise dominance of each term),
its mirror the worst.  That order is built as an engine view (:func:`ordered_view`) and the measure's own kernel
computes the value on it, so an extreme is the value trec_eval gives some order.  Each *order* below gives
(a key per entry, greater first; the key of the docs outside the pool).  The measures whose optimal order depends
on the data (``infAP``, ``G``) are :mod:`.lattice`'s.
"""
from __future__ import annotations

from ...dependencies import deferred
from ...ranking.judged import RankedJudged
from .expected import dcg_gains
from .layout import Layout

np = deferred("numpy")


def ordered_view(lay: Layout, key: np.ndarray, outside_key: float) -> RankedJudged:
    """The ranked-and-judged view of the virtual queries with each group's docs ordered by ``key``
    descending (docs outside the pool: ``outside_key``), ties kept in entry order; docs past the cut dropped."""
    o = np.lexsort((-key, lay.entry_group))
    group, rel, key_sorted = lay.entry_group[o], lay.rel[o], key[o]
    first = np.searchsorted(group, group, side="left")
    place = np.arange(group.size) - first
    pooled = np.bincount(lay.entry_group, minlength=lay.G)
    outside = lay.group_size - pooled
    pos = lay.group_start[group] + place + np.where(outside_key > key_sorted, outside[group], 0)
    q = lay.group_query[group]
    keep = pos < lay.num_ret[q]
    q, pos, rel = q[keep], pos[keep], rel[keep]
    o = np.lexsort((pos, q))
    return RankedJudged(qids=[str(i) for i in range(lay.V)], num_ret=lay.num_ret, rel_levels=lay.rel_levels,
                        num_rel=lay.num_rel, q=q[o], pos=pos[o], rel=rel[o], level=lay.level,
                        missing=lay.missing, runid="", num_docs_in_coll=lay.num_docs_in_coll, grades=lay.grades)


def relevant_first(lay: Layout, params, options):
    """Relevant docs, then pooled unjudged ones and those outside the pool, then the judged non-relevant."""
    return np.where(lay.isrel, 2.0, np.where(lay.rel < 0, 1.0, 0.0)), 1.0


def unjudged_first(lay: Layout, params, options):
    return (lay.rel < 0).astype(np.float64), 1.0


def pooled_first(lay: Layout, params, options):
    return np.ones(lay.rel.size), 0.0


def nonrelevant_first(lay: Layout, params, options):
    return ((lay.rel >= 0) & ~lay.isrel).astype(np.float64), 0.0


def any_order(lay: Layout, params, options):
    return np.zeros(lay.rel.size), 0.0


def gain_first(name: str):
    """Gains descending, as the DCG-family measure ``name`` gives them."""
    def keys(lay: Layout, params, options):
        return dcg_gains(lay, name, params, options), 0.0
    return keys
