"""gdeval.pl's nDCG@k and ERR@k (version 1.2a, the TREC Web track's script), at its exact numbers.

For a topic whose documents, in gdeval.pl's order, have judgments g_1, g_2, ... (0 when unjudged):

* DCG@k  = sum over i < min(k, n) of (2^g_i - 1) / ln(i + 2): exponential gain over a natural-log discount
  (the base cancels in nDCG, but the roundings are the natural log's, so it is kept);
* nDCG@k = DCG@k / DCG@k of the topic's judgments above 0 sorted descending (every judgment line counts,
  a document judged twice twice);
* ERR@k  = sum over i < min(k, n) of r_i / (i + 1) * prod_{j < i} (1 - r_j), r_i = (2^g_i - 1) / 2^4
  (Chapelle et al., CIKM 2009, with gdeval.pl's MAX_JUDGMENT of 4).

Each sum is taken term by term in rank order, as the Perl loop does, so every double is gdeval.pl's bit for
bit.  The kernels work on a (topics x ranks) matrix, one column at a time: the loop runs k times whatever the
number of topics.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from ..dependencies import deferred
from ..console.errors import InputError

np = deferred("numpy")

MAX_JUDGMENT = 4


@cache
def _gain() -> np.ndarray:
    return np.array([2.0 ** g - 1 for g in range(MAX_JUDGMENT + 1)])       # 2**g - 1, as Perl's 2**$g - 1


@cache
def _stop() -> np.ndarray:
    return _gain() / 2.0 ** MAX_JUDGMENT                                  # ERR's r for each judgment



def _discounts(n: int) -> np.ndarray:
    """ln(i + 2) for i < n, each from the C library's log (what Perl's ``log`` calls)."""
    return np.array([math.log(i + 2) for i in range(n)])


def padded(gains: np.ndarray, lengths: np.ndarray, k: int) -> np.ndarray:
    """The first ``min(k, length)`` judgments of each topic (``gains`` is every topic's judgments one after
    the other, ``lengths`` how many each has) as a (topics x min(k, longest)) matrix, 0 past a topic's end.
    A 0 adds exactly nothing to DCG or ERR, so the padding changes no bit."""
    lengths = np.asarray(lengths, dtype=np.int64)
    width = int(min(k, lengths.max(initial=0)))
    out = np.zeros((len(lengths), width), dtype=np.int8)
    if width == 0:
        return out
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    topic = np.repeat(np.arange(len(lengths)), lengths)
    rank = np.arange(len(topic)) - np.repeat(starts, lengths)
    keep = rank < width
    out[topic[keep], rank[keep]] = np.asarray(gains)[keep]
    return out


def dcg(matrix: np.ndarray) -> np.ndarray:
    """gdeval.pl's ``dcg``: each row's sum of (2^g - 1) / ln(rank + 1), term by term in rank order."""
    terms = _gain()[matrix] / _discounts(matrix.shape[1])
    total = np.zeros(matrix.shape[0])
    for i in range(matrix.shape[1]):
        total += terms[:, i]
    return total


def err(matrix: np.ndarray) -> np.ndarray:
    """gdeval.pl's ``err``: each row's expected reciprocal rank, term by term in rank order."""
    r = _stop()[matrix]
    score = np.zeros(matrix.shape[0])
    decay = np.ones(matrix.shape[0])
    for i in range(matrix.shape[1]):
        score += r[:, i] * decay / (i + 1)
        decay *= 1 - r[:, i]
    return score


def ndcg_err(run_gains: np.ndarray, run_lengths: np.ndarray, ideal_gains: np.ndarray, ideal_lengths: np.ndarray,
             k: int) -> tuple[np.ndarray, np.ndarray]:
    """(nDCG@k, ERR@k) for each topic: ``run_gains`` the judgments of its documents in gdeval.pl's order,
    ``ideal_gains`` its judgments above 0 sorted descending, each topic's after the previous one's."""
    ideal = dcg(padded(ideal_gains, ideal_lengths, k))
    ranked = padded(run_gains, run_lengths, k)
    return dcg(ranked) / ideal, err(ranked)


@dataclass
class GdevalResult:
    """What gdeval.pl prints for a run: its run id, and per topic evaluated (in its order) the values."""

    runid: bytes
    topics: list[bytes]
    ndcg: np.ndarray
    err: np.ndarray


def concatenated(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Lists of judgments as the kernels take them: all of them one after the other, and each list's length."""
    lengths = np.array([len(x) for x in lists], dtype=np.int64)
    flat = np.fromiter((g for x in lists for g in x), dtype=np.int8, count=int(lengths.sum()))
    return flat, lengths


def evaluate(qrels, run, k: int) -> GdevalResult:
    """nDCG@k and ERR@k of ``run`` (:class:`treckit.inputs.formats.gdeval.GdevalRun`) against ``qrels``
    (:class:`~treckit.inputs.formats.gdeval.GdevalQrels`) for the topics gdeval.pl prints: those of the run whose
    topic, as first written in the run, has a judgment above 0 written the same way."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k={k!r}: gdeval's depth must be a whole number of at least 1 (gdeval.pl divides by "
                         "zero at 0)", fix="e.g. k=20")
    topics, run_lists, ideal_lists = [], [], []
    for topic, gains in zip(run.topics, run.gains):
        if topic not in qrels.seen:
            continue
        ideal = qrels.ideal_gains.get(topic)
        if ideal is None:
            raise InputError(f"topic {topic.decode('utf-8', 'backslashreplace')!r} is judged under that name, but "
                             "the qrels list it first under another spelling of the same number (e.g. 01 and 1), "
                             "so gdeval.pl finds no ideal DCG for it and stops on a division by zero",
                             path=qrels.path, fix="write each topic number one way in the qrels and the run")
        topics.append(topic)
        run_lists.append(gains)
        ideal_lists.append(ideal)
    ndcg, err_ = ndcg_err(*concatenated(run_lists), *concatenated(ideal_lists), k)
    return GdevalResult(run.runid, topics, ndcg, err_)



# ------------------------------------------------------------------ by name, on the ranked-and-judged view
# The view (:class:`~treckit.ranking.judged.RankedJudged`) ranks by score descending, then docno descending:
# the order gdeval.pl sorts by.  A judgment of 0 or below, or none, gains nothing, as in gdeval.pl (it keeps only
# judgments above 0).
def _check_grades(v) -> None:
    """A judgment above 4 is refused, as gdeval.pl refuses the qrels line."""
    if v.grades.size and v.grades[-1] > MAX_JUDGMENT:
        over = int(v.grades[-1])
        where = np.flatnonzero(v.rel_levels[:, v.grades == over].ravel())
        qid = v.qids[int(where[0])] if where.size else "?"
        raise InputError(f"query {qid!r} has a judgment of {over}: gdeval's measures take judgments up to "
                         f"{MAX_JUDGMENT} (gdeval.pl's MAX_JUDGMENT; it stops on such a qrels line)",
                         fix="map the grades into 0..4 first, or use nDCG(dcg='exp-log2')@k for exponential gain "
                             "without that limit")


def _ranked(v, k: int) -> np.ndarray:
    """The judgments of each query's first k documents as a (queries x ranks) matrix."""
    _check_grades(v)
    width = int(min(k, v.num_ret.max(initial=0)))
    ranked = np.zeros((v.Q, width), dtype=np.int8)
    keep = (v.pos < width) & (v.rel > 0)
    ranked[v.q[keep], v.pos[keep]] = v.rel[keep]
    return ranked


def _ideal(v, k: int) -> np.ndarray:
    """Each query's judgments above 0, highest first, cut at k, as a (queries x ranks) matrix."""
    positive = v.grades > 0
    counts = v.rel_levels[:, positive][:, ::-1]
    gains = np.repeat(np.tile(v.grades[positive][::-1], v.Q), counts.ravel()).astype(np.int8)
    return padded(gains, counts.sum(axis=1), k)


def ndcg_at(v, params: tuple = (), cutoff: int = 20) -> np.ndarray:
    """gdeval.pl's nDCG@k of each query of the view; 0 for a query without a judgment above 0 (gdeval.pl does
    not print such a topic; ir_measures gives it 0)."""
    top = dcg(_ranked(v, cutoff))
    bottom = dcg(_ideal(v, cutoff))
    return np.divide(top, bottom, out=np.zeros(v.Q), where=bottom > 0)


def err_at(v, params: tuple = (), cutoff: int = 20) -> np.ndarray:
    """gdeval.pl's ERR@k of each query of the view (0 without a judgment above 0, as above)."""
    return err(_ranked(v, cutoff))
