"""The expected interpolated precision (``iprec_at_recall``, ``11pt_avg``) over the random orders of tie groups:
the distribution of a maximum of independent groups.

Notation, per tie group (:mod:`.layout`): ``s`` its start, ``n`` its size, ``m`` its retrieved slots, ``r`` its
relevant docs, ``A`` the relevant docs of the groups above it; ``c`` the relevant docs a recall level needs
(round(level x R), at least 1), so the group's j-th relevant doc counts from ``j0`` = max(1, c - A) on.  Its j-th
relevant doc at the group's i-th place (1-based) has precision (A + j) / (s + i).  ``D`` (``floor_num`` /
``floor_den``) is the value every order surely reaches.
"""
from __future__ import annotations

from ...dependencies import deferred
from ...fast.groups import expand_ranges
from ... import thresholds
from .expected import columns
from .layout import Layout, TieGroupTooLarge, run_ends, run_starts

np = deferred("numpy")

_FIX = "round the scores less coarsely, or ask for measures other than iprec_at_recall and 11pt_avg"


def ex_iprec(lay: Layout, levels, **options):
    return columns([_iprec_level(lay, level) for level in levels])


def ex_11pt(lay: Layout, levels, **options):
    values = ex_iprec(lay, levels)
    total = np.zeros(lay.V)
    for j in range(values.shape[1] - 1, -1, -1):
        total += values[:, j]
    return (total / len(levels))[:, None]


def _iprec_level(lay: Layout, level: float) -> np.ndarray:
    """E[interpolated precision at recall ``level``] = E[max over relevant docs k >= c of k / rank_k] (0 when
    fewer than c are retrieved).  Groups are independent, so P(max <= x) is the product over groups of
    P(group's max <= x): groups whose docs are all relevant (or single) and the ends of the others give a
    sure floor D, every other group holding a counted relevant doc a step function computed exactly at each
    of its possible values above D (a lattice path count: the j-th relevant doc must sit at or above a place
    set by x)."""
    R = lay.num_rel
    c = np.floor(level * R + 0.5).astype(np.int64)
    needed = np.maximum(c, 1)
    r = lay.group_counts(lay.isrel)
    A = lay.above(r)
    s, n, m, query = lay.group_start, lay.group_size, lay.group_slots, lay.group_query
    j0 = np.maximum(1, needed[query] - A)
    counted = (r > 0) & (A + r >= needed[query])
    sure = counted & ((n == r) | (n == 1))
    random = counted & ~sure
    # the floor D: every value the max surely reaches.  A sure group's best counted doc: precision (A + j) /
    # (s + j) grows with j, so the last retrieved one.  A random group retrieved whole surely reaches the
    # precision at its end, (A + r) / (s + n), whatever its order (its last relevant doc is there or above).
    # Values at or below D do not move the max: only the points above it are worked on.
    last = np.minimum(r, m)
    floor_num = np.where(sure, A + last, np.where(random & (m == n), A + r, 0))
    floor_den = np.where(sure, s + last, np.where(random & (m == n), s + n, 1))
    reached = (sure & (last >= j0)) | (random & (m == n))
    dnum = np.zeros(lay.V, np.int64)
    dden = np.ones(lay.V, np.int64)
    if reached.any():
        g = np.flatnonzero(reached)
        value = floor_num[g] / floor_den[g]
        g = g[np.lexsort((value, query[g]))]
        highest = run_ends(query[g])
        dnum[query[g][highest]] = floor_num[g][highest]
        dden[query[g][highest]] = floor_den[g][highest]
    D = dnum / dden
    random = np.flatnonzero(random)
    out = D.copy()
    if random.size:
        out += _above_floor(lay, random, r, A, j0, dnum, dden)
    undefined = (c == 0) & (lay.num_ret == 0)
    out[undefined] = np.nan
    return out


def _points_above(lay: Layout, groups, r, A, j0, dnum, dden):
    """The values a random group's maximum may take above D: (A + j) / (s + i) for counted j, places
    i = j .. j + n - r within the retrieved slots; per group, each value once, ascending.  (group, num, den,
    value) of each."""
    s, n, m = lay.group_start, lay.group_size, lay.group_slots
    which, j = expand_ranges(np.arange(groups.size), j0[groups], r[groups] + 1)
    g = groups[which]
    which, offset = expand_ranges(np.arange(g.size), np.zeros(g.size, np.int64), n[g] - r[g] + 1)
    g, j = g[which], j[which]
    i = j + offset
    keep = i <= m[g]
    g, j, i = g[keep], j[keep], i[keep]
    num, den = A[g] + j, s[g] + i
    query = lay.group_query[g]
    above = num * dden[query] > dnum[query] * den
    g, num, den = g[above], num[above], den[above]
    value = num / den
    o = np.lexsort((value, g))
    g, num, den, value = g[o], num[o], den[o], value[o]
    new = run_starts(g, value)
    return g[new], num[new], den[new], value[new]


def _refuse_early(lay: Layout, groups, r, A, j0, dnum, dden) -> None:
    """Refuse, before the values above D are listed, when the path counts they need surely exceed
    ``thresholds.TIE_IPREC_MAX_CELLS`` steps: a group of more than two relevant docs costs n (r + 1) steps
    for P(max <= D) and for each of its values, and for one j the values of places i are distinct."""
    s, n, m = lay.group_start, lay.group_size, lay.group_slots
    costly = groups[r[groups] > 2]
    if not costly.size:
        return
    which, j = expand_ranges(np.arange(costly.size), j0[costly], r[costly] + 1)
    g = costly[which]
    query = lay.group_query[g]
    top = np.minimum(j + n[g] - r[g], m[g])
    num = (A[g] + j) * dden[query]
    highest_above = np.where(dnum[query] > 0, (num - 1) // np.maximum(dnum[query], 1) - s[g], top)
    places = np.maximum(np.minimum(top, highest_above) - j + 1, 0)
    most = np.zeros(costly.size, np.int64)
    np.maximum.at(most, which, places)
    steps = np.where(most > 0, most + 1, 0) * n[costly] * (r[costly] + 1)
    least = int(steps.sum())
    if least > thresholds.TIE_IPREC_MAX_CELLS:
        big = costly[int(np.argmax(steps))]
        raise TieGroupTooLarge(f"interpolated precision over a tie group of {int(n[big])} documents "
                               f"({int(r[big])} relevant) is too large to compute exactly (at least {least} steps)",
                               fix=_FIX)


def _above_floor(lay: Layout, groups, r, A, j0, dnum, dden) -> np.ndarray:
    """(V,) E[max(D, random groups' maxima)] - D for the groups ``groups`` (each with 0 < r < n)."""
    _refuse_early(lay, groups, r, A, j0, dnum, dden)
    g, num, den, value = _points_above(lay, groups, r, A, j0, dnum, dden)
    out = np.zeros(lay.V)
    if not g.size:
        return out
    # every group with a point above D also needs P(its max <= D)
    holding = np.unique(g)
    holding_query = lay.group_query[holding]
    F = _paths_below(lay, np.concatenate([holding, g]), np.concatenate([dnum[holding_query], num]),
                     np.concatenate([dden[holding_query], den]), r, A, j0)
    at_floor, at_points = F[:holding.size], F[holding.size:]
    # the product over groups of F_g, as x rises through the points: log-sum of non-zero factors and a count of zeros
    # the previous value of each point's group: the point before it in the same group, else F(D)
    previous = at_floor[np.searchsorted(holding, g)]
    previous = np.where(~run_starts(g), np.r_[0.0, at_points[:-1]], previous)
    point_query = lay.group_query[g]
    with np.errstate(divide="ignore"):
        dlog = np.where(at_points > 0, np.log(np.where(at_points > 0, at_points, 1.0)), 0.0) - \
            np.where(previous > 0, np.log(np.where(previous > 0, previous, 1.0)), 0.0)
    dzero = (at_points <= 0).astype(np.int64) - (previous <= 0).astype(np.int64)
    init_log = np.zeros(lay.V)
    init_zero = np.zeros(lay.V, np.int64)
    with np.errstate(divide="ignore"):
        np.add.at(init_log, holding_query, np.where(at_floor > 0, np.log(np.where(at_floor > 0, at_floor, 1.0)), 0.0))
    np.add.at(init_zero, holding_query, (at_floor <= 0).astype(np.int64))
    o = np.lexsort((value, point_query))
    point_query, value, dlog, dzero = point_query[o], value[o], dlog[o], dzero[o]
    first = np.searchsorted(point_query, point_query, side="left")
    clog = np.cumsum(dlog)
    clog = clog - np.r_[0.0, clog][first] + init_log[point_query]
    czero = np.cumsum(dzero)
    czero = czero - np.r_[0, czero][first] + init_zero[point_query]
    product = np.where(czero > 0, 0.0, np.exp(clog))
    # after all the points at one x: the product on [x, next x)
    last_at_x = run_ends(point_query, value)
    x_query, x_value, x_product = point_query[last_at_x], value[last_at_x], product[last_at_x]
    D = dnum / dden
    product_at_floor = np.where(init_zero > 0, 0.0, np.exp(init_log))
    width = np.where(~run_ends(x_query), np.r_[x_value[1:], 0.0] - x_value, 0.0)
    np.add.at(out, x_query, width * (1.0 - x_product))
    firstx = run_starts(x_query)
    np.add.at(out, x_query[firstx], (x_value[firstx] - D[x_query[firstx]]) * (1.0 - product_at_floor[x_query[firstx]]))
    return out


def _paths_below(lay: Layout, g, num, den, r, A, j0) -> np.ndarray:
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


def _bounds(lay: Layout, g, num, den, r, A, j0, width: int) -> np.ndarray:
    """(problems, width) the lowest place (1-based) the j-th relevant doc of the group may take for the max
    to stay at or below num / den: ceil((A + j) den / num) - s, or past the retrieved slots; 1 for docs
    that are not counted; never beyond the group's end + 1."""
    s, n, m = lay.group_start, lay.group_size, lay.group_slots
    jj = np.arange(1, width + 1)[None, :]
    nz = num[:, None]
    need = np.where(nz > 0, -((-(A[g][:, None] + jj) * den[:, None]) // np.maximum(nz, 1)) - s[g][:, None],
                    m[g][:, None] + 1)
    bound = np.minimum(need, m[g][:, None] + 1)
    bound = np.where(jj >= j0[g][:, None], bound, 1)
    return np.clip(bound, 1, n[g][:, None] + 1)


def _few_below(lay: Layout, g, num, den, r, A, j0) -> np.ndarray:
    """:func:`_paths_below` for groups of one or two relevant docs: the places i (or pairs i1 < i2) at or
    above the bounds, over all C(n, r) of them."""
    n = lay.group_size[g].astype(np.float64)
    b = _bounds(lay, g, num, den, r, A, j0, 2).astype(np.float64)
    one = np.maximum(n - b[:, 0] + 1, 0) / n
    lo = np.maximum(b[:, 1], b[:, 0] + 1)
    k = np.maximum(n - lo + 1, 0)
    pairs = k * (lo + n) / 2 - b[:, 0] * k                  # sum over i2 = lo .. n of (i2 - b1)
    two = pairs / np.maximum(n * (n - 1) / 2, 1)
    return np.where(r[g] == 1, one, two)


def _dp_below(lay: Layout, g, num, den, r, A, j0) -> np.ndarray:
    """:func:`_paths_below` by a probability DP over the group's places (drawing its docs one by one),
    vectorized over problems whose groups are of about the same size (sizes and relevant counts within a
    factor of two: little padding)."""
    out = np.zeros(g.size)
    sizes, relevant = lay.group_size[g], r[g]
    bucket = _bit_length(sizes) * 64 + _bit_length(relevant)
    keys, inverse = np.unique(bucket, return_inverse=True)
    widths = np.zeros(keys.size, np.int64)
    np.maximum.at(widths, inverse, sizes)
    heights = np.zeros(keys.size, np.int64)
    np.maximum.at(heights, inverse, relevant + 1)
    work = int((np.bincount(inverse, minlength=keys.size) * widths * heights).sum())
    if work > thresholds.TIE_IPREC_MAX_CELLS:
        big = int(np.argmax(sizes * (relevant + 1)))
        raise TieGroupTooLarge(f"interpolated precision over a tie group of {int(sizes[big])} documents "
                               f"({int(relevant[big])} relevant) is too large to compute exactly ({work} steps)",
                               fix=_FIX)
    for b in range(keys.size):
        sel = np.flatnonzero(inverse == b)
        size, rr = sizes[sel], relevant[sel]
        rmax = int(rr.max())
        bound = _bounds(lay, g[sel], num[sel], den[sel], r, A, j0, rmax)
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
