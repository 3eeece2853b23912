"""TREC files written: qrels (``qid iter docid grade``) and runs (``qid Q0 docid rank score tag``), six columns of
single spaces, ids escaped (:mod:`treckit.ids`) so that trec_eval reads each as one field, scores in shortest
round-trip form so trec_eval reads the same double.  Large runs are formatted by Arrow, on two threads."""
from __future__ import annotations

from ..dependencies import deferred
from .. import thresholds
from ..console.errors import InputError
from ..fast.arrow import as_string, repeated_column
from ..fast.strings import run_starts, take
from ..ids import WHITESPACE_RE2, field_id_problem, written_ids
from ..inputs.sources import PathLike
from ..model import Qrels, Run
from .files import atomic_output, atomic_path

np = deferred("numpy")
pa = deferred("pyarrow")


def write_trec_qrels(qrels: Qrels, path: PathLike, *, escape_ids: bool = True, sort: bool = True) -> None:
    """Sorted by qid then docid (byte order), so the same judgments always give the same bytes;
    ``sort=False`` keeps the input order (a raw, unsorted file then round-trips byte for byte)."""
    import pyarrow.compute as pc

    t = qrels.table
    if sort:
        t = t.take(pc.sort_indices(t, sort_keys=[("qid", "ascending"), ("docid", "ascending")]))
    docids = t.column("docid").to_pylist()
    _check_no_whitespace(t.column("qid").to_pylist(), "query id")
    _check_no_whitespace_arrow(as_string(t.column("iter")), "iteration field")
    _check_no_empty_ids(t.column("docid"), t.column("qid"))
    if escape_ids:                                  # ids read from a TREC file keep their text
        docids = written_ids(t.column("docid"), t.column("qid"), qrels.written).to_pylist()
    else:
        _check_raw_ids(docids)
    with atomic_output(path) as fh:
        for q, it, d, g in zip(t.column("qid").to_pylist(), t.column("iter").to_pylist(), docids, t.column("grade").to_pylist()):
            fh.write(f"{q} {it} {d} {g}\n")


def write_trec_run(run: Run, path: PathLike, *, escape_ids: bool = True, tag: str | None = None) -> None:
    """Six columns, single spaces; scores in shortest round-trip form so trec_eval reads the same double."""
    import pyarrow.compute as pc

    t = run.table
    qid = t.column("qid")
    _check_no_whitespace_arrow(qid, "query id")
    doc = t.column("docid")
    _check_no_empty_ids(doc, qid)
    if escape_ids:
        doc = written_ids(doc, qid, run.written)      # ids read from a TREC file keep their text
    else:
        _check_raw_ids_arrow(doc)
    n = t.num_rows
    tags = t.column("tag")
    if tag or tags.null_count == n:           # one tag for every line
        _check_no_whitespace([tag or run.tag], "run tag")
        tags = repeated_column(n, tag or run.tag)
    else:
        if tags.null_count:
            tags = pc.fill_null(as_string(tags), run.tag)
        _check_no_whitespace_arrow(tags, "run tag")
    plain_file = str(path) != "-" and not str(path).endswith(".gz")
    if plain_file and not _has_bytes(doc, b'" \t\n\r') and not _has_bytes(_distinct(qid), b'"') \
            and not _has_bytes(_distinct(tags), b'"'):
        # Arrow's CSV writer, unquoted and writing natively, is the fast path; it refuses '"' and
        # separators inside values, which the joined-lines path below takes
        cols = pa.table({"qid": qid, "docid": doc, "rank": t.column("rank"), "score": t.column("score"), "tag": tags})
        with atomic_path(path) as tmp:
            _write_csv_parallel(cols, tmp)
        return
    qid, tags = as_string(qid), as_string(tags)
    with atomic_output(path, "wb") as fh:
        lines = pc.binary_join_element_wise(qid, repeated_column(n, "Q0"), doc, rank_text(t.column("rank")),
                                            _score_text(t.column("score")), tags, " ")
        lines = pc.binary_join_element_wise(lines, repeated_column(n, ""), "\n")
        for chunk in (lines.chunks if isinstance(lines, pa.ChunkedArray) else [lines]):
            fh.write(_string_payload(chunk))


def csv_part(t: pa.Table, dest) -> None:
    import pyarrow.csv as pcsv

    n = t.num_rows
    out = pa.table({"qid": t.column("qid"), "iter": repeated_column(n, "Q0"), "docid": t.column("docid"),
                    "rank": rank_text(t.column("rank")),
                    "score": _score_text(t.column("score")),
                    "tag": t.column("tag")})
    pcsv.write_csv(out, dest, write_options=pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none"))


def _score_text(score):
    """Scores as text, shortest round-trip form; -0.0 is written "0", never "-0"."""
    import pyarrow.compute as pc

    return pc.cast(pc.add(score, 0.0), pa.string())


def rank_text(rank) -> pa.ChunkedArray | pa.Array:
    """Ranks as text; ranks are small numbers repeated in every query, so their text is looked up
    in a table of "0".."max" (a third of the cost of formatting each one)."""
    import pyarrow.compute as pc

    lo, hi = (pc.min_max(rank)[k].as_py() for k in ("min", "max")) if len(rank) else (0, 0)
    if lo is None or lo < 0 or hi > thresholds.RANK_TEXT_TABLE_MAX:
        return pc.cast(rank, pa.string())
    return pa.array([str(i) for i in range(hi + 1)], pa.string()).take(rank)


def _write_csv_parallel(t: pa.Table, dest: str) -> None:
    """Format and write a large table on both cores: the first half straight into ``dest``, the
    second into memory at the same time, appended when both are done."""
    from concurrent.futures import ThreadPoolExecutor

    n = t.num_rows
    if n < thresholds.PARALLEL_WRITE_MIN_ROWS:
        csv_part(t, dest)
        return
    half = n // 2
    second = pa.BufferOutputStream()
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(csv_part, [t.slice(0, half), t.slice(half)], [dest, second]))
    with open(dest, "ab") as out:
        out.write(second.getvalue())


def _string_payload(arr: pa.Array) -> bytes | memoryview:
    """The concatenated bytes of a string array's values, without a Python object per value."""
    if len(arr) == 0:
        return b""
    arr = arr.cast(pa.large_string()) if arr.type != pa.large_string() else arr
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset: arr.offset + len(arr) + 1]
    return memoryview(arr.buffers()[2])[offsets[0]:offsets[-1]]


def _check_no_whitespace(values: list[str], what: str) -> None:
    for v in values:
        problem = field_id_problem(v)
        if problem:
            raise InputError(f"{what} {v!r} {problem}; a TREC file cannot hold it",
                             fix=f"rename the {what} (e.g. replace spaces with underscores)")


def _data_bytes(col):
    """The data buffers of a string column as bytes objects (a superset of its values' bytes)."""
    for c in (col.chunks if isinstance(col, pa.ChunkedArray) else [col]):
        if len(c) and c.buffers()[2] is not None:
            yield c.buffers()[2].to_pybytes()


def _distinct(col):
    """A string column's values, each once for a dictionary column (whose data buffer is its dictionary's)."""
    if pa.types.is_dictionary(col.type):
        return (col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col).dictionary
    return col


def _has_bytes(col, chars: bytes) -> bool:
    return any(data.find(bytes([ch])) >= 0 for data in _data_bytes(col) for ch in chars)


def _check_no_whitespace_arrow(col, what: str) -> None:
    import pyarrow.compute as pc

    if pa.types.is_dictionary(col.type):           # check each distinct value once
        col = (col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col).dictionary
    elif len(col) > 1:
        starts = run_starts(col, most=len(col) // 8)
        if starts is not None:                     # runs of equal values (a qid or tag column): check one of each
            col = take(col, starts)
    bad = pc.or_(pc.match_substring_regex(col, WHITESPACE_RE2), pc.equal(pc.utf8_length(col), 0))
    if pc.any(bad).as_py():
        first = col.filter(bad)[0].as_py()
        _check_no_whitespace([first], what)


def _check_no_empty_ids(doc, qid) -> None:
    """No empty doc id: its line would have a field too few, which trec_eval reads wrongly or refuses."""
    import pyarrow.compute as pc

    if pa.types.is_dictionary(doc.type):
        doc = doc.cast(pa.string())
    empty = pc.equal(pc.binary_length(doc), 0)
    if pc.any(empty).as_py():
        first = qid.filter(empty)[0].as_py()
        raise InputError(f"a doc id of query {first!r} is empty; a TREC file cannot hold it (its line would have a "
                         "field too few, which trec_eval reads wrongly)", fix="give every document a non-empty id")


def _check_raw_ids(values: list[str]) -> None:
    for v in values:
        if any(ch in "\n\r" for ch in v):
            raise InputError(f"doc id {v!r} contains a line break; it cannot be written raw",
                             fix="write escaped ids (the default) instead of --raw-ids")


def _check_raw_ids_arrow(col) -> None:
    import pyarrow.compute as pc

    bad = pc.match_substring_regex(col, r"[\n\r]")
    if pc.any(bad).as_py():
        _check_raw_ids([col.filter(bad)[0].as_py()])
