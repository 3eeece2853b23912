"""What every reader shares: lines and fields split one way, numbers parsed strictly, errors or
counted skips, and notices of the explicit readings a file needed (docs/formats.md: "Reading rules")."""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field

from ...console.errors import InputError, SkipCounter, content_blanked, hidden_because, without_credentials
from ...ids import unescape_id
from ...console.spelling import pass_options, spell
from ... import thresholds
from ...ranking import DUPLICATES
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
    """The first ``n`` content lines (not blank, not comments) of a file of ``role`` (run, qrels), each read whole."""
    src = Source(path)
    if src.plain:
        data = src.head
        with open(src.path, "rb") as fh:
            fh.seek(len(data))
            while len(data) < src.size and len(data) < thresholds.DETECT_MAX_BYTES and _content_count(data) < n:
                piece = max(len(data), thresholds.DETECT_READ_BYTES)
                data += fh.read(min(piece, thresholds.DETECT_MAX_BYTES - len(data)))
    else:
        data = src.data()[:thresholds.DETECT_MAX_BYTES]
    cut = len(data) < src.size
    if cut:                                      # whole lines only (a UTF-8 sequence is never cut)
        data = data[: data.rfind(b"\n") + 1]
    lines = [ln for ln in text_lines(decode_text(data, path)) if not is_blank(ln) and not is_comment(ln)]
    if cut and not lines:
        skipped = data.count(b"\n")
        found = (f"the first line is longer than {thresholds.DETECT_MAX_BYTES:,} bytes" if not skipped else
                 f"its first {skipped:,} lines ({len(data):,} bytes) are blank or comments, and detection reads at most "
                 f"{thresholds.DETECT_MAX_BYTES:,} bytes")
        raise InputError(f"{found}, so the format cannot be detected from it", path=display_name(path),
                         fix=_say_the_format(role))
    return lines[:n]


def _say_the_format(role: str) -> str:
    # a converted file starts with the same line: only an explicit format helps
    given = pass_options(role, f"--{role}-format FORMAT", convert=False)
    return (f"say which format it has: {given}" if given else
            f"check that the right file was given (this command detects the format of its {role} files)")


_CONTENT_LINE = re.compile(rb"^[ \t\v\f\r]*[^ \t\v\f\r\n#]", re.MULTILINE)


def _content_count(data: bytes) -> int:
    """How many lines of ``data`` have content (not blank, not a comment: a file may open with many comment
    lines); an upper bound (the last, unfinished line counts) is enough to stop reading."""
    return len(_CONTENT_LINE.findall(data))


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


@dataclass
class LineErrors:
    """Raise on the first bad line, or (``skip=True``) count each kind and go on.  ``role``: what the file
    holds (run, qrels, prefs), for the messages."""

    path: str
    skip: bool = False
    role: str = "run"
    skipped: SkipCounter = field(default_factory=SkipCounter)

    def bad(self, line_no: int, line: str, kind: str, fix: str) -> None:
        if not self.skip:
            skipping = pass_options(self.role, "--skip-malformed")
            raise InputError(kind, path=self.path, line=line_no, text=line,
                             fix=fix + (f" (or, to count and skip such lines, {skipping})" if skipping else ""))
        self.skipped.add(kind, f"line {line_no}")

    def report(self) -> None:
        if self.skipped.total:
            print(without_credentials(f"treckit: {self.path}: skipped {self.skipped.total} malformed {self.role} "
                                      f"line(s): {self.skipped.report()}"), file=sys.stderr)


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
