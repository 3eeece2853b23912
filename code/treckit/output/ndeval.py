"""ndeval's CSV table, byte for byte: ``runid,topic,ERR-IA@5,...,strec@20``, a line per topic of the run (a topic
without judgments shows zeros) and the ``amean`` line, each value as C's ``%.6f`` prints it (``-nan`` for the
NaN of 0/0).  The amean divides each column's sum by the topics both judged and in the run (``complete``: by
every judged topic)."""
from __future__ import annotations

import math

from ..dependencies import deferred
from ..console.errors import InputError
from ..inputs.formats import ndeval as reading
from ..measures import diversity

np = deferred("numpy")

COLUMNS = diversity.default_measures()


def c_fixed(value: float) -> bytes:
    """``printf("%.6f", value)`` as glibc prints it (NaN with its sign)."""
    if math.isnan(value):
        return b"-nan" if math.copysign(1.0, value) < 0 else b"nan"
    return b"%.6f" % value


def c_divide(total: float, count: int) -> float:
    """``total / count`` in C doubles: x/0 is infinite, 0/0 the x86 NaN (printed -nan)."""
    if count:
        return total / count
    if math.isnan(total) or total == 0:
        return total if math.isnan(total) else -math.nan
    return math.copysign(math.inf, total)


def table_bytes(qrels: reading.NdevalQrels, run: reading.NdevalRun, *, alpha: float = diversity.ALPHA,
                beta: float = diversity.BETA, complete: bool = False) -> bytes:
    """ndeval's standard output for ``run`` against ``qrels`` (read by :mod:`treckit.inputs.formats.ndeval`)."""
    return _table(run.runid, topic_rows(qrels, run, alpha, beta), qrels, complete)


def topic_rows(qrels: reading.NdevalQrels, run: reading.NdevalRun, alpha: float, beta: float) -> list[tuple]:
    """(topic, its values in :data:`COLUMNS`' order, whether it is judged) of each topic of ``run``, in its order."""
    parsed = [diversity.parse_measure(c) for c in COLUMNS]
    rows = []
    for topic, docs in run.topics.items():
        lines = qrels.topics.get(topic)
        if lines is None:
            values = diversity.zero_values(diversity.DEPTH)
        else:
            judged = diversity.judgments_from_lines(lines, alpha, beta, diversity.DEPTH)
            values = diversity.run_values(judged, diversity.ranked_rel(judged, docs), alpha, beta, diversity.DEPTH)
        rows.append((topic, [values.value(name, cutoff) for name, cutoff in parsed], lines is not None))
    return rows


def _table(runid: bytes, rows: list[tuple], qrels: reading.NdevalQrels, complete: bool) -> bytes:
    """ndeval's output of the topic ``rows`` (:func:`topic_rows`, in topic order) of the run ``runid``."""
    out = [b"runid,topic," + ",".join(COLUMNS).encode() + b"\n"]
    totals = np.zeros(len(COLUMNS))
    matched = 0
    for topic, row, judged in rows:
        matched += judged
        for i, v in enumerate(row):                      # C adds each column in topic order
            totals[i] = float(totals[i]) + v
        out.append(b"%s,%d," % (runid, topic) + b",".join(c_fixed(v) for v in row) + b"\n")
    count = len(qrels.topics) if complete else matched
    out.append(b"%s,amean," % runid + b",".join(c_fixed(c_divide(float(t), count)) for t in totals) + b"\n")
    return b"".join(out)


def ndeval_table(qrels, run, *, alpha: float = diversity.ALPHA, beta: float = diversity.BETA,
                 traditional: bool = False, depth: int | None = None, complete: bool = False) -> bytes:
    """``ndeval [-alpha A] [-beta B] [-traditional] [-M depth] [-c] QRELS RUN``'s standard output.  The run is
    read and evaluated a part of whole topics at a time (only each topic's values are kept), or whole when its
    topics' lines are not together."""
    for name, value in (("alpha", alpha), ("beta", beta)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise InputError(f"{name}={value!r}: ndeval takes {name} from 0 to 1", fix=f"e.g. {name}=0.5")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise InputError(f"depth={depth!r}: the run's cut-off depth must be a whole number of at least 1",
                         fix="e.g. depth=20, or leave it out to keep every document")
    q = reading.read_qrels(qrels)
    alpha, beta = float(alpha), float(beta)
    try:
        runid, rows = b"", []
        for part in reading.run_parts(run, traditional=traditional, depth=depth):
            runid = part.runid
            rows += topic_rows(q, part, alpha, beta)
        rows.sort(key=lambda row: row[0])            # every topic is in one part
        return _table(runid, rows, q, complete)
    except reading.TopicsInterleaved:               # a topic's lines apart: the run read whole
        return table_bytes(q, reading.read_run(run, traditional=traditional, depth=depth), alpha=alpha, beta=beta,
                           complete=complete)
