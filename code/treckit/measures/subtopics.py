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

The kernels are those of :mod:`treckit.measures.diversity` (``treckit ndeval``'s), fed per query.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from . import diversity

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
    import pyarrow.compute as pc

    div = asked(requests)
    t = qrels.table
    counted = t.group_by(["qid", "docid"], use_threads=False).aggregate([("grade", "max"), ("grade", "count")])
    if counted.num_rows == t.num_rows:
        return qrels
    others = [r for r in requests if r.measure.reference != NDEVAL]
    if others:
        twice = counted.filter(pc.greater(counted.column("grade_count"), 1)).slice(0, 1).to_pylist()[0]
        raise InputError(f"the qrels judge doc {twice['docid']!r} {twice['grade_count']} times for query "
                         f"{twice['qid']!r}: subtopic qrels, as {div[0].text} reads them (the iteration field is the "
                         f"subtopic), but {others[0].text} reads one judgment per document",
                         fix=f"evaluate {others[0].text} in a treckit eval of its own with ad hoc qrels (one line per "
                             f"judged document), and {div[0].text} with the subtopic qrels")
    from ..model import Qrels
    one = pa.table({"qid": counted.column("qid"), "iter": pa.array(["0"] * counted.num_rows, pa.string()),
                    "docid": counted.column("docid"), "grade": counted.column("grade_max")})
    return Qrels(one, qrels.written)


def _subtopic_lines(qrels) -> dict[str, list[tuple[int, str, int]]]:
    """Per query, its lines as (subtopic number, doc id, judgment), subtopics numbered by first appearance."""
    t = qrels.table
    index: dict[str, int] = {}
    by_topic: dict[str, list] = {}
    seen: set = set()
    for q, s, d, g in zip(*(t.column(c).to_pylist() for c in ("qid", "iter", "docid", "grade"))):
        if (q, s, d) in seen:
            raise InputError(f"the qrels judge doc {d!r} twice for query {q!r} and subtopic {s!r}",
                             fix="keep one judgment per (query, subtopic, document)")
        seen.add((q, s, d))
        by_topic.setdefault(q, []).append((index.setdefault(s, len(index)), d, g))
    return by_topic


def _settings(req, options) -> tuple[int, float, float, bool, str, int | None]:
    """(relevance level, alpha, beta, judged only, ndeval's name, cutoff) of a request."""
    opts = dict(req.options)
    level = options.level if req.level is None else req.level
    judged = opts["judged_only"] if "judged_only" in opts else (
        options.judged_only if req.judged_only is None else req.judged_only)
    return (level, opts.get("alpha", diversity.ALPHA), opts.get("beta", diversity.BETA), judged, opts["measure"],
            opts.get("cutoff"))


def blocks(qrels, run, base, requests, options) -> dict:
    """{request's key: (Q,) values} of the diversity ``requests`` for the queries of ``base`` (the ranked view built with
    ``ascending_ties`` from :func:`judged_docs`, every judged query, in its order), ``qrels`` the subtopic qrels."""
    lines = _subtopic_lines(qrels)
    settings = {r.key: _settings(r, options) for r in requests}
    depth = max([diversity.DEPTH] + [s[5] for s in settings.values() if s[5] is not None])
    docid = run.table.column("docid")
    entries = np.flatnonzero(~base.missing[base.q]) if base.q.size else np.zeros(0, np.int64)
    docs_of = {}
    if entries.size:
        from ..strings import take
        texts = take(docid, base.row[entries]).to_pylist()
        for e, d in zip(entries.tolist(), texts):
            docs_of.setdefault(int(base.q[e]), []).append((int(base.ascending_pos[e]), d))
    out = {r.key: np.zeros(base.Q) for r in requests}
    groups: dict[tuple, list] = {}
    for r, s in settings.items():
        groups.setdefault(s[:4], []).append(r)
    for (level, alpha, beta, judged), reqs in groups.items():
        for qi, qid in enumerate(base.qids):
            if base.missing[qi]:
                continue
            topic = diversity.judgments_from_lines([(s, d, 1 if g >= level else 0) for s, d, g in lines[qid]],
                                                   alpha, beta, depth)
            ranked = sorted(docs_of.get(qi, []))
            if judged:
                ranked = [(i, d) for i, (_, d) in enumerate(ranked)]
            row = {d: i for i, d in enumerate(topic.docs)}
            rel = np.zeros((ranked[-1][0] + 1 if ranked else 0, topic.rel.shape[1]), dtype=np.int64)
            for pos, d in ranked:
                rel[pos] = topic.rel[row[d]]
            values = diversity.run_values(topic, rel, alpha, beta, depth)
            for r in reqs:
                out[r][qi] = values.value(settings[r][4], settings[r][5])
    return out
