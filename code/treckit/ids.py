"""Reversible, trec_eval-safe doc-id escaping.

trec_eval, pytrec_eval and ir_measures split lines on whitespace, so an id such as
``American Psycho (film)`` cannot be written raw.  We percent-escape exactly the
characters Python's ``str.split()`` splits on, plus ``%`` itself, as the %XX of
their UTF-8 bytes (``American%20Psycho%20(film)``, ``100%25``).  Everything else
is written unchanged, so ordinary ids are untouched and ``#`` stays ``#``.

Decoding undoes only those escapes: ``%20``, ``%09``, ..., and ``%25``.  A foreign
id that happens to contain another ``%XX`` (``a%41b``) is kept as it is; a foreign
id that literally contains ``%20`` or ``%25`` is read as its decoded form (read
with ``decode_ids=False`` to keep it raw).

**The written form.**  trec_eval orders tied documents on the bytes of the file, so treckit
orders them on the *written form* of each id: the text of the file it was read from, or, for ids
that never were in a TREC file (JSONL, TSV, dicts, DataFrames), the escaped id -- what treckit
writes.  The two differ only for ids whose text is not the escape of what it decodes to (a foreign
``a%41b`` or lowercase ``%0a``, a raw no-break space): readers keep those texts (``Run.written``),
the writer writes them back unchanged, and :func:`written_ids` gives the bytes either way.
"""
from __future__ import annotations

import re
from typing import Mapping

from .dependencies import deferred
from .fast.arrow import call
from .fast.strings import string_buffers, take

from . import thresholds

np = deferred("numpy")
pa = deferred("pyarrow")

WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
              "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")  # every c with c.isspace()
_ESCAPE = {ch: "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in WHITESPACE + "%"}
_UNESCAPE = {v: k for k, v in _ESCAPE.items()}
_NEEDS_ESCAPE = re.compile("[" + re.escape(WHITESPACE + "%") + "]")
_ESCAPED = re.compile("|".join(sorted((re.escape(k) for k in _UNESCAPE), key=len, reverse=True)), re.IGNORECASE)
# regexes usable by pyarrow (RE2) to find the ids that need work, without a Python loop
WHITESPACE_RE2 = "[" + "".join("\\x{%x}" % ord(c) for c in WHITESPACE) + "]"
NEEDS_ESCAPE_RE2 = "[" + "".join("\\x{%x}" % ord(c) for c in WHITESPACE + "%") + "]"


_SPACE = re.compile("[" + re.escape(WHITESPACE) + "]")
_TSV_BREAK = re.compile("[\t\n\r]")


def field_id_problem(text: str) -> str | None:
    """Why ``text`` cannot be a field of a TREC line that is never escaped (a query id, a run tag, an iteration
    field): TREC readers split lines on whitespace.  None when it can (the one rule of every reader and writer)."""
    if not text:
        return "is empty"
    return "contains whitespace (TREC files split their lines on it)" if _SPACE.search(text) else None


def tsv_field_problem(text: str) -> str | None:
    """Why ``text`` cannot be a field of a TSV line (``qid<TAB>text``): None when it can."""
    return "holds a tab or a line break (a TSV line cannot hold it)" if _TSV_BREAK.search(text) else None


def escape_id(docid: str) -> str:
    """Escape whitespace and ``%`` so that whitespace-splitting readers see one field."""
    if not _NEEDS_ESCAPE.search(docid):
        return docid
    return _NEEDS_ESCAPE.sub(lambda m: _ESCAPE[m.group(0)], docid)


def unescape_id(docid: str) -> str:
    """Inverse of :func:`escape_id`; other ``%XX`` sequences are left alone."""
    if "%" not in docid:
        return docid
    return _ESCAPED.sub(lambda m: _UNESCAPE[m.group(0).upper()], docid)


def needs_escape(docid: str) -> bool:
    return _NEEDS_ESCAPE.search(docid) is not None


# C's isspace(): the characters trec_eval splits a line's fields on
TREC_EVAL_SPACE = frozenset(" \t\n\x0b\x0c\r")


def keeps_text(text: str, docid: str) -> bool:
    """Whether an id read from a file as ``text`` (``docid`` once decoded) keeps that text as its
    written form: trec_eval reads it as one field, yet escaping ``docid`` would give other bytes."""
    return escape_id(docid) != text and not any(c in TREC_EVAL_SPACE for c in text)


def _chunks(col) -> list[pa.Array]:
    return col.chunks if isinstance(col, pa.ChunkedArray) else [col]


def _escape_search(chunk: pa.Array) -> str | None:
    """Which search finds the ids of a string chunk that may need escaping: None (no byte below
    '!', above 127 or '%': none can), "%" (printable ASCII with a '%': a plain substring search)
    or the full whitespace-and-'%' pattern.  Two numpy reductions and memchr-speed searches over
    the chunk's data decide, so a column of plain ids costs next to nothing."""
    off, raw = string_buffers(chunk)
    data = raw[off[0]:off[-1]] if off.size else raw[:0]
    if data.size == 0:
        return None
    if int(data.min()) < 0x21 or int(data.max()) > 0x7F:
        return NEEDS_ESCAPE_RE2
    # '%' by memchr over slices: a copy of the whole buffer would cost more than the search
    step = thresholds.PERCENT_SCAN_SLICE_BYTES
    return "%" if any(data[a:a + step].tobytes().find(b"%") >= 0 for a in range(0, data.size, step)) else None



def rows_needing_escape(col) -> np.ndarray:
    """Rows of a string column whose id :func:`escape_id` changes (whitespace or '%'), found
    without a Python object per row."""
    from pyarrow.compute import MatchSubstringOptions


    rows, first = [], 0
    for c in _chunks(col):
        search = _escape_search(c) if len(c) else None
        if search is not None:
            kernel = "match_substring" if search == "%" else "match_substring_regex"
            mask = call(kernel, c, options=MatchSubstringOptions(search))
            rows.append(first + np.flatnonzero(mask.to_numpy(zero_copy_only=False)))
        first += len(c)
    return np.concatenate(rows) if rows else np.zeros(0, np.int64)


# the escapes escape_id writes, longest first (RE2: the first alternative that matches wins)
_CANONICAL_RE2 = "|".join(sorted(_UNESCAPE, key=len, reverse=True))
TREC_EVAL_SPACE_RE2 = "[ \\t\\n\\x0b\\x0c\\r]"


def keeps_texts(texts: pa.Array, decoded: bool = True) -> np.ndarray:
    """:func:`keeps_text` of each of ``texts`` (ids as read, decoded with :func:`unescape_id`, or not
    at all), by Arrow's string kernels: an id keeps its text when, once the escapes escape_id
    writes are taken out, a '%' or whitespace is left, and trec_eval reads it as one field."""
    from pyarrow.compute import MatchSubstringOptions, ReplaceSubstringOptions


    rest = call("replace_substring_regex", texts, options=ReplaceSubstringOptions(_CANONICAL_RE2, "")) if decoded else texts
    escapable = call("match_substring_regex", rest, options=MatchSubstringOptions(NEEDS_ESCAPE_RE2))
    split = call("match_substring_regex", texts, options=MatchSubstringOptions(TREC_EVAL_SPACE_RE2))
    return call("and_not", escapable, split).to_numpy(zero_copy_only=False)


def replace_rows(col, rows: np.ndarray, values: list[str]):
    """``col`` with the string at each of ``rows`` (ascending) replaced by ``values``; chunk by chunk,
    so a long column is never copied whole."""
    if rows.size == 0:
        return col

    out, first, at = [], 0, 0
    for c in _chunks(col):
        k = int(np.searchsorted(rows, first + len(c)))
        if k > at:
            mask = np.zeros(len(c), bool)
            mask[rows[at:k] - first] = True
            c = call("replace_with_mask", c, pa.array(mask), pa.array(values[at:k], c.type))
        out.append(c)
        first, at = first + len(c), k
    return pa.chunked_array(out, col.type) if isinstance(col, pa.ChunkedArray) else out[0]


def escape_column(col):
    """:func:`escape_id` over a string column; only the ids that need it go through Python."""
    rows = rows_needing_escape(col)
    return replace_rows(col, rows, [escape_id(v) for v in take(col, rows).to_pylist()]) if rows.size else col


def written_ids(docid, qid=None, written: Mapping[tuple[str, str], str] | None = None,
                rows: np.ndarray | None = None):
    """The doc ids as a TREC file written by treckit holds them, the bytes trec_eval compares: the
    text read from a file where ``written`` (``Run.written``: by (qid, docid)) keeps one, else the
    escaped id.  ``rows``: of those rows only, in that order (``qid`` is then the whole column)."""
    if rows is not None:
        docid = take(docid, rows)
    if pa.types.is_dictionary(docid.type):
        docid = docid.cast(pa.string())
    out = escape_column(docid)
    if not written:
        return out
    from pyarrow.compute import SetLookupOptions


    kept_docids = pa.array(sorted({d for _, d in written}), pa.string())
    hit = call("is_in", docid, options=SetLookupOptions(kept_docids))
    hit = np.flatnonzero(hit.to_numpy(zero_copy_only=False))
    if hit.size == 0:
        return out
    qids = take(qid, hit if rows is None else rows[hit]).to_pylist()
    texts = [written.get(key) for key in zip(qids, take(docid, hit).to_pylist())]
    found = [i for i, t in enumerate(texts) if t is not None]
    return replace_rows(out, hit[found], [texts[i] for i in found])
