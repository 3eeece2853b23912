"""ir_measures' diversity names (``alpha_nDCG@k``, ``ERR_IA@k``, ``NRBP``, ...) on treckit eval's one path, at the
numbers of pyndeval, the provider ir_measures 0.4 computes them with (ndeval's C code).

* Qrels are subtopic qrels: the iteration field is the subtopic, a document is judged once per subtopic.  Subtopics
  are numbered in order of first appearance over the whole qrels (pyndeval's numbering: the order each document's
  gains are summed in); a judgment of at least ``rel`` is relevant.  The same (query, subtopic, document) judged
  twice is refused (pyndeval keeps the last judgment while counting both towards the subtopic).
* Each query's documents are ranked as pyndeval ranks them: score descending, ties to the lesser doc id.
* ``judged_only`` (ir_measures' parameter; ``-J`` sets its default) keeps the documents the qrels judge, with any
  judgment, as ir_measures' code filters the run before pyndeval sees it (ir_measures 0.4.3 itself stops there
  with a TypeError; the values are pyndeval's on the filtered run); NRBP, nNRBP and StRecall take no such
  parameter in ir_measures, so ``-J`` leaves them alone.
* A query without judgments gets no value (as pyndeval); under ``-c`` a judged query the run lacks gets 0 (ndeval
  ``-c``).

The computations are those of :func:`treckit.measures.diversity.run_values` (``treckit ndeval``'s), every query at
once in the same operations and order.
"""
from __future__ import annotations

from ..dependencies import deferred
from ..console.errors import InputError
from . import diversity
from .. import thresholds
from ..fast.arrow import call
from ..fast.strings import take
from ..model import Qrels
from ..ranking.judged import seq_segment_sum

np = deferred("numpy")

NDEVAL = "ndeval 4.5 as pyndeval 0.0.8 runs it (ir_measures 0.4's provider)"


def asked(requests) -> list:
    """The requests of diversity measures among ``requests``."""
    return [r for r in requests if r.measure.reference == NDEVAL]


def refuse_streamed(requests, path) -> None:
    """The streaming engine evaluates a run chunk by chunk, each chunk against its queries' judgments; the
    subtopics' numbering needs the whole qrels at once, so the diversity names are computed in memory only."""
    div = asked(requests)
    if div:
        raise InputError(f"{div[0].text} is computed in memory only, and this run is larger than --memory-limit "
                         "(it would be streamed)", path=str(path),
                         fix="give --memory-limit 0 (read the run whole), or evaluate the diversity measures "
                             "with treckit ndeval")


def refuse_cut(requests, max_docs) -> None:
    """-M cuts trec_eval's order; the measures ranking score ties by doc id ascending read another."""
    other = [r for r in requests if r.measure.ties == "ascending"]
    if other and max_docs is not None:
        raise InputError(f"-M {max_docs} with {other[0].text}: -M keeps the first documents of trec_eval's order, "
                         f"while {other[0].text} ranks score ties by doc id ascending (as its reference does), so "
                         "the documents kept would not be the first of its order",
                         fix=f"evaluate {other[0].text} without -M, in a treckit eval of its own")


def judged_docs(qrels, requests):
    """The qrels the ranking reads when diversity measures are asked for: one line per judged document.  Alone,
    the diversity measures read subtopic qrels, collapsed here to each document's highest judgment (only which
    documents are judged matters to the ranking); beside other measures the qrels must judge each document once,
    since those read the grade of a document."""
    import pyarrow as pa

    div = asked(requests)
    t = qrels.table
    (line_q,), _ = _encoded(t.column("qid"))
    (line_d,), _ = _encoded(t.column("docid"))
    order, first = _groups(line_q, line_d)
    if first.all():
        return qrels
    twice = int(order[~first].min())                    # the first line judging a document again
    others = [r for r in requests if r.measure.reference != NDEVAL]
    if others:
        q, d = (t.column(c)[twice].as_py() for c in ("qid", "docid"))
        raise InputError(f"the qrels judge doc {d!r} more than once for query {q!r}: subtopic qrels, "
                         f"as {div[0].text} reads them (the iteration field is the subtopic), but {others[0].text} "
                         "reads one judgment per document",
                         fix=f"evaluate {others[0].text} in a treckit eval of its own with ad hoc qrels (one line per "
                             f"judged document), and {div[0].text} with the subtopic qrels")
    starts = np.flatnonzero(first)
    highest = np.maximum.reduceat(t.column("grade").to_numpy().astype(np.int64)[order], starts)
    lines = order[starts]                               # each document's first line, in line order
    by_line = np.argsort(lines, kind="stable")
    lines = lines[by_line]
    one = pa.table({"qid": take(t.column("qid"), lines).cast(pa.string()),
                    "iter": pa.array(["0"] * lines.size, pa.string()),
                    "docid": take(t.column("docid"), lines).cast(pa.string()),
                    "grade": pa.array(highest[by_line], pa.int64())})
    return Qrels(one, qrels.written)


def _groups(*codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lines in order of ``codes`` (the first the major key; lines of equal codes in line order) and whether
    each of those lines is the first of its codes."""
    order = np.lexsort(codes[::-1])
    first = np.ones(order.size, bool)
    if order.size:
        first[1:] = np.any([np.diff(c[order]) != 0 for c in codes], axis=0)
    return order, first


def _encoded(*columns) -> tuple[list[np.ndarray], object]:
    """Each of ``columns`` (string columns) as codes into one dictionary of their distinct strings, numbered in order
    of first appearance over the columns in turn, and that dictionary."""
    import pyarrow as pa

    parts = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in columns]
    parts = [p if p.type == pa.string() else p.cast(pa.string()) for p in parts]
    coded = call("dictionary_encode", pa.concat_arrays(parts))
    codes = coded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    cuts = np.cumsum([0] + [len(p) for p in parts])
    return [codes[a:b] for a, b in zip(cuts[:-1], cuts[1:])], coded.dictionary


def _within_topic(topic: np.ndarray, item: np.ndarray, items: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each line's index among its topic's distinct items in item order, with the distinct (topic, item) keys
    (``topic * items + item``, sorted) and the index of each among its topic's."""
    key = topic * items + item
    distinct, inverse = np.unique(key, return_inverse=True)
    owner = distinct // max(items, 1)
    index = np.arange(distinct.size) - np.searchsorted(owner, owner, side="left")
    return index[inverse.reshape(-1)], distinct, index


def _subtopic_lines(qrels, where: dict, run_docs) -> tuple[np.ndarray, ...]:
    """The qrels' lines as (topic, row, column, judgment) and the row of each of ``run_docs`` (the
    judged documents of the run, with their topics): subtopics numbered by first appearance over the whole qrels
    (pyndeval's numbering), each topic's subtopics in number order (its columns) and its documents in byte order (its
    rows).  The same (query, subtopic, document) judged twice is refused."""
    t = qrels.table
    e_topic, e_texts = run_docs
    (line_q,), qnames = _encoded(t.column("qid"))
    (line_sub,), _ = _encoded(t.column("iter"))
    (line_docs, e_docs), docnames = _encoded(t.column("docid"), e_texts)
    line_topic = np.array([where[q] for q in qnames.to_pylist()], np.int64)[line_q]
    byte_rank = np.empty(len(docnames), np.int64)          # Arrow orders strings by their UTF-8 bytes
    byte_rank[call("sort_indices", docnames).to_numpy(zero_copy_only=False)] = np.arange(len(docnames))
    line_doc, e_doc = byte_rank[line_docs], byte_rank[e_docs]
    order, first = _groups(line_topic, line_sub, line_doc)
    if not first.all():
        line = int(order[~first].min())                   # the first line judging a triple again
        q, s, d = (t.column(c)[line].as_py() for c in ("qid", "iter", "docid"))
        raise InputError(f"the qrels judge doc {d!r} twice for query {q!r} and subtopic {s!r}",
                         fix="keep one judgment per (query, subtopic, document)")
    line_col, _, _ = _within_topic(line_topic, line_sub, int(line_sub.max(initial=-1)) + 1)
    line_row, distinct, index = _within_topic(line_topic, line_doc, len(docnames))
    e_row = index[np.searchsorted(distinct, e_topic * len(docnames) + e_doc)] if e_doc.size else np.zeros(0, np.int64)
    grades = t.column("grade").to_numpy().astype(np.int64)
    return line_topic, line_row, line_col, grades, e_row


def _settings(req, options) -> tuple[int, float, float, bool, str, int | None]:
    """(relevance level, alpha, beta, judged only, ndeval's name, cutoff) of a request."""
    opts = dict(req.options)
    level = options.level if req.level is None else req.level
    judged = opts["judged_only"] if "judged_only" in opts else (
        options.judged_only if req.judged_only is None else req.judged_only)
    return (level, opts.get("alpha", diversity.ALPHA), opts.get("beta", diversity.BETA), judged, opts["measure"],
            opts.get("cutoff"))


def blocks(qrels, run, base, requests, options) -> dict:
    """{request's key: (Q,) values} of the diversity ``requests`` for the queries of ``base`` (the ranked view built
    with ``ascending_ties`` from :func:`judged_docs`, every judged query, in its order), ``qrels`` the subtopic qrels.
    Every query at once, in the operations and the order of :func:`treckit.measures.diversity.run_values`, so the
    doubles are the same (tests/measures/test_diversity_names.py, the pyndeval-names fuzz)."""
    import pyarrow as pa

    settings = {r.key: _settings(r, options) for r in requests}
    texts_of = {r.key: r.text for r in requests}
    # the run's judged documents: topic, rank in pyndeval's order, row among the topic's documents
    keep = ~base.missing[base.q] if base.q.size else np.zeros(0, bool)
    e_topic = base.q[keep]
    e_pos = base.ascending_pos[keep] if base.ascending_pos is not None else np.zeros(0, np.int64)
    texts = take(run.table.column("docid"), base.row[keep]) if keep.any() else pa.array([], pa.string())
    line_topic, line_row, line_col, line_grade, e_row = _subtopic_lines(
        qrels, {q: i for i, q in enumerate(base.qids)}, (e_topic, texts))
    out = {}
    groups: dict[tuple, list] = {}
    for key, st in settings.items():
        groups.setdefault(st[:4], []).append(key)
    for (level, alpha, beta, judged), keys in groups.items():
        binary = (line_grade >= level).astype(np.int64)
        names = frozenset(settings[key][4] for key in keys)
        asked_depth = max([diversity.DEPTH] + [settings[key][5] for key in keys if settings[key][5] is not None])
        depth = ranks_needed(asked_depth, e_topic, e_pos, judged, line_topic, line_row, line_col, binary, alpha,
                              base.Q, [(texts_of[key], settings[key][5]) for key in keys])
        values: dict[str, np.ndarray] = {}
        for topics in topic_chunks(line_topic, line_row, line_col, base.Q, depth):    # the padded arrays stay small
            local = np.full(base.Q, -1, np.int64)
            local[topics] = np.arange(topics.size)
            lines, entries = local[line_topic] >= 0, local[e_topic] >= 0
            lt, lr, lc = local[line_topic[lines]], line_row[lines], line_col[lines]
            rel = np.zeros((topics.size, int(lr.max(initial=-1)) + 1, int(lc.max(initial=-1)) + 1), np.int64)
            rel[lt, lr, lc] = binary[lines]
            nrel_sub = np.zeros((topics.size, rel.shape[2]), np.int64)
            np.add.at(nrel_sub, (lt, lc), binary[lines])
            part = _all_topics(rel, nrel_sub, local[e_topic[entries]], e_pos[entries], e_row[entries], judged, alpha,
                               beta, depth, topics.size, names)
            for name, v in part.items():
                values.setdefault(name, np.zeros((base.Q,) + v.shape[1:]))[topics] = v
        for key in keys:
            name, cutoff = settings[key][4], settings[key][5]
            v = values.get(name, np.zeros((base.Q, depth)))
            if cutoff is not None:
                v = _past_depth(values, base.Q, cutoff) if name == "P-IA" and cutoff > depth \
                    else v[:, min(cutoff, depth) - 1]
            out[key] = np.where(base.missing, 0.0, v)
    return out


def ranks_needed(asked: int, e_topic, e_pos, judged: bool, line_topic, line_row, line_col, binary, alpha: float,
                  nq: int, cutoffs: list[tuple[str, int | None]]) -> int:
    """How many ranks to compute for cutoffs up to ``asked``.  Past the run's last judged document, the ideal
    ranking's last relevant one and the rank where the ideal-ideal sums that divide alpha-DCG and ERR-IA stop
    changing (their terms, which only fall, below half a unit in the last place of the sum), no value changes
    but P-IA's, whose count stays and is divided by the cutoff (:func:`_past_depth`): so a cutoff beyond them
    costs what they cost, not memory in proportion to it.  A cutoff past a sum that changes for more than
    ``thresholds.DIVERSITY_MAX_RANKS`` ranks (alpha 0 or near it) is refused before anything is computed
    (``cutoffs``: each request's text and cutoff)."""
    if asked <= diversity.DEPTH:
        return asked
    counts = np.bincount(e_topic, minlength=nq) if e_topic.size else np.zeros(nq, np.int64)
    run_depth = int(counts.max(initial=0) if judged else (e_pos.max(initial=-1) + 1))
    relevant_docs = np.unique(np.stack([line_topic, line_row])[:, binary > 0], axis=1)
    ideal_length = int(np.bincount(relevant_docs[0], minlength=nq).max(initial=0))
    need = max(diversity.DEPTH, run_depth, ideal_length)
    if asked <= need:
        return asked
    covered = np.unique(np.stack([line_topic, line_col])[:, binary > 0], axis=1)
    actual = np.unique(np.bincount(covered[0], minlength=nq))
    steady = diversity.steady_rank(actual[actual > 0], alpha, min(asked, thresholds.DIVERSITY_MAX_RANKS))
    if steady is None and asked <= thresholds.DIVERSITY_MAX_RANKS:
        return asked
    if steady is None:
        text = next(t for t, k in cutoffs if k is not None and k > thresholds.DIVERSITY_MAX_RANKS)
        raise InputError(f"{text}: with alpha {alpha:g} the ideal gains that normalise it fall so slowly that its "
                         f"value still changes past rank {thresholds.DIVERSITY_MAX_RANKS}, and deeper cutoffs are "
                         "not computed",
                         fix=f"use a cutoff of at most {thresholds.DIVERSITY_MAX_RANKS}, or a larger alpha")
    return min(asked, max(need, steady))


def _past_depth(values: dict, nq: int, cutoff: int) -> np.ndarray:
    """P-IA at a ``cutoff`` past every ranked document: its pairs of a document and a subtopic it is relevant
    to, all counted by the last rank computed, over ``cutoff`` x the subtopics (the product exact, then
    rounded once, as at the ranks computed)."""
    if "P-IA pairs" not in values:
        return np.zeros(nq)
    pairs, actual = values["P-IA pairs"].astype(np.int64), values["P-IA subtopics"].astype(np.int64)
    denominator = np.array([float(cutoff * a) for a in actual.tolist()])
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(actual > 0, pairs / denominator, 0.0)


_LISTED = frozenset({"ERR-IA", "alpha-DCG", "NRBP"})            # from the run's list alone
_NORMALIZED = frozenset({"nERR-IA", "alpha-nDCG", "nNRBP"})    # over the ideal list: also the run's
NAMES = _LISTED | _NORMALIZED | {"P-IA", "strec", "MAP-IA"}

def topic_chunks(line_topic: np.ndarray, line_row: np.ndarray, line_col: np.ndarray, nq: int, depth: int) -> list[np.ndarray]:
    """The topics in groups whose padded (topics x documents x subtopics) arrays, and (topics x ``depth`` ranks)
    ones, hold at most :data:`treckit.thresholds.DIVERSITY_BLOCK_CELLS` cells, topics of similar numbers of
    documents together."""
    rows, cols = np.zeros(nq, np.int64), np.zeros(nq, np.int64)
    np.maximum.at(rows, line_topic, line_row + 1)
    np.maximum.at(cols, line_topic, line_col + 1)
    order = np.argsort(rows, kind="stable")
    rows, cols = rows[order], cols[order]
    out, start, most = [], 0, thresholds.DIVERSITY_BLOCK_CELLS
    while start < nq:       # as many topics as fit, each chunk padded to its last (largest) topic's documents
        end = min(nq, start + most + 1)
        cells = np.arange(1, end - start + 1) * rows[start:end] * np.maximum.accumulate(cols[start:end])
        over = cells > most
        stop = start + max(1, int(np.argmax(over)) if over.any() else end - start)
        stop = min(stop, start + max(1, most // max(depth, 1)))
        out.append(order[start:stop])
        start = stop
    return out


def _lists(score: np.ndarray, nrbp_sum: np.ndarray, actual: np.ndarray, alpha: float, beta: float,
           depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`diversity.list_values` of every topic at once: ``score`` the (topics x ranks) scores of the first
    ranks (0 past a list's end), ``nrbp_sum`` the sum over the whole list of score_i * beta^i."""
    top = np.zeros((score.shape[0], depth))
    shown = min(depth, score.shape[1])
    top[:, :shown] = score[:, :shown]
    discount = diversity.discounts(depth)
    ranks = np.arange(1, depth + 1, dtype=np.float64)
    start = np.full((score.shape[0], depth), 1.0 - alpha)
    start[:, 0] = actual
    ideal_gain = np.cumprod(start, axis=1)
    dcg = np.cumsum(top * discount, axis=1)
    err = np.cumsum(top / ranks, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        dcg[:, 1:] /= np.cumsum(ideal_gain * discount, axis=1)[:, 1:]
        err[:, 1:] /= np.cumsum(ideal_gain / ranks, axis=1)[:, 1:]
        nrbp = nrbp_sum * ((1 - (1 - alpha) * beta) / actual)
    none = actual == 0
    dcg[none], err[none], nrbp[none] = 0.0, 0.0, 0.0
    return dcg, err, nrbp


def _ideal_scores(rel: np.ndarray, alpha: float, most: int | None = None) -> np.ndarray:
    """:func:`diversity.ideal_scores` of every topic at once (topics x ranks, 0 past a topic's ideal list), its first
    ``most`` ranks only if given (the greedy picks rank by rank: the first ranks are the same)."""
    relevant = rel.any(axis=2)
    steps = int(relevant.sum(axis=1).max(initial=0))
    steps = steps if most is None else min(steps, most)
    gain = np.ones((rel.shape[0], rel.shape[2]))
    left = relevant.copy()
    done = np.zeros(rel.shape[0], bool)
    out = np.zeros((rel.shape[0], steps))
    keep = 1.0 - alpha
    topics = np.arange(rel.shape[0])
    for step in range(steps):
        terms = rel * gain[:, None, :]
        score = np.cumsum(terms, axis=2)[..., -1] if rel.shape[2] else np.zeros(rel.shape[:2])
        score[~left] = -1.0
        best = score.max(axis=1)
        done |= best <= 0.0
        pick = rel.shape[1] - 1 - np.argmax((score == best[:, None])[:, ::-1], axis=1)   # the greatest docno
        out[:, step] = np.where(done, 0.0, best)
        on = topics[~done]
        left[on, pick[on]] = False
        gain[on] *= np.where(rel[on, pick[on]] > 0, keep, 1.0)
    return out


def _all_topics(rel, nrel_sub, e_topic, e_pos, e_row, judged, alpha, beta, depth, nq,
                names=frozenset(NAMES)) -> dict[str, np.ndarray]:
    """The ndeval measures ``names`` of every topic (arrays over ranks 1..depth for the ranked ones): the run's judged
    documents are ``e_topic``, ``e_pos`` (rank), ``e_row`` (row of ``rel``)."""
    actual = np.count_nonzero(nrel_sub, axis=1)
    order = np.lexsort((e_pos, e_topic))
    t, pos, r = e_topic[order], e_pos[order], e_row[order]
    first = np.searchsorted(t, t, side="left")
    if judged:                                      # only judged documents ranked: renumbered 0, 1, ...
        pos = np.arange(t.size) - first
    sub = rel[t, r]                                 # (entries x subtopics), 0/1
    found = np.cumsum(sub, axis=0)
    found -= np.concatenate((np.zeros((1, sub.shape[1]), np.int64), found))[first]     # within each topic
    shown = pos < depth
    some = actual > 0
    out = {}
    if names & (_LISTED | _NORMALIZED):
        covered_before = found - sub
        powers = diversity.running_powers(1.0 - alpha, int(covered_before.max(initial=0)) + 1)
        weighted = sub * powers[covered_before]
        score = np.cumsum(weighted, axis=1)[:, -1] if sub.shape[1] else np.zeros(t.size)
        beta_powers = diversity.running_powers(beta, int(pos.max(initial=-1)) + 1)
        run_nrbp = seq_segment_sum(score * beta_powers[pos], t, nq) if t.size else np.zeros(nq)
        run_top = np.zeros((nq, depth))
        run_top[t[shown], pos[shown]] = score[shown]
        dcg, err, nrbp = _lists(run_top, run_nrbp, actual, alpha, beta, depth)
        out.update({"ERR-IA": err, "alpha-DCG": dcg, "NRBP": nrbp})
    if names & _NORMALIZED:
        # nNRBP sums the whole ideal list; the others read its first ``depth`` ranks, the greedy's first picks
        ideal = _ideal_scores(rel, alpha, None if "nNRBP" in names else depth)
        ideal_nrbp = np.cumsum(ideal * diversity.running_powers(beta, ideal.shape[1]), axis=1)[:, -1] \
            if ideal.shape[1] else np.zeros(nq)
        idcg, ierr, inrbp = _lists(ideal, ideal_nrbp, actual, alpha, beta, depth)
        ndcg, nerr = np.zeros((nq, depth)), np.zeros((nq, depth))
        nonzero = dcg != 0
        ndcg[nonzero] = dcg[nonzero] / idcg[nonzero]
        nerr[nonzero] = err[nonzero] / ierr[nonzero]
        with np.errstate(divide="ignore", invalid="ignore"):
            nnrbp = np.where(inrbp != 0, nrbp / np.where(inrbp != 0, inrbp, 1.0),
                             np.where(nrbp == 0, diversity.nan_of_zero_by_zero(), np.copysign(np.inf, nrbp)))
        out.update({"nERR-IA": nerr, "alpha-nDCG": ndcg, "nNRBP": nnrbp})
    if "P-IA" in names:
        pairs = np.zeros((nq, depth), np.int64)
        np.add.at(pairs, (t[shown], pos[shown]), sub[shown].sum(axis=1))
        pairs = np.cumsum(pairs, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out["P-IA"] = np.where(some[:, None], pairs / (np.arange(1, depth + 1) * actual[:, None]), 0.0)
        out["P-IA pairs"], out["P-IA subtopics"] = pairs[:, -1], actual     # for cutoffs past the ranks computed
    if "strec" in names:
        first_cover = np.full(rel.shape[::2], depth, np.int64)
        hit_e, hit_s = np.nonzero(sub[shown])
        np.minimum.at(first_cover, (t[shown][hit_e], hit_s), pos[shown][hit_e])
        seen = (first_cover[:, :, None] <= np.arange(depth)).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out["strec"] = np.where(some[:, None], seen / actual[:, None], 0.0)
    if "MAP-IA" in names:
        terms = np.where(sub > 0, found / (pos + 1.0)[:, None], 0.0)
        total = np.zeros(nq)
        for j in range(sub.shape[1]):
            totals = seq_segment_sum(terms[:, j], t, nq) if t.size else np.zeros(nq)
            with np.errstate(divide="ignore", invalid="ignore"):
                total += np.where(nrel_sub[:, j] > 0, totals / np.maximum(nrel_sub[:, j], 1), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            out["MAP-IA"] = np.where(some, total / np.maximum(actual, 1), 0.0)
    return out
