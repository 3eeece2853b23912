"""What every line-oriented reader shares: numbers parsed strictly, errors or counted skips."""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field

from ..errors import InputError, SkipCounter
from ..ids import unescape_id

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
    """Raise on the first bad line, or (``skip=True``) count each kind and go on."""

    path: str
    skip: bool = False
    skipped: SkipCounter = field(default_factory=SkipCounter)

    def bad(self, line_no: int, line: str, kind: str, fix: str) -> None:
        if not self.skip:
            raise InputError(kind, path=self.path, line=line_no, text=line, fix=fix + " (or pass --skip-malformed to count and skip such lines)")
        self.skipped.add(kind, f"line {line_no}")

    def report(self, what: str) -> None:
        if self.skipped.total:
            print(f"treckit: {self.path}: skipped {self.skipped.total} malformed {what} line(s): {self.skipped.report()}",
                  file=sys.stderr)


def check_score(value: float | None, text: str, line_no: int, line: str, errors: LineErrors) -> bool:
    if value is None:
        if text.lower() in ("nan", "-nan", "+nan"):
            errors.bad(line_no, line, f"score is NaN ({text!r})", "give every document a real number; drop or rescore NaN rows")
        else:
            errors.bad(line_no, line, f"score {text!r} is not a number", "the score column must hold a decimal number such as 12.5 or -3e-2")
        return False
    return True


def decode(docid: str, decode_ids: bool) -> str:
    return unescape_id(docid) if decode_ids else docid
