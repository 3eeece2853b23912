"""Tie-aware values of trec_eval's measures: the expected value over random orders of tied documents, and
the best and the worst value over all such orders.

trec_eval orders documents with equal scores by doc id (descending), so a run's numbers depend on how its
documents are named.  Here the documents inside each group of equal scores of a query (a *tie group*) are
ordered uniformly at random, each group independently, and every measure gets

* its **expected** value, computed exactly (closed forms or exact sums over the tie groups, never by
  sampling; McSherry & Najork, "Computing Information Retrieval Performance Measures Efficiently in the
  Presence of Tied Scores", ECIR 2008, give P@k, recall@k, AP, DCG/nDCG and RR);
* its **best** and **worst** value: the highest and the lowest over all orders, per measure and per query
  (each may come from a different order).

trec_eval's conventions hold throughout: ``-M`` cuts the ranking after ordering, so the cut may fall
inside a tie group (which of its documents are retrieved is then random, and counts such as
``num_rel_ret`` have fractional expectations); ``-J`` then drops the documents that are not judged (with a
cut inside a group, how many judged documents are retrieved is itself random); ``-l`` sets what counts as
relevant; ``-c``'s placeholder for a query missing from the run is one document outside the pool;
``-N`` enters ``utility``.  A query without ties gets its plain trec_eval value in every mode.

Measures covered (trec_eval's names; every parameter form the engine accepts):

===================================================  =====================================================
expected, best and worst                             how the expectation is computed
===================================================  =====================================================
num_q num_ret num_rel num_rel_ret                    the count's distribution where a cut falls inside a
num_nonrel_judged_ret P recall relative_P success    tie group (hypergeometric): exact for any function of
Rprec Rprec_mult set_P set_recall set_relative_P     a count
set_map set_F utility unj Judged
map map_cut                                          McSherry & Najork's closed form (harmonic sums)
recip_rank (also RR@k)                               distribution of the first relevant doc's rank
ndcg ndcg_cut (linear, exponential, custom gains)    linear in each doc's position: mean discount over
rbp rbp_resid Rndcg                                  its group's positions
bpref binG                                           the rank among the docs that count against it is
                                                     uniform (hypergeometric where a cut falls inside)
ndcg_rel                                             conditionally linear given a doc's position
iprec_at_recall 11pt_avg                             distribution of a maximum of independent groups
infAP G                                              exact sums over the group's composition lattice
===================================================  =====================================================

Best and worst only (``gm_map``, ``gm_bpref``): a geometric mean's expectation needs each query's whole
distribution of AP, so only the extremes (monotone in AP and bpref) are given.  Not covered: ``relstring``
(a string, not a number) and the preference measures (``prefs_*``, ``-R prefs``/``qrels_jg``, their own
engine).  Asking for one of them raises :class:`NotTieAware`, which lists the covered ones.

Best and worst: for most measures one order within each group is optimal for every query (relevant docs
first, or gains descending: a rearrangement argument, or pointwise dominance of each term) and its mirror
is the worst; that order is built and the engine's own kernel computes the value on it, so an extreme is
the value trec_eval gives some order.  Where the optimal order depends on the data (``infAP``, ``G``), a
dynamic programme over each group's composition lattice finds it.  Under ``-J`` with a cut inside a group,
the extremes are taken over every possible number of judged docs retrieved.  The test suite checks every
mode of every covered measure against the enumeration of all orders (tests/measures/test_ties.py).

Interface (pure functions over arrays; no engine, registry or reading here):

* :class:`TiedRanking` -- a run's judged retrieved docs with their tie groups (first rank and size), per
  query, the rest of what the ranked-and-judged view holds (grades per query, ``-M``, ``-J``, ``-l``,
  missing queries); :func:`tied_ranking` builds it from qrels and a run, :func:`tie_groups` from arrays.
* :func:`tie_values` -- (Q, columns) values of one measure in one mode, taking the measure's trec_eval
  name, kernel parameters and options as the registry resolves them, and (for best and worst) the
  measure's engine kernel.
* :func:`tie_sources` -- where ties come from: how many digits the scores carry, whether they look
  rounded or float32.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from ..dependencies import deferred
from ..console.errors import InputError
from ..fast.groups import id_runs, spread
from ..ranking.order import sort_key
from .ap import INFAP_EPSILON
from .gains import entry_gains, gain_pairs, level_gains
from ..ranking.judged import RankedJudged, query_selection, rank_and_judge
from .ndcg import cut_gains
from .rbp import persistence, rbp_gains
from .segments import at_cutoff, discounted_prefix, ideal_matrix, powers, safe_div
from .. import thresholds

np = deferred("numpy")

MODES = ("expected", "best", "worst")


class NotTieAware(InputError):
    """A measure (or a mode of it) that tie-aware evaluation does not cover, with the ones it does."""

    def __init__(self, measure: str, mode: str, why: str) -> None:
        self.measure, self.mode = measure, mode
        names = " ".join(covered(mode))
        super().__init__(f"{measure} has no tie-aware {mode} value: {why}",
                         fix=f"tie-aware {mode} values cover: {names}")


class TieGroupTooLarge(InputError):
    """A tie group too large for an exact value (lattice states, or path-count steps, beyond their bound)."""


# ---------------------------------------------------------------- the input
@dataclass
class TiedRanking:
    """A run's judged retrieved documents grouped by equal scores, per query, before ``-M`` and ``-J``.

    Entries are the retrieved docs that appear in the qrels (grade, or UNJUDGED for a negative grade),
    each with its tie group: ``start`` (docs of its query with a greater score: the group's first rank,
    0-based) and ``size`` (docs of its query with the same score).  Docs outside the qrels are counted in
    the groups' sizes and in ``listed`` only.  Entries are sorted by (query, start).
    """

    qids: list[str]
    listed: np.ndarray            # (Q,) docs the run ranks for the query (a query missing from the run: 1, -c's placeholder)
    rel_levels: np.ndarray        # (Q, D) judged docs per grade (``grades``), the whole qrels
    grades: np.ndarray            # (D,) distinct grades >= 0, ascending
    level: int                    # -l
    missing: np.ndarray           # (Q,) bool: no run lines
    q: np.ndarray                 # (E,) query of each entry
    rel: np.ndarray               # (E,) grade, or UNJUDGED
    start: np.ndarray             # (E,) first rank of the entry's tie group
    size: np.ndarray              # (E,) docs in the entry's tie group
    runid: str = ""
    num_docs_in_coll: int = 0     # -N
    max_docs: int | None = None   # -M
    judged: bool = False          # -J
    _layout: "Layout | None" = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        o = np.lexsort((self.start, self.q))
        if not np.array_equal(o, np.arange(o.size)):
            self.q, self.rel, self.start, self.size = self.q[o], self.rel[o], self.start[o], self.size[o]

    @property
    def Q(self) -> int:
        return len(self.qids)

    @property
    def num_rel(self) -> np.ndarray:
        return self.rel_levels[:, self.grades >= self.level].sum(axis=1)

    def at_level(self, level: int) -> "TiedRanking":
        return self if level == self.level else replace(self, level=level, _layout=None)

    def judged_only(self, judged: bool = True) -> "TiedRanking":
        return self if judged == self.judged else replace(self, judged=judged, _layout=None)

    def select(self, keep: np.ndarray) -> "TiedRanking":
        """The queries where ``keep`` (a (Q,) bool mask) holds, in the same order."""
        if keep.all():
            return self
        sel, q, ek = query_selection(keep, self.q)
        return replace(self, qids=[self.qids[i] for i in sel], listed=self.listed[sel],
                       rel_levels=self.rel_levels[sel], missing=self.missing[sel], q=q,
                       rel=self.rel[ek], start=self.start[ek], size=self.size[ek], _layout=None)

    def layout(self) -> "Layout":
        if self._layout is None:
            self._layout = _layout(self)
        return self._layout


def _opens(*cols: np.ndarray) -> np.ndarray:
    """True at each row that differs from the row before in any of ``cols`` (and at the first row)."""
    out = np.ones(cols[0].size, bool)
    for c in cols:
        if c.size > 1:
            out[1:] &= c[1:] == c[:-1]
    if out.size > 1:
        np.logical_not(out[1:], out=out[1:])
    return out


def _closes(*cols: np.ndarray) -> np.ndarray:
    """True at each row that differs from the row after in any of ``cols`` (and at the last row)."""
    return _opens(*(c[::-1] for c in cols))[::-1]


def tie_groups(query: np.ndarray, key: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start, size) of the tie group of each of ``rows``: the rows of its query (``query``: a code per
    row, -1 for rows to ignore) with a greater ``key``, and those with an equal one.  A run listed query
    by query, best first, is read as it is (boundaries of groups found in one pass, only ``rows`` looked
    up); any other is sorted first."""
    rows = np.asarray(rows, np.int64)
    ok = query >= 0
    if not ok.all():
        idx = np.flatnonzero(ok)
        back = np.full(query.size, -1)
        back[idx] = np.arange(idx.size)
        return tie_groups(query[idx], key[idx], back[rows])
    n = query.size
    if n == 0 or rows.size == 0:
        return np.zeros(rows.size, np.int64), np.zeros(rows.size, np.int64)
    heads = _opens(query)
    listed = np.unique(query[heads]).size == int(np.count_nonzero(heads))      # each query's lines together
    if listed and bool(np.all(heads[1:] | (key[1:] <= key[:-1]))):
        at = rows
    else:
        perm = np.lexsort((-key, query))
        query, key = query[perm], key[perm]
        heads = _opens(query)
        inv = np.empty(n, np.int64)
        inv[perm] = np.arange(n)
        at = inv[rows]
    opens = heads.copy()
    opens[1:] |= key[1:] != key[:-1]
    gfirst = np.flatnonzero(opens)
    qfirst = np.flatnonzero(heads)
    g = np.searchsorted(gfirst, at, side="right") - 1
    gend = np.append(gfirst[1:], n)[g]
    start = gfirst[g] - qfirst[np.searchsorted(qfirst, at, side="right") - 1]
    return start.astype(np.int64), (gend - gfirst[g]).astype(np.int64)


def tied_ranking(qrels, run, options, *, level: int | None = None, source: str = "run") -> TiedRanking:
    """The :class:`TiedRanking` of ``run`` against ``qrels`` for ``options`` (an ``EvalOptions``): every judged
    query (one missing from the run marked, with -c's placeholder), as the engine ranks the run (its score,
    or float32 score, or rank column), with ``-M`` and ``-J`` left to the tie-aware values."""
    base, _ = rank_and_judge(qrels, run, replace(options, max_docs=None, judged_only=False), level=level,
                             source=source)
    rt = run.table
    starts, run_code, run_qids = id_runs(rt.column("qid"))
    index = {q: i for i, q in enumerate(base.qids)}
    run_q = np.array([index.get(q, -1) for q in run_qids], np.int32)
    rq = spread(run_q[run_code], starts, rt.num_rows) if rt.num_rows else np.zeros(0, np.int32)
    key = sort_key(rt, options.rank_by, options.float32)
    start, size = tie_groups(rq, key, base.row)
    return TiedRanking(qids=base.qids, listed=base.num_ret.astype(np.int64), rel_levels=base.rel_levels,
                       grades=base.grades, level=base.level, missing=base.missing, q=base.q, rel=base.rel,
                       start=start, size=size, runid=base.runid, num_docs_in_coll=options.num_docs_in_coll,
                       max_docs=options.max_docs, judged=options.judged_only)


# ---------------------------------------------------------------- the layout: groups after -M and -J
@dataclass
class Layout:
    """The retrieved tie groups of every query after ``-M`` and ``-J``, as flat arrays.

    Under ``-J`` with the cut inside a group, the number K of its judged docs that are retrieved is random
    (hypergeometric); the query is then split into one *virtual query* per possible K, weighted by its
    probability.  Every other query is one virtual query of weight 1.  Within a virtual query, each group
    holding a judged-or-pooled doc has a start ``gs``, a size ``gn`` and ``gm`` retrieved slots (fewer than
    ``gn`` only for the group the cut falls in); its docs fill ranks ``gs`` .. ``gs + gn - 1`` in a uniformly
    random order, and those at ranks ``gs + gm`` or later are not retrieved.
    """

    Q: int
    qv: np.ndarray            # (V,) query of each virtual query
    weight: np.ndarray        # (V,)
    num_ret: np.ndarray       # (V,) docs retrieved
    num_rel: np.ndarray       # (V,)
    rel_levels: np.ndarray    # (V, D)
    grades: np.ndarray
    level: int
    missing: np.ndarray       # (V,)
    num_docs_in_coll: int
    q: np.ndarray             # (E,) virtual query of each entry (sorted by (q, group))
    rel: np.ndarray           # (E,)
    eg: np.ndarray            # (E,) group of each entry
    gv: np.ndarray            # (G,) virtual query of each group (sorted by (gv, gs))
    gs: np.ndarray
    gn: np.ndarray
    gm: np.ndarray

    @property
    def V(self) -> int:
        return self.qv.size

    @property
    def G(self) -> int:
        return self.gv.size

    @property
    def isrel(self) -> np.ndarray:
        return self.rel >= self.level

    def grade_index(self, rel: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.grades, rel)

    def gcount(self, mask: np.ndarray) -> np.ndarray:
        """(G,) entries of each group where ``mask`` holds."""
        return np.bincount(self.eg[mask], minlength=self.G).astype(np.int64)

    def gsum(self, values: np.ndarray) -> np.ndarray:
        return np.bincount(self.eg, weights=values, minlength=self.G)

    def before(self, per_group: np.ndarray) -> np.ndarray:
        """(G,) the sum of ``per_group`` over the earlier groups of the same virtual query."""
        c = np.cumsum(per_group)
        excl = c - per_group
        first = np.searchsorted(self.gv, self.gv, side="left")
        return excl - excl[first] if per_group.size else excl

    def vsum(self, per_group: np.ndarray) -> np.ndarray:
        return np.bincount(self.gv, weights=per_group, minlength=self.V)

    def fold(self, values: np.ndarray, mode: str) -> np.ndarray:
        """(Q, ...) from (V, ...) values: the weighted sum (expected) or the extreme (best, worst)."""
        if self.V == self.Q and np.array_equal(self.qv, np.arange(self.Q)):
            return values
        shape = (self.Q,) + values.shape[1:]
        if mode == "expected":
            out = np.zeros(shape)
            np.add.at(out, self.qv, values * self.weight.reshape((-1,) + (1,) * (values.ndim - 1)))
            return out
        out = np.full(shape, -np.inf if mode == "best" else np.inf)
        (np.maximum if mode == "best" else np.minimum).at(out, self.qv, values)
        return out


def _layout(t: TiedRanking) -> Layout:
    cut = t.listed.astype(np.int64)
    if t.max_docs is not None:
        cut = np.minimum(cut, t.max_docs)
    keep = t.start < cut[t.q]
    q, rel, start, size = t.q[keep], t.rel[keep], t.start[keep], t.size[keep]
    if not t.judged:
        return _make_layout(t, np.arange(t.Q), np.ones(t.Q), cut, q, rel, start, size,
                            np.minimum(size, cut[q] - start))
    # -J after -M: the judged docs keep their order and move up; a group's docs outside the qrels or
    # judged negative leave it.  In the group the cut falls in, K of its J judged docs are retrieved,
    # K ~ hypergeometric(size, J, slots): one virtual query per K.
    new = _opens(q, start)
    gid = np.cumsum(new) - 1
    gq, gstart, gsize = q[new], start[new], size[new]
    judged = rel >= 0
    J = np.bincount(gid, weights=judged, minlength=gq.size).astype(np.int64)
    cj = np.cumsum(J)
    excl = cj - J
    jstart = excl - excl[np.searchsorted(gq, gq, side="left")] if gq.size else excl
    total = np.bincount(gq, weights=J, minlength=t.Q).astype(np.int64)
    slots = cut[gq] - gstart
    cutg = (gsize > slots) & (J > 0)
    lo_k = np.zeros(t.Q, np.int64)
    hi_k = np.zeros(t.Q, np.int64)
    has = np.zeros(t.Q, bool)
    cq = gq[cutg]
    has[cq] = True
    lo_k[cq] = np.maximum(0, slots[cutg] - (gsize[cutg] - J[cutg]))
    hi_k[cq] = np.minimum(J[cutg], slots[cutg])
    cut_group = np.full(t.Q, -1)
    cut_group[cq] = np.flatnonzero(cutg)
    nv = np.where(has, hi_k - lo_k + 1, 1)
    vfirst = np.cumsum(nv) - nv
    qv = np.repeat(np.arange(t.Q), nv)
    k = lo_k[qv] + (np.arange(qv.size) - vfirst[qv])
    g_of_v = cut_group[qv]
    weight = np.ones(qv.size)
    hv = has[qv]
    if hv.any():
        gg = g_of_v[hv]
        weight[hv] = _hyper_pmf(k[hv], gsize[gg], J[gg], slots[gg])
    num_ret = total[qv].copy()
    num_ret[hv] = jstart[g_of_v[hv]] + k[hv]
    # each judged entry once per virtual query of its query
    ej = np.flatnonzero(judged)
    eq = q[ej]
    owner, vidx = _expand(ej, vfirst[eq], vfirst[eq] + nv[eq])
    eg_ = gid[owner]
    in_cut = cut_group[q[owner]] == eg_
    slots_e = np.where(in_cut, k[vidx], J[eg_])
    ok = slots_e > 0
    owner, vidx, eg_, slots_e = owner[ok], vidx[ok], eg_[ok], slots_e[ok]
    return _make_layout(t, qv, weight, num_ret, vidx, rel[owner], jstart[eg_], J[eg_], slots_e)


def _expand(owner: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (owner[i], j) for every j in lo[i]..hi[i]-1."""
    n = hi - lo
    first = np.cumsum(n) - n
    return np.repeat(owner, n), np.repeat(lo, n) + (np.arange(int(n.sum())) - np.repeat(first, n))


def _make_layout(t: TiedRanking, qv, weight, num_ret, ev, rel, start, size, slots) -> Layout:
    o = np.lexsort((start, ev))
    ev, rel, start, size, slots = ev[o], rel[o], start[o], size[o], slots[o]
    new = _opens(ev, start)
    eg = np.cumsum(new) - 1
    return Layout(Q=t.Q, qv=qv, weight=weight, num_ret=num_ret.astype(np.int64), num_rel=t.num_rel[qv],
                  rel_levels=t.rel_levels[qv], grades=t.grades, level=t.level, missing=t.missing[qv],
                  num_docs_in_coll=t.num_docs_in_coll, q=ev.astype(np.int64), rel=rel, eg=eg.astype(np.int64),
                  gv=ev[new].astype(np.int64), gs=start[new].astype(np.int64), gn=size[new].astype(np.int64),
                  gm=slots[new].astype(np.int64))


# ---------------------------------------------------------------- probability helpers
def _ln_comb(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from scipy.special import gammaln
    return gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0)


def _hyper_pmf(k, N, K, n) -> np.ndarray:
    """P(X = k) for X hypergeometric: ``n`` draws without replacement from ``N`` items, ``K`` of them marked
    (exactly 1 where the outcome is sure)."""
    k, N, K, n = np.broadcast_arrays(*(np.asarray(a, np.int64) for a in (k, N, K, n)))
    lo, hi = np.maximum(0, n - (N - K)), np.minimum(K, n)
    inside = (k >= lo) & (k <= hi)
    kk = np.where(inside, k, lo).astype(np.float64)
    with np.errstate(invalid="ignore"):
        logp = _ln_comb(K, kk) + _ln_comb(N - K, n - kk) - _ln_comb(N, n)
    out = np.where(inside, np.exp(logp), 0.0)
    return np.atleast_1d(np.where(inside & (lo == hi), 1.0, out))


def _hyper_sf(j, N, K, n) -> np.ndarray:
    """P(X > j) for X hypergeometric as in :func:`_hyper_pmf`: the pmf summed over the support above j
    (exactly 1 when the whole support is)."""
    j, N, K, n = np.broadcast_arrays(*(np.asarray(a, np.int64) for a in (j, N, K, n)))
    low, hi = np.maximum(0, n - (N - K)), np.minimum(K, n)
    lo = np.maximum(j + 1, low)
    count = np.maximum(hi - lo + 1, 0)
    idx, x = _expand(np.arange(j.size), lo, lo + count)
    out = np.zeros(j.size)
    np.add.at(out, idx, _hyper_pmf(x, N[idx], K[idx], n[idx]))
    return np.where(j < low, 1.0, out)


def _prefix(values: np.ndarray) -> np.ndarray:
    """F with F[p] = values[0] + ... + values[p-1]."""
    return np.concatenate(([0.0], np.cumsum(values)))


def _positions(lay: Layout) -> int:
    return int(lay.num_ret.max()) + 1 if lay.V else 1


def _discounts(lay: Layout) -> np.ndarray:
    """Prefix sums of 1/log2(rank0 + 2) over 0-based ranks."""
    return _prefix(1.0 / np.log2(np.arange(_positions(lay)) + 2.0))


def _linear(lay: Layout, phi_g: np.ndarray, F: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """(V,) E[sum over docs of phi * f(rank) for ranks < limit]: ``phi_g`` the sum of phi over each group's
    docs, ``F`` the prefix sums of f over ranks, ``limit`` (V,) at most the docs retrieved."""
    hi = np.minimum(lay.gs + lay.gm, limit[lay.gv])
    hi = np.maximum(hi, lay.gs)
    return lay.vsum(phi_g * (F[hi] - F[lay.gs]) / lay.gn)


class _Count:
    """The distribution of the number of docs of a class (``mask``) ranked above ``cut`` (V,), in every
    virtual query: a sure count from the groups above the cut, plus a hypergeometric draw from the group the
    cut falls in."""

    def __init__(self, lay: Layout, mask: np.ndarray, cut: np.ndarray) -> None:
        cut = np.minimum(np.asarray(cut, np.int64), lay.num_ret)
        cnt = lay.gcount(mask)
        c = cut[lay.gv]
        full = lay.gs + lay.gn <= c
        self.base = lay.vsum(np.where(full, cnt, 0)).astype(np.int64)
        inside = (lay.gs < c) & ~full & (cnt > 0)
        self.v = lay.gv[inside]
        self.N, self.K = lay.gn[inside], cnt[inside]
        self.n = c[inside] - lay.gs[inside]
        self.V = lay.V

    def expect(self, f: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
        """(V,) E[f(v, count)] (``f`` vectorized over virtual queries and counts)."""
        out = np.asarray(f(np.arange(self.V), self.base), np.float64).copy()
        if self.v.size:
            lo = np.maximum(0, self.n - (self.N - self.K))
            hi = np.minimum(self.K, self.n)
            idx, x = _expand(np.arange(self.v.size), lo, hi + 1)
            p = _hyper_pmf(x, self.N[idx], self.K[idx], self.n[idx])
            vv = self.v[idx]
            vals = np.asarray(f(vv, self.base[vv] + x), np.float64)
            out[self.v] = 0.0
            np.add.at(out, vv, p * vals)
        return out


# ---------------------------------------------------------------- expected values
def _cols(blocks) -> np.ndarray:
    return np.stack(blocks, axis=1)


def _ex_counts(name: str):
    """Expected value of a measure that is a function of how many docs of a class rank above a cut."""
    def run(lay: Layout, params, **options):
        R = lay.num_rel
        ret = lay.num_ret
        rel = lay.isrel
        if name == "num_q":
            return np.ones((lay.V, 1))
        if name == "num_ret":
            return ret.astype(np.float64)[:, None]
        if name == "num_rel":
            return R.astype(np.float64)[:, None]
        if name == "P":
            return _cols([_Count(lay, rel, np.full(lay.V, k)).expect(lambda v, x, k=k: x / float(k)) for k in params])
        if name == "recall":
            return _cols([_Count(lay, rel, np.full(lay.V, k)).expect(lambda v, x: safe_div(x, R[v])) for k in params])
        if name == "relative_P":
            return _cols([_Count(lay, rel, np.full(lay.V, k)).expect(
                lambda v, x, k=k: np.where(R[v] > 0, safe_div(x, np.minimum(k, R[v])), 0.0)) for k in params])
        if name == "success":
            return _cols([_Count(lay, rel, np.full(lay.V, k)).expect(lambda v, x: (x > 0).astype(np.float64))
                          for k in params])
        if name == "Rprec":
            look = np.minimum(ret, R)
            return _Count(lay, rel, look).expect(
                lambda v, x: np.where(look[v] > 0, safe_div(x, R[v]), 0.0))[:, None]
        if name == "Rprec_mult":
            out = []
            for m in params:
                cut = np.floor(m * R + 0.9).astype(np.int64)
                out.append(_Count(lay, rel, cut).expect(
                    lambda v, x, cut=cut: np.where(cut[v] > 0, safe_div(x, cut[v]), 0.0)))
            return _cols(out)
        if name == "unj":
            judged = lay.rel >= 0
            return _cols([_Count(lay, judged, np.full(lay.V, k)).expect(
                lambda v, x, k=k: (np.minimum(ret[v], k) - x) / float(k)) for k in params])
        if name == "Judged":
            cutoff = options.get("cutoff")
            shown = ret if cutoff is None else np.minimum(ret, cutoff)
            return _Count(lay, np.ones(lay.rel.size, bool), shown).expect(
                lambda v, x: safe_div(x, shown[v]))[:, None]
        if name == "num_nonrel_judged_ret":
            return _Count(lay, (lay.rel >= 0) & ~rel, ret).expect(lambda v, x: x.astype(np.float64))[:, None]
        dist = _Count(lay, rel, ret)
        if name == "num_rel_ret":
            return dist.expect(lambda v, x: x.astype(np.float64))[:, None]
        if name == "set_P":
            return dist.expect(lambda v, x: safe_div(x, ret[v]))[:, None]
        if name == "set_relative_P":
            return dist.expect(lambda v, x: np.where(R[v] > 0, safe_div(x, np.minimum(ret[v], R[v])), 0.0))[:, None]
        if name == "set_recall":
            return dist.expect(lambda v, x: safe_div(x, R[v]))[:, None]
        if name == "set_map":
            return dist.expect(lambda v, x: np.where(R[v] > 0, safe_div(x.astype(np.float64) * x,
                                                                         ret[v].astype(np.float64) * R[v]), 0.0))[:, None]
        if name == "set_F":
            beta = params[0]

            def f(v, x):
                P, Rc = safe_div(x, ret[v]), safe_div(x, R[v])
                return np.where(x > 0, safe_div((beta + 1.0) * P * Rc, beta * P + Rc), 0.0)
            return dist.expect(f)[:, None]
        if name == "utility":
            a, b, c, d = params
            return dist.expect(lambda v, x: a * x + b * (ret[v] - x) + c * (R[v] - x)
                               + d * (lay.num_docs_in_coll + x - ret[v] - R[v]))[:, None]
        raise AssertionError(name)
    return run


def _ex_map(lay: Layout, params, **options):
    return safe_div(_ap_sum(lay, lay.num_ret), lay.num_rel)[:, None]


def _ex_map_cut(lay: Layout, cutoffs, **options):
    return _cols([safe_div(_ap_sum(lay, np.minimum(lay.num_ret, k)), lay.num_rel) for k in cutoffs])


def _harmonic(lay: Layout) -> np.ndarray:
    """H with H[x] = 1 + 1/2 + ... + 1/x."""
    return _prefix(1.0 / np.arange(1, _positions(lay) + 1))


def _ap_sum(lay: Layout, cut: np.ndarray) -> np.ndarray:
    """(V,) E[sum over relevant docs ranked above ``cut`` of (relevant docs up to it) / rank] (McSherry &
    Najork): a relevant doc at the i-th place of its group (1-based, uniform) has, on average,
    (i-1)(r-1)/(n-1) of the group's other r-1 relevant docs above it."""
    H = _harmonic(lay)
    r = lay.gcount(lay.isrel)
    A = lay.before(r)
    s, n = lay.gs, lay.gn
    mk = np.clip(cut[lay.gv] - s, 0, lay.gm)
    dH = H[s + mk] - H[s]
    inner = np.where(n > 1, (r - 1) / np.maximum(n - 1, 1) * (mk - (s + 1) * dH), 0.0)
    return lay.vsum(np.where(r > 0, r / n * ((A + 1) * dH + inner), 0.0))


def _ex_recip_rank(lay: Layout, params, cutoff: int | None = None, **options):
    """E[1 / rank of the first relevant doc]: in the first group holding relevant docs (r of n), the first
    of them is at its group's i-th place with probability C(n-i, r-1) / C(n, r)."""
    limit = lay.num_ret if cutoff is None else np.minimum(lay.num_ret, cutoff)
    r = lay.gcount(lay.isrel)
    has = r > 0
    g = np.flatnonzero(has)
    first = g[_opens(lay.gv[g])]
    s, n, rr = lay.gs[first], lay.gn[first], r[first]
    top = np.clip(np.minimum(n - rr + 1, limit[lay.gv[first]] - s), 0, None)
    idx, i = _expand(np.arange(first.size), np.ones(first.size, np.int64), top + 1)
    p = _hyper_pmf(np.zeros(idx.size, np.int64), n[idx], rr[idx], i - 1) * rr[idx] / (n[idx] - i + 1)
    out = np.zeros(lay.V)
    np.add.at(out, lay.gv[first][idx], p / (s[idx] + i))
    return out[:, None]


def _dcg_gains(lay: Layout, name: str, params, options) -> np.ndarray:
    """(E,) the gain each entry has for a DCG-family measure, as the engine's kernel gives it."""
    if name == "ndcg_cut":
        return cut_gains(lay, options.get("gains", ()), options.get("exponential", False))[1]
    if name in ("rbp", "rbp_resid"):
        return rbp_gains(lay, params)
    return entry_gains(lay, gain_pairs(params))


def _ex_ndcg(lay: Layout, pairs, **options):
    custom = gain_pairs(pairs)
    lv = level_gains(lay, custom)
    dcg = _linear(lay, lay.gsum(entry_gains(lay, custom, lv)), _discounts(lay), lay.num_ret)
    ideal = ideal_matrix(lay.rel_levels, lv) if lv.size else np.zeros((lay.V, 0))
    idcg = discounted_prefix(ideal)[:, -1] if ideal.shape[1] else np.zeros(lay.V)
    return np.where(idcg > 0, safe_div(dcg, idcg), 0.0)[:, None]


def _ex_ndcg_cut(lay: Layout, cutoffs, exponential: bool = False, gains: tuple = (), **options):
    lv, g = cut_gains(lay, gains, exponential)
    ideal = discounted_prefix(ideal_matrix(lay.rel_levels, lv)) if lv.size else np.zeros((lay.V, 0))
    F, phi = _discounts(lay), lay.gsum(g)
    out = []
    for k in cutoffs or (None,):
        dcg = _linear(lay, phi, F, lay.num_ret if k is None else np.minimum(lay.num_ret, k))
        idcg = at_cutoff(ideal, np.iinfo(np.int64).max if k is None else k)
        out.append(np.where(idcg > 0, safe_div(dcg, idcg), dcg))
    return _cols(out)


def _ex_rbp(lay: Layout, pairs, **options):
    p = persistence(pairs)
    F = _prefix(powers(p, _positions(lay) - 1))
    return ((1.0 - p) * _linear(lay, lay.gsum(rbp_gains(lay, pairs)), F, lay.num_ret))[:, None]


def _ex_rbp_resid(lay: Layout, pairs, **options):
    """rbp_resid = [some retrieved doc unjudged] p^num_ret + (1-p) sum of p^rank over unjudged retrieved ranks."""
    p = persistence(pairs)
    pw = powers(p, _positions(lay) - 1)
    F = _prefix(pw)
    judged = lay.rel >= 0
    ret = lay.num_ret
    unjudged_sum = F[ret] - _linear(lay, lay.gcount(judged).astype(np.float64), F, ret)
    some = _Count(lay, judged, ret).expect(lambda v, x: (x < ret[v]).astype(np.float64))
    return np.where(ret > 0, some * pw[ret] + (1 - p) * unjudged_sum, 0.0)[:, None]


def _ex_Rndcg(lay: Layout, pairs, **options):
    """Linear in the run's DCG above fixed ranks (where the ideal ranking steps down a grade, and its end)."""
    custom = gain_pairs(pairs)
    lv = level_gains(lay, custom)
    phi = lay.gsum(entry_gains(lay, custom, lv))
    ideal = ideal_matrix(lay.rel_levels, lv) if lv.size else np.zeros((lay.V, 0))
    iprefix = discounted_prefix(ideal)
    n_ideal = (ideal > 0).sum(axis=1)
    V, W = ideal.shape
    F = _discounts(lay)
    padded = np.concatenate([ideal, np.zeros((V, 1))], axis=1)
    steps = padded[:, 1:] != padded[:, :-1]
    total = np.zeros(V)
    changes = steps.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        for col in range(W):
            on = steps[:, col]
            if not on.any():
                continue
            c = col + 1
            rd = _linear(lay, phi, F, np.minimum(c, lay.num_ret))
            total += np.where(on, rd / iprefix[:, col], 0.0)
        end = (lay.num_ret > n_ideal + 1) & (n_ideal > 0)
        if end.any():
            rd = _linear(lay, phi, F, lay.num_ret)
            total += np.where(end, rd / iprefix[np.arange(V), np.maximum(n_ideal - 1, 0)], 0.0)
            changes = changes + end
    return np.where((lay.num_rel > 0) & (changes > 0), safe_div(total, changes), 0.0)[:, None]


def _rank_among(lay: Layout, counted: np.ndarray, base: np.ndarray,
                f: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """(V,) E[sum over retrieved relevant docs of f(v, docs of a class above it)]: ``counted`` (G,) docs of
    the class in each group, ``base`` (G,) those above the group.  Among itself and its group's w docs of
    the class, a relevant doc's place is uniform (j of them above it, j = 0..w); it is retrieved when at least
    j+1 of those w+1 docs fall in the group's retrieved slots."""
    r = lay.gcount(lay.isrel)
    g = np.flatnonzero(r > 0)
    w = counted[g]
    idx, j = _expand(np.arange(g.size), np.zeros(g.size, np.int64), w + 1)
    gg = g[idx]
    surv = _hyper_sf(j, lay.gn[gg], w[idx] + 1, lay.gm[gg])
    v = lay.gv[gg]
    vals = np.asarray(f(v, base[gg] + j), np.float64)
    out = np.zeros(lay.V)
    np.add.at(out, v, r[gg] / (w[idx] + 1.0) * surv * vals)
    return out


def _ex_bpref(lay: Layout, params, **options):
    R = lay.num_rel
    nonrel = (lay.rel >= 0) & ~lay.isrel
    num_nonrel = lay.rel_levels[:, lay.grades < lay.level].sum(axis=1)
    b = lay.gcount(nonrel)

    def f(v, nb):
        return np.where(nb > 0, 1.0 - safe_div(np.minimum(nb, R[v]), np.minimum(num_nonrel[v], R[v])), 1.0)
    return safe_div(_rank_among(lay, b, lay.before(b), f), R)[:, None]


def _ex_binG(lay: Layout, params, **options):
    r = lay.gcount(lay.isrel)
    others = lay.gn - r
    above = lay.gs - lay.before(r)          # docs above the group that are not relevant (outside the pool too)
    total = _rank_among(lay, others, above, lambda v, j: 1.0 / np.log2(2.0 + j))
    rr = _Count(lay, lay.isrel, lay.num_ret)
    some = rr.expect(lambda v, x: (x > 0).astype(np.float64))
    return np.where(some > 0, safe_div(total, lay.num_rel), 0.0)[:, None]


def _ex_ndcg_rel(lay: Layout, pairs, **options):
    """Mean over the docs of positive gain of nDCG at their ranks (the ones not retrieved at the run's end).
    Given a doc's place in its group, the DCG down to it is linear in the other docs' places, so its
    expectation is a sum over its place; the end term needs E[(n_ideal - retrieved) * DCG], a covariance
    within the group the cut falls in."""
    custom = gain_pairs(pairs)
    lv = level_gains(lay, custom)
    gain = entry_gains(lay, custom, lv)
    if np.any(gain < 0) or np.any(lv < 0):
        raise NotTieAware("ndcg_rel", "expected", "a negative gain makes its value (clipped at 0) non-linear")
    ideal = ideal_matrix(lay.rel_levels, lv) if lv.size else np.zeros((lay.V, 0))
    iprefix = discounted_prefix(ideal)
    n_ideal = (ideal > 0).sum(axis=1)
    W = ideal.shape[1]
    pos = gain > 0
    npos = lay.gcount(pos).astype(np.float64)
    gpos = lay.gsum(np.where(pos, gain, 0.0))
    gall = lay.gsum(gain)
    s, n, m = lay.gs, lay.gn, lay.gm
    wts = 1.0 / np.log2(np.arange(_positions(lay) + 1) + 2.0)
    F = _prefix(wts)
    mean_w = (F[s + m] - F[s]) / n                  # E[discount of one doc of the group, 0 if not retrieved]
    ey = gall * mean_w                                # E[DCG of the group]
    d0 = lay.before(ey)                               # E[DCG above the group]
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.flatnonzero(npos > 0)
        idx, i = _expand(np.arange(g.size), np.ones(g.size, np.int64), m[g] + 1)
        gg = g[idx]
        v = lay.gv[gg]
        rank0 = s[gg] + i - 1
        wi = wts[rank0]
        w_above = F[rank0] - F[s[gg]]
        num = npos[gg] * d0[gg] + gpos[gg] * wi
        num = num + np.where(n[gg] > 1, (npos[gg] * gall[gg] - gpos[gg]) / np.maximum(n[gg] - 1, 1) * w_above, 0.0)
        col = np.clip(np.minimum(rank0, n_ideal[v] - 1), 0, max(W - 1, 0))
        idcg = iprefix[v, col] if W else np.zeros(v.size)
        terms = np.zeros(lay.V)
        np.add.at(terms, v, num / n[gg] / idcg)
        # end term: (n_ideal - nrr) * DCG / IDCG
        ex = npos * np.minimum(m, n) / n              # E[positive-gain docs of the group retrieved]
        exy = (F[s + m] - F[s]) / n * (gpos + np.where(n > 1, (npos * gall - gpos) * (m - 1) / np.maximum(n - 1, 1), 0.0))
        EX, EY = lay.vsum(ex), lay.vsum(ey)
        cov = lay.vsum(exy - ex * ey)
        final = n_ideal * EY - EX * EY - cov
        full = iprefix[np.arange(lay.V), np.clip(n_ideal - 1, 0, max(W - 1, 0))] if W else np.zeros(lay.V)
        total = terms + final / full
        return np.where((n_ideal > 0) & (total > 0), total / n_ideal, 0.0)[:, None]


# ---------------------------------------------------------------- interpolated precision
def _ex_iprec(lay: Layout, levels, **options):
    return _cols([_iprec_level(lay, lv) for lv in levels])


def _ex_11pt(lay: Layout, levels, **options):
    vals = _ex_iprec(lay, levels)
    acc = np.zeros(lay.V)
    for j in range(vals.shape[1] - 1, -1, -1):
        acc += vals[:, j]
    return (acc / len(levels))[:, None]


def _iprec_level(lay: Layout, lv: float) -> np.ndarray:
    """E[interpolated precision at recall ``lv``] = E[max over relevant docs k >= c of k / rank_k] (0 when
    fewer than c are retrieved).  Groups are independent, so P(max <= x) is the product over groups of
    P(group's max <= x): groups whose docs are all relevant (or single) and the ends of the others give a
    sure floor D, every other group holding a counted relevant doc a step function computed exactly at each
    of its possible values above D (a lattice path count: the j-th relevant doc must sit at or above a place
    set by x)."""
    R = lay.num_rel
    c = np.floor(lv * R + 0.5).astype(np.int64)
    ceff = np.maximum(c, 1)
    r = lay.gcount(lay.isrel)
    A = lay.before(r)
    s, n, m, gv = lay.gs, lay.gn, lay.gm, lay.gv
    j0 = np.maximum(1, ceff[gv] - A)
    counted = (r > 0) & (A + r >= ceff[gv])
    sure = counted & ((n == r) | (n == 1))
    rand = counted & ~sure
    # the floor D: every value the max surely reaches.  A sure group's best counted doc: precision (A + j) /
    # (s + j) grows with j, so the last retrieved one.  A random group retrieved whole surely reaches the
    # precision at its end, (A + r) / (s + n), whatever its order (its last relevant doc is there or above).
    # Values at or below D do not move the max: only the points above it are worked on.
    jm = np.minimum(r, m)
    floor_num = np.where(sure, A + jm, np.where(rand & (m == n), A + r, 0))
    floor_den = np.where(sure, s + jm, np.where(rand & (m == n), s + n, 1))
    ok = (sure & (jm >= j0)) | (rand & (m == n))
    dnum = np.zeros(lay.V, np.int64)
    dden = np.ones(lay.V, np.int64)
    if ok.any():
        g = np.flatnonzero(ok)
        val = floor_num[g] / floor_den[g]
        o = np.lexsort((val, gv[g]))
        g = g[o]
        last = _closes(gv[g])
        dnum[gv[g][last]] = floor_num[g][last]
        dden[gv[g][last]] = floor_den[g][last]
    D = dnum / dden
    rand = np.flatnonzero(rand)
    out = D.copy()
    if rand.size:
        out += _iprec_random(lay, rand, r, A, j0, dnum, dden)
    nan = (c == 0) & (lay.num_ret == 0)
    out[nan] = np.nan
    return out


def _iprec_random(lay, groups, r, A, j0, dnum, dden) -> np.ndarray:
    """(V,) E[max(D, random groups' maxima)] - D for the groups ``groups`` (each with 0 < r < n)."""
    s, n, m, gv = lay.gs, lay.gn, lay.gm, lay.gv
    # support: (A + j) / (s + i) for counted j, places i = j .. j + n - r within the retrieved slots, above D
    rg = r[groups]
    idx, j = _expand(np.arange(groups.size), j0[groups], rg + 1)
    g = groups[idx]
    width = n[g] - r[g] + 1
    idx2, off = _expand(np.arange(g.size), np.zeros(g.size, np.int64), width)
    g2, j2 = g[idx2], j[idx2]
    i2 = j2 + off
    keep = i2 <= m[g2]
    g2, j2, i2 = g2[keep], j2[keep], i2[keep]
    num, den = A[g2] + j2, s[g2] + i2
    v2 = gv[g2]
    above = num * dden[v2] > dnum[v2] * den
    g2, num, den, v2 = g2[above], num[above], den[above], v2[above]
    val = num / den
    o = np.lexsort((val, g2))
    g2, num, den, val = g2[o], num[o], den[o], val[o]
    new = _opens(g2, val)
    g2, num, den, val = g2[new], num[new], den[new], val[new]
    out = np.zeros(lay.V)
    if not g2.size:
        return out
    # every group with a point above D also needs P(its max <= D)
    pg = np.unique(g2)
    vpg = gv[pg]
    prob_num = np.concatenate([dnum[vpg], num])
    prob_den = np.concatenate([dden[vpg], den])
    prob_g = np.concatenate([pg, g2])
    F = _paths_below(lay, prob_g, prob_num, prob_den, r, A, j0)
    F_at_D, F_pts = F[:pg.size], F[pg.size:]
    # the product over groups of F_g, as x rises through the points: log-sum of non-zero factors and a count of zeros
    # the previous value of each point's group: the point before it in the same group, else F(D)
    prev = F_at_D[np.searchsorted(pg, g2)]
    same = ~_opens(g2)
    prev = np.where(same, np.r_[0.0, F_pts[:-1]], prev)
    v_pts = gv[g2]
    with np.errstate(divide="ignore"):
        dlog = np.where(F_pts > 0, np.log(np.where(F_pts > 0, F_pts, 1.0)), 0.0) - \
            np.where(prev > 0, np.log(np.where(prev > 0, prev, 1.0)), 0.0)
    dzero = (F_pts <= 0).astype(np.int64) - (prev <= 0).astype(np.int64)
    init_log = np.zeros(lay.V)
    init_zero = np.zeros(lay.V, np.int64)
    with np.errstate(divide="ignore"):
        np.add.at(init_log, vpg, np.where(F_at_D > 0, np.log(np.where(F_at_D > 0, F_at_D, 1.0)), 0.0))
    np.add.at(init_zero, vpg, (F_at_D <= 0).astype(np.int64))
    o = np.lexsort((val, v_pts))
    v_pts, val, dlog, dzero = v_pts[o], val[o], dlog[o], dzero[o]
    first = np.searchsorted(v_pts, v_pts, side="left")
    clog = np.cumsum(dlog)
    clog = clog - np.r_[0.0, clog][first] + init_log[v_pts]
    czero = np.cumsum(dzero)
    czero = czero - np.r_[0, czero][first] + init_zero[v_pts]
    prod = np.where(czero > 0, 0.0, np.exp(clog))
    # after all the points at one x: the product on [x, next x)
    last_at_x = _closes(v_pts, val)
    xv, xval, xprod = v_pts[last_at_x], val[last_at_x], prod[last_at_x]
    D = dnum / dden
    prod0 = np.where(init_zero > 0, 0.0, np.exp(init_log))
    nxt_same = ~_closes(xv)
    width = np.where(nxt_same, np.r_[xval[1:], 0.0] - xval, 0.0)
    np.add.at(out, xv, width * (1.0 - xprod))
    firstx = _opens(xv)
    np.add.at(out, xv[firstx], (xval[firstx] - D[xv[firstx]]) * (1.0 - prod0[xv[firstx]]))
    return out


def _paths_below(lay, g, num, den, r, A, j0) -> np.ndarray:
    """P(max over group g's counted relevant docs of (A + j) / (s + i_j) <= num / den) for each (g, num, den):
    every counted j-th relevant doc at place i_j >= ceil((A + j) den / num) - s, or beyond the retrieved slots."""
    out = np.zeros(g.size)
    # one or two relevant docs in the group (the common case): the places counted in closed form
    few = r[g] <= 2
    if few.any():
        out[few] = _few_below(lay, g[few], num[few], den[few], r, A, j0)
    rest = np.flatnonzero(~few)
    if rest.size:
        out[rest] = _dp_below(lay, g[rest], num[rest], den[rest], r, A, j0)
    return out


def _bounds(lay, g, num, den, r, A, j0, width: int) -> np.ndarray:
    """(problems, width) the lowest place (1-based) the j-th relevant doc of the group may take for the max
    to stay at or below num / den: ceil((A + j) den / num) - s, or past the retrieved slots; 1 for docs
    that are not counted; never beyond the group's end + 1."""
    s, n, m = lay.gs, lay.gn, lay.gm
    jj = np.arange(1, width + 1)[None, :]
    nz = num[:, None]
    need = np.where(nz > 0, -((-(A[g][:, None] + jj) * den[:, None]) // np.maximum(nz, 1)) - s[g][:, None],
                    m[g][:, None] + 1)
    bound = np.minimum(need, m[g][:, None] + 1)
    bound = np.where(jj >= j0[g][:, None], bound, 1)
    return np.clip(bound, 1, n[g][:, None] + 1)


def _few_below(lay, g, num, den, r, A, j0) -> np.ndarray:
    """:func:`_paths_below` for groups of one or two relevant docs: the places i (or pairs i1 < i2) at or
    above the bounds, over all C(n, r) of them."""
    n = lay.gn[g].astype(np.float64)
    b = _bounds(lay, g, num, den, r, A, j0, 2).astype(np.float64)
    one = np.maximum(n - b[:, 0] + 1, 0) / n
    lo = np.maximum(b[:, 1], b[:, 0] + 1)
    k = np.maximum(n - lo + 1, 0)
    pairs = k * (lo + n) / 2 - b[:, 0] * k                  # sum over i2 = lo .. n of (i2 - b1)
    two = pairs / np.maximum(n * (n - 1) / 2, 1)
    return np.where(r[g] == 1, one, two)


def _dp_below(lay, g, num, den, r, A, j0) -> np.ndarray:
    """:func:`_paths_below` by a probability DP over the group's places (drawing its docs one by one),
    vectorized over problems whose groups are of about the same size (sizes and relevant counts within a
    factor of two: little padding)."""
    out = np.zeros(g.size)
    nn, rr_all = lay.gn[g], r[g]
    bucket = _bit_length(nn) * 64 + _bit_length(rr_all)
    keys, inverse = np.unique(bucket, return_inverse=True)
    widths = np.zeros(keys.size, np.int64)
    np.maximum.at(widths, inverse, nn)
    heights = np.zeros(keys.size, np.int64)
    np.maximum.at(heights, inverse, rr_all + 1)
    work = int((np.bincount(inverse, minlength=keys.size) * widths * heights).sum())
    if work > thresholds.TIE_IPREC_MAX_CELLS:
        big = int(np.argmax(nn * (rr_all + 1)))
        raise TieGroupTooLarge(f"interpolated precision over a tie group of {int(nn[big])} documents "
                               f"({int(rr_all[big])} relevant) is too large to compute exactly ({work} steps)",
                               fix="round the scores less coarsely, or ask for measures other than "
                                   "iprec_at_recall and 11pt_avg")
    for b in range(keys.size):
        sel = np.flatnonzero(inverse == b)
        gg = g[sel]
        size, rr = nn[sel], rr_all[sel]
        rmax = int(rr.max())
        bound = _bounds(lay, gg, num[sel], den[sel], r, A, j0, rmax)
        rel_left = rr[:, None] - np.arange(rmax + 1)[None, :]         # relevant docs not yet drawn, per state
        p = np.zeros((sel.size, rmax + 1))
        p[:, 0] = 1.0
        for i in range(1, int(size.max()) + 1):
            left = (size - i + 1)[:, None].astype(np.float64)         # docs not yet drawn (<= 0: group done)
            active = left > 0
            safe = np.where(active, left, 1.0)
            stay = np.where(active, np.maximum(left - rel_left, 0) / safe, 1.0)
            take = np.where(active, np.maximum(rel_left, 0) / safe, 0.0)
            new = p * stay
            new[:, 1:] += p[:, :-1] * take[:, :-1] * (i >= bound)     # the j-th relevant doc at place i
            p = new
        out[sel] = p[np.arange(sel.size), rr]
    return out


def _bit_length(x: np.ndarray) -> np.ndarray:
    return np.floor(np.log2(np.maximum(x, 1))).astype(np.int64) + 1


# ---------------------------------------------------------------- the composition lattice (infAP, G)
class _Lattice:
    """Every composition S of a prefix of each group (how many docs of each class came first), for groups
    with docs of L classes: ``S`` (T, L), ``t`` (T,) its length, ``grp`` (T,), and the index step of adding
    one doc of each class (mixed radix)."""

    def __init__(self, counts: np.ndarray) -> None:
        self.counts = counts
        G, L = counts.shape
        radix = counts + 1
        sizes = np.prod(radix, axis=1)
        self.sizes = sizes
        self.base = np.cumsum(sizes) - sizes
        T = int(sizes.sum())
        self.grp = np.repeat(np.arange(G), sizes)
        local = np.arange(T) - self.base[self.grp]
        stride = np.ones((G, L), np.int64)
        for l in range(L - 2, -1, -1):
            stride[:, l] = stride[:, l + 1] * radix[:, l + 1]
        self.stride = stride
        self.S = (local[:, None] // stride[self.grp]) % radix[self.grp]
        self.t = self.S.sum(axis=1)


def _lattice_values(lay: Layout, groups: np.ndarray, counts: np.ndarray, starts: np.ndarray, slots: np.ndarray,
                    term: Callable, mode: str) -> np.ndarray:
    """(G',) per group: the expected (or best, or worst) sum of ``term(l, grp, S, rank)`` over the docs placed,
    docs placed at ranks below ``starts + slots`` only; ``term`` gives class l's value when a doc of it comes
    next after composition S at ``rank``."""
    out = np.zeros(groups.size)
    if not groups.size:
        return out
    sizes = np.prod(counts + 1, axis=1)
    worst = int(np.argmax(sizes))
    if sizes[worst] > thresholds.TIE_LATTICE_MAX_STATES:
        raise TieGroupTooLarge(f"a tie group of {int(counts[worst].sum())} documents ({', '.join(map(str, counts[worst]))} "
                               f"of each kind) is too large for an exact tie-aware value ({int(sizes[worst])} states)",
                               fix="round the scores less coarsely, or ask for measures other than infAP and G")
    bounds = np.cumsum(sizes)
    begin = 0
    while begin < groups.size:
        end = int(np.searchsorted(bounds, (bounds[begin - 1] if begin else 0) + thresholds.TIE_LATTICE_CHUNK_STATES, side="right"))
        end = max(end, begin + 1)
        sl = slice(begin, end)
        out[sl] = _lattice_chunk(counts[sl], starts[sl], slots[sl], groups[sl], term, mode)
        begin = end
    return out


def _lattice_chunk(counts, starts, slots, groups, term, mode) -> np.ndarray:
    lat = _Lattice(counts)
    G, L = counts.shape
    n = counts.sum(axis=1)
    t, grp, S = lat.t, lat.grp, lat.S
    live = t < slots[grp]
    terms = np.zeros((t.size, L))
    rank = starts[grp] + t
    for l in range(L):
        can = live & (S[:, l] < counts[grp, l])
        if can.any():
            terms[can, l] = term(l, groups[grp[can]], S[can], rank[can])
    if mode == "expected":
        from scipy.special import gammaln
        lnc = lambda a, b: gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0)
        logp = lnc(counts[grp], S).sum(axis=1) - lnc(n[grp], t)
        prob = np.exp(logp)
        left = np.maximum(n[grp] - t, 1)
        contrib = prob * ((counts[grp] - S) / left[:, None] * terms).sum(axis=1)
        return np.bincount(grp, weights=np.where(live, contrib, 0.0), minlength=G)
    better = np.maximum if mode == "best" else np.minimum
    value = np.zeros(t.size)
    order = np.argsort(-t, kind="stable")
    levels = t[order]
    cuts = np.flatnonzero(np.r_[True, levels[1:] != levels[:-1]])
    for k in range(cuts.size):
        at = order[cuts[k]:(cuts[k + 1] if k + 1 < cuts.size else order.size)]
        gr = grp[at]
        best = np.full(at.size, np.nan)
        for l in range(L):
            can = S[at, l] < counts[gr, l]
            if not can.any():
                continue
            cand = terms[at[can], l] + value[at[can] + lat.stride[gr[can], l]]
            cur = best[can]
            best[can] = np.where(np.isnan(cur), cand, better(cur, cand))
        value[at] = np.where(np.isnan(best), 0.0, best)
    return value[lat.base]


def _infap_parts(lay: Layout):
    """Classes of the infAP lattice (relevant, judged non-relevant, pooled unjudged, outside the pool), the
    counts per group and above each group, and the term of a relevant doc."""
    rel = lay.isrel
    nonrel = (lay.rel >= 0) & ~rel
    unj = lay.rel < 0
    cr, cb, cu = lay.gcount(rel), lay.gcount(nonrel), lay.gcount(unj)
    cz = lay.gn - cr - cb - cu
    A0, B0, U0 = lay.before(cr), lay.before(cb), lay.before(cu)
    eps = INFAP_EPSILON

    def term(l, g, S, rank):
        if l != 0:
            return np.zeros(g.size)
        k1 = (A0[g] + S[:, 0]).astype(np.float64)
        nonrel_ = (B0[g] + S[:, 1]).astype(np.float64)
        unj_ = (U0[g] + S[:, 2]).astype(np.float64)
        j = rank.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            later = (1.0 / (j + 1.0) + (j / (j + 1.0)) * ((k1 + nonrel_ + unj_) / j)
                     * ((k1 + eps) / ((k1 + nonrel_) + 2 * eps)))
        return np.where(j == 0, 1.0, later)
    return np.stack([cr, cb, cu, cz], axis=1), term


def _infap(lay: Layout, mode: str) -> np.ndarray:
    counts, term = _infap_parts(lay)
    g = np.flatnonzero(counts[:, 0] > 0)
    c = counts[g]
    starts, slots = lay.gs[g].copy(), lay.gm[g].copy()
    if mode == "expected":
        vals = _lattice_values(lay, g, c, starts, slots, term, mode)
    else:
        # docs outside the pool only lower the terms of relevant docs below them: best last, worst first
        z = c[:, 3]
        if mode == "best":
            slots = np.minimum(slots, lay.gn[g] - z)
        else:
            starts, slots = starts + z, np.maximum(slots - z, 0)
        vals = _lattice_values(lay, g, c[:, :3], starts, slots, term, mode)
    total = np.bincount(lay.gv[g], weights=vals, minlength=lay.V)
    return safe_div(total, lay.num_rel)[:, None]


def _G(lay: Layout, pairs, mode: str) -> np.ndarray:
    """trec_eval's G: gain / log2(2 + ideal cost so far - gain so far), over the ideal's gain.  A doc's term
    depends on the gains above it in its group, so the lattice of each group's gain classes."""
    custom = gain_pairs(pairs)
    lv = level_gains(lay, custom)
    gain = entry_gains(lay, custom, lv)
    ideal = ideal_matrix(lay.rel_levels, lv) if lv.size else np.zeros((lay.V, 0))
    V, W = ideal.shape
    cost = np.cumsum(np.maximum(ideal, 1.0), axis=1) if W else np.zeros((V, 0))
    classes = np.unique(np.r_[0.0, gain])                 # class 0 holds gain 0 (and the docs outside the pool)
    cls = np.searchsorted(classes, gain)
    L = classes.size
    counts = np.stack([np.bincount(lay.eg[cls == l], minlength=lay.G) for l in range(L)], axis=1).astype(np.int64)
    zero = int(np.searchsorted(classes, 0.0))
    counts[:, zero] += lay.gn - counts.sum(axis=1)
    before = lay.before(lay.gsum(gain))
    g = np.flatnonzero(counts[:, np.arange(L) != zero].sum(axis=1) > 0)

    def term(l, gg, S, rank):
        if classes[l] == 0.0:
            return np.zeros(gg.size)
        v = lay.gv[gg]
        results = before[gg] + S @ classes + classes[l]
        if W:
            inside = rank < W
            at = np.where(inside, cost[v, np.minimum(rank, W - 1)], cost[v, W - 1] + (rank - W + 1))
        else:
            at = (rank + 1).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return classes[l] / np.log2(2 + at - results)
    vals = _lattice_values(lay, g, counts[g], lay.gs[g], lay.gm[g], term, mode)
    total = np.bincount(lay.gv[g], weights=vals, minlength=V)
    sum_ideal = np.cumsum(ideal, axis=1)[:, -1] if W else np.zeros(V)
    return np.where(sum_ideal > 0, safe_div(total, sum_ideal), 0.0)[:, None]


# ---------------------------------------------------------------- best and worst by order
def _ordered_view(lay: Layout, key: np.ndarray, outside_key: float) -> RankedJudged:
    """The ranked-and-judged view of the virtual queries with each group's docs ordered by ``key``
    descending (docs outside the pool: ``outside_key``), ties kept in entry order; docs past the cut dropped."""
    o = np.lexsort((-key, lay.eg))
    eg, rel, key_o = lay.eg[o], lay.rel[o], key[o]
    first = np.searchsorted(eg, eg, side="left")
    place = np.arange(eg.size) - first
    pooled = np.bincount(lay.eg, minlength=lay.G)
    outside = lay.gn - pooled
    pos = lay.gs[eg] + place + np.where(outside_key > key_o, outside[eg], 0)
    q = lay.gv[eg]
    keep = pos < lay.num_ret[q]
    q, pos, rel = q[keep], pos[keep], rel[keep]
    o2 = np.lexsort((pos, q))
    return RankedJudged(qids=[str(i) for i in range(lay.V)], num_ret=lay.num_ret, rel_levels=lay.rel_levels,
                        num_rel=lay.num_rel, q=q[o2], pos=pos[o2], rel=rel[o2], level=lay.level,
                        missing=lay.missing, runid="", num_docs_in_coll=lay.num_docs_in_coll, grades=lay.grades)


def _rel_first(lay, params, options):
    return np.where(lay.isrel, 2.0, np.where(lay.rel < 0, 1.0, 0.0)), 1.0


def _unjudged_first(lay, params, options):
    return (lay.rel < 0).astype(np.float64), 1.0


def _pooled_first(lay, params, options):
    return np.ones(lay.rel.size), 0.0


def _nonrel_first(lay, params, options):
    return ((lay.rel >= 0) & ~lay.isrel).astype(np.float64), 0.0


def _any_order(lay, params, options):
    return np.zeros(lay.rel.size), 0.0


def _gain_first(name):
    def keys(lay, params, options):
        return _dcg_gains(lay, name, params, options), 0.0
    return keys


# ---------------------------------------------------------------- the measures
@dataclass(frozen=True)
class _Spec:
    expected: Callable | None          # (layout, params, **options) -> (V, columns)
    order: Callable | None = None      # best = this order, worst = its mirror: (layout, params, options) -> (keys, outside key)
    extreme: Callable | None = None    # (layout, params, mode) -> (V, columns) when no single order serves
    no_expected: str = ""              # why there is no expected value


_COUNT = ("num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "P", "recall", "relative_P",
          "success", "Rprec", "Rprec_mult", "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
          "utility", "unj", "Judged")
_ORDER_OF = {"num_q": _any_order, "num_ret": _any_order, "num_rel": _any_order, "unj": _unjudged_first,
             "Judged": _pooled_first, "num_nonrel_judged_ret": _nonrel_first}
SPECS: dict[str, _Spec] = {n: _Spec(_ex_counts(n), _ORDER_OF.get(n, _rel_first)) for n in _COUNT}
SPECS.update({
    "map": _Spec(_ex_map, _rel_first),
    "map_cut": _Spec(_ex_map_cut, _rel_first),
    "gm_map": _Spec(None, _rel_first, no_expected="the expectation of a geometric mean needs each query's whole "
                                                  "distribution of AP (best and worst are given)"),
    "recip_rank": _Spec(_ex_recip_rank, _rel_first),
    "bpref": _Spec(_ex_bpref, _rel_first),
    "gm_bpref": _Spec(None, _rel_first, no_expected="the expectation of a geometric mean needs each query's whole "
                                                    "distribution of bpref (best and worst are given)"),
    "binG": _Spec(_ex_binG, _rel_first),
    "iprec_at_recall": _Spec(_ex_iprec, _rel_first),
    "11pt_avg": _Spec(_ex_11pt, _rel_first),
    "ndcg": _Spec(_ex_ndcg, _gain_first("ndcg")),
    "ndcg_cut": _Spec(_ex_ndcg_cut, _gain_first("ndcg_cut")),
    "ndcg_rel": _Spec(_ex_ndcg_rel, _gain_first("ndcg_rel")),
    "Rndcg": _Spec(_ex_Rndcg, _gain_first("Rndcg")),
    "rbp": _Spec(_ex_rbp, _gain_first("rbp")),
    "rbp_resid": _Spec(_ex_rbp_resid, _unjudged_first),
    "infAP": _Spec(lambda lay, p, **o: _infap(lay, "expected"), extreme=lambda lay, p, mode, **o: _infap(lay, mode)),
    "G": _Spec(lambda lay, p, **o: _G(lay, p, "expected"), extreme=lambda lay, p, mode, **o: _G(lay, p, mode)),
})
REFUSED = {
    "relstring": "it is a string of grades, not a number",
    "runid": "it is the run's name, not a measure",
}


def covered(mode: str = "expected") -> list[str]:
    """The trec_eval names of the measures with tie-aware ``mode`` values."""
    return [n for n, s in SPECS.items() if mode != "expected" or s.expected is not None]


def tie_values(tied: TiedRanking, name: str, params: tuple = (), mode: str = "expected", *,
               kernel: Callable | None = None, **options) -> np.ndarray:
    """(Q, columns) tie-aware values of the measure ``name`` (its trec_eval family name, as the registry
    declares it, with the kernel parameters and options the registry resolves) in ``mode``: ``expected``,
    ``best`` or ``worst``.  ``kernel`` is the measure's engine kernel (``Request.measure.kernel``), which
    best and worst run on the extreme orders.  Values of -c's placeholder queries are the kernel's on the
    placeholder; the engine's resets (``num_ret`` to 0 and the like) are the caller's, as for plain values."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    spec = SPECS.get(name)
    if spec is None:
        raise NotTieAware(name, mode, REFUSED.get(name, "it is not among the measures computed over tie orders"))
    lay = tied.layout()
    if mode == "expected":
        if spec.expected is None:
            raise NotTieAware(name, mode, spec.no_expected)
        values = spec.expected(lay, params, **options)
        return lay.fold(np.asarray(values, np.float64).reshape(lay.V, -1), mode)
    if spec.extreme is not None:
        return lay.fold(np.asarray(spec.extreme(lay, params, mode, **options), np.float64).reshape(lay.V, -1), mode)
    if kernel is None:
        raise TypeError(f"{name}: best and worst values need the measure's kernel (kernel=)")
    keys, outside = spec.order(lay, params, options)
    sign = 1.0 if mode == "best" else -1.0
    first = np.asarray(kernel(_ordered_view(lay, sign * keys, sign * outside), params, **options), np.float64)
    first = first.reshape(lay.V, -1)
    if name == "utility":
        # a negative weight on relevant retrieved docs turns the order around: both orders, the better one
        other = np.asarray(kernel(_ordered_view(lay, -sign * keys, -sign * outside), params, **options), np.float64)
        first = (np.fmax if mode == "best" else np.fmin)(first, other.reshape(lay.V, -1))
    return lay.fold(first, mode)


# ---------------------------------------------------------------- where ties come from
@dataclass(frozen=True)
class TieSources:
    """What a run's scores say about its ties."""

    lines: int
    tied_lines: int              # lines whose score equals another line's of the same query
    groups: int                  # tie groups (two lines or more)
    queries_with_ties: int
    decimals: int | None         # most decimal places any score needs (None: more than MAX_DECIMALS)
    digits: int                  # most significant digits any score needs (at most 17)
    float32: bool                # every score is a float32 value, or the shortest decimal of one
    verdict: str                 # "rounded", "float32", "full precision" or "no ties"

    def describe(self) -> str:
        if not self.tied_lines:
            return "no ties: every score is unique within its query"
        share = f"{self.tied_lines} of {self.lines} lines ({100.0 * self.tied_lines / max(self.lines, 1):.1f}%) " \
                f"tie in {self.groups} group{'s' if self.groups != 1 else ''} over {self.queries_with_ties} " \
                f"quer{'ies' if self.queries_with_ties != 1 else 'y'}"
        if self.verdict == "rounded":
            places = "decimal place" if self.decimals == 1 else "decimal places"
            why = f"the scores carry at most {self.decimals} {places}: rounding is the likely cause"
        elif self.verdict == "float32":
            why = (f"the scores carry at most {self.digits} significant digits and are all float32 values: "
                   "single precision is the likely cause")
        else:
            why = f"the scores carry up to {self.digits} significant digits: the scores themselves are equal"
        return f"{share}; {why}"


MAX_DECIMALS = 17
ROUNDED_MAX_DECIMALS = 6         # a run whose scores need at most this many decimals reads as rounded ...
FLOAT32_MIN_DIGITS = 7           # ... unless they are float32 values that need this many significant digits or more
                                 # (a coarse rounding needs fewer; float32's shortest decimals need 7 to 9)


def tie_sources(query: np.ndarray, scores: np.ndarray) -> TieSources:
    """Where a run's ties come from: counts of tied lines (``query``: a code per line), the decimal places and
    significant digits the scores need (the shortest decimals that read back as the same doubles), and
    whether every score is float32 (exactly, or as float32's shortest decimal)."""
    query = np.asarray(query)
    scores = np.asarray(scores, np.float64)
    n = scores.size
    start, size = tie_groups(query, scores, np.arange(n)) if n else (np.zeros(0, np.int64),) * 2
    tied = size > 1
    groups = np.unique(np.stack([query[tied], start[tied]], axis=1), axis=0).shape[0] if tied.any() else 0
    qties = np.unique(query[tied]).size
    values = np.unique(scores[np.isfinite(scores)])
    decimals = _decimals(values)
    digits = _significant(values)
    f32 = bool(values.size) and bool(np.all(_float32_like(values)))
    return TieSources(lines=n, tied_lines=int(tied.sum()), groups=int(groups), queries_with_ties=int(qties),
                      decimals=decimals, digits=digits, float32=f32,
                      verdict=_verdict(bool(tied.any()), f32, digits, decimals))


def _verdict(tied: bool, f32: bool, digits: int, decimals: int | None) -> str:
    if not tied:
        return "no ties"
    if f32 and digits >= FLOAT32_MIN_DIGITS:
        return "float32"
    if decimals is not None and decimals <= ROUNDED_MAX_DECIMALS:
        return "rounded"
    return "full precision"


def combine_sources(parts: list[TieSources]) -> TieSources:
    """The :class:`TieSources` of a run read in parts of whole queries, from each part's."""
    if not parts:
        return tie_sources(np.zeros(0, np.int64), np.zeros(0))
    decimals = None if any(p.decimals is None for p in parts) else max(p.decimals for p in parts)
    digits = max(p.digits for p in parts)
    f32 = all(p.float32 or not p.lines for p in parts) and any(p.lines for p in parts)
    tied = sum(p.tied_lines for p in parts)
    return TieSources(lines=sum(p.lines for p in parts), tied_lines=tied, groups=sum(p.groups for p in parts),
                      queries_with_ties=sum(p.queries_with_ties for p in parts), decimals=decimals, digits=digits,
                      float32=f32, verdict=_verdict(tied > 0, f32, digits, decimals))


def _decimals(values: np.ndarray) -> int | None:
    """Most decimal places any of ``values`` needs: d with round(x * 10^d) / 10^d == x (exact for the
    double nearest a decimal of d places, as 10^d and the integer are exact)."""
    left = values[np.abs(values) < 2.0 ** 52]          # doubles beyond are integers: no decimals
    most = 0
    for d in range(MAX_DECIMALS + 1):
        if not left.size:
            return most
        scale = 10.0 ** d
        with np.errstate(over="ignore", invalid="ignore"):
            ok = np.abs(left * scale) < 2.0 ** 53
            ok &= np.round(left * scale) / scale == left
        if ok.any():
            most = d
        left = left[~ok]
    return most if not left.size else None


def _round_sig(values: np.ndarray, p: int) -> np.ndarray:
    """The double nearest each value rounded to ``p`` significant digits."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e = np.floor(np.log10(np.abs(values)))
        shift = (p - 1 - e)
        out = np.empty_like(values)
        pos = shift >= 0
        sc = 10.0 ** np.clip(shift, 0, 308)
        out[pos] = np.round(values[pos] * sc[pos]) / sc[pos]
        sc2 = 10.0 ** np.clip(-shift, 0, 308)
        out[~pos] = np.round(values[~pos] / sc2[~pos]) * sc2[~pos]
    return np.where(values == 0, 0.0, out)


def _significant(values: np.ndarray) -> int:
    """Most significant digits any of ``values`` needs (17 always suffice for a double)."""
    left = values[values != 0]
    need = 1 if values.size else 0
    for p in range(1, 17):
        if not left.size:
            return need
        ok = _round_sig(left, p) == left
        if ok.any():
            need = p
        left = left[~ok]
    return need if not left.size else 17


def _float32_like(values: np.ndarray) -> np.ndarray:
    """Whether each value is a float32 (exactly), or the double of float32's shortest decimal (a float32
    score written with as few digits as read it back: 9 significant digits at most)."""
    with np.errstate(over="ignore"):
        f = values.astype(np.float32)
    exact = f.astype(np.float64) == values
    out = exact.copy()
    left = np.flatnonzero(~exact & np.isfinite(f))
    for p in range(1, 10):
        if not left.size:
            break
        r = _round_sig(values[left], p)
        with np.errstate(over="ignore"):
            same = r.astype(np.float32) == f[left]           # the shortest p whose decimal reads back as the float32
        hit = left[same]
        out[hit] = r[same] == values[hit]
        left = left[~same]
    return out
