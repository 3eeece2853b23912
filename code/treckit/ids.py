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
"""
from __future__ import annotations

import re

WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
              "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")  # every c with c.isspace()
_ESCAPE = {ch: "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in WHITESPACE + "%"}
_UNESCAPE = {v: k for k, v in _ESCAPE.items()}
_NEEDS_ESCAPE = re.compile("[" + re.escape(WHITESPACE + "%") + "]")
_ESCAPED = re.compile("|".join(sorted((re.escape(k) for k in _UNESCAPE), key=len, reverse=True)), re.IGNORECASE)
# regexes usable by pyarrow (RE2) to find the ids that need work, without a Python loop
WHITESPACE_RE2 = "[" + "".join("\\x{%x}" % ord(c) for c in WHITESPACE) + "]"
NEEDS_ESCAPE_RE2 = "[" + "".join("\\x{%x}" % ord(c) for c in WHITESPACE + "%") + "]"


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
