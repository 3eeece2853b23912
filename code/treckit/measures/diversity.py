"""Intent-aware diversity measures as ndeval (version 4.5, the TREC Web track's tool) computes them, bit for bit:
alpha-DCG@k and alpha-nDCG@k (Clarke et al., SIGIR 2008), ERR-IA@k and nERR-IA@k (Chapelle et al., CIKM 2009),
NRBP and nNRBP (Clarke et al., ICTIR 2009), MAP-IA, P-IA@k and subtopic recall strec@k (Agrawal et al., WSDM 2009;
Zhai et al., SIGIR 2003).

A topic's judgments are binary per subtopic (a judgment above 0 is 1).  A document at rank i (from 0) covering
subtopics S scores sum over s in S of (1 - alpha)^(times s was covered above it), summed in subtopic order.  Then:

* alpha-DCG@k = (sum over i < k of score_i * log(2)/log(i + 2)) / (the same over an "ideal ideal" list whose
  rank i scores A * (1 - alpha)^i, A the subtopics with a relevant document), the discount of rank 0 being 1;
* ERR-IA@k the same with the discount 1/(i + 1);
* ndeval divides by the ideal-ideal sum from k = 2 on only: at k = 1 both are the raw score (a quirk kept);
* alpha-nDCG@k and nERR-IA@k divide the run's value by the value of the ideal ranking, built greedily (at
  each rank the document of highest score, ties to the greatest docno); 0 where the run's alpha-DCG@k is 0;
* NRBP = (1 - (1 - alpha) * beta) / A * sum over every rank of score_i * beta^i; nNRBP divides by the ideal's
  (a topic without relevant documents gives 0/0, NaN, as in ndeval);
* MAP-IA = mean over the A subtopics of AP against that subtopic's relevant documents;
* P-IA@k = (pairs of a document in the top k and a subtopic it is relevant to) / (k * A);
* strec@k = subtopics covered by the top k / A.

ndeval keeps 20 ranks (``DEPTH``); cutoffs above 20 are computed here the same way (ndeval and pyndeval refuse
them).  Every sum runs in ndeval's order and every power is a running product, as ndeval computes them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..dependencies import deferred
from ..console.errors import InputError

np = deferred("numpy")

DEPTH = 20
ALPHA = 0.5
BETA = 0.5
CUTOFF_MEASURES = ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "P-IA", "strec")
WHOLE_MEASURES = ("NRBP", "nNRBP", "MAP-IA")
NDEVAL_CUTOFFS = (5, 10, 20)


def running_powers(base: float, n: int, start: float = 1.0) -> np.ndarray:
    """start, start*base, (start*base)*base, ... (n values): the running product ndeval keeps."""
    if n <= 0:
        return np.zeros(0)
    return np.cumprod(np.concatenate(([start], np.full(n - 1, base))))


def discounts(n: int) -> np.ndarray:
    """ndeval's ``discount``: 1 at rank 0, log(2)/log(i + 2) after, from the C library's log."""
    return np.array([1.0] + [math.log(2.0) / math.log(i + 2.0) for i in range(1, n)])[:n]


def steady_rank(actual: np.ndarray, alpha: float, most: int, block: int = 1 << 16) -> int | None:
    """The first cutoff from which the ideal-ideal sums that divide alpha-DCG@k and ERR-IA@k (ranks 2 on:
    ``actual`` * (1 - alpha)^i times the rank's discount, and over the rank) stay what they are, for each of the
    subtopic counts ``actual``; None if some still changes at cutoff ``most``.  Each sum is computed as
    :func:`list_values` computes it, a block of ranks at a time; its terms only fall, so once one is below half
    a unit in the last place of the sum before it, it and every later one leave the sum as it is."""
    if actual.size == 0:
        return 1
    keep = 1.0 - alpha
    gain = actual.astype(np.float64)[:, None]
    sums = np.zeros((2, actual.size, 1))
    steady = np.full((2, actual.size), -1, np.int64)
    for first in range(0, most, block):
        ranks = np.arange(first, min(most, first + block))
        if first == 0:
            gains = np.cumprod(np.concatenate([gain, np.full((actual.size, ranks.size - 1), keep)], axis=1), axis=1)
        else:
            gains = np.cumprod(np.concatenate([gain, np.full((actual.size, ranks.size), keep)], axis=1), axis=1)[:, 1:]
        gain = gains[:, -1:]
        discount = np.array([1.0 if i == 0 else math.log(2.0) / math.log(i + 2.0) for i in ranks.tolist()])
        for s, terms in enumerate((gains * discount, gains / (ranks + 1.0))):
            running = np.cumsum(np.concatenate([sums[s], terms], axis=1), axis=1)
            settled = terms < np.spacing(running[:, :-1]) / 2      # the sum before each term: 0 before the first
            settled[:, 0] &= first > 0
            found = settled.any(axis=1) & (steady[s] < 0)
            steady[s, found] = first + np.argmax(settled[found], axis=1)
            sums[s] = running[:, -1:]
        if (steady >= 0).all():
            return int(steady.max())
    return None


def _row_sums(values: np.ndarray) -> np.ndarray:
    """Each row summed left to right (a running sum, as ndeval's loop over subtopics adds)."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0])
    return np.cumsum(values, axis=1)[:, -1]


def scores(rel: np.ndarray, alpha: float) -> np.ndarray:
    """The score of each rank of a ranked list: ``rel`` (ranks x subtopics, 0/1) in rank order."""
    if rel.shape[0] == 0:
        return np.zeros(0)
    covered_before = np.cumsum(rel, axis=0) - rel
    powers = running_powers(1.0 - alpha, int(covered_before.max(initial=0)) + 1)
    return _row_sums(rel * powers[covered_before])


@dataclass
class ListValues:
    """What ndeval keeps of one ranked list (a run's, or the ideal one): per rank below ``depth`` the
    normalised cumulative alpha-DCG and ERR, and the NRBP."""

    dcg: np.ndarray
    err: np.ndarray
    nrbp: float


def list_values(score: np.ndarray, actual: int, alpha: float, beta: float, depth: int) -> ListValues:
    """ndeval's computeDCG, computeERR and computeNRBP over the scores of a ranked list (every rank for NRBP,
    the first ``depth`` for the others), ``actual`` the subtopics with a relevant document."""
    if actual == 0:
        return ListValues(np.zeros(depth), np.zeros(depth), 0.0)
    top = np.zeros(depth)
    shown = min(depth, len(score))
    top[:shown] = score[:shown]
    discount = discounts(depth)
    ideal_gain = running_powers(1.0 - alpha, depth, float(actual))
    ranks = np.arange(1, depth + 1, dtype=np.float64)
    dcg = np.cumsum(top * discount)
    err = np.cumsum(top / ranks)
    dcg[1:] /= np.cumsum(ideal_gain * discount)[1:]
    err[1:] /= np.cumsum(ideal_gain / ranks)[1:]
    nrbp = float(np.cumsum(score * running_powers(beta, len(score)))[-1]) if len(score) else 0.0
    return ListValues(dcg, err, nrbp * ((1 - (1 - alpha) * beta) / actual))


@dataclass
class TopicJudgments:
    """A topic's subtopic judgments as ndeval holds them: its judged documents in ascending docno order (their
    rows of ``rel``), the relevant count of each subtopic (``nrel_sub``: every judgment line adds its
    judgment), the subtopics with one (``actual``), and the ideal ranking's values."""

    docs: list
    rel: np.ndarray                  # documents x subtopics, 0/1
    nrel_sub: np.ndarray
    actual: int
    ideal: ListValues


def ideal_scores(rel: np.ndarray, alpha: float) -> np.ndarray:
    """The scores of ndeval's greedy ideal ranking of the documents ``rel`` (rows in ascending docno order):
    at each rank the document of highest score given the ranks above, ties to the greatest docno.  Documents
    relevant to nothing never beat a relevant one, and once the best score is 0 every later rank scores 0,
    so only relevant documents are ranked."""
    relevant = rel[rel.any(axis=1)].astype(np.float64)
    gain = np.ones(rel.shape[1])
    left = np.ones(len(relevant), dtype=bool)
    out = []
    keep = 1.0 - alpha
    for _ in range(len(relevant)):
        score = _row_sums(relevant * gain)
        score[~left] = -1.0
        best = score.max()
        if best <= 0.0:
            break
        pick = len(score) - 1 - int(np.argmax(score[::-1] == best))       # the last of the best: greatest docno
        out.append(best)
        left[pick] = False
        gain[relevant[pick] > 0] *= keep
    return np.array(out)


def topic_judgments(docs: list, rel: np.ndarray, nrel_sub: np.ndarray, alpha: float, beta: float,
                    depth: int) -> TopicJudgments:
    """A topic's judgments (``docs`` ascending, ``rel`` their 0/1 rows) with its ideal ranking's values."""
    actual = int(np.count_nonzero(nrel_sub))
    ideal = list_values(ideal_scores(rel, alpha), actual, alpha, beta, depth)
    return TopicJudgments(docs, rel, nrel_sub, actual, ideal)


@dataclass
class TopicValues:
    """Every ndeval measure of one topic: arrays over ranks 1..depth (index k - 1) and the whole-list ones."""

    err: np.ndarray
    nerr: np.ndarray
    dcg: np.ndarray
    ndcg: np.ndarray
    nrbp: float
    nnrbp: float
    map_ia: float
    precision: np.ndarray
    strec: np.ndarray

    def value(self, measure: str, cutoff: int | None = None) -> float:
        """One measure by ndeval's name (``alpha-nDCG``, ``NRBP``, ...), at ``cutoff`` for the ranked ones."""
        whole = {"NRBP": self.nrbp, "nNRBP": self.nnrbp, "MAP-IA": self.map_ia}
        if measure in whole:
            return whole[measure]
        ranked = {"ERR-IA": self.err, "nERR-IA": self.nerr, "alpha-DCG": self.dcg, "alpha-nDCG": self.ndcg,
                  "P-IA": self.precision, "strec": self.strec}[measure]
        return float(ranked[cutoff - 1])


def zero_values(depth: int) -> TopicValues:
    """What ndeval prints for a topic of the run that has no judgments: zeros."""
    z = np.zeros(depth)
    return TopicValues(z, z, z, z, 0.0, 0.0, 0.0, z, z)


def nan_of_zero_by_zero() -> float:
    """0.0/0.0 as the x86 hardware gives it, with its sign bit set (C's printf shows it as -nan)."""
    return -math.nan


def run_values(judged: TopicJudgments, run_rel: np.ndarray, alpha: float, beta: float, depth: int) -> TopicValues:
    """Every measure for a ranked list whose rank i has the subtopic row ``run_rel[i]`` (zeros when the
    document is not judged), against the topic's judgments ``judged``."""
    actual = judged.actual
    score = scores(run_rel, alpha)
    mine = list_values(score, actual, alpha, beta, depth)
    ideal = judged.ideal
    ndcg, nerr = np.zeros(depth), np.zeros(depth)
    nonzero = mine.dcg != 0
    ndcg[nonzero] = mine.dcg[nonzero] / ideal.dcg[nonzero]
    nerr[nonzero] = mine.err[nonzero] / ideal.err[nonzero]
    nnrbp = mine.nrbp / ideal.nrbp if ideal.nrbp != 0 else (nan_of_zero_by_zero() if mine.nrbp == 0
                                                            else math.copysign(math.inf, mine.nrbp))
    precision, strec, map_ia = np.zeros(depth), np.zeros(depth), 0.0
    if actual:
        shown = min(depth, run_rel.shape[0])
        pairs = np.zeros(depth, dtype=np.int64)
        seen = np.zeros(depth, dtype=np.int64)
        if shown:
            top = run_rel[:shown]
            pairs[:shown] = np.cumsum(top.sum(axis=1))
            seen[:shown] = np.count_nonzero(np.cumsum(top, axis=0) > 0, axis=1)
            pairs[shown:] = pairs[shown - 1]
            seen[shown:] = seen[shown - 1]
        precision = pairs / (np.arange(1, depth + 1) * actual)
        strec = seen / actual
        map_ia = _map_ia(run_rel, judged.nrel_sub, actual)
    return TopicValues(mine.err, nerr, mine.dcg, ndcg, mine.nrbp, nnrbp, map_ia, precision, strec)


def _map_ia(run_rel: np.ndarray, nrel_sub: np.ndarray, actual: int) -> float:
    """ndeval's computeMAP: per subtopic, the sum of (relevant so far) / rank over the ranks of its relevant
    documents, divided by its relevant count; summed over the subtopics in order, then over ``actual``."""
    if run_rel.shape[0] == 0:
        return 0.0
    found = np.cumsum(run_rel, axis=0)
    ranks = np.arange(1, run_rel.shape[0] + 1, dtype=np.float64)[:, None]
    terms = np.where(run_rel > 0, found / ranks, 0.0)
    totals = np.cumsum(terms, axis=0)[-1]
    total = 0.0
    for j in np.flatnonzero(nrel_sub):
        total += totals[j] / nrel_sub[j]
    return total / actual


# ------------------------------------------------------------------ pyndeval's reading of qrels and runs
@dataclass
class SubtopicQrels:
    """Subtopic qrels of every topic, prepared as pyndeval prepares them (``Qrels`` per query)."""

    topics: dict[str, TopicJudgments]
    alpha: float
    beta: float
    depth: int


def prepare(rows, *, alpha: float = ALPHA, beta: float = BETA, rel: int = 1, depth: int = DEPTH) -> SubtopicQrels:
    """Subtopic judgments ``rows`` of (query id, subtopic id, doc id, judgment), as pyndeval reads them: a
    judgment of at least ``rel`` is relevant; subtopics are told apart as written and numbered in order of
    first appearance over the whole file (the order their gains are summed in); a (doc, subtopic) judged twice
    keeps its last judgment while both count towards the subtopic's relevant documents."""
    index: dict = {}
    by_topic: dict[str, list] = {}
    for qid, sub, doc, grade in rows:
        by_topic.setdefault(qid, []).append((index.setdefault(sub, len(index)), doc, 1 if grade >= rel else 0))
    topics = {}
    for qid, lines in by_topic.items():
        topics[qid] = judgments_from_lines(lines, alpha, beta, depth)
    return SubtopicQrels(topics, alpha, beta, depth)


def judgments_from_lines(lines: list[tuple[int, object, int]], alpha: float, beta: float, depth: int) -> TopicJudgments:
    """One topic's (subtopic column, doc, 0/1) lines (columns any non-negative integers, summed in ascending
    order) as ndeval's qrelPopulateResultList builds them."""
    columns = sorted({s for s, _, _ in lines})
    col = {s: i for i, s in enumerate(columns)}
    docs = sorted({d for _, d, _ in lines}, key=_docno_bytes)
    row = {d: i for i, d in enumerate(docs)}
    rel = np.zeros((len(docs), len(columns)), dtype=np.int64)
    nrel_sub = np.zeros(len(columns), dtype=np.int64)
    for s, d, j in sorted(lines, key=lambda x: _docno_bytes(x[1])):       # ndeval's (stable) sort by docno
        rel[row[d], col[s]] = j
        nrel_sub[col[s]] += j
    return topic_judgments(docs, rel, nrel_sub, alpha, beta, depth)


def _docno_bytes(doc) -> bytes:
    """A docno as C's strcmp compares it: its bytes (UTF-8 for text)."""
    return doc if isinstance(doc, bytes) else doc.encode("utf-8", "surrogatepass")


def ranked_rel(judged: TopicJudgments, ranked_docs) -> np.ndarray:
    """The subtopic rows of ``ranked_docs`` (in rank order) against a topic's judgments: zeros for a document
    not judged, and for a document's second and later appearance (ndeval's merge gives the judgments to one)."""
    row = {d: i for i, d in enumerate(judged.docs)}
    out = np.zeros((len(ranked_docs), judged.rel.shape[1]), dtype=np.int64)
    given = set()
    for rank, d in enumerate(ranked_docs):
        i = row.get(d)
        if i is not None and d not in given:
            out[rank] = judged.rel[i]
            given.add(d)
    return out


def pyndeval_order(scored) -> list:
    """pyndeval's ranking of one query's (doc id, score) pairs: score descending, then doc id ascending."""
    return [d for d, _ in sorted(scored, key=lambda x: (-x[1], x[0]))]


def evaluate(qrels: SubtopicQrels, run, measures=None) -> dict[str, dict[str, float]]:
    """pyndeval's ``RelevanceEvaluator.evaluate``: {query id: {measure: value}} for the queries of ``run``
    ({query id: {doc id: score}}) that have judgments, ``measures`` in pyndeval's spelling (``alpha-nDCG@20``,
    ``NRBP``; default: ndeval's 21 columns)."""
    wanted = list(measures) if measures is not None else default_measures()
    parsed = [parse_measure(m, qrels.depth) for m in wanted]
    out = {}
    for qid, scored in run.items():
        judged = qrels.topics.get(qid)
        if judged is None or not scored:          # a query without documents is not in the run
            continue
        ranked = pyndeval_order(scored.items() if hasattr(scored, "items") else scored)
        values = run_values(judged, ranked_rel(judged, ranked), qrels.alpha, qrels.beta, qrels.depth)
        out[qid] = {m: values.value(name, cutoff) for m, (name, cutoff) in zip(wanted, parsed)}
    return out


def default_measures() -> list[str]:
    """ndeval's columns, in its order."""
    ranked = [f"{m}@{k}" for m in CUTOFF_MEASURES[:4] for k in NDEVAL_CUTOFFS]
    return ranked + ["NRBP", "nNRBP", "MAP-IA"] + [f"{m}@{k}" for m in CUTOFF_MEASURES[4:] for k in NDEVAL_CUTOFFS]


def parse_measure(text: str, depth: int = DEPTH) -> tuple[str, int | None]:
    """``alpha-nDCG@20`` -> ("alpha-nDCG", 20); ``NRBP`` -> ("NRBP", None).  A ranked measure needs a cutoff from
    1 to ``depth``; the others take none."""
    name, at, cut = text.partition("@")
    if name in WHOLE_MEASURES and not at:
        return name, None
    if name in CUTOFF_MEASURES and at and cut.isascii() and cut.isdigit() and 1 <= int(cut) <= depth:
        return name, int(cut)
    known = ", ".join(f"{m}@k" for m in CUTOFF_MEASURES) + ", " + ", ".join(WHOLE_MEASURES)
    raise InputError(f"diversity measure {text!r}: not one of {known} with k from 1 to {depth}",
                     fix="e.g. alpha-nDCG@20 or NRBP")
