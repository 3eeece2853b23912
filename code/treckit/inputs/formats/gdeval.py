"""Qrels and runs read as gdeval.pl 1.2a (the TREC Web track's nDCG@k/ERR@k script) reads them.

gdeval.pl is a Perl script, and what it accepts, and how it orders a run, follow from Perl's rules:

* a line is split on ASCII whitespace (space, tab, VT, FF, CR, LF) after every CR in it is removed (a CR
  inside a line joins the text around it); extra fields are ignored;
* a topic loses everything up to its last ``-`` (``wt09-12`` is topic ``12``) and must then be digits;
* qrels: ``TOPIC ZERO DOCNO JUDGMENT``: ZERO must be numerically 0 (``Q0`` is, as Perl reads a word as 0,
  with a warning), JUDGMENT an integer (``-?[0-9]+``) of at most 4 (MAX_JUDGMENT); only judgments above 0
  are kept;
* runs: ``TOPIC Q0 DOCNO RANK SCORE RUNID``: ``Q0`` literally, RANK digits, RUNID present and not ``0``;
  the rank is never used; SCORE is read as Perl reads a number (its numeric prefix, 0 for none, with a
  warning), and the run id printed is the last line's;
* the run is ordered by topic (numerically), score descending, then docno descending as bytes; the
  qrels by topic, then judgment descending; both sorts are stable (Perl's merge sort);
* topics are compared as numbers (``01`` and ``1`` are one topic) but looked up as written
  (``$judgment{"$topic:$docno"}``, ``$seen{$topic}``, ``$ideal{$topic}``).

What gdeval.pl refuses (``format error on line N``) is an :class:`~treckit.console.errors.InputError` here, naming
the file, the line, the text and the fix; where Perl only warns (a word read as a number), a warning is
said once per file and the line is read as gdeval.pl reads it.  Refused here although gdeval.pl prints
something, because what it prints is not defined by the script: a NaN score, and scores Perl compares in a
circle (integers beyond 2^53 and a double equal to their rounding), whose order depends on Perl's sort
algorithm; a run id with ``%`` (printed through ``printf`` as a format).  A topic whose ideal DCG gdeval.pl
cannot find is refused as gdeval.pl stops there (a division by zero).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Callable, Iterator

from ... import thresholds
from ...console.errors import InputError
from ...console.messages import warn_python
from ..sources import Source, display_name
from .common import topic_blocks

MAX_JUDGMENT = 4
"""gdeval.pl's largest judgment: a higher one is a format error, and ERR's stopping probability is
(2^g - 1) / 2^MAX_JUDGMENT."""

_DIGITS = re.compile(rb"[0-9]+\Z")
_JUDGMENT = re.compile(rb"-?[0-9]+\Z")
# the numeric prefix Perl reads in a string (grok_number): sign, digits, fraction, exponent; or Inf/NaN
_PERL_DECIMAL = re.compile(rb"[ \t\n\v\f\r]*([+-]?)((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_PERL_INTEGER = re.compile(rb"[+-]?[0-9]+\Z")
_PERL_INFNAN = re.compile(rb"[ \t\n\v\f\r]*([+-]?)(?:1\.#)?(inf(?:inity)?|nan|ind|qnan|snan)", re.IGNORECASE)
_IV_MIN, _UV_MAX = -(1 << 63), (1 << 64) - 1
_EXACT = 1 << 53            # integers up to this size compare the same as doubles and as integers


def perl_number(text: bytes) -> tuple[int | float, bool]:
    """``text`` as Perl's numeric operators read it, and whether all of it is a number (Perl warns if not).

    The value is an ``int`` where Perl holds the number as an exact integer (its IOK flag), which it then
    compares exactly with another such integer, and a ``float`` where it compares as a double:

    * a whole integer literal within -2^63 .. 2^64-1: that integer;
    * a whole number with an exponent: its double, an integer when that double is one within Perl's
      integer range;
    * anything else: a double, never an integer: a whole decimal with a point (``5.0``,
      ``9007199254740993.0``: grok_number marks it "not an integer"), or the numeric prefix of a string that
      is not all number (0 for none, ``0x10`` -> 0, ``1_000`` -> 1: Perl clears the integer flag of those).
    """
    m = _PERL_DECIMAL.match(text)
    if m is None:
        m = _PERL_INFNAN.match(text)
        if m is None:
            return 0, False
        word = m.group(2).lower()
        value = math.nan if word in (b"nan", b"qnan", b"snan", b"ind") else math.inf
        whole = m.end() == len(text.rstrip(b" \t\n\v\f\r"))
        return (-value if m.group(1) == b"-" else value), whole
    whole = m.end() == len(text.rstrip(b" \t\n\v\f\r"))
    literal = m.group(1) + m.group(2)
    if whole and _PERL_INTEGER.match(literal):
        value = int(literal)
        return (value, True) if _IV_MIN <= value <= _UV_MAX else (float(literal), True)
    value = float(literal) or 0.0             # Perl reads "-0.0" as 0
    if whole and b"e" in literal.lower() and math.isfinite(value) and value == int(value) \
            and _IV_MIN <= value < 2.0 ** 64:
        return int(value), True
    return value, whole


def perl_compare(a: int | float, b: int | float) -> int:
    """Perl's ``<``/``>`` on two numbers read by :func:`perl_number`, as a three-way result: two integers
    compare exactly, anything else as doubles (an integer beyond 2^53 rounded); NaN is neither less nor
    greater (0)."""
    if isinstance(a, int) and isinstance(b, int):
        return (a > b) - (a < b)
    fa, fb = float(a), float(b)
    return (fa > fb) - (fa < fb)


def _needs_exact_compare(values) -> bool:
    """Whether Python's own comparison of ``values`` could differ from Perl's: only with an integer beyond
    2^53, which Perl compares exactly with another integer but rounded with a fraction."""
    return any(isinstance(v, int) and not -_EXACT <= v <= _EXACT for v in values)


@dataclass
class GdevalQrels:
    """Qrels as gdeval.pl holds them: judgments above 0 by ``topic:docno`` as written (the last one in
    sorted order wins), every kept judgment of a topic for its ideal ranking, and the topics seen."""

    path: str
    judgment: dict[bytes, int]                  # b"topic:docno" -> judgment
    ideal_gains: dict[bytes, list[int]]         # the group's first topic as written -> judgments, descending
    seen: set[bytes]


@dataclass
class GdevalRun:
    """A run as gdeval.pl orders it: per topic group (topics equal as numbers), the topic as first written
    in that group and the judgments of its documents in gdeval.pl's order."""

    path: str
    runid: bytes
    topics: list[bytes] = field(default_factory=list)       # each group's first topic as written
    gains: list[list[int]] = field(default_factory=list)    # each group's judgments in ranked order (0: none)


def _lines(data: bytes) -> list[bytes]:
    """Lines as Perl's ``<FH>`` gives them, each with every CR removed (``s/[\\r\\n]//g``)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [line.replace(b"\r", b"") if b"\r" in line else line for line in lines]


def _shown(line: bytes) -> str:
    return line.decode("utf-8", "backslashreplace")


def _topic_number(topic: bytes) -> int | float:
    value = int(topic)
    return value if value <= _UV_MAX else float(value)


class _Warnings:
    """A reading gdeval.pl warns about (a word read as a number): said once per file, with a count."""

    def __init__(self, path: str, what: str, warn: Callable[[str], None] | None) -> None:
        self.path, self.what, self.warn = path, what, warn
        self.count, self.first = 0, None

    def add(self, line_no: int, text: bytes) -> None:
        self.count += 1
        if self.first is None:
            self.first = (line_no, text)

    def say(self) -> None:
        if self.count and self.warn is not None:
            line_no, text = self.first
            more = f" ({self.count} lines like it)" if self.count > 1 else ""
            self.warn(f"{self.path}:{line_no}: {self.what} {_shown(text)!r} is not a number: gdeval.pl reads it "
                      f"as {perl_number(text)[0]!r} (Perl's rule, with a warning) and so does treckit{more}")


def default_warn(message: str) -> None:
    warn_python(message)


def read_qrels(path, *, data: bytes | None = None, warn: Callable[[str], None] | None = default_warn) -> GdevalQrels:
    """Read ``path`` (or ``data`` named ``path``) as gdeval.pl reads its qrels."""
    name = display_name(path)
    zero_words = _Warnings(name, "the second field", warn)
    kept: list[tuple[int | float, int, bytes, bytes, int]] = []      # (topic number, judgment, topic, docno, line)
    line_no = 0
    for line_no, line in enumerate(_lines(data), 1) if data is not None else _numbered_lines(path):
        f = line.split()
        topic = f[0].rpartition(b"-")[2] if f else b""
        zero = f[1] if len(f) > 1 else b"0"
        judgment = f[3] if len(f) > 3 else b""
        zero_value, zero_whole = perl_number(zero)
        if not (_DIGITS.match(topic) and zero_value == 0 and _JUDGMENT.match(judgment)
                and int(judgment) <= MAX_JUDGMENT):
            raise InputError(f"format error: {_qrels_problem(f, topic, zero_value, judgment)} (gdeval.pl stops "
                             "here too)", path=name, line=line_no, text=_shown(line),
                             fix="gdeval.pl reads qrels lines TOPIC 0 DOCNO JUDGMENT: a numeric topic (a prefix "
                                 "up to '-' is dropped), 0, the docno, an integer judgment of at most "
                                 f"{MAX_JUDGMENT}")
        if not zero_whole:
            zero_words.add(line_no, zero)
        value = int(judgment)
        if value > 0:
            kept.append((_topic_number(topic), value, topic, f[2], line_no))
    if not line_no:       # gdeval.pl prints its header and exits 0; eval and ndeval refuse it, and so does treckit
        raise InputError("the qrels file is empty (gdeval.pl would print only its header line and exit 0)",
                         path=name, fix="give the judgments file (lines TOPIC 0 DOCNO JUDGMENT)")
    zero_words.say()
    kept = _stable_sorted(kept, [(0, False), (1, True)])
    judgments: dict[bytes, int] = {}
    ideal: dict[bytes, list[int]] = {}
    seen: set[bytes] = set()
    group_key, group_number = None, None
    for number, value, topic, docno, _ in kept:
        if group_number is None or perl_compare(number, group_number) != 0:
            group_key, group_number = topic, number
            ideal[group_key] = []
        judgments[topic + b":" + docno] = value
        ideal[group_key].append(value)
        seen.add(topic)
    return GdevalQrels(name, judgments, ideal, seen)


def _qrels_problem(f: list[bytes], topic: bytes, zero_value, judgment: bytes) -> str:
    if len(f) < 4:
        return f"{len(f)} field{'s' if len(f) != 1 else ''}, not 4"
    if not _DIGITS.match(topic):
        return f"topic {_shown(f[0])!r} is not a number"
    if zero_value != 0:
        return f"second field {_shown(f[1])!r} is not 0"
    if not _JUDGMENT.match(judgment):
        return f"judgment {_shown(judgment)!r} is not an integer"
    return f"judgment {int(judgment)} is above gdeval.pl's maximum of {MAX_JUDGMENT}"


def read_run(path, qrels: GdevalQrels, *, data: bytes | None = None,
             warn: Callable[[str], None] | None = default_warn) -> GdevalRun:
    """Read ``path`` (or ``data`` named ``path``) as gdeval.pl reads its run, and look up each document's
    judgment in ``qrels`` as gdeval.pl does."""
    name = display_name(path)
    if data is None:
        data = _whole(path)
    score_words = _Warnings(name, "score", warn)
    run = _read_part(data, qrels, name, 1, score_words)
    score_words.say()
    _check_runid(run.runid, name)
    return run


class TopicsInterleaved(Exception):
    """A topic's lines are not together in the run (or a topic number is beyond what is compared exactly): it is
    read whole (:func:`read_run`)."""


def run_parts(path, qrels: GdevalQrels, *, warn: Callable[[str], None] | None = default_warn) -> Iterator[GdevalRun]:
    """The run read as :func:`read_run` reads it, a part of whole topics at a time (a block of lines, the last
    topic's lines carried to the next block), each part's topics in gdeval.pl's order: memory holds a block, never
    the run.  The last part's run id is the run's (the last line's); the warnings are said once, after the last
    part.  :class:`TopicsInterleaved` when a topic comes back after another: the caller reads the run whole."""
    name = display_name(path)
    score_words = _Warnings(name, "score", warn)
    seen: set[int] = set()
    runid, failed = None, None
    for chunk, first in topic_blocks(path, _line_topic):
        part, failed = _part_or_error(chunk, qrels, name, first, score_words, seen, failed)
        if part is not None:
            runid = part.runid
            yield part
    if failed is not None:
        raise failed
    score_words.say()
    _check_runid(b"?????" if runid is None else runid, name)


def _part_or_error(chunk: bytes, qrels: GdevalQrels, name: str, first: int, score_words: "_Warnings", seen: set,
                   failed: InputError | None) -> tuple[GdevalRun | None, InputError | None]:
    """(the part of the run in ``chunk``, or None once an error was met; the first error).  An error is kept until
    the run is known not to have a topic's lines apart (a part may then hold only some of a topic's lines, and the
    whole run decides): :class:`TopicsInterleaved` when a topic of ``chunk`` is in ``seen``, or is a number
    beyond 2^53 (which Perl may compare inexactly)."""
    part = None
    if failed is None:
        try:
            part = _read_part(chunk, qrels, name, first, score_words)
        except InputError as exc:
            failed = exc
    if part is not None:
        topics = [_topic_number(t) for t in part.topics]
    else:
        topics = [_line_topic(ln) for ln in chunk.split(b"\n") if ln.strip()] if chunk.strip() else []
    if any(not isinstance(n, int) or n >= _EXACT or n in seen for n in topics):
        raise TopicsInterleaved()
    seen.update(topics)
    return part, failed


def _line_topic(line: bytes) -> int | bytes:
    """A run line's topic as gdeval.pl reads it (the number after any prefix up to '-'), or its text when it is
    not one."""
    f = line.replace(b"\r", b"").split()
    topic = f[0].rpartition(b"-")[2] if f else b""
    return _topic_number(topic) if _DIGITS.match(topic) else topic


def _numbered_lines(path) -> Iterator[tuple[int, bytes]]:
    """The lines of ``path`` as :func:`_lines` gives them, numbered, a block at a time: what is kept of them is held
    within the memory budget, the file never whole."""
    src = Source(path).admit(thresholds.LINE_READER_BYTES_PER_BYTE)
    for data, first in src.blocks(thresholds.TEXT_BLOCK_BYTES):
        yield from enumerate(_lines(bytes(data)), first)


def _whole(path) -> bytes:
    """The whole content of ``path``, held within the memory budget."""
    src = Source(path).admit(thresholds.LINE_READER_BYTES_PER_BYTE)
    return bytes(src.data())


def _check_runid(runid: bytes, name: str) -> None:
    if b"%" in runid:
        raise InputError(f"run id {_shown(runid)!r} holds '%': gdeval.pl prints the run id inside a printf format, "
                         "where '%' starts a directive, so its output for this run id is garbled", path=name,
                         fix="rename the run (its last line's run id) without '%'")


def _read_part(data: bytes, qrels: GdevalQrels, name: str, first_line: int, score_words: "_Warnings") -> GdevalRun:
    """Whole lines of the run (``data``, starting at its line ``first_line``) read as gdeval.pl reads them, in its
    order; the run id is their last line's."""
    fast = read_run_fast(data, qrels, name)
    if fast is not None:
        return fast
    rows: list[tuple[int | float, int | float, bytes, bytes, int]] = []   # (topic number, score, docno, topic, line)
    runid = b"?????"
    for line_no, line in enumerate(_lines(data), first_line):
        f = line.split()
        topic = f[0].rpartition(b"-")[2] if f else b""
        runid = f[5] if len(f) > 5 else b""
        if not (_DIGITS.match(topic) and len(f) > 1 and f[1] == b"Q0" and len(f) > 3 and _DIGITS.match(f[3])
                and runid not in (b"", b"0")):
            raise InputError(f"format error: {_run_problem(f, topic)} (gdeval.pl stops here too)", path=name,
                             line=line_no, text=_shown(line),
                             fix="gdeval.pl reads run lines TOPIC Q0 DOCNO RANK SCORE RUNID: a numeric topic (a "
                                 "prefix up to '-' is dropped), the word Q0, a rank of digits, a run id other "
                                 "than 0")
        score, whole = perl_number(f[4])
        if not whole:
            score_words.add(line_no, f[4])
        if isinstance(score, float) and math.isnan(score):
            raise InputError(f"score {_shown(f[4])!r} is NaN: gdeval.pl's order of a NaN score depends on its sort "
                             "algorithm, so treckit refuses it", path=name, line=line_no, text=_shown(line),
                             fix="give every document a real number; drop or rescore NaN rows")
        rows.append((_topic_number(topic), score, f[2], topic, line_no))
    if _needs_exact_compare(r[1] for r in rows):
        _refuse_circular_scores(rows, name)
    rows = _stable_sorted(rows, [(0, False), (1, True), (2, True)])
    run = GdevalRun(name, runid)
    group_number = None
    for number, _, docno, topic, _ in rows:
        if group_number is None or perl_compare(number, group_number) != 0:
            group_number = number
            run.topics.append(topic)
            run.gains.append([])
        run.gains[-1].append(qrels.judgment.get(topic + b":" + docno, 0))
    return run


# a run line as gdeval.pl reads it when nothing is odd: spaces and tabs only, a topic of digits (after an
# optional prefix up to its last '-'), Q0, a rank of digits, a whole decimal score, a run id, maybe more fields
_PLAIN_RUN_LINE = re.compile(rb"^[ \t]*(?:\S*-)?([0-9]{1,15})[ \t]+Q0[ \t]+(\S+)[ \t]+[0-9]+[ \t]+"
                             rb"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[ \t]+(\S+)(?:[ \t][^\n]*)?$",
                             re.MULTILINE)


def read_run_fast(data: bytes, qrels: GdevalQrels, name: str) -> GdevalRun | None:
    """The run read as :func:`read_run` reads it, for the common case, with the work done by the regex engine
    and numpy; None when a line, a score or a topic needs Perl's rules one by one (the caller then reads it
    so, with the same result or the same refusal).  The common case: no CR, VT, FF or NUL; every line of the
    plain form with a whole decimal score; no integer (written so, or as an exponent) of 2^53 or more, so
    every comparison Perl makes is one of doubles; no run id 0 or with '%'."""
    import numpy as np
    if not data or any(c in data for c in (b"\r", b"\x0b", b"\x0c", b"\0")):
        return None
    rows = _PLAIN_RUN_LINE.findall(data)
    if len(rows) != data.count(b"\n") + (not data.endswith(b"\n")):
        return None
    columns = np.array(rows, dtype=np.bytes_)          # no NUL in the data: nothing is lost to padding
    runids = columns[:, 3]
    runid = bytes(runids[-1])
    if b"%" in runid or (runids == b"0").any():
        return None
    score = np.array([float(x) for x in columns[:, 2].tolist()])
    if (np.abs(score[np.floor(score) == score]) >= _EXACT).any():
        return None
    topic = columns[:, 0].astype(np.int64)
    _, doc_rank = np.unique(columns[:, 1], return_inverse=True)      # byte order, as Perl's lt and gt
    order = np.lexsort((-doc_rank.ravel(), -score, topic))           # stable: equal rows keep their input order
    sorted_topic = topic[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_topic[1:] != sorted_topic[:-1]))).tolist()
    topics, docnos = columns[:, 0].tolist(), columns[:, 1].tolist()
    judgment = qrels.judgment
    order_list = order.tolist()
    run = GdevalRun(name, runid)
    for a, b in zip(starts, starts[1:] + [len(order_list)]):
        here = order_list[a:b]
        run.topics.append(topics[here[0]])
        run.gains.append([judgment.get(topics[i] + b":" + docnos[i], 0) for i in here])
    return run


def _refuse_circular_scores(rows: list[tuple], name: str) -> None:
    """Refuse a topic whose scores Perl's comparison orders in a circle: two integers beyond 2^53 that round to
    the same double (told apart exactly) and a double equal to that rounding (equal to both).  Then a < b, b = x
    and x = a, the tie goes to the docno, and the order gdeval.pl prints depends on its merge sort's steps."""
    by_topic: dict = {}
    for topic, score, _, _, line_no in rows:
        by_topic.setdefault(topic, []).append((score, line_no))
    for scores in by_topic.values():
        rounded: dict[float, set] = {}
        for score, _ in scores:
            if isinstance(score, int):
                rounded.setdefault(float(score), set()).add(score)
        for score, line_no in scores:
            if isinstance(score, float) and len(rounded.get(score, ())) > 1:
                ints = sorted(rounded[score])
                raise InputError(f"scores {ints[0]} and {ints[1]} are integers Perl tells apart while the score {score!r} "
                                 "(a double) equals both: gdeval.pl's comparison is then circular and the order it "
                                 "prints depends on its sort algorithm, so treckit refuses it", path=name, line=line_no,
                                 fix="write these scores one way (all as integers, or all with a decimal point)")


def _run_problem(f: list[bytes], topic: bytes) -> str:
    if not f:
        return "an empty line"
    if not _DIGITS.match(topic):
        return f"topic {_shown(f[0])!r} is not a number"
    if len(f) < 6:
        return f"{len(f)} field{'s' if len(f) != 1 else ''}, not 6"
    if f[1] != b"Q0":
        return f"second field {_shown(f[1])!r} is not Q0"
    if not _DIGITS.match(f[3]):
        return f"rank {_shown(f[3])!r} is not digits"
    return "the run id is 0, which Perl reads as false"


def _stable_sorted(rows: list[tuple], keys: list[tuple[int, bool]]) -> list[tuple]:
    """``rows`` sorted stably as Perl's merge sort with a comparator over the tuple fields ``keys`` (field
    index, descending), first key first.  Numbers compare as Perl compares them, bytes as ``lt``/``gt``.
    Usually one stable sort per key, last key first (the same order); where Perl's comparison of numbers is
    not Python's (integers beyond 2^53), one sort with the whole comparator, so that numbers are only ever
    compared within equal earlier keys, as Perl compares them."""
    numbers = [i for i, _ in keys if rows and not isinstance(rows[0][i], bytes)]
    if any(_needs_exact_compare(r[i] for r in rows) for i in numbers):
        def compare(a: tuple, b: tuple) -> int:
            for index, descending in keys:
                x, y = a[index], b[index]
                c = perl_compare(x, y) if index in numbers else (x > y) - (x < y)
                if c:
                    return -c if descending else c
            return 0
        return sorted(rows, key=cmp_to_key(compare))
    order = list(range(len(rows)))
    for index, descending in reversed(keys):
        column = [r[index] for r in rows]
        order.sort(key=column.__getitem__, reverse=descending)
    return [rows[i] for i in order]
