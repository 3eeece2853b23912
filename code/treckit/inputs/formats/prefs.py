"""Preference judgments, the rel-info formats of trec_eval's ``-R prefs``, ``-R qrels_prefs`` and ``-R qrels_jg``.

``prefs`` lines are ``qid jg jsg docno rel_level``: within a judgment sub-group (jsg) every doc is
preferred to every doc with a lower ``rel_level``; the sub-groups of one judgment group (jg, one user)
add up, transitively, to that user's preferences; 0.0 marks a non-relevant doc.  ``qrels_prefs`` reads
an ordinary qrels file the same way, its second column being the judgment group and each group one
sub-group; ``qrels_jg`` reads a qrels file as one set of judgments per judgment group (second column).

Doc ids are kept as written (no escape decoding), as trec_eval compares them byte for byte; the run is
then read the same way.  Lines are kept in file order; the evaluation orders them as trec_eval does.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...dependencies import deferred
from ...console.errors import InputError
from ..sources import PathLike, display_name
from ...model import Qrels
from .common import LineErrors, numbered_lines, parse_score

np = deferred("numpy")
pa = deferred("pyarrow")

# trec_eval splits fields on C's isspace(), not on every Unicode space
_FIELDS = re.compile(r"[ \t\n\r\f\v]+")


@dataclass(frozen=True)
class Prefs:
    """One row per preference line: query, judgment group, sub-group, doc id (string arrays) and level."""

    qid: pa.Array
    jg: pa.Array
    jsg: pa.Array
    docid: pa.Array
    level: np.ndarray          # float64
    source: str = "prefs"

    def __len__(self) -> int:
        return len(self.level)


def read_prefs(path: PathLike, *, skip_malformed: bool = False) -> Prefs:
    """A ``qid jg jsg docno rel_level`` file.  Blank lines and lines starting with ``#`` are skipped;
    a line with another number of fields, or a level that is not a number, is an error naming it."""
    name = display_name(path)
    errors = LineErrors(name, skip_malformed, "prefs")
    qids, jgs, jsgs, docs, levels = [], [], [], [], []
    for no, line in numbered_lines(path):
        if line.startswith("#"):
            continue
        fields = _FIELDS.split(line.strip(" \t\n\r\f\v"))
        if fields == [""]:
            continue
        if len(fields) != 5:
            errors.bad(no, line, f"a prefs line needs 5 fields (qid jg jsg docno rel_level), found {len(fields)}",
                       "write each judgment as 'qid judgment_group sub_group docno rel_level'")
            continue
        level = parse_score(fields[4])
        if level is None:
            errors.bad(no, line, f"rel_level {fields[4]!r} is not a number",
                       "the last field of a prefs line is a number such as 0, 1 or 2.5 (0 = non-relevant)")
            continue
        qids.append(fields[0]), jgs.append(fields[1]), jsgs.append(fields[2]), docs.append(fields[3])
        levels.append(level)
    errors.report()
    if not qids:
        raise InputError("no preference judgments found (the file is empty or holds only comments)", path=name,
                         fix="check that the right file was given")
    return Prefs(*(pa.array(x, pa.string()) for x in (qids, jgs, jsgs, docs)), np.array(levels, np.float64), name)


def prefs_from_qrels(qrels: Qrels, source: str = "qrels") -> Prefs:
    """A qrels file read as preferences (``-R qrels_prefs``): the second column names the judgment
    group, which is a single sub-group, and the grade is the relevance level."""
    t = qrels.table
    n = t.num_rows
    return Prefs(*(string_array(t.column(c)) for c in ("qid", "iter")), pa.repeat(pa.scalar("0"), n),
                 string_array(t.column("docid")), t.column("grade").to_numpy().astype(np.float64), source)


def string_array(values) -> pa.Array:
    """One plain string array from a list, an array or a (chunked, dictionary-encoded) column."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        values = pa.array(values, pa.string())
    if pa.types.is_dictionary(values.type):
        values = values.cast(pa.string())
    return values


def byte_order(values) -> tuple[np.ndarray, list[str]]:
    """(code of each value, the distinct values) with codes following C's strcmp on the UTF-8 bytes,
    the order trec_eval sorts queries, judgment groups and doc ids in (Arrow sorts strings bytewise)."""
    import pyarrow.compute as pc

    encoded = string_array(values).dictionary_encode()
    order = pc.array_sort_indices(encoded.dictionary).to_numpy()
    rank = np.empty(order.size, np.int64)
    rank[order] = np.arange(order.size)
    codes = rank[encoded.indices.to_numpy(zero_copy_only=False)] if len(encoded) else np.empty(0, np.int64)
    return codes, encoded.dictionary.take(pa.array(order)).to_pylist()
