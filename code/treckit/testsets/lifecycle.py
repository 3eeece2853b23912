"""A test set's life: holdout splits, diffs between versions, annotator agreement, and refreshes
with queries from production traffic."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Callable

from ..dependencies import deferred
from ..console.errors import InputError
from ..measures import KAPPA_WEIGHTINGS
from .load import TestQuery, TestSet, test_set_from_mapping
from .schema import MAX_GRADE

np = deferred("numpy")


def _draw_key(seed: int, text: str) -> bytes:
    """A seeded, order-independent sort key: the same query draws the same place in any file order."""
    return hashlib.sha256(f"{seed}\0{text}".encode("utf-8", "surrogatepass")).digest()


def _with_queries(ts: TestSet, queries: list[TestQuery], **changes) -> TestSet:
    return TestSet(ts.model.replace(queries=queries, **changes))


# ------------------------------------------------------------------ split
def split(ts: TestSet, holdout: float = 0.2, seed: int = 0) -> tuple[TestSet, TestSet]:
    """(train, holdout): within each query type, round(n x holdout) queries go to the holdout, chosen
    by a seeded hash of the query id, so the split does not depend on the order of the file."""
    if not 0 < holdout < 1:
        raise InputError(f"--holdout {holdout} must be between 0 and 1", fix="e.g. --holdout 0.2")
    held: set[str] = set()
    for qtype in ts.counts_by_type():
        ids = sorted((q.query_id for q in ts.queries if q.query_type == qtype), key=lambda i: _draw_key(seed, i))
        held.update(ids[:int(round(len(ids) * holdout))])
    train = [q for q in ts.queries if q.query_id not in held]
    hold = [q for q in ts.queries if q.query_id in held]
    if not train or not hold:
        raise InputError(f"a {holdout:.0%} holdout of {len(ts.queries)} queries leaves one part empty",
                         fix="use more queries or another --holdout")
    note = f"split of {ts.name} {ts.version} (holdout {holdout:g}, seed {seed})"
    return (_with_queries(ts, train, description=f"train part of the {note}"),
            _with_queries(ts, hold, description=f"holdout part of the {note}"))


# ------------------------------------------------------------------ diff
def diff(old: TestSet, new: TestSet) -> dict[str, Any]:
    """Queries added, removed and relabelled (their judged docs or grades changed), and queries
    whose text or type changed, between two versions."""
    a = {q.query_id: q for q in old.queries}
    b = {q.query_id: q for q in new.queries}
    relabelled, edited = [], []
    for qid in (q for q in b if q in a):
        ga = {d.doc_id: d.grade for d in a[qid].relevant_docs}
        gb = {d.doc_id: d.grade for d in b[qid].relevant_docs}
        if ga != gb:
            relabelled.append({"query_id": qid,
                               "added": sorted(set(gb) - set(ga)), "removed": sorted(set(ga) - set(gb)),
                               "regraded": {d: [ga[d], gb[d]] for d in sorted(set(ga) & set(gb)) if ga[d] != gb[d]}})
        changed = [f for f in ("query_text", "query_type", "topK") if getattr(a[qid], f) != getattr(b[qid], f)]
        if changed:
            edited.append({"query_id": qid, "fields": changed})
    return {"from": {"name": old.name, "version": old.version}, "to": {"name": new.name, "version": new.version},
            "added": [q for q in b if q not in a], "removed": [q for q in a if q not in b],
            "relabelled": relabelled, "edited": edited}


# ------------------------------------------------------------------ agreement
@dataclass
class Agreement:
    kappa: float | None
    weighted: str | None
    both: int
    only_a: int
    only_b: int
    threshold: float
    undefined: str | None = None          # why kappa is None

    @property
    def passed(self) -> bool | None:
        return None if self.kappa is None else self.kappa > self.threshold

    def to_dict(self) -> dict[str, Any]:
        out = {"kappa": self.kappa, "weighted": self.weighted, "pairs_judged_by_both": self.both,
               "only_in_a": self.only_a, "only_in_b": self.only_b, "threshold": self.threshold, "pass": self.passed}
        if self.kappa is None:
            out["kappa_undefined"] = self.undefined
        return out

    def describe(self) -> str:
        """The kappa as a sentence: its value, or why it has none."""
        if self.kappa is None:
            return f"kappa is undefined: {self.undefined}"
        return f"kappa {self.kappa:.4f} on {self.both} pairs judged by both"


def cohen_kappa(a: np.ndarray, b: np.ndarray, weighted: str | None = None) -> float | None:
    """Cohen's kappa of two raters' labels on the same items (Cohen 1960; weighted: Cohen 1968), the
    categories being the labels that occur, numbered 0 .. m-1 in sorted order as scikit-learn numbers
    them; None when agreement by chance is total (one label, given by both raters to every item).

    Computed from the labels' counts and sums over the pairs, in O(n + m) memory: never the m x m
    matrices of the textbook formula (20,000 distinct labels would need gigabytes).  With n items,
    a rater's counts A_i and B_j of label i, j, and weights w(i, j) = [i != j] (unweighted),
    |i - j| (linear) or (i - j)^2 (quadratic),

        kappa = 1 - n * O / E,   O = sum over items k of w(a_k, b_k),   E = sum_i sum_j A_i B_j w(i, j)

    (scikit-learn's 1 - sum(w * observed) / sum(w * expected), expected = outer(A, B) / n), and E
    takes one pass over the labels:

        unweighted  E = n^2 - sum_i A_i B_i
        quadratic   E = n sum_i A_i i^2 + n sum_j B_j j^2 - 2 (sum_i A_i i)(sum_j B_j j)
        linear      E = sum_i A_i (2 i C_i - 2 D_i + J - i n), with C_i = sum_{j<i} B_j,
                    D_i = sum_{j<i} j B_j, J = sum_j j B_j: the sum over j of B_j |i - j|, split at i.
    """
    a, b = np.asarray(a), np.asarray(b)
    n = a.size
    if weighted not in (None, *KAPPA_WEIGHTINGS[1:]):
        raise InputError(f"unknown weighting {weighted!r}", fix="use linear or quadratic")
    labels, ranks = np.unique(np.concatenate([a, b]), return_inverse=True)
    ia, ib = ranks[:n].astype(np.float64), ranks[n:].astype(np.float64)
    m = labels.size
    count_a = np.bincount(ranks[:n], minlength=m).astype(np.float64)
    count_b = np.bincount(ranks[n:], minlength=m).astype(np.float64)
    i = np.arange(m, dtype=np.float64)
    if weighted is None:
        observed = float(np.count_nonzero(ia != ib))
        expected = float(n) * n - float(count_a @ count_b)
    elif weighted == "quadratic":
        observed = float(((ia - ib) ** 2).sum())
        expected = n * float(count_a @ i ** 2) + n * float(count_b @ i ** 2) - 2 * float(count_a @ i) * float(count_b @ i)
    else:
        observed = float(np.abs(ia - ib).sum())
        below = np.concatenate([[0.0], np.cumsum(count_b)[:-1]])            # C_i
        below_ranks = np.concatenate([[0.0], np.cumsum(i * count_b)[:-1]])   # D_i
        expected = float(count_a @ (2 * i * below - 2 * below_ranks + float(i @ count_b) - i * n))
    if expected == 0:
        return None
    return float(1 - n * observed / expected)


def judged_once(qrels, source: str | None = None, lines: Callable[[list[int]], list[int]] | None = None) -> None:
    """Refuse an annotator's file that judges a (query, doc) pair twice: which of its grades is the annotator's is
    unknown (``eval`` refuses such qrels too).  ``source`` names the file; ``lines(rows)`` gives the lines of
    judgments (0-based rows), when they can be told."""
    t = qrels.table
    seen: dict[tuple[str, str], int] = {}
    for i, key in enumerate(zip(t.column("qid").to_pylist(), t.column("docid").to_pylist())):
        first = seen.setdefault(key, i)
        if first != i:
            grades = t.column("grade").take([first, i]).to_pylist()
            at = lines([first, i]) if lines is not None else None
            where = f"lines {at[0]} and {at[1]}" if at else f"judgments {first + 1} and {i + 1}"
            raise InputError(f"doc {key[1]!r} of query {key[0]!r} is judged twice ({where}, grades {grades[0]} and "
                             f"{grades[1]}): which grade is the annotator's is unknown", path=source,
                             fix="keep one judgment per query and doc in each annotator's file")


def agreement(qrels_a, qrels_b, weighted: str | None = None, threshold: float = 0.6,
              sources: tuple[str | None, str | None] = (None, None)) -> Agreement:
    """Kappa between two annotators' qrels on the (query, doc) pairs both judged (each judged once in each file;
    ``sources`` name the files in errors)."""
    judged_once(qrels_a, sources[0])
    judged_once(qrels_b, sources[1])
    da, db = qrels_a.to_dict(), qrels_b.to_dict()
    pa = {(q, d): g for q, docs in da.items() for d, g in docs.items()}
    pb = {(q, d): g for q, docs in db.items() for d, g in docs.items()}
    both = sorted(set(pa) & set(pb))
    if not both:
        raise InputError("the two annotators judged no (query, doc) pair in common",
                         fix="check that both files label the same queries and docs")
    ga, gb = np.array([pa[p] for p in both]), np.array([pb[p] for p in both])
    k = cohen_kappa(ga, gb, weighted)
    undefined = None
    if k is None:
        undefined = (f"both annotators gave all {len(both)} pairs they both judged the same grade ({ga[0].item()}), "
                     "so agreement by chance is total and kappa divides zero by zero")
    return Agreement(k, weighted, len(both), len(set(pa) - set(pb)), len(set(pb) - set(pa)), threshold, undefined)


# ------------------------------------------------------------------ refresh
def bump_version(version: str) -> str:
    """``1.2`` -> ``1.3``, ``v4`` -> ``v5``, ``2024a`` -> ``2025a`` (the last number); else ``X.1``."""
    nums = list(re.finditer(r"\d+", version))
    if not nums:
        return f"{version}.1"
    m = nums[-1]
    return version[:m.start()] + str(int(m.group()) + 1) + version[m.end():]


def merge_labels(qrels_a, qrels_b) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """The merged labels: a pair both annotators judged gets the LOWER grade (a doc counts as
    relevant only as far as both agree); a pair judged by one annotator is left out.  Returns the
    labels and counts of what happened."""
    da, db = qrels_a.to_dict(), qrels_b.to_dict()
    out: dict[str, dict[str, int]] = {}
    counts = {"agreed": 0, "disagreed_took_lower": 0, "single_annotator_dropped": 0}
    for q in sorted(set(da) | set(db)):
        a, b = da.get(q, {}), db.get(q, {})
        for d in sorted(set(a) | set(b)):
            if d in a and d in b:
                out.setdefault(q, {})[d] = min(a[d], b[d])
                counts["agreed" if a[d] == b[d] else "disagreed_took_lower"] += 1
            else:
                counts["single_annotator_dropped"] += 1
    return out, counts


def refresh(ts: TestSet, candidates: list[dict[str, str]], replace: int, qrels_a, qrels_b, *, seed: int = 0,
            threshold: float = 0.6, weighted: str | None = None,
            source: str | None = None) -> tuple[TestSet, dict[str, Any]]:
    """Replace ``replace`` queries of ``ts`` by labelled candidates from production traffic.

    Refuses (InputError) when the annotators' kappa on the candidates' labels is at or below
    ``threshold``.  Which queries leave and which candidates come in are seeded hash draws (stable
    under reordering of the files); only candidates with a doc of merged grade > 0 can come in.  Every
    candidate must be a query a test set can hold (an id and a text, not empty); ``source`` names the
    candidates' file in errors.
    """
    _check_candidates(candidates, source)
    for labels in (qrels_a, qrels_b):
        check_label_grades(labels)
    agree = _sufficient_agreement(qrels_a, qrels_b, weighted, threshold)
    labels, counts = merge_labels(qrels_a, qrels_b)
    have = set(ts.query_ids)
    usable = [c for c in candidates if c["query_id"] not in have
              and any(g > 0 for g in labels.get(c["query_id"], {}).values())]
    _check_replace(replace, len(ts.queries), len(usable))
    leaving = set(sorted(ts.query_ids, key=lambda i: _draw_key(seed, i))[:replace])
    coming = sorted(usable, key=lambda c: _draw_key(seed, c["query_id"]))[:replace]
    kept = [q for q in ts.to_mapping()["queries"] if q["query_id"] not in leaving]
    new = [_candidate_query(c, labels[c["query_id"]]) for c in coming]
    version = bump_version(ts.version)
    nxt = test_set_from_mapping({"name": ts.name, "version": version, "description": ts.model.description,
                                 "queries": kept + new}, f"the refreshed {ts.name} {version}")
    return nxt, {"from_version": ts.version, "to_version": version, "removed": sorted(leaving),
                 "added": [c["query_id"] for c in coming], "agreement": agree.to_dict(), "merge": counts}


def check_label_grades(qrels, source: str | None = None, lines: Callable[[list[int]], list[int]] | None = None) -> None:
    """Every grade of an annotator's labels is a test set's (0 to MAX_GRADE): refused naming ``source`` and, where
    ``lines`` tells it, the line (the merged labels become the next version's judgments)."""
    grades = qrels.table.column("grade").to_numpy()
    bad = np.flatnonzero((grades < 0) | (grades > MAX_GRADE))
    if bad.size:
        row = int(bad[0])
        at = lines([row]) if lines is not None else None
        t = qrels.table
        raise InputError(f"grade {grades[row]} of doc {t.column('docid')[row].as_py()!r} for query "
                         f"{t.column('qid')[row].as_py()!r} is outside a test set's grades (0 to {MAX_GRADE})"
                         + ("" if at else f" (judgment {row + 1})"), path=source, line=at[0] if at else None,
                         fix=f"grade every label from 0 to {MAX_GRADE}")


def _check_candidates(candidates: list[dict[str, str]], source: str | None) -> None:
    """Every candidate has an id and a text, not empty (what a test set's query needs)."""
    for c in candidates:
        for field in ("query_id", "query_text"):
            if not isinstance(c.get(field), str) or not c[field]:
                qid = c.get("query_id")
                raise InputError(f"the candidate {'query ' + repr(qid) if qid else 'query'} has an empty {field}, "
                                 "which a test set cannot hold", path=source,
                                 fix=f"give every candidate a {field.replace('_', ' ')}, or leave the query out")


def _sufficient_agreement(qrels_a, qrels_b, weighted: str | None, threshold: float) -> Agreement:
    """The annotators' agreement, refused when it cannot be measured or is at or below ``threshold``."""
    agree = agreement(qrels_a, qrels_b, weighted, threshold)
    if agree.kappa is None:
        raise InputError(f"annotator agreement cannot be measured: {agree.describe()}",
                         fix="have both annotators label pairs of more than one grade")
    if not agree.passed:
        raise InputError(f"annotator agreement too low to refresh: kappa {agree.kappa:.4f} <= {threshold} "
                         f"on {agree.both} pairs", fix="resolve the disagreements and label again")
    return agree


def _check_replace(replace: int, queries: int, usable: int) -> None:
    """``replace`` is from 1 to the test set's number of queries, and that many candidates can come in."""
    if replace < 1 or replace > queries:
        raise InputError(f"--replace {replace} must be between 1 and the {queries} queries of the test set",
                         fix=f"give --replace a number from 1 to {queries}")
    if usable < replace:
        raise InputError(f"only {usable} candidates are new and have a relevant doc after merging; "
                         f"{replace} are needed", fix="label more candidates or replace fewer queries")


def _candidate_query(c: dict[str, str], labels: dict[str, int]) -> dict:
    """A candidate as a test set's query, with its merged labels (its type "production" when it has none)."""
    return {"query_id": c["query_id"], "query_text": c["query_text"], "query_type": c.get("query_type") or "production",
            "relevant_docs": [{"doc_id": d, "grade": g} for d, g in sorted(labels.items())]}
