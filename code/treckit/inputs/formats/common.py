"""What every reader shares: lines and fields split one way, numbers parsed strictly, errors or
counted skips, and notices of the explicit readings a file needed (docs/formats.md: "Reading rules")."""
from __future__ import annotations

import contextlib
import re
import sys
from dataclasses import dataclass, field
from typing import Callable, Iterator, TypeVar

from ...console.errors import InputError, SkipCounter, content_blanked, hidden_because, without_credentials
from ...ids import unescape_id
from ...console.spelling import pass_options, spell
from ... import thresholds
from ...ranking import DUPLICATES
from ..held import admit
from ..sources import Source, decode_text, display_name

# Fields are separated by runs of the bytes C's isspace() accepts in the C locale, which is what
# trec_eval splits on; any other character (NBSP, U+2028, U+0085, \x1c..\x1f, ...) is part of a field.
FIELD_SEPARATORS = " \t\n\v\f\r"
_SEPARATORS = re.compile("[" + re.escape(FIELD_SEPARATORS) + "]+")
# The two readings a line with more fields than its format can have (``--layout``).
LAYOUTS = ("auto", "docid-spaces", "extra-columns")
# The iteration values TREC files write in their second field; under the ``auto`` layout only a
# line with one of them may have its extra fields read as part of the doc id (anything else may be
# a query id with a space in it).
ITERATION_MARKS = ("0", "Q0")


def check_layout(layout: str) -> None:
    if layout not in LAYOUTS:
        raise InputError(f"unknown layout {layout!r}", fix=f"use one of {', '.join(LAYOUTS)}")


def split_fields(line: str) -> list[str]:
    """The fields of a line, split as trec_eval splits them."""
    return _SEPARATORS.split(line.strip(FIELD_SEPARATORS)) if line.strip(FIELD_SEPARATORS) else []


def is_blank(line: str) -> bool:
    return not line.strip(FIELD_SEPARATORS)


def is_comment(line: str) -> bool:
    return line.lstrip(FIELD_SEPARATORS).startswith("#")


def text_lines(text: str) -> list[str]:
    """The lines of a file: split on '\n' only (a '\r' before it is dropped), never on the other
    characters ``str.splitlines`` breaks at (U+2028, U+0085, \x0b, \x1c, ...), so a file means the
    same whether the line parser or the vectorized (Arrow) reader takes it."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def head_lines(path, n: int, what: str, role: str = "run") -> list[str]:
    """The first ``n`` content lines (not blank, not comments) of a file of ``role`` (run, qrels), each read whole.
    Only the head is read: a block of whole lines at a time (:data:`~treckit.thresholds.DETECT_READ_BYTES`), and
    only lines that end within the first :data:`~treckit.thresholds.DETECT_MAX_BYTES` count; gzip data is inflated
    no further than that."""
    src = Source(path)
    lines: list[str] = []
    seen, newlines, cut = 0, 0, False
    for data, first in src.blocks(thresholds.DETECT_READ_BYTES):
        if seen + len(data) > thresholds.DETECT_MAX_BYTES:      # whole lines only (a UTF-8 sequence is never cut)
            data = data[: data.rfind(b"\n", 0, thresholds.DETECT_MAX_BYTES - seen) + 1]
            cut = True
        seen += len(data)
        newlines += data.count(b"\n")
        if not _all_blank(data, FIELD_SEPARATORS):
            lines += [ln for ln in text_lines(decode_text(data, path, first)) if not is_blank(ln) and not is_comment(ln)]
        if cut or len(lines) >= n:
            break
    if cut and not lines:                        # every line read so far blank or a comment (or none ended)
        found = (f"the first line is longer than {thresholds.DETECT_MAX_BYTES:,} bytes" if not newlines else
                 f"its first {newlines:,} lines ({seen:,} bytes) are blank or comments, and detection reads at most "
                 f"{thresholds.DETECT_MAX_BYTES:,} bytes")
        raise InputError(f"{found}, so the format cannot be detected from it", path=display_name(path),
                         fix=_say_the_format(role))
    return lines[:n]


def text_blocks(source, first_line: int = 1, held: float | bool = False) -> Iterator[tuple[str, int]]:
    """The content of ``source`` (a path, or a :class:`~..sources.Source`) as text, a block of whole lines at a
    time (:data:`~treckit.thresholds.TEXT_BLOCK_BYTES`; gzip data inflated as it is read, never whole), each with
    the number of its first line, the content's first line being line ``first_line``; a wrong encoding names the
    line.  ``held``: what the reader holds per byte of content, checked against the memory budget
    (:meth:`~..sources.Source.admit`); True: a line reader's (:data:`~treckit.thresholds.LINE_READER_BYTES_PER_BYTE`);
    False: not checked here."""
    src = source if isinstance(source, Source) else Source(source)
    _admit(src, held)
    for data, first in src.blocks(thresholds.TEXT_BLOCK_BYTES):
        yield decode_text(data, src.path, first + first_line - 1), first + first_line - 1


def content_lines(source, blank: str = FIELD_SEPARATORS, first_line: int = 1,
                  held: float | bool = True) -> Iterator[tuple[int, str]]:
    """(number, text) of the lines of ``source`` (see :func:`text_blocks`), split as :func:`text_lines` splits (at
    '\\n', a '\\r' before it dropped), for a reader that passes over lines holding only characters of ``blank``:
    a block of such lines only is passed over whole, never made one Python string per line, so a file (or a gzip
    bomb) of newlines costs what reading it costs; the reader still passes over the blank lines of other blocks.
    ``held``: as :func:`text_blocks` (by default, a line reader's)."""
    src = source if isinstance(source, Source) else Source(source)
    _admit(src, held)
    for data, first in src.blocks(thresholds.TEXT_BLOCK_BYTES):
        if not _all_blank(data, blank):
            yield from enumerate(text_lines(decode_text(data, src.path, first + first_line - 1)), first + first_line - 1)


def _admit(src: Source, held: float | bool) -> None:
    if held is not False:
        src.admit(thresholds.LINE_READER_BYTES_PER_BYTE if held is True else held)


def _all_blank(data: bytes | bytearray, blank: str) -> bool:
    """Whether ``data`` holds only newlines and characters of ``blank`` (ASCII), found in C."""
    return not bytes(data).translate(None, (blank + "\n").encode("ascii"))


def numbered_lines(source, split: Callable[[str], list[str]] = str.splitlines,
                   held: float | bool = True) -> Iterator[tuple[int, str]]:
    """(number, text) of every line of ``source`` (see :func:`text_blocks`), split by ``split`` (a reader whose
    lines are ``str.splitlines``'), numbered as the whole text split so would number them (a block ends at a
    newline, which every split breaks at).  ``held``: as :func:`text_blocks` (by default, a line reader's)."""
    no = 0
    for text, _ in text_blocks(source, held=held):
        for line in split(text):
            no += 1
            yield no, line


def _say_the_format(role: str) -> str:
    # a converted file starts with the same line: only an explicit format helps
    given = pass_options(role, f"--{role}-format FORMAT", convert=False)
    return (f"say which format it has: {given}" if given else
            f"check that the right file was given (this command detects the format of its {role} files)")


def notice(path: str, message: str) -> None:
    """Say on stderr how a file was read where it needed an explicit rule (ids with spaces, ignored
    columns, queries without documents, ...): counted, never silent."""
    why = hidden_because()                   # a file named by a config: none of its content is shown
    said = spell(message if why is None else content_blanked(message, why))
    print(without_credentials(f"treckit: {path}: {said}"), file=sys.stderr)


# A decimal number as C's atof would read it completely (no '1_000', no hex); inf allowed, nan refused.
_FLOAT = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?)", re.IGNORECASE)
_INT = re.compile(r"[+-]?\d+")


def parse_score(text: str) -> float | None:
    """The double in ``text``, or None if it is not a plain decimal number (NaN included)."""
    return float(text) if _FLOAT.fullmatch(text) else None


def parse_int(text: str) -> int | None:
    """A whole number that fits the 64-bit columns, else None (the caller reports the line)."""
    if not _INT.fullmatch(text):
        return None
    n = int(text)
    return n if -(1 << 63) <= n < (1 << 63) else None


_ATOL = re.compile(r"\s*[+-]?\d+")
_ATOF = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def atol(text: str) -> int:
    """C's atol: the integer prefix of ``text``, 0 if none (trec_eval reads flags and cutoffs this way)."""
    m = _ATOL.match(text)
    return int(m.group(0)) if m else 0


def atof(text: str) -> float:
    """C's atof on plain decimals: the number prefix of ``text``, 0.0 if none."""
    m = _ATOF.match(text)
    return float(m.group(0)) if m else 0.0


class MalformedLine(InputError):
    """A line of a file that does not parse, met while such lines are not skipped."""


SKIPPED_LINES_SHOWN = 10       # skipped lines said one by one, per file; every one is counted in the summary
_tallies: list[dict[tuple[str, str], int]] = []


@dataclass
class LineErrors:
    """Raise on the first bad line, or (``skip=True``) say it ("Skipping malformed line N: what", the first
    :data:`SKIPPED_LINES_SHOWN` of a file), count each kind and go on.  ``role``: what the file holds (run,
    qrels, prefs), for the messages."""

    path: str
    skip: bool = False
    role: str = "run"
    skipped: SkipCounter = field(default_factory=SkipCounter)
    first_fix: str | None = None

    def bad(self, line_no: int, line: str, kind: str, fix: str) -> None:
        if not self.skip:
            skipping = pass_options(self.role, "--skip-malformed")
            raise MalformedLine(kind, path=self.path, line=line_no, text=line,
                                fix=fix + (f" (or, to count and skip such lines, {skipping})" if skipping else ""))
        self.skipped.add(kind, f"line {line_no}")
        self.first_fix = self.first_fix or fix
        if self.skipped.total <= SKIPPED_LINES_SHOWN:
            notice(self.path, f"Skipping malformed line {line_no}: {kind}")

    def report(self) -> None:
        total = self.skipped.total
        if total:
            notice(self.path, f"skipped {total} malformed {self.role} line(s)"
                              + (f" ({total - SKIPPED_LINES_SHOWN} more than said above)" if total > SKIPPED_LINES_SHOWN else "")
                              + f": {self.skipped.report()}")
        for tally in _tallies:
            tally[(self.role, self.path)] = total          # a file read twice counts once

    def nothing_read(self, what: str, empty: str | None = None) -> InputError:
        """The error for a file that gave no ``what`` (run lines, judgments): it is empty (``empty`` says so), or
        every line it had was malformed and skipped (then the first one's fix)."""
        if not self.skipped.total:
            return InputError(empty or f"no {what} found (the file is empty or holds only comments)", path=self.path,
                              fix="check that the right file was given")
        return InputError(f"no {what} left: its {self.skipped.total} line(s) were all malformed and skipped "
                          f"({self.skipped.report()})", path=self.path, fix=self.first_fix or "correct the lines")


@contextlib.contextmanager
def skipped_lines() -> Iterator[dict[tuple[str, str], int]]:
    """{(role, file): malformed lines skipped} of every file read in the block (0 for a file without one)."""
    tally: dict[tuple[str, str], int] = {}
    _tallies.append(tally)
    try:
        yield tally
    finally:
        _tallies.remove(tally)


T = TypeVar("T")


def skipping_on_demand(read: Callable[[bool], T], skip: bool, *paths, whole: Callable[[], str | None] | None = None) -> T:
    """``read(skip_malformed)``: with ``skip``, first without skipping (the fast readers, and runs evaluated in
    bounded memory, take only well-formed files), and on a malformed line again with such lines skipped and
    counted; a file read from stdin (``-``), which cannot be read twice, is read skipping at once.  ``whole()``
    (optional): why the files may not be read whole (skipping reads a run whole), else None; then the malformed
    line stays an error, its fix saying so."""
    if not skip or any(str(p) == "-" for p in paths):
        return read(skip)
    try:
        return read(False)
    except MalformedLine as exc:
        why = whole() if whole is not None else None
        if why is not None:
            raise MalformedLine(exc.reason, path=exc.path, line=exc.line, text=exc.text,
                                fix=f"{exc.fix}; it is not skipped here: {why}") from None
        return read(True)


def is_nan_text(text: str) -> bool:
    """Whether a field is a NaN as written (``nan``, ``-NaN`` ...): a number's place, and no number."""
    return text.lower() in ("nan", "-nan", "+nan")


def score_problem(text: str) -> tuple[str, str]:
    """(what, fix) for a score field that is not a number."""
    if is_nan_text(text):
        return f"score is NaN ({text!r})", "give every document a real number; drop or rescore NaN rows"
    return f"score {text!r} is not a number", "the score column must hold a decimal number such as 12.5 or -3e-2"


def check_score(value: float | None, text: str, line_no: int, line: str, errors: LineErrors) -> bool:
    if value is None:
        errors.bad(line_no, line, *score_problem(text))
        return False
    return True


def decode(docid: str, decode_ids: bool) -> str:
    return unescape_id(docid) if decode_ids else docid


def drop_repeated_judgments(qrels, policy: str, source: str):
    """(qrels, number of judgments dropped) under a duplicates policy for a (qid, docid) judged
    more than once: ``error`` refuses it, ``keep-first``/``keep-last`` keep that line's grade,
    ``keep-max`` the highest grade; the kept judgments stay in input order."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc


    if policy not in DUPLICATES:
        raise InputError(f"unknown duplicates policy {policy!r}", fix=f"use one of {', '.join(DUPLICATES)}")
    t = qrels.table
    n = t.num_rows
    key = pa.table({"q": t.column("qid"), "d": t.column("docid"), "g": t.column("grade"), "i": np.arange(n)})
    sort_keys = [("q", "ascending"), ("d", "ascending")]
    if policy == "keep-max":
        sort_keys.append(("g", "descending"))
    sort_keys.append(("i", "descending" if policy == "keep-last" else "ascending"))
    perm = pc.sort_indices(key, sort_keys=sort_keys).to_numpy()
    q, d = key.column("q").take(perm), key.column("d").take(perm)
    same = pc.and_(pc.equal(q.slice(0, n - 1), q.slice(1)), pc.equal(d.slice(0, n - 1), d.slice(1))) if n > 1 else None
    first = np.ones(n, bool)
    if same is not None:
        first[1:] = ~same.to_numpy(zero_copy_only=False)
    kept = np.sort(perm[first])
    dropped = n - kept.size
    if not dropped:
        return qrels, 0
    if policy == "error":
        row = int(np.setdiff1d(np.arange(n), kept)[0])        # the first line that repeats an earlier one
        qid, doc = t.column("qid")[row].as_py(), t.column("docid")[row].as_py()
        raise InputError(f"query {qid!r} judges doc {doc!r} more than once ({dropped} repeated judgment(s) in all)",
                         path=source, fix="remove the repeats, or "
                                          + pass_options("qrels", "--duplicates keep-first|keep-max|keep-last"))
    return type(qrels)(t.take(pa.array(kept))), dropped


def topic_blocks(path, topic_of: Callable[[bytes], object]) -> Iterator[tuple[bytes, int]]:
    """The content of a run a block of whole topics at a time, each with the number of its first line: a block of
    lines (:data:`~treckit.thresholds.TEXT_BLOCK_BYTES`; a .gz inflated as it is read) whose last topic's lines
    (``topic_of(line)``: a line's topic as the reader reads it) are carried to the next block, and held within the
    memory budget; a block of blank lines only is one of its own.  A topic whose lines are apart comes in several
    blocks: the caller tells."""
    name = display_name(path)
    carry, carry_line = b"", 1
    for data, first in Source(path).blocks(thresholds.TEXT_BLOCK_BYTES):
        data, first = (carry + data, carry_line) if carry else (bytes(data), first)
        cut = _last_topic_start(data, topic_of)
        carry, carry_line = data[cut:], first + data.count(b"\n", 0, cut)
        admit(name, len(carry), thresholds.LINE_READER_BYTES_PER_BYTE)          # one topic is held whole
        if cut:
            yield data[:cut], first
    if carry:
        yield carry, carry_line


def _last_topic_start(data: bytes, topic_of: Callable[[bytes], object]) -> int:
    """The offset of the first of the lines at the end of ``data`` (whole lines) that hold the topic of its last line
    that is not blank (the blank lines after it go with it); all of ``data`` when it is blank lines only."""
    end = len(data.rstrip())
    if not end:
        return len(data)
    pos = data.rfind(b"\n", 0, end) + 1
    last = topic_of(data[pos:end])
    while pos > 0:
        start = data.rfind(b"\n", 0, pos - 1) + 1
        if topic_of(data[start:pos]) != last:
            return pos
        pos = start
    return 0
