"""Subtopic qrels and runs read as ndeval (version 4.5, the TREC Web track's diversity tool) reads them.

* qrels: ``TOPIC SUBTOPIC DOCNO JUDGMENT``, the iteration field being the subtopic; topic, subtopic and judgment
  natural numbers (digits, at most 1000009); a judgment above 1 is 1 (binary assessment); extra fields ignored;
* runs: ``TOPIC Q0 DOCNO RANK SCORE RUNID``; a topic may carry a task prefix ending in ``-`` (``wt09-12``);
  RANK a natural number; the run id printed is the first line's; the second field is not looked at;
* a run is ranked by its rank column (``traditional``: by score descending, then docno descending, and the
  rank column is ignored), cut to ``depth`` documents per topic if asked, and must not repeat a rank or a
  docno within a topic;
* fields are separated by ASCII whitespace; no line may be blank; an empty file is refused.

What ndeval refuses is an :class:`~treckit.console.errors.InputError` here, naming the file, the line, the text and the
fix.  Refused here and not by ndeval: a NUL byte (C reads the line as ending there), a topic without digits
or a ``-`` before them (ndeval then reads past the end of the field), and, when ranking by score, a score
that is not a number or is NaN (ndeval leaves such a score unset, or sorts it by chance).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Iterator

from ... import thresholds
from ...console.errors import InputError
from ..sources import Source, display_name
from .common import topic_blocks

LARGE_ENOUGH = 100000
_QRELS_FIX = ("ndeval reads qrels lines TOPIC SUBTOPIC DOCNO JUDGMENT: topic, subtopic and judgment natural "
              "numbers (digits), the subtopic in the iteration field")
_RUN_FIX = ("ndeval reads run lines TOPIC Q0 DOCNO RANK SCORE RUNID: a numeric topic (a task prefix ending in "
            "'-' is allowed), a rank of digits")
# C's strtod prefix as sscanf("%lf") reads it: decimal or hexadecimal, inf and nan words
_C_DOUBLE = re.compile(rb"[ \t\n\v\f\r]*([+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
                       rb"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?))",
                       re.IGNORECASE)


def natural_number(text: bytes) -> int:
    """ndeval's naturalNumber: the value of a field of digits, -1 if it is empty, has another character, or
    grows past its bound (a digit added to a value above 100000)."""
    if not text:
        return -1
    value = 0
    for c in text:
        if not 48 <= c <= 57:
            return -1
        if value > LARGE_ENOUGH:
            return -1
        value = 10 * value + c - 48
    return value


def parse_topic(text: bytes) -> int:
    """ndeval's parseTopic: digits, or a task prefix up to the first ``-`` then digits; -1 if neither."""
    if text[:1].isdigit():
        return natural_number(text)
    dash = text.find(b"-")
    return natural_number(text[dash + 1:]) if dash >= 0 else -1


def c_double(text: bytes) -> float | None:
    """What sscanf("%lf") stores for ``text``: the value of its number prefix, None when it has none."""
    m = _C_DOUBLE.match(text)
    if m is None:
        return None
    literal = m.group(1)
    body = literal.lstrip(b"+-").lower()
    sign = -1.0 if literal.startswith(b"-") else 1.0
    if body.startswith(b"0x"):
        hexa = body.decode()
        return sign * float.fromhex(hexa if "p" in hexa else hexa + "p0")
    if body.startswith(b"nan"):
        return math.nan
    return float(literal)


def _lines(data: bytes, name: str, fix: str, first_line: int = 1) -> list[bytes]:
    if b"\0" in data:
        line = data.count(b"\n", 0, data.index(b"\0")) + first_line
        raise InputError("holds a NUL byte, where ndeval (C) would cut the line short", path=name, line=line,
                         fix="remove the NUL bytes; " + fix)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def _shown(line: bytes) -> str:
    return line.decode("utf-8", "backslashreplace")


@dataclass
class NdevalQrels:
    """Per topic number (ascending), its lines as (subtopic number, docno, 0/1), in file order."""

    path: str
    topics: dict[int, list[tuple[int, bytes, int]]]


def _file_lines(path, data: bytes | None, kind: str, fix: str) -> tuple[str, list]:
    """The display name and the lines of ``path`` (or of ``data`` named ``path``); an empty file refused."""
    name = display_name(path)
    lines = _lines(_whole(path) if data is None else data, name, fix)
    if not lines:
        raise _empty(name, kind, fix)
    return name, lines


def _numbered_lines(path, data: bytes | None, kind: str, fix: str) -> Iterator[tuple[int, bytes]]:
    """The lines of ``path`` (or of ``data`` named ``path``), numbered, a block at a time: what is kept of them is
    held within the memory budget, the file never whole; an empty file refused."""
    name = display_name(path)
    chunks = [(data, 1)] if data is not None else \
        Source(path).admit(thresholds.LINE_READER_BYTES_PER_BYTE).blocks(thresholds.TEXT_BLOCK_BYTES)
    empty = True
    for chunk, first in chunks:
        for line_no, line in enumerate(_lines(bytes(chunk), name, fix, first), first):
            empty = False
            yield line_no, line
    if empty:
        raise _empty(name, kind, fix)


def _empty(name: str, kind: str, fix: str) -> InputError:
    return InputError(f"the {kind} file is empty (ndeval refuses it too)", path=name, fix=fix)


def _whole(path) -> bytes:
    """The whole content of ``path``, held within the memory budget."""
    return bytes(Source(path).admit(thresholds.LINE_READER_BYTES_PER_BYTE).data())


def read_qrels(path, *, data: bytes | None = None) -> NdevalQrels:
    """Read ``path`` (or ``data`` named ``path``) as ndeval reads its qrels."""
    name = display_name(path)
    topics: dict[int, list] = {}
    for line_no, line in _numbered_lines(path, data, "qrels", _QRELS_FIX):
        f = line.split()
        problem = None
        if len(f) < 4:
            problem = f"{len(f)} field{'s' if len(f) != 1 else ''}, not 4"
        else:
            for what, text in (("topic", f[0]), ("subtopic", f[1]), ("judgment", f[3])):
                if natural_number(text) < 0:
                    problem = f"{what} {_shown(text)!r} is not a natural number (at most 1000009)"
                    break
        if problem:
            raise InputError(f"syntax error: {problem} (ndeval stops here too)", path=name, line=line_no,
                             text=_shown(line), fix=_QRELS_FIX)
        topics.setdefault(natural_number(f[0]), []).append(
            (natural_number(f[1]), f[2], min(natural_number(f[3]), 1)))
    return NdevalQrels(name, dict(sorted(topics.items())))


@dataclass
class NdevalRun:
    """A run as ndeval ranks it: per topic number (ascending), its docnos in rank order."""

    path: str
    runid: bytes
    topics: dict[int, list[bytes]] = field(default_factory=dict)


def read_run(path, *, traditional: bool = False, depth: int | None = None, data: bytes | None = None) -> NdevalRun:
    """Read ``path`` (or ``data`` named ``path``) as ndeval reads its run: ranked by the rank column, or with
    ``traditional`` by score descending then docno descending; cut to ``depth`` documents per topic."""
    name, lines = _file_lines(path, data, "run", _RUN_FIX)
    return _read_part(lines, name, 1, b"", traditional, depth)


class TopicsInterleaved(Exception):
    """A topic's lines are not together in the run: it is read whole (:func:`read_run`)."""


def run_parts(path, *, traditional: bool = False, depth: int | None = None) -> Iterator[NdevalRun]:
    """The run read as :func:`read_run` reads it, a part of whole topics at a time (a block of lines, the last
    topic's lines carried to the next block), each part's topics in ndeval's order: memory holds a block, never
    the run; every part's run id is the run's (its first line's).  :class:`TopicsInterleaved` when a topic comes
    back after another: the caller reads the run whole."""
    name = display_name(path)
    seen: set[int] = set()
    runid, failed, empty = b"", None, True
    for chunk, first in topic_blocks(path, _line_topic):
        empty = False
        part, failed = _part_or_error(chunk, name, first, runid, traditional, depth, seen, failed)
        if part is not None:
            runid = part.runid
            yield part
    if empty:
        raise _empty(name, "run", _RUN_FIX)
    if failed is not None:
        raise failed


def _part_or_error(chunk: bytes, name: str, first: int, runid: bytes, traditional: bool, depth: int | None,
                   seen: set[int], failed: InputError | None) -> tuple[NdevalRun | None, InputError | None]:
    """(the part of the run in ``chunk``, or None once an error was met; the first error).  An error is kept until
    the run is known not to have a topic's lines apart (a part may then hold only some of a topic's lines, and the
    whole run decides): :class:`TopicsInterleaved` when a topic of ``chunk`` is in ``seen``."""
    part = None
    if failed is None:
        try:
            part = _read_part(_lines(chunk, name, _RUN_FIX, first), name, first, runid, traditional, depth)
        except InputError as exc:
            failed = exc
    if part is not None:
        topics = set(part.topics)
    else:
        topics = {_line_topic(ln) for ln in chunk.split(b"\n") if ln.strip()} if chunk.strip() else set()
    if not seen.isdisjoint(topics):
        raise TopicsInterleaved()
    seen.update(topics)
    return part, failed


def _line_topic(line: bytes) -> int:
    """A run line's topic as ndeval reads it (:func:`parse_topic`), -1 for a blank line."""
    f = line.split()
    return parse_topic(f[0]) if f else -1


def _read_part(lines: list[bytes], name: str, first_line: int, runid: bytes, traditional: bool,
               depth: int | None) -> NdevalRun:
    """Whole lines of the run (``lines``, the first being its line ``first_line``) read as ndeval reads them;
    ``runid``: the run's, when these are not its first lines (which give it)."""
    rows = []                     # (topic, rank, docno, score, line number)
    for line_no, line in enumerate(lines, first_line):
        f = line.split()
        problem = None
        if len(f) < 6:
            problem = f"{len(f)} field{'s' if len(f) != 1 else ''}, not 6"
        elif parse_topic(f[0]) < 0:
            problem = f"topic {_shown(f[0])!r} is not a natural number (a task prefix must end in '-')"
        elif natural_number(f[3]) < 0:
            problem = f"rank {_shown(f[3])!r} is not a natural number (at most 1000009)"
        if problem:
            raise InputError(f"syntax error: {problem} (ndeval stops here too)", path=name, line=line_no,
                             text=_shown(line), fix=_RUN_FIX)
        score = c_double(f[4]) if traditional else 0.0
        if score is None or math.isnan(score):
            raise InputError(f"score {_shown(f[4])!r} is {'NaN' if score is not None else 'not a number'}: ndeval "
                             "ranking by score (traditional) would sort it by chance", path=name, line=line_no,
                             text=_shown(line), fix="give every document a real number, or rank by the rank column")
        if line_no == 1:
            runid = f[5]
        rows.append((parse_topic(f[0]), natural_number(f[3]), f[2], score, line_no))
    if traditional:
        rows.sort(key=lambda r: r[2], reverse=True)
        rows.sort(key=lambda r: r[3], reverse=True)
        rows.sort(key=lambda r: r[0])
        count: dict[int, int] = {}
        for i, (topic, _, docno, score, line_no) in enumerate(rows):
            count[topic] = count.get(topic, 0) + 1
            rows[i] = (topic, count[topic], docno, score, line_no)
    rows.sort(key=lambda r: (r[0], r[1]))
    for a, b in zip(rows, rows[1:]):
        if a[0] == b[0] and a[1] == b[1]:
            raise InputError(f"duplicate rank ({b[1]}) for topic {b[0]} (ndeval stops here too)", path=name,
                             line=b[4], text=_shown(lines[b[4] - first_line]),
                             fix="give each document of a topic its own rank, or rank by score (traditional)")
    if depth is not None:
        kept, count = [], {}
        for r in rows:
            count[r[0]] = count.get(r[0], 0) + 1
            if count[r[0]] <= depth:
                kept.append(r)
        rows = kept
    seen: dict[tuple[int, bytes], int] = {}
    for r in rows:
        if (r[0], r[2]) in seen:
            raise InputError(f"duplicate docno ({_shown(r[2])}) for topic {r[0]} (ndeval stops here too)",
                             path=name, line=r[4], text=_shown(lines[r[4] - first_line]),
                             fix="list each document once per topic")
        seen[(r[0], r[2])] = r[4]
    run = NdevalRun(name, runid)
    for topic, _, docno, _, _ in rows:
        run.topics.setdefault(topic, []).append(docno)
    return run
