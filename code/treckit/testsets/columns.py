"""A test set's queries kept as Arrow columns, one per field (:class:`QueryColumns`), and read back as
:class:`TestQuery` records (:class:`Queries`): a million queries in bounded memory, nothing for the garbage collector
to walk."""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .. import thresholds


class Judgment(NamedTuple):
    """A judged document of a query: its id and grade (0 = judged not relevant ... 3)."""
    doc_id: str
    grade: int


class TestQuery(NamedTuple):
    """A query of a test set (the schema's ``Query``)."""
    __test__ = False

    query_id: str
    query_text: str
    query_type: str
    topK: int | None
    relevant_docs: tuple[Judgment, ...]


class QueryColumns:
    """A test set's queries as Arrow columns, one per field (the judged docs of query ``i`` are rows
    ``doc_starts[i]:doc_starts[i + 1]`` of ``doc_ids`` and ``grades``): about a quarter of the memory of a
    Python string per id and text, and nothing for the garbage collector to walk.  Filled by
    :meth:`add` (or the lists of :meth:`filling`), a block of :data:`treckit.thresholds.TESTSET_BLOCK_QUERIES` queries at a time;
    read once :meth:`done`.  ``lines`` and ``positions`` (the line and index of each query in its file)
    are kept for the check of unique ids, which :meth:`repeated_ids` makes once every id is in."""

    def __init__(self) -> None:
        # ids, lines, positions, texts, types, topKs, doc counts, doc ids, grades
        self._lists: tuple[list, ...] = ([], [], [], [], [], [], [], [], [])
        self._blocks: list[list] = [[] for _ in self._lists]
        self._added = 0

    def filling(self) -> tuple[list, ...]:
        """The lists a block is gathered in: query ids, their lines and positions, texts, types, topKs,
        numbers of judged docs, doc ids, grades; call :meth:`block_full` after each query."""
        return self._lists

    def block_full(self) -> None:
        if len(self._lists[0]) >= thresholds.TESTSET_BLOCK_QUERIES:
            self._flush()

    def add(self, qid: str, text: str, qtype: str, top_k: int | None, docs, line: int | None = None) -> None:
        """One query; ``docs``: (doc_id, grade) pairs."""
        ids, lines, positions, texts, types, top_ks, counts, doc_ids, grades = self._lists
        positions.append(self._added)
        self._added += 1
        ids.append(qid)
        lines.append(line)
        texts.append(text)
        types.append(qtype)
        top_ks.append(top_k)
        n = len(doc_ids)
        for doc_id, grade in docs:
            doc_ids.append(doc_id)
            grades.append(grade)
        counts.append(len(doc_ids) - n)
        self.block_full()

    def _flush(self) -> None:
        import pyarrow as pa

        for lst, blocks, kind in zip(self._lists, self._blocks, _COLUMN_TYPES):
            blocks.append(pa.array(lst, kind()))
            lst.clear()

    def done(self) -> "QueryColumns":
        """The columns, read-only from here on."""
        import numpy as np
        import pyarrow as pa

        self._flush()
        ids, _, _, texts, types, top_ks, counts, doc_ids, grades = (
            pa.chunked_array(b, kind()) for b, kind in zip(self._blocks, _COLUMN_TYPES))
        self.query_ids, self.query_texts, self.query_types, self.top_ks = ids, texts, types, top_ks
        self.doc_ids, self.grades = doc_ids, grades
        self.doc_starts = np.concatenate([[0], np.cumsum(counts.to_numpy(), dtype=np.int64)])
        del self._lists, self._blocks
        return self

    def repeated_ids(self):
        """(line, position, id, first line, first position) of every query whose id an earlier query has."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        self._flush()
        ids, lines, positions = (pa.chunked_array(b, kind()).combine_chunks()
                                 for b, kind in zip(self._blocks[:3], _COLUMN_TYPES))
        if not len(ids):
            return
        codes = pc.dictionary_encode(ids).indices.to_numpy(zero_copy_only=False)
        _, first = np.unique(codes, return_index=True)
        repeats = np.flatnonzero(first[codes] != np.arange(codes.size))
        if not repeats.size:
            return
        lines, positions = lines.to_pylist(), positions.to_pylist()
        for at in repeats.tolist():
            was = int(first[codes[at]])
            yield lines[at], positions[at], ids[at].as_py(), lines[was], positions[was]

    def __len__(self) -> int:
        return len(self.query_ids)

    def blocks(self, size: int | None = None):
        """(query ids, texts, types, topKs, [(doc ids, grades) of each query]) as Python lists, a block of
        ``size`` queries (default :data:`treckit.thresholds.TESTSET_BLOCK_QUERIES`) at a time."""
        size = size or thresholds.TESTSET_BLOCK_QUERIES
        for a in range(0, len(self), size):
            b = min(a + size, len(self))
            lo, hi = int(self.doc_starts[a]), int(self.doc_starts[b])
            doc_ids = self.doc_ids.slice(lo, hi - lo).to_pylist()
            grades = self.grades.slice(lo, hi - lo).to_pylist()
            starts = (self.doc_starts[a:b + 1] - lo).tolist()
            docs = [(doc_ids[s:e], grades[s:e]) for s, e in zip(starts, starts[1:])]
            yield (self.query_ids.slice(a, b - a).to_pylist(), self.query_texts.slice(a, b - a).to_pylist(),
                   self.query_types.slice(a, b - a).to_pylist(), self.top_ks.slice(a, b - a).to_pylist(), docs)

    def __eq__(self, other) -> bool:
        return isinstance(other, QueryColumns) and all(
            getattr(self, f).equals(getattr(other, f)) for f in ("query_ids", "query_texts", "query_types", "top_ks",
                                                                 "doc_ids", "grades"))


def _string():
    import pyarrow as pa
    return pa.string()


def _int64():
    import pyarrow as pa
    return pa.int64()


def _int8():
    import pyarrow as pa
    return pa.int8()


_COLUMN_TYPES = (_string, _int64, _int64, _string, _string, _int64, _int64, _string, _int8)


class Queries(Sequence):
    """The queries of a test set's content (:class:`~treckit.testsets.load.TestSetContent`), each made into a
    :class:`TestQuery` when asked for."""

    def __init__(self, columns: QueryColumns) -> None:
        self._c = columns

    def __len__(self) -> int:
        return len(self._c)

    def _query(self, i: int) -> TestQuery:
        c = self._c
        s, e = int(c.doc_starts[i]), int(c.doc_starts[i + 1])
        return TestQuery(c.query_ids[i].as_py(), c.query_texts[i].as_py(), c.query_types[i].as_py(),
                         c.top_ks[i].as_py(), tuple(map(Judgment, c.doc_ids.slice(s, e - s).to_pylist(),
                                                        c.grades.slice(s, e - s).to_pylist())))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._query(j) for j in range(*i.indices(len(self)))]
        return self._query(range(len(self))[i])

    def __iter__(self):
        for ids, texts, types, top_ks, docs in self._c.blocks():
            for q in zip(ids, texts, types, top_ks, docs):
                yield TestQuery(*q[:4], tuple(map(Judgment, *q[4])))

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and len(self) == len(other) and all(a == b for a, b in zip(self, other))

    def __repr__(self) -> str:
        return f"<{len(self)} queries>"

