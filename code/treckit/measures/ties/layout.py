"""The input of tie-aware values: a run's judged retrieved documents with their tie groups
(:class:`TiedRanking`), and the groups as retrieved after ``-M`` and ``-J`` (:class:`Layout`).

Notation (McSherry & Najork, ECIR 2008, and the other modules here): a *tie group* of a query is the set of
its documents with one score; it holds ``n`` documents (``group_size``) at ranks ``s`` .. ``s + n - 1``
(``group_start``: the documents of the query with a greater score), of which ``m`` (``group_slots``) are
retrieved (fewer than ``n`` only where the ``-M`` cut falls inside the group).  Inside a group every order of
its documents is equally likely.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...dependencies import deferred
from ...console.errors import InputError
from ...fast.groups import expand_ranges, id_runs, spread
from ...ranking import TIES_SETTLED
from ...ranking.judged import query_selection, rank_and_judge
from ...ranking.order import sort_key

np = deferred("numpy")


class TieGroupTooLarge(InputError):
    """A tie group too large for an exact value (lattice states, or path-count steps, beyond their bound)."""


# ---------------------------------------------------------------- runs of equal rows
def run_starts(*cols: np.ndarray) -> np.ndarray:
    """True at each row that differs from the row before in any of ``cols`` (and at the first row)."""
    out = np.ones(cols[0].size, bool)
    for c in cols:
        if c.size > 1:
            out[1:] &= c[1:] == c[:-1]
    if out.size > 1:
        np.logical_not(out[1:], out=out[1:])
    return out


def run_ends(*cols: np.ndarray) -> np.ndarray:
    """True at each row that differs from the row after in any of ``cols`` (and at the last row)."""
    return run_starts(*(c[::-1] for c in cols))[::-1]


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
            self._layout = build_layout(self)
        return self._layout


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
    heads = run_starts(query)
    listed = np.unique(query[heads]).size == int(np.count_nonzero(heads))      # each query's lines together
    if listed and bool(np.all(heads[1:] | (key[1:] <= key[:-1]))):
        at = rows
    else:
        perm = np.lexsort((-key, query))
        query, key = query[perm], key[perm]
        heads = run_starts(query)
        inv = np.empty(n, np.int64)
        inv[perm] = np.arange(n)
        at = inv[rows]
    opens = heads.copy()
    opens[1:] |= key[1:] != key[:-1]
    group_first = np.flatnonzero(opens)
    query_first = np.flatnonzero(heads)
    group = np.searchsorted(group_first, at, side="right") - 1
    group_end = np.append(group_first[1:], n)[group]
    start = group_first[group] - query_first[np.searchsorted(query_first, at, side="right") - 1]
    return start.astype(np.int64), (group_end - group_first[group]).astype(np.int64)


def tied_ranking(qrels, run, options, *, level: int | None = None, source: str = "run") -> TiedRanking:
    """The :class:`TiedRanking` of ``run`` against ``qrels`` for ``options`` (an ``EvalOptions``): every judged
    query (one missing from the run marked, with -c's placeholder), as the engine ranks the run (its score,
    or float32 score, or rank column), with ``-M`` and ``-J`` left to the tie-aware values.  A run whose reading
    ordered its equal scores itself (``TIES_SETTLED``: input order, doc id ascending, the rank column) has no
    tie left: every doc is a group of its own."""
    base, _ = rank_and_judge(qrels, run, replace(options, max_docs=None, judged_only=False), level=level,
                             source=source)
    if run.notes.get(TIES_SETTLED):
        start, size = base.pos, np.ones(base.q.size, np.int64)
    else:
        rt = run.table
        starts, run_code, run_qids = id_runs(rt.column("qid"))
        index = {q: i for i, q in enumerate(base.qids)}
        run_q = np.array([index.get(q, -1) for q in run_qids], np.int32)
        rq = spread(run_q[run_code], starts, rt.num_rows) if rt.num_rows else np.zeros(0, np.int32)
        start, size = tie_groups(rq, sort_key(rt, options.rank_by, options.float32), base.row)
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
    holding a judged-or-pooled doc has a start ``group_start`` (s), a size ``group_size`` (n) and
    ``group_slots`` (m) retrieved slots (fewer than n only for the group the cut falls in); its docs fill ranks
    s .. s + n - 1 in a uniformly random order, and those at ranks s + m or later are not retrieved.

    ``q``, ``rel``, ``grades``, ``rel_levels`` (per virtual query) and the counts are named as in the engine's
    view (:class:`treckit.ranking.judged.RankedJudged`), whose gain helpers read them.
    """

    Q: int                    # queries
    real_query: np.ndarray    # (V,) the query each virtual query stands for
    weight: np.ndarray        # (V,) its probability
    num_ret: np.ndarray       # (V,) docs retrieved
    num_rel: np.ndarray       # (V,)
    rel_levels: np.ndarray    # (V, D)
    grades: np.ndarray
    level: int
    missing: np.ndarray       # (V,)
    num_docs_in_coll: int
    q: np.ndarray             # (E,) virtual query of each entry (sorted by (q, group))
    rel: np.ndarray           # (E,)
    entry_group: np.ndarray   # (E,) group of each entry
    group_query: np.ndarray   # (G,) virtual query of each group (sorted by (group_query, group_start))
    group_start: np.ndarray   # (G,) s
    group_size: np.ndarray    # (G,) n
    group_slots: np.ndarray   # (G,) m

    @property
    def V(self) -> int:
        return self.real_query.size

    @property
    def G(self) -> int:
        return self.group_query.size

    @property
    def isrel(self) -> np.ndarray:
        return self.rel >= self.level

    def grade_index(self, rel: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.grades, rel)

    def group_counts(self, mask: np.ndarray) -> np.ndarray:
        """(G,) entries of each group where ``mask`` holds."""
        return np.bincount(self.entry_group[mask], minlength=self.G).astype(np.int64)

    def group_sums(self, values: np.ndarray) -> np.ndarray:
        """(G,) the sum of ``values`` (one per entry) over each group's entries."""
        return np.bincount(self.entry_group, weights=values, minlength=self.G)

    def above(self, per_group: np.ndarray) -> np.ndarray:
        """(G,) the sum of ``per_group`` over the earlier groups of the same virtual query."""
        total = np.cumsum(per_group)
        before = total - per_group
        first = np.searchsorted(self.group_query, self.group_query, side="left")
        return before - before[first] if per_group.size else before

    def per_query(self, per_group: np.ndarray) -> np.ndarray:
        """(V,) the sum of ``per_group`` over each virtual query's groups."""
        return np.bincount(self.group_query, weights=per_group, minlength=self.V)

    def fold(self, values: np.ndarray, mode: str) -> np.ndarray:
        """(Q, ...) from (V, ...) values: the weighted sum (expected) or the extreme (best, worst)."""
        if self.V == self.Q and np.array_equal(self.real_query, np.arange(self.Q)):
            return values
        shape = (self.Q,) + values.shape[1:]
        if mode == "expected":
            out = np.zeros(shape)
            np.add.at(out, self.real_query, values * self.weight.reshape((-1,) + (1,) * (values.ndim - 1)))
            return out
        out = np.full(shape, -np.inf if mode == "best" else np.inf)
        (np.maximum if mode == "best" else np.minimum).at(out, self.real_query, values)
        return out


def build_layout(t: TiedRanking) -> Layout:
    """The :class:`Layout` of ``t``: its groups cut at ``-M``, and under ``-J`` the judged docs moved up."""
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
    new = run_starts(q, start)
    group = np.cumsum(new) - 1
    group_query, group_start, group_size = q[new], start[new], size[new]
    judged = rel >= 0
    judged_in = np.bincount(group, weights=judged, minlength=group_query.size).astype(np.int64)
    judged_total = np.cumsum(judged_in)
    judged_before = judged_total - judged_in
    judged_start = (judged_before - judged_before[np.searchsorted(group_query, group_query, side="left")]
                    if group_query.size else judged_before)
    judged_of_query = np.bincount(group_query, weights=judged_in, minlength=t.Q).astype(np.int64)
    slots = cut[group_query] - group_start
    cut_inside = (group_size > slots) & (judged_in > 0)
    fewest = np.zeros(t.Q, np.int64)
    most = np.zeros(t.Q, np.int64)
    has_cut = np.zeros(t.Q, bool)
    cut_query = group_query[cut_inside]
    has_cut[cut_query] = True
    fewest[cut_query] = np.maximum(0, slots[cut_inside] - (group_size[cut_inside] - judged_in[cut_inside]))
    most[cut_query] = np.minimum(judged_in[cut_inside], slots[cut_inside])
    cut_group = np.full(t.Q, -1)
    cut_group[cut_query] = np.flatnonzero(cut_inside)
    virtual_count = np.where(has_cut, most - fewest + 1, 1)
    virtual_first = np.cumsum(virtual_count) - virtual_count
    real_query = np.repeat(np.arange(t.Q), virtual_count)
    retrieved_judged = fewest[real_query] + (np.arange(real_query.size) - virtual_first[real_query])
    group_of_cut = cut_group[real_query]
    weight = np.ones(real_query.size)
    split = has_cut[real_query]
    if split.any():
        g = group_of_cut[split]
        weight[split] = hypergeometric_pmf(retrieved_judged[split], group_size[g], judged_in[g], slots[g])
    num_ret = judged_of_query[real_query].copy()
    num_ret[split] = judged_start[group_of_cut[split]] + retrieved_judged[split]
    # each judged entry once per virtual query of its query
    judged_entries = np.flatnonzero(judged)
    entry_query = q[judged_entries]
    owner, virtual = expand_ranges(judged_entries, virtual_first[entry_query],
                                   virtual_first[entry_query] + virtual_count[entry_query])
    owner_group = group[owner]
    in_cut = cut_group[q[owner]] == owner_group
    entry_slots = np.where(in_cut, retrieved_judged[virtual], judged_in[owner_group])
    ok = entry_slots > 0
    owner, virtual, owner_group, entry_slots = owner[ok], virtual[ok], owner_group[ok], entry_slots[ok]
    return _make_layout(t, real_query, weight, num_ret, virtual, rel[owner], judged_start[owner_group],
                        judged_in[owner_group], entry_slots)


def _make_layout(t: TiedRanking, real_query, weight, num_ret, entry_virtual, rel, start, size, slots) -> Layout:
    o = np.lexsort((start, entry_virtual))
    entry_virtual, rel, start, size, slots = entry_virtual[o], rel[o], start[o], size[o], slots[o]
    new = run_starts(entry_virtual, start)
    entry_group = np.cumsum(new) - 1
    return Layout(Q=t.Q, real_query=real_query, weight=weight, num_ret=num_ret.astype(np.int64),
                  num_rel=t.num_rel[real_query], rel_levels=t.rel_levels[real_query], grades=t.grades, level=t.level,
                  missing=t.missing[real_query], num_docs_in_coll=t.num_docs_in_coll, q=entry_virtual.astype(np.int64),
                  rel=rel, entry_group=entry_group.astype(np.int64), group_query=entry_virtual[new].astype(np.int64),
                  group_start=start[new].astype(np.int64), group_size=size[new].astype(np.int64),
                  group_slots=slots[new].astype(np.int64))


# ---------------------------------------------------------------- the hypergeometric law
def ln_comb(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ln C(a, b)."""
    from scipy.special import gammaln
    return gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0)


def hypergeometric_pmf(k, population, marked, draws) -> np.ndarray:
    """P(X = k) for X hypergeometric: ``draws`` draws without replacement from ``population`` items,
    ``marked`` of them marked (exactly 1 where the outcome is sure)."""
    k, N, K, n = np.broadcast_arrays(*(np.asarray(a, np.int64) for a in (k, population, marked, draws)))
    lo, hi = np.maximum(0, n - (N - K)), np.minimum(K, n)
    inside = (k >= lo) & (k <= hi)
    kk = np.where(inside, k, lo).astype(np.float64)
    with np.errstate(invalid="ignore"):
        logp = ln_comb(K, kk) + ln_comb(N - K, n - kk) - ln_comb(N, n)
    out = np.where(inside, np.exp(logp), 0.0)
    return np.atleast_1d(np.where(inside & (lo == hi), 1.0, out))
