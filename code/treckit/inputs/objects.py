"""What the Python API accepts as qrels, a run or measures, turned into treckit's model objects.

Qrels and runs may be given as:

* a model object (:class:`treckit.Qrels` / :class:`treckit.Run`);
* a path: any format the commands read (TREC, BEIR, QUEST, TSV, JSONL), and by extension ``.csv``,
  ``.parquet`` (columns as for DataFrames) and ``.json`` (one ``{qid: {docid: value}}`` object, as
  ranx saves them); ``irds:<dataset-id>`` for qrels (ir_datasets, an optional extra);
* a ``{qid: {docid: value}}`` dict (pytrec_eval, ir_measures, ranx's ``to_dict()``), ids of any
  type written as text (``{1: {"d": 1}}`` is query ``"1"``);
* a pandas DataFrame: PyTerrier's ``qid, docno, label`` / ``qid, docno, score[, rank]``, ir_measures'
  ``query_id, doc_id, relevance|score``, or treckit's own column names;
* ranx ``Qrels`` / ``Run`` objects (recognised by their ``to_dict``; ranx need not be installed);
* an iterable of ir_measures ``Qrel`` / ``ScoredDoc`` namedtuples, or of ``(qid, docid, value)`` tuples.

Grades must be integers and scores real numbers: a grade of 0.5 or a NaN score is an error, never
a silent 0 or a first place.  A run from a file is read by :class:`treckit.inputs.options.RunReading`
like every command reads it; a run given in memory (dict, DataFrame, ranx, tuples) is ranked by
score descending -- what pytrec_eval, ranx, ir_measures and PyTerrier mean by a score -- unless
an order option says otherwise, and by its ranks when it has ranks and no scores.
"""
from __future__ import annotations

import dataclasses
import io
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..dependencies import deferred
from ..console.errors import InputError
from ..console.messages import warn_python
from ..fast.strings import has_empty
from ..model import Qrels, Run
from . import irds
from .bounded import loads_json
from .options import FLAGS, RunReading
from .reading import as_meant, read_qrels, read_with
from .sources import read_bytes
from .values import grades, scores

np = deferred("numpy")
pa = deferred("pyarrow")

TABLE_SUFFIXES = (".csv", ".parquet", ".pq", ".json")     # files read as tables (columns, or ranx's JSON)

_QID_COLUMNS = ("qid", "query_id", "query-id", "topic", "topic_id")
_DOC_COLUMNS = ("docno", "docid", "doc_id", "corpus-id", "corpus_id", "pid", "did")
_GRADE_COLUMNS = ("label", "relevance", "grade", "rel", "score")
_SCORE_COLUMNS = ("score", "sim", "similarity")

_QRELS_KINDS = ("a path, a {qid: {docid: grade}} dict, a pandas DataFrame (qid, docno, label), a ranx Qrels, "
                "ir_measures Qrel tuples, (qid, docid, grade) tuples or treckit.Qrels")
_RUN_KINDS = ("a path, a {qid: {docid: score}} dict, a pandas DataFrame (qid, docno, score[, rank]), a ranx Run, "
              "ir_measures ScoredDoc tuples, (qid, docid, score) tuples or treckit.Run")


# ---------------------------------------------------------------- options
def split_options(options: Mapping[str, Any]) -> tuple[RunReading, dict[str, Any]]:
    """(the reading options as a RunReading, the rest) of an API call's keywords: ``reading=`` a ready
    RunReading, or its fields (``order``, ``gold``, ``tsv_third``, ``id_field`` ... and ``break_ties``)."""
    rest = dict(options)
    given = rest.pop("reading", None)
    names = {f.name for f in dataclasses.fields(RunReading)} | {"break_ties"} | {
        f.field[len("fields."):] + "_field" for f in FLAGS if f.field.startswith("fields.")}
    picked = {k: rest.pop(k) for k in list(rest) if k in names}
    if picked.pop("break_ties", False):
        picked["ties"] = "break"
    if given is None:
        return RunReading.from_options(**picked), rest
    if not picked:
        return given, rest
    return RunReading.from_options(**{**{f.name: getattr(given, f.name) for f in dataclasses.fields(given)},
                                      **picked}), rest


# ---------------------------------------------------------------- measures
def as_measures(measures) -> list[str]:
    """Measure names from a name, an ir_measures measure object (``nDCG@10``) or a list of either."""
    if isinstance(measures, str) or _is_measure_object(measures):
        measures = [measures]
    if not isinstance(measures, Iterable):
        raise InputError(f"measures must be a name or a list of names, not {type(measures).__name__}",
                         fix="e.g. measures=['map', 'ndcg_cut.10'] or [ir_measures.nDCG@10]")
    out = []
    for m in measures:
        if _is_measure_object(m):
            out.append(str(m))          # ir_measures' own spelling, which treckit reads
        elif isinstance(m, str) and m.strip():
            out.append(m)
        else:
            raise InputError(f"a measure must be a name or an ir_measures measure, not {m!r}",
                             fix="e.g. 'map', 'nDCG@10' or ir_measures.nDCG@10")
    if not out:
        raise InputError("no measures given", fix="name at least one, e.g. measures=['map']")
    return out


def _is_measure_object(x) -> bool:
    return hasattr(x, "NAME") and type(x).__module__.startswith("ir_measures")


# ---------------------------------------------------------------- qrels
def as_qrels(x) -> Qrels:
    """Qrels from any of the module's kinds of input."""
    if isinstance(x, Qrels):
        return x
    if isinstance(x, (str, os.PathLike)):
        return _qrels_from_path(x)
    if isinstance(x, Iterator):
        x = list(x)                              # read twice: the judgments, then their iteration field
    q, d, g = _triples(x, "qrels", _QRELS_KINDS, _GRADE_COLUMNS, value_fields=("relevance", "label", "grade"))
    return Qrels.from_columns(q, d, grades(g, "qrels"), _iterations(x))


def _iterations(x) -> list[str] | None:
    """The iteration field of each judgment when ``x`` gives one (a frame's ``iteration`` or ``iter`` column,
    ir_measures' Qrel namedtuples): the subtopic of diversity qrels; None otherwise (every judgment's is 0)."""
    if _is_frame(x):
        cols = {str(c).lower(): c for c in x.columns}
        name = cols.get("iteration", cols.get("iter"))
        return None if name is None else [str(v) for v in x[name].tolist()]
    if isinstance(x, (list, tuple)) and x and all("iteration" in getattr(r, "_fields", ()) for r in x):
        return [str(r.iteration) for r in x]
    return None


def _qrels_from_path(path) -> Qrels:
    if irds.is_irds(path):
        return irds.irds_qrels(str(path))
    table = _table_file(path)
    return read_qrels(path) if table is None else as_qrels(table)


# ---------------------------------------------------------------- runs
def as_run(x, reading: RunReading | None = None, *, qrels_source=None, warn=warn_python,
           order_option: bool = True) -> Run:
    """A run from any of the module's kinds of input, read with ``reading`` (default options);
    ``order_option``: see :func:`treckit.inputs.reading.read_with`."""
    reading = reading or RunReading()
    if isinstance(x, (str, os.PathLike)):
        table = _table_file(x)
        if table is None:
            src = qrels_source if isinstance(qrels_source, (str, os.PathLike)) else None
            return read_with(reading, x, lean=True, warn=warn, qrels_source=src, order_option=order_option).run
        x = table
    run = x if isinstance(x, Run) else _run_in_memory(x)
    return as_meant(reading, run, "memory", source="run", warn=warn).run


def _run_in_memory(x) -> Run:
    tag = "treckit"
    if _is_ranx(x, "run"):
        tag = getattr(x, "name", None) or tag
    if _is_frame(x):
        return _run_from_frame(x)
    q, d, s = _triples(x, "run", _RUN_KINDS, _SCORE_COLUMNS, value_fields=("score",))
    return Run.from_columns(q, d, scores(s), tag=tag)


def _run_from_frame(df) -> Run:
    cols = _columns(df, "run")
    q = _frame_ids(df[_pick(cols, _QID_COLUMNS, "run", "query id")], "query id", "run")
    d = _frame_ids(df[_pick(cols, _DOC_COLUMNS, "run", "doc id")], "doc id", "run")
    score_col = next((cols[c] for c in _SCORE_COLUMNS if c in cols), None)
    rank = None
    if "rank" in cols:
        rank = _integers(df[cols["rank"]].to_numpy(), "rank", "run")
    if score_col is None:
        if rank is None:
            raise InputError(f"a run DataFrame needs a score or a rank column; its columns are {list(df.columns)}",
                             fix="name the column 'score' (higher first) or 'rank' (lower first)")
        run = Run.from_columns(q, d, (float(rank.max()) + 1.0 - rank).tolist(), rank.tolist())
        run.notes["scores_from_rank"] = True
        return run
    tag = df[cols["tag"]].astype(str).tolist() if "tag" in cols else "treckit"
    return Run.from_columns(q, d, scores(df[score_col].to_numpy()), None if rank is None else rank, tag)


# ---------------------------------------------------------------- shared shapes
def _triples(x, role: str, kinds: str, value_columns, value_fields) -> tuple[Any, Any, list]:
    """(qids, docids, values) from a dict, DataFrame, ranx object or iterable of tuples."""
    if _is_ranx(x, role):
        x = x.to_dict()
    if isinstance(x, Mapping):
        return _from_mapping(x, role)
    if _is_frame(x):
        cols = _columns(x, role)
        q = _frame_ids(x[_pick(cols, _QID_COLUMNS, role, "query id")], "query id", role)
        d = _frame_ids(x[_pick(cols, _DOC_COLUMNS, role, "doc id")], "doc id", role)
        return q, d, x[_pick(cols, value_columns, role, "grade" if role == "qrels" else "score")].tolist()
    if isinstance(x, Iterable) and not isinstance(x, (str, bytes)):
        return _from_tuples(list(x), role, value_fields)
    raise InputError(f"cannot read {role} from {type(x).__name__}", fix=f"give {kinds}")


def _from_mapping(x: Mapping, role: str):
    if not x:
        raise InputError(f"the {role} dict is empty", fix="give at least one query with one document")
    qids, counts, docids, values = [], [], [], []
    for q, docs in x.items():
        if not isinstance(docs, Mapping):
            raise InputError(f"{role} dict: query {q!r} maps to {type(docs).__name__}, not a {{docid: value}} dict",
                             fix="write {qid: {docid: value}}")
        qids.append(_id(q, "query id", role))
        counts.append(len(docs))
        docids.extend(_ids(list(docs), "doc id", role))
        values.extend(docs.values())
    if not docids:
        raise InputError(f"the {role} dict has queries but no documents", fix="give each query at least one document")
    # each query's id once, repeated by Arrow: not one Python reference per document to convert
    codes = pa.array(np.repeat(np.arange(len(qids), dtype=np.int32), counts))
    return pa.DictionaryArray.from_arrays(codes, pa.array(qids, pa.string())).cast(pa.string()), docids, values


def _from_tuples(rows: list, role: str, value_fields: tuple[str, ...]):
    if not rows:
        raise InputError(f"the {role} list is empty", fix="give at least one (qid, docid, value)")
    qids, docids, values = [], [], []
    for i, r in enumerate(rows):
        fields = getattr(r, "_fields", None)
        if fields is not None and "query_id" in fields and "doc_id" in fields:      # ir_measures' namedtuples
            v = next((getattr(r, f) for f in value_fields if f in fields), None)
            q, d = r.query_id, r.doc_id
        elif isinstance(r, (tuple, list)) and len(r) == 3:
            q, d, v = r
        else:
            raise InputError(f"{role} item {i} is {r!r}: expected (qid, docid, value) or an ir_measures "
                             f"{'Qrel' if role == 'qrels' else 'ScoredDoc'}", fix="give 3-tuples")
        qids.append(_id(q, "query id", role)), docids.append(_id(d, "doc id", role)), values.append(v)
    return qids, docids, values


def _is_frame(x) -> bool:
    return hasattr(x, "columns") and hasattr(x, "iloc")


def _is_ranx(x, role: str) -> bool:
    """A ranx Qrels / Run (duck-typed: ranx need not be installed)."""
    return (not isinstance(x, Mapping) and not _is_frame(x) and callable(getattr(x, "to_dict", None))
            and (hasattr(x, "qrels" if role == "qrels" else "run") or type(x).__name__ == ("Qrels" if role == "qrels" else "Run")))


def _columns(df, role: str) -> dict[str, str]:
    if len(df) == 0:
        raise InputError(f"the {role} DataFrame is empty", fix="give at least one row")
    return {str(c).lower(): c for c in df.columns}


def _pick(cols: dict[str, str], names: tuple[str, ...], role: str, what: str) -> str:
    for n in names:
        if n in cols:
            return cols[n]
    raise InputError(f"the {role} DataFrame has no {what} column (looked for {', '.join(names)}); "
                     f"its columns are {list(cols.values())}", fix=f"rename the {what} column to {names[0]!r}")


def _id(v, what: str, role: str) -> str:
    if isinstance(v, str):
        if not v:
            raise InputError(f"{role}: an empty {what}", fix=f"every {what} must be non-empty")
        return v
    if isinstance(v, (bool, np.bool_)) or v is None:
        raise InputError(f"{role}: {what} {v!r} is not an id", fix=f"give every {what} as a string or an integer")
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        if math.isfinite(v) and float(v).is_integer():
            return str(int(v))
        raise InputError(f"{role}: {what} {v!r} is not an id", fix=f"give every {what} as a string or an integer")
    return str(v)


def _frame_ids(column, what: str, role: str):
    """A DataFrame's id column: its Arrow text as it is when pandas keeps it as Arrow text (pandas 3's ``str``)
    and every id is non-empty text, else each value read by :func:`_id` (which names a bad one)."""
    dtype = column.dtype
    if getattr(dtype, "storage", None) == "pyarrow" and getattr(dtype, "name", None) in ("str", "string"):
        arr = pa.array(column)
        if (pa.types.is_large_string(arr.type) or pa.types.is_string(arr.type)) and arr.nbytes < 1 << 30:
            arr = arr.cast(pa.string())
            if arr.null_count == 0 and not has_empty(arr):
                return arr
    return _ids(column.tolist(), what, role)


def _ids(values: list, what: str, role: str) -> list[str]:
    if set(map(type, values)) == {str} and all(values):        # the usual ids: non-empty strings, kept as they are
        return values
    return [_id(v, what, role) for v in values]


def _integers(a: np.ndarray, what: str, role: str) -> np.ndarray:
    try:
        f = a.astype(np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{role}: the {what} column holds non-numbers", fix=f"give every {what} as an integer") from None
    if not (np.isfinite(f).all() and (f == np.floor(f)).all()):
        raise InputError(f"{role}: the {what} column holds non-integers", fix=f"give every {what} as an integer")
    return f.astype(np.int64)


# ---------------------------------------------------------------- table files: CSV, Parquet, ranx JSON
def is_table_file(path) -> bool:
    """Whether ``path`` is read as a table (CSV, Parquet, a ``.json`` file of ranx's) rather than by the one reader."""
    return (isinstance(path, (str, os.PathLike)) and not irds.is_irds(path)
            and Path(str(path)).suffix.lower() in TABLE_SUFFIXES)


def _table_file(path):
    """A DataFrame for a CSV or Parquet file, the dict of a ``.json`` file holding one ``{qid: {docid: value}}``
    object (ranx's files), else None: the file is read like every command reads it."""
    if not is_table_file(path):
        return None
    name = str(path)
    suffix = Path(name).suffix.lower()
    data = read_bytes(path)
    if suffix == ".json":
        try:
            obj = loads_json(data, duplicate_keys=True)
        except (ValueError, UnicodeDecodeError):
            return None                      # JSON lines (or not JSON): the run and qrels readers decide
        if isinstance(obj, dict) and obj and all(isinstance(v, Mapping) for v in obj.values()):
            return obj
        return None
    import pandas as pd
    try:
        if suffix == ".csv":
            return pd.read_csv(io.BytesIO(data), dtype={c: str for c in _QID_COLUMNS + _DOC_COLUMNS})
        return pd.read_parquet(io.BytesIO(data))
    except Exception as exc:         # pandas' and pyarrow's parser errors have no common base
        raise InputError(f"cannot read it as {suffix[1:].upper()}: {exc}", path=name,
                         fix="check the file (CSV with a header row, or Parquet)") from None


