"""gdeval.pl's CSV, byte for byte: ``runid,topic,ndcg@K,err@K``, a line per topic evaluated, and, as the TREC
2010-2012 versions of the script print it, an optional ``amean`` line.

Version 1.2a (the copy ir_measures ships) prints no ``amean`` line ("ambiguous in the situation where a query
ID is amean"); versions 1.1-1.2 print, after the topics, ``runid,amean,NDCG,ERR``: the arithmetic means over
the topics printed, summed in the order printed, and ``runid,amean,0.00000,0.0000`` when no topic was
(the second field with four decimals, as those versions print it).
"""
from __future__ import annotations

from ..console.errors import InputError
from ..dependencies import deferred
from ..inputs.formats import gdeval as reading
from ..measures import gdeval as measures

np = deferred("numpy")


def csv_bytes(result: measures.GdevalResult, k_text: str, *, topics: bool = True, amean: bool = False) -> bytes:
    """The CSV gdeval.pl prints for ``result`` at depth ``k_text`` (as given on its command line).
    ``topics``: the per-topic lines; ``amean``: the mean line of the 2010-2012 versions."""
    out = [b"runid,topic,ndcg@%s,err@%s\n" % (k_text.encode(), k_text.encode())]
    runid = result.runid
    if topics:
        out.extend(b"%s,%s,%.5f,%.5f\n" % (runid, t, n, e)
                   for t, n, e in zip(result.topics, result.ndcg.tolist(), result.err.tolist()))
    if amean:
        if result.topics:
            ndcg_total = err_total = 0.0
            for n, e in zip(result.ndcg.tolist(), result.err.tolist()):    # in the order printed, as Perl adds
                ndcg_total += n
                err_total += e
            count = len(result.topics)
            out.append(b"%s,amean,%.5f,%.5f\n" % (runid, ndcg_total / count, err_total / count))
        else:
            out.append(b"%s,amean,0.00000,0.0000\n" % runid)
    return b"".join(out)


def parse_depth(text) -> tuple[int, str]:
    """gdeval.pl's third argument K: (its value, its text as the header prints it).  Digits only, at least 1:
    gdeval.pl divides by zero at 0 and reads fractions its own way (``2.5`` is 2 ranks or all of them)."""
    k_text = str(text)
    if not (k_text.isascii() and k_text.isdigit()) or int(k_text) < 1:
        raise InputError(f"K {k_text!r}: the depth must be a whole number of at least 1", fix="e.g. 20")
    return int(k_text), k_text


def gdeval_csv(qrels, run, k, *, topics: bool = True, amean: bool = False, warn=reading.default_warn) -> bytes:
    """``gdeval.pl QRELS RUN K``'s standard output for the files ``qrels`` and ``run`` (paths, ``-`` for stdin),
    ``k`` a positive whole number (or its digits).  ``amean=True`` adds the 2010-2012 versions' mean line,
    ``topics=False`` leaves out the per-topic lines."""
    depth, k_text = parse_depth(k)
    q = reading.read_qrels(qrels, warn=warn)
    try:
        result = _evaluated_by_parts(q, run, depth, warn)
    except reading.TopicsInterleaved:           # a topic's lines apart: the run read whole
        result = measures.evaluate(q, reading.read_run(run, q, warn=warn), depth)
    return csv_bytes(result, k_text, topics=topics, amean=amean)


def _evaluated_by_parts(qrels, run, depth: int, warn) -> measures.GdevalResult:
    """The run evaluated a part of whole topics at a time (:func:`~treckit.inputs.formats.gdeval.run_parts`), the
    topics then put in gdeval.pl's order (by number): only the values of each topic are kept."""
    runid, got, failed = b"?????", [], None
    for part in reading.run_parts(run, qrels, warn=warn):
        runid = part.runid
        try:
            res = measures.evaluate(qrels, part, depth)
        except InputError as exc:              # said once the run is known not to need reading whole
            failed = failed or exc
            continue
        got += zip((int(t) for t in res.topics), res.topics, res.ndcg.tolist(), res.err.tolist())
    if failed is not None:
        raise failed
    got.sort(key=lambda row: row[0])           # stable; every topic number is in one part
    return measures.GdevalResult(runid, [t for _, t, _, _ in got], np.array([n for _, _, n, _ in got]),
                                 np.array([e for _, _, _, e in got]))
