"""A test set's life: holdout splits, diffs between versions, annotator agreement, and refreshes
with queries from production traffic."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from .load import TestSet
from .schema import Query, RelevantDoc, TestSetModel


def _draw_key(seed: int, text: str) -> bytes:
    """A seeded, order-independent sort key: the same query draws the same place in any file order."""
    return hashlib.sha256(f"{seed}\0{text}".encode("utf-8", "surrogatepass")).digest()


def _with_queries(ts: TestSet, queries: list[Query], **changes) -> TestSet:
    return TestSet(ts.model.model_copy(update={"queries": queries, **changes}))


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

    @property
    def passed(self) -> bool | None:
        return None if self.kappa is None else self.kappa > self.threshold

    def to_dict(self) -> dict[str, Any]:
        return {"kappa": self.kappa, "weighted": self.weighted, "pairs_judged_by_both": self.both,
                "only_in_a": self.only_a, "only_in_b": self.only_b, "threshold": self.threshold, "pass": self.passed}


def cohen_kappa(a: np.ndarray, b: np.ndarray, weighted: str | None = None) -> float | None:
    """Cohen's kappa of two raters' labels on the same items (Cohen 1960; weighted: Cohen 1968),
    the categories being the labels that occur; None when agreement by chance is total."""
    labels = np.union1d(a, b)
    ia, ib = np.searchsorted(labels, a), np.searchsorted(labels, b)
    n = labels.size
    observed = np.zeros((n, n))
    np.add.at(observed, (ia, ib), 1)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    idx = np.arange(n)
    if weighted is None:
        w = (idx[:, None] != idx[None, :]).astype(float)
    elif weighted == "linear":
        w = np.abs(idx[:, None] - idx[None, :]).astype(float)
    elif weighted == "quadratic":
        w = ((idx[:, None] - idx[None, :]) ** 2).astype(float)
    else:
        raise InputError(f"unknown weighting {weighted!r}", fix="use linear or quadratic")
    chance = (w * expected).sum()
    if chance == 0:
        return None
    return float(1 - (w * observed).sum() / chance)


def agreement(qrels_a, qrels_b, weighted: str | None = None, threshold: float = 0.6) -> Agreement:
    """Kappa between two annotators' qrels on the (query, doc) pairs both judged."""
    da, db = qrels_a.to_dict(), qrels_b.to_dict()
    pa = {(q, d): g for q, docs in da.items() for d, g in docs.items()}
    pb = {(q, d): g for q, docs in db.items() for d, g in docs.items()}
    both = sorted(set(pa) & set(pb))
    if not both:
        raise InputError("the two annotators judged no (query, doc) pair in common",
                         fix="check that both files label the same queries and docs")
    k = cohen_kappa(np.array([pa[p] for p in both]), np.array([pb[p] for p in both]), weighted)
    return Agreement(k, weighted, len(both), len(set(pa) - set(pb)), len(set(pb) - set(pa)), threshold)


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
    for c in candidates:
        for field in ("query_id", "query_text"):
            if not isinstance(c.get(field), str) or not c[field]:
                qid = c.get("query_id")
                raise InputError(f"the candidate {'query ' + repr(qid) if qid else 'query'} has an empty {field}, "
                                 "which a test set cannot hold", path=source,
                                 fix=f"give every candidate a {field.replace('_', ' ')}, or leave the query out")
    agree = agreement(qrels_a, qrels_b, weighted, threshold)
    if not agree.passed:
        raise InputError(f"annotator agreement too low to refresh: kappa {agree.kappa} <= {threshold} "
                         f"on {agree.both} pairs", fix="resolve the disagreements and label again")
    labels, counts = merge_labels(qrels_a, qrels_b)
    have = set(ts.query_ids)
    usable = [c for c in candidates if c["query_id"] not in have
              and any(g > 0 for g in labels.get(c["query_id"], {}).values())]
    if replace < 1 or replace > len(ts.queries):
        raise InputError(f"--replace {replace} must be between 1 and the {len(ts.queries)} queries of the test set",
                         fix=f"give --replace a number from 1 to {len(ts.queries)}")
    if len(usable) < replace:
        raise InputError(f"only {len(usable)} candidates are new and have a relevant doc after merging; "
                         f"{replace} are needed", fix="label more candidates or replace fewer queries")
    leaving = set(sorted(ts.query_ids, key=lambda i: _draw_key(seed, i))[:replace])
    coming = sorted(usable, key=lambda c: _draw_key(seed, c["query_id"]))[:replace]
    kept = [q for q in ts.queries if q.query_id not in leaving]
    new = [Query(query_id=c["query_id"], query_text=c["query_text"], query_type=c.get("query_type") or "production",
                 relevant_docs=[RelevantDoc(doc_id=d, grade=g) for d, g in sorted(labels[c["query_id"]].items())])
           for c in coming]
    version = bump_version(ts.version)
    nxt = TestSet(TestSetModel(name=ts.name, version=version, description=ts.model.description, queries=kept + new))
    return nxt, {"from_version": ts.version, "to_version": version, "removed": sorted(leaving),
                 "added": [c["query_id"] for c in coming], "agreement": agree.to_dict(), "merge": counts}
