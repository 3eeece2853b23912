"""What a reading of a document reports and marks: its problems, each with its line (:class:`Problems`), the value
of a field already reported (:data:`BAD`) and a collection left unbuilt (:data:`NOT_READ`)."""
from __future__ import annotations

import heapq

from .. import thresholds

BAD = object()          # a value already reported: validation does not report it a second time


class _NotRead:
    """A collection a streamed document holds outside its streamed list, below the top level: only
    the streamed list is data there (a test set's other fields are text), so it is not built."""

    def __repr__(self) -> str:
        return "<a collection, not read>"


NOT_READ = _NotRead()


class _Kept:
    """A kept problem, ordered backwards, so that the heap of kept problems has the last one on top."""

    __slots__ = ("key", "problem")

    def __init__(self, key: tuple, problem: tuple) -> None:
        self.key, self.problem = key, problem

    def __lt__(self, other: "_Kept") -> bool:
        return self.key > other.key


class Problems:
    """(line, message) problems: every one counted, the first ``keep`` (None:
    :data:`treckit.thresholds.MAX_LISTED_PROBLEMS`) by line kept.

    Problems on one line keep the order of their ``rank`` (a tuple; a reader's problems are ranked
    (0,), before a schema's), then the order they were added in."""

    def __init__(self, keep: int | None = None) -> None:
        self.keep = thresholds.MAX_LISTED_PROBLEMS if keep is None else keep
        self.total = 0
        self._heap: list[_Kept] = []

    def add(self, line: int | None, message: str, rank: tuple = (0,)) -> None:
        self.total += 1
        kept = _Kept((line or 0, rank, self.total), (line, message))
        if len(self._heap) < self.keep:
            heapq.heappush(self._heap, kept)
        elif kept.key < self._heap[0].key:
            heapq.heapreplace(self._heap, kept)

    def __bool__(self) -> bool:
        return self.total > 0

    def __len__(self) -> int:
        return self.total

    def listed(self) -> list[tuple[int | None, str]]:
        """The kept problems, by line."""
        return [k.problem for k in sorted(self._heap, key=lambda k: k.key)]

    @property
    def unlisted(self) -> int:
        return self.total - len(self._heap)

    def lines_text(self, indent: str = "  ") -> str:
        """One line per listed problem, then how many more there are."""
        out = [f"{indent}line {ln}: {msg}" if ln else f"{indent}{msg}" for ln, msg in self.listed()]
        if self.unlisted:
            out.append(f"{indent}... and {self.unlisted} more (the first {self.keep} are listed)")
        return "\n".join(out)
