"""Preference measures (trec_eval's ``prefs_*``, ``-R prefs`` / ``-R qrels_prefs``) and the judgment-group
measures of ``-R qrels_jg`` (``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg``), with trec_eval 10.0's semantics.

How a query is counted (trec_eval's form_prefs_counts):

* The judged docs of the query get *internal ranks*: the retrieved ones (after -M) in run order, 0 .. njr-1,
  where the run is ordered by score descending and ties by doc id *ascending* (the qrels measures break
  ties descending; the prefs code does not); the others follow in doc-id order.
* Each judgment group (jg) with a single sub-group is a list of equivalence classes (ECs, one per level,
  highest first): every line of a higher EC is preferred to every line of a lower one (a doc listed twice
  counts twice).  A jg with several sub-groups is a preference relation: each sub-group's level order,
  closed transitively; a doc's self-preference is dropped; a cycle is an error.
* A preference A > B is *fulfilled* (ful) when A ranks above B; ``_ret`` counts pairs with both retrieved,
  ``_imp`` pairs with one retrieved (fulfilled iff it is A), and pairs with neither are possible, never
  fulfilled.  ``poss`` counts include the fulfilled ones.

Sizes: ECs are counted pairwise through sorted rank arrays, never as a matrix.  A multi-sub-group jg is
closed as a dense boolean matrix over its own docs, up to ``thresholds.PA_MAX_DOCS`` docs (beyond, the query is refused
with a clear error; trec_eval allocates num_judged^2 cells per sub-group there).  ``prefs_pair*`` over
several jgs needs each doc pair's count in every jg: pairs with a retrieved doc are summed over blocks of
``thresholds.PAIR_BLOCK_CELLS`` cells (memory bounded, time retrieved x judged x jgs); pairs of unretrieved docs are only
counted, class by class (docs with the same level in every jg) when the jgs are ECs and the classes few
(``thresholds.CLASS_LIMIT``), else in blocks too.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..dependencies import deferred
from .. import thresholds
from ..console.errors import InputError
from .declaration import DOUBLE_CUTS, LONG_CUTS, PREFS, QRELS_JG, QRELS_PREFS, STD_CUTS, Measure

np = deferred("numpy")

PLACEHOLDER_DOC = "ceci_nest_pas_un_docno"     # trec_eval -c's one-doc ranking for a query missing from the run
NONPOOL, UNJUDGED = -1, -2    # as in ranking.judged: retrieved but not judged / judged with a negative grade


# ------------------------------------------------------------------ per judgment group counts
@dataclass
class JG:
    """One judgment group's preference counts for one query (the fields of trec_eval's JG)."""

    ful_ret: int = 0
    poss_ret: int = 0
    ful_imp: int = 0
    poss_imp: int = 0
    notoccur: int = 0
    num_rel: int = 0
    num_rel_ret: int = 0
    num_nonrel: int = 0
    num_nonrel_ret: int = 0
    rnonrel: tuple | None = None        # (ful, poss) with nonrelevant docs cut to R (when R < N)
    rnonrel_ret: tuple | None = None    # the same among retrieved docs
    # for prefs_pair* over several jgs: ("ec", level of each doc (NaN: not in the jg), its number of lines)
    # or ("pa", each doc's row in the closure (a last all-False row for docs outside), padded closure)
    pairs: tuple | None = None


@dataclass
class QueryPrefs:
    jgs: list[JG]
    num_judged: int
    num_judged_ret: int
    distinct: JG | None = None          # one jg: its counts over distinct doc pairs (prefs_pair*)
    _pair: tuple | None = field(default=None, repr=False)


def _cross(a: np.ndarray, b: np.ndarray, njr: int) -> tuple[int, int, int, int, int]:
    """(ful_ret, unful_ret, ful_imp, unful_imp, notoccur) for every line of ``a`` preferred to every line
    of ``b``; both sorted internal ranks."""
    if a.size == 0 or b.size == 0:
        return 0, 0, 0, 0, 0
    b_ret = int(np.searchsorted(b, njr))
    lt = np.searchsorted(b, a, "left")
    le = np.searchsorted(b, a, "right")
    ret = a < njr
    nb = b.size
    n_ret = int(ret.sum())
    ful_ret = int((b_ret - le[ret]).sum())
    unful_ret = int(lt[ret].sum())
    ful_imp = n_ret * (nb - b_ret)
    unret = ~ret
    unful_imp = int(unret.sum()) * b_ret
    notoccur = int((nb - le[unret] + lt[unret] - b_ret).sum())
    return ful_ret, unful_ret, ful_imp, unful_imp, notoccur


def _ful_total(a: np.ndarray, b: np.ndarray, njr: int) -> tuple[int, int]:
    """trec_eval's recount for the Rnonrel measures: pairs (a, b) with a ranked above b and a retrieved,
    and all pairs (a == b included, as trec_eval pairs the nonrelevant EC with itself)."""
    if a.size == 0 or b.size == 0:
        return 0, 0
    le = np.searchsorted(b, a[a < njr], "right")
    return int((b.size - le).sum()), a.size * b.size


def _ful_total_ret(a: np.ndarray, b: np.ndarray, njr: int) -> tuple[int, int]:
    """The same among retrieved lines only."""
    return _ful_total(a[a < njr], b[b < njr], njr)


def _add(acc: list, part) -> None:
    for i, v in enumerate(part):
        acc[i] += v


def _ec_jg(ecs: list[np.ndarray], levels: list[float], njr: int, nj: int, want_pairs: bool, warn,
           where: str) -> JG:
    """A single-sub-group jg: ECs (sorted internal ranks per level, levels descending)."""
    jg = JG()
    c = [0, 0, 0, 0, 0]
    below = np.empty(0, np.int64)
    for e in range(len(ecs) - 1, -1, -1):
        if e < len(ecs) - 1:
            _add(c, _cross(ecs[e], below, njr))
        below = np.sort(np.concatenate((below, ecs[e])), kind="stable")
    jg.ful_ret, jg.ful_imp, jg.notoccur = c[0], c[2], c[4]
    jg.poss_ret, jg.poss_imp = c[0] + c[1], c[2] + c[3]
    for ranks, level in zip(ecs, levels):
        ret = int(np.searchsorted(ranks, njr))
        if level > 0.0:
            jg.num_rel += ranks.size
            jg.num_rel_ret += ret
        else:
            jg.num_nonrel += ranks.size
            jg.num_nonrel_ret += ret
    if jg.num_rel < jg.num_nonrel:
        jg.rnonrel = _ec_recount(ecs, jg.num_rel, njr, _ful_total, warn, where)
    if jg.num_rel_ret < jg.num_nonrel_ret:
        jg.rnonrel_ret = _ec_recount(ecs, jg.num_rel_ret, njr, _ful_total_ret, warn, where)
    if want_pairs:
        # level and number of lines of each doc: the group's count for a pair is the product of the
        # docs' line counts when their levels differ
        level_of, lines_of = np.full(nj, np.nan), np.zeros(nj, np.int64)
        for ranks, level in zip(ecs, levels):
            level_of[ranks] = level
            np.add.at(lines_of, ranks, 1)
        jg.pairs = ("ec", level_of, lines_of)
    return jg


def _ec_recount(ecs, keep: int, njr: int, count, warn, where: str) -> tuple[int, int]:
    """trec_eval's recalculate() for EC jgs: preferences between the ECs other than the last, plus every
    EC (the last included) against the first ``keep`` lines of the last EC."""
    ful = total = 0
    mid = np.empty(0, np.int64)
    for e in range(len(ecs) - 2, -1, -1):
        if e < len(ecs) - 2:
            f, t = count(ecs[e], mid, njr)
            ful, total = ful + f, total + t
        mid = np.sort(np.concatenate((mid, ecs[e])), kind="stable")
    last = ecs[-1]
    if keep > last.size and warn is not None:
        # trec_eval reads past the end of its array here (levels below 0 put nonrelevant docs in two ECs)
        warn(where)
    f, t = count(np.sort(np.concatenate(ecs), kind="stable"), last[:keep], njr)
    return ful + f, total + t


def _pa_jg(ranks: np.ndarray, jsg: np.ndarray, levels: np.ndarray, njr: int, nj: int, want_pairs: bool,
           name, where: str) -> JG:
    """A jg with several sub-groups: lines sorted by (jsg, level descending, rank)."""
    docs, local = np.unique(ranks, return_inverse=True)
    m = docs.size
    if m > thresholds.PA_MAX_DOCS:
        raise InputError(f"{where}: {m} docs in a judgment group with several sub-groups; treckit closes such a "
                         f"group as a {thresholds.PA_MAX_DOCS}x{thresholds.PA_MAX_DOCS} matrix at most",
                         fix="split the judgment group, or write it as a single sub-group")
    _check_zero_levels(local, levels, docs, name, where)
    _, last_line = np.unique(local[::-1], return_index=True)
    rel = levels[::-1][last_line]      # the last line of each doc in sorted order sets its level, as in trec_eval
    pref = np.zeros((m, m), bool)
    bounds = np.flatnonzero(np.diff(jsg)) + 1
    for seg in np.split(np.arange(ranks.size), bounds):
        lv = levels[seg]
        i, j = np.nonzero(lv[:, None] > lv[None, :])
        pref[local[seg][i], local[seg][j]] = True
    np.fill_diagonal(pref, True)
    for k in range(m):          # transitive closure (Warshall)
        rows = pref[:, k].copy()
        if rows.sum() > 1:
            pref[rows] |= pref[k]
    np.fill_diagonal(pref, False)
    both = pref & pref.T
    if both.any():
        i, j = (int(x[0]) for x in np.nonzero(both))
        raise InputError(f"{where}: the preferences contradict each other: doc {name(docs[i])!r} is both above and "
                         f"below doc {name(docs[j])!r} (through the sub-groups, transitively)",
                         fix="one judgment group must be consistent; put conflicting judgments in separate groups")
    i, j = np.nonzero(pref)
    gi, gj = docs[i], docs[j]
    ri, rj = gi < njr, gj < njr
    jg = JG(ful_ret=int((ri & rj & (gj > gi)).sum()), ful_imp=int((ri & ~rj).sum()),
            notoccur=int((~ri & ~rj).sum()))
    jg.poss_ret = jg.ful_ret + int((ri & (gj < gi)).sum())
    jg.poss_imp = jg.ful_imp + int((~ri & rj).sum())
    dret = docs < njr
    jg.num_rel, jg.num_rel_ret = int((rel > 0).sum()), int(((rel > 0) & dret).sum())
    jg.num_nonrel, jg.num_nonrel_ret = int((rel == 0).sum()), int(((rel == 0) & dret).sum())
    nonrel_by_rank = docs[rel == 0]           # docs are in rank order

    def kept(limit_docs: np.ndarray) -> np.ndarray:
        # trec_eval drops the nonrelevant docs after the (num_rel+1)-th one it meets in rank order
        first_dropped = limit_docs[jg.num_rel] if limit_docs.size > jg.num_rel else np.iinfo(np.int64).max
        return ~((docs >= first_dropped) & (rel == 0))

    if jg.num_rel < jg.num_nonrel:
        k = kept(nonrel_by_rank)
        sel = k[i] & k[j]
        jg.rnonrel = (int((sel & ri & (gj > gi)).sum()), int(sel.sum()))
    if jg.num_rel_ret < jg.num_nonrel_ret:
        k = kept(nonrel_by_rank[nonrel_by_rank < njr])
        sel = k[i] & k[j] & ri & rj
        jg.rnonrel_ret = (int((sel & (gj > gi)).sum()), int(sel.sum()))
    if want_pairs:
        local_of = np.full(nj, m)            # docs outside the group point at an all-False row and column
        local_of[docs] = np.arange(m)
        padded = np.zeros((m + 1, m + 1), bool)
        padded[:m, :m] = pref
        jg.pairs = ("pa", local_of, padded)
    return jg


def _check_zero_levels(local: np.ndarray, levels: np.ndarray, docs, name, where: str) -> None:
    """trec_eval refuses a doc whose level goes from > 0 to 0 (or back) between consecutive lines of a
    multi-sub-group jg, in its sorted order."""
    o = np.argsort(local, kind="stable")
    d, lv = local[o], levels[o]
    prev = np.concatenate(([-1.0], lv[:-1]))
    prev[np.concatenate(([True], d[1:] != d[:-1]))] = -1.0
    bad = ((prev > 0) & (lv == 0)) | ((prev == 0) & (lv > 0))
    if bad.any():
        doc = name(docs[d[np.argmax(bad)]])
        raise InputError(f"{where}: doc {doc!r} has both level 0 (non-relevant) and a level above 0",
                         fix="a doc is non-relevant in every sub-group of a judgment group or in none")


# ------------------------------------------------------------------ one query
def query_prefs(line_rank: np.ndarray, jg_code: np.ndarray, jsg_code: np.ndarray, level: np.ndarray, njr: int,
                nj: int, want_pairs: bool, name, where: str, warn=None) -> QueryPrefs:
    """Counts for one query from its lines (internal rank, jg, jsg codes in byte order, level)."""
    o = np.lexsort((line_rank, -level, jsg_code, jg_code))
    r, g, s, lv = line_rank[o], jg_code[o], jsg_code[o], level[o]
    starts = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1])))
    ends = np.append(starts[1:], r.size)
    several = len(starts) > 1
    jgs, distinct = [], None
    for a, b in zip(starts, ends):
        jr, js, jl = r[a:b], s[a:b], lv[a:b]
        if np.any(js[1:] != js[:-1]):
            jg = _pa_jg(jr, js, jl, njr, nj, want_pairs and several, name, where)
            if not several:
                distinct = jg
        else:
            cuts = np.flatnonzero(jl[1:] != jl[:-1]) + 1
            ecs = np.split(jr, cuts)
            _check_one_level(ecs, name, where)
            lvls = [float(x) for x in jl[np.concatenate(([0], cuts))]]
            jg = _ec_jg(ecs, lvls, njr, nj, want_pairs and several, warn, where)
            if not several and want_pairs:
                distinct = _ec_jg([np.unique(e) for e in ecs], lvls, njr, nj, False, None, where)
        jgs.append(jg)
    return QueryPrefs(jgs, nj, njr, distinct)


def _check_one_level(ecs: list[np.ndarray], name, where: str) -> None:
    allr = np.concatenate([np.unique(e) for e in ecs])
    u, n = np.unique(allr, return_counts=True)
    if (n > 1).any():
        raise InputError(f"{where}: doc {name(u[np.argmax(n > 1)])!r} has two different levels in one sub-group",
                         fix="give each doc one level per judgment sub-group")


# ------------------------------------------------------------------ measures over QueryPrefs
def _ratio(a: float, b: float) -> float:
    """C's a / b on doubles (0/0 is NaN, x/0 is inf), which Python refuses."""
    if b:
        return a / b
    return float("nan") if a == 0 else float("inf") * (1 if a > 0 else -1)


def _tot(qp: QueryPrefs, *fields) -> int:
    return sum(getattr(j, f) for j in qp.jgs for f in fields)


def _simple(ful_fields, poss_fields):
    def kernel(qp: QueryPrefs) -> float:
        poss = _tot(qp, *poss_fields)
        return _tot(qp, *ful_fields) / poss if poss else 0.0
    return kernel


def _avgjg(ful_fields, poss_fields):
    def kernel(qp: QueryPrefs) -> float:
        s = 0.0
        for j in qp.jgs:
            poss = sum(getattr(j, f) for f in poss_fields)
            if poss:
                s += sum(getattr(j, f) for f in ful_fields) / poss
        return s / len(qp.jgs) if s > 0.0 else 0.0
    return kernel


_ALL = ("poss_ret", "poss_imp", "notoccur")
_FUL = ("ful_ret", "ful_imp")


def _rnonrel(retrieved_only: bool):
    def kernel(qp: QueryPrefs) -> float:
        s = 0.0
        for j in qp.jgs:
            if retrieved_only:
                R, N = j.num_rel_ret, j.num_nonrel_ret
                ful, poss, recount = j.ful_ret, j.poss_ret, j.rnonrel_ret
            else:
                R, N = j.num_rel, j.num_nonrel
                ful, poss, recount = j.ful_ret + j.ful_imp, j.poss_ret + j.poss_imp + j.notoccur, j.rnonrel
            if R >= N:
                # as if R - N more nonrelevant docs sat below every retrieved relevant one
                s += _ratio(ful + j.num_rel_ret * (R - N), poss + j.num_rel * (R - N))
            else:
                s += _ratio(*recount)
        return s / len(qp.jgs) if s > 0.0 else 0.0
    return kernel


def _pair_counts(qp: QueryPrefs, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Over all jgs, how many times doc ``rows[i]`` is preferred to ``cols[j]``, and the other way round."""
    fwd = np.zeros((rows.size, cols.size), np.int64)
    bwd = np.zeros_like(fwd)
    for jg in qp.jgs:
        kind, a, b = jg.pairs
        if kind == "ec":
            both = np.outer(b[rows], b[cols])
            above = a[rows][:, None] - a[cols][None, :]
            fwd += both * (above > 0)
            bwd += both * (above < 0)
        else:
            fwd += b[np.ix_(a[rows], a[cols])]
            bwd += b.T[np.ix_(a[rows], a[cols])]
    return fwd, bwd


def _unretrieved_pairs(qp: QueryPrefs) -> int:
    """How many pairs of unretrieved docs some jg has a preference on.  With EC jgs only, docs with the same
    level (or absence) in every jg form a class: no preference inside a class, and one answer for any two
    classes; so pairs are counted class by class when there are at most ``thresholds.CLASS_LIMIT`` classes."""
    nj, njr = qp.num_judged, qp.num_judged_ret
    if all(jg.pairs[0] == "ec" for jg in qp.jgs):
        levels = np.stack([jg.pairs[1][njr:] for jg in qp.jgs], axis=1)
        present = ~np.isnan(levels)
        classes, size = np.unique(np.concatenate((present, np.where(present, levels, 0.0)), axis=1), axis=0,
                                  return_counts=True)
        if len(classes) <= thresholds.CLASS_LIMIT:
            g = len(qp.jgs)
            has, lv = classes[:, :g] > 0, classes[:, g:]
            differ = np.zeros((len(classes), len(classes)), bool)
            for k in range(g):
                differ |= has[:, k][:, None] & has[:, k][None, :] & (lv[:, k][:, None] != lv[:, k][None, :])
            return int((np.outer(size, size) * differ).sum()) // 2
    found = 0
    cols = np.arange(njr, nj)
    step = max(1, thresholds.PAIR_BLOCK_CELLS // max(cols.size, 1))
    for start in range(njr, nj, step):
        rows = np.arange(start, min(start + step, nj))
        fwd, bwd = _pair_counts(qp, rows, cols)
        found += int((((fwd + bwd) > 0) & (cols[None, :] > rows[:, None])).sum())
    return found


def _pair_sums(qp: QueryPrefs) -> tuple:
    """(sum over both-retrieved pairs, their number, sum over all pairs, number with one retrieved, number
    with neither) of count(i > j) / (count(i > j) + count(j > i)) over doc pairs, i the better ranked doc."""
    if qp._pair is not None:
        return qp._pair
    if len(qp.jgs) == 1:
        d = qp.distinct
        # one jg has no conflicts: each pair is 1 when fulfilled, else 0
        qp._pair = (float(d.ful_ret), d.poss_ret, float(d.ful_imp + d.ful_ret), d.poss_imp, d.notoccur)
        return qp._pair
    # several jgs: pairs with a retrieved doc are counted over row blocks of (retrieved doc x doc) matrices
    nj, njr = qp.num_judged, qp.num_judged_ret
    total = 0.0

    def sweep(cols: np.ndarray) -> int:
        nonlocal total
        found = 0
        step = max(1, thresholds.PAIR_BLOCK_CELLS // max(cols.size, 1))
        for start in range(0, njr, step):
            rows = np.arange(start, min(start + step, njr))
            fwd, bwd = _pair_counts(qp, rows, cols)
            both = fwd + bwd
            mask = (both > 0) & (cols[None, :] > rows[:, None])
            found += int(mask.sum())
            if mask.any():
                # trec_eval adds pair by pair in (i, j) order: a sequential sum, continued across blocks
                total = float(np.cumsum(np.concatenate(([total], fwd[mask] / both[mask])))[-1])
        return found

    n_ret = sweep(np.arange(njr))
    s_ret = total
    n_imp = sweep(np.arange(njr, nj))
    qp._pair = (s_ret, n_ret, total, n_imp, _unretrieved_pairs(qp))
    return qp._pair


def _pair(kind: str):
    def kernel(qp: QueryPrefs) -> float:
        s_ret, n_ret, s_all, n_imp, n_none = _pair_sums(qp)
        if kind == "ret":
            return s_ret / n_ret if n_ret else 0.0
        n = n_ret + n_imp + (n_none if kind == "all" else 0)
        return s_all / n if n else 0.0
    return kernel


def _count(fields):
    return lambda qp: float(_tot(qp, *fields))


# ------------------------------------------------------------------ judgment-group qrels (-R qrels_jg)
@dataclass
class JGRanking:
    rels: np.ndarray          # grade of each retrieved doc in rank order (NONPOOL / UNJUDGED when not judged)
    num_ret: int
    num_rel: int
    num_rel_ret: int


def _map_avgjg(jgs: list[JGRanking], level: int, _params) -> float:
    v = 0.0
    for j in jgs:
        isrel = j.rels[:j.num_ret] >= level
        k = np.cumsum(isrel)[isrel]
        if k.size:
            prec = k / (np.flatnonzero(isrel) + 1.0)
            v += float(np.cumsum(prec)[-1]) / j.num_rel if j.num_rel else float("inf")
    return v / len(jgs) if len(jgs) > 1 else v


def _P_avgjg(jgs: list[JGRanking], level: int, cutoffs) -> np.ndarray:
    v = np.zeros(len(cutoffs))
    c = np.asarray(cutoffs, np.int64)
    for j in jgs:
        cum = np.concatenate(([0], np.cumsum(j.rels[:j.num_ret] >= level)))
        v += cum[np.minimum(c, j.num_ret)] / c
    return v / len(jgs) if len(jgs) > 1 else v


def _Rprec_mult_avgjg(jgs: list[JGRanking], level: int, percents) -> np.ndarray:
    v = np.zeros(len(percents))
    for j in jgs:
        cut = np.array([int(p * j.num_rel + 0.9) for p in percents], np.int64)
        cum = np.concatenate(([0], np.cumsum(j.rels[:j.num_ret] >= level)))
        beyond = cut > j.num_ret
        # trec_eval walks the ranking upwards from num_ret, its count starting at num_rel_ret
        so_far = j.num_rel_ret - (cum[j.num_ret] - cum[np.clip(cut, 0, j.num_ret)])
        inside = ~beyond & (cut > 0) & (so_far > 0)
        term = np.zeros(len(percents))
        with np.errstate(divide="ignore", invalid="ignore"):
            term[beyond] = j.num_rel_ret / cut[beyond]
            term[inside] = so_far[inside] / cut[inside]
        v += term
    return v / len(jgs) if len(jgs) > 1 else v


# ------------------------------------------------------------------ the declarations
PREFERENCE_FORMATS = (PREFS, QRELS_PREFS)      # the judgment formats the prefs_* measures are measured against


def _m(name, doc, kernel, params="none", default=(), summary="mean", value="double", formats=PREFERENCE_FORMATS):
    return Measure(name, doc, kernel, params, default, summary, value, formats=formats)


_IMPLIED = "  For A > B with one of them retrieved, fulfilled iff A is; neither retrieved: a failure."
# runid and num_q, measured against every judgment format, are declared with the others in the registry
MEASURES: list[Measure] = [
    _m("prefs_num_prefs_poss", "Preferences possible, whether or not the docs were retrieved. Summary is the sum.",
       _count(_ALL), summary="sum", value="long"),
    _m("prefs_num_prefs_ful", "Preferences fulfilled." + _IMPLIED + " Summary is the sum.", _count(_FUL),
       summary="sum", value="long"),
    _m("prefs_num_prefs_ful_ret", "Preferences fulfilled with both docs retrieved. Summary is the sum.",
       _count(("ful_ret",)), summary="sum", value="long"),
    _m("prefs_simp", "Preferences fulfilled / preferences possible, every preference of every judgment group "
                     "counted." + _IMPLIED, _simple(_FUL, _ALL)),
    _m("prefs_pair", "Mean over doc pairs of the share of judgment groups' preferences the ranking fulfils "
                     "for that pair." + _IMPLIED, _pair("all")),
    _m("prefs_avgjg", "prefs_simp within each judgment group (user), averaged over the groups." + _IMPLIED,
       _avgjg(_FUL, _ALL)),
    _m("prefs_avgjg_Rnonrel", "prefs_avgjg with each group's non-relevant docs (level 0) counted as if there "
                              "were as many as relevant ones (akin to bpref).", _rnonrel(False)),
    _m("prefs_simp_ret", "prefs_simp over pairs with both docs retrieved.", _simple(("ful_ret",), ("poss_ret",))),
    _m("prefs_pair_ret", "prefs_pair over pairs with both docs retrieved.", _pair("ret")),
    _m("prefs_avgjg_ret", "prefs_avgjg over pairs with both docs retrieved.", _avgjg(("ful_ret",), ("poss_ret",))),
    _m("prefs_avgjg_Rnonrel_ret", "prefs_avgjg_Rnonrel over retrieved docs.", _rnonrel(True)),
    _m("prefs_simp_imp", "prefs_simp over pairs with at least one doc retrieved.",
       _simple(_FUL, ("poss_ret", "poss_imp"))),
    _m("prefs_pair_imp", "prefs_pair over pairs with at least one doc retrieved.", _pair("imp")),
    _m("prefs_avgjg_imp", "prefs_avgjg over pairs with at least one doc retrieved.",
       _avgjg(_FUL, ("poss_ret", "poss_imp"))),
    _m("map_avgjg", "map for each judgment group (second qrels column, -R qrels_jg), averaged over the groups.",
       _map_avgjg, formats=(QRELS_JG,)),
    _m("P_avgjg", "P at cutoffs for each judgment group (-R qrels_jg), averaged over the groups.", _P_avgjg,
       LONG_CUTS, STD_CUTS, formats=(QRELS_JG,)),
    _m("Rprec_mult_avgjg", "Rprec_mult for each judgment group (-R qrels_jg), averaged over the groups.",
       _Rprec_mult_avgjg, DOUBLE_CUTS, (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0), formats=(QRELS_JG,)),
]
NICKNAMES = {
    "all_prefs": ["runid", "num_q", *(m.name for m in MEASURES if m.formats == PREFERENCE_FORMATS)],
    "prefs": ["runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
              "prefs_simp", "prefs_pair", "prefs_avgjg"],
    "qrels_jg": ["runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"],
}
