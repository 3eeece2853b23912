"""A request body's JSON read strictly (RFC 8259): finite numbers, each key of an object once, no lone surrogate
escape; else :class:`RequestInvalid`, naming where in the body, never the value sent."""
from __future__ import annotations

import json
import re

from ..console.errors import shown


class RequestInvalid(Exception):
    """A body that is not the request's schema: answered 422 with FastAPI's shape of errors."""

    def __init__(self, errors: list[dict]):
        super().__init__(f"{len(errors)} problems")
        self.errors = errors


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def refuse_lone_surrogates(body: bytes) -> None:
    """A ``\\uD800``-``\\uDFFF`` escape must be half of a pair: a lone one decodes to text that is no Unicode
    (it cannot be written, compared or hashed as UTF-8).  Cheap: the regex runs in C, pairs are checked
    only where an escape was found."""
    lone = None
    pending = None                               # (start, end) of a high half waiting for its low half
    for m in _SURROGATE_ESCAPE.finditer(body):
        start = i = m.start()
        while i > 0 and body[i - 1] == 0x5C:     # "\\\\ud800" is an escaped backslash, then the letters ud800
            i -= 1
        if (start - i) % 2:
            continue
        high = m.group()[3:4] in b"89abAB"
        if pending is not None and not high and start == pending[1]:
            pending = None
        elif pending is not None:
            lone = pending[0]
            break
        elif high:
            pending = (start, m.end())
        else:
            lone = start
            break
    lone = pending[0] if lone is None and pending is not None else lone
    if lone is not None:
        raise RequestInvalid([{"loc": ["body"], "msg": f"a lone surrogate escape ({body[lone:lone + 6].decode()}) at "
                               f"byte {lone}: not a Unicode character", "type": "unicode_surrogate"}])


class _NotFinite:
    """Where the body has ``NaN``, ``Infinity``, ``-Infinity`` or a number beyond a double (``1e999``)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


class _Repeated(dict):
    """An object of the body that says a key twice (``key``: the first such)."""

    __slots__ = ("key",)


def parse_strict(text: str):
    """The body's JSON, as RFC 8259 reads it: its numbers finite, each key of an object once; else
    :class:`RequestInvalid` naming where in the body.  (The hooks cost about 1.7x the parse of a body of floats.)"""
    flagged = []

    def constant(name: str):
        flagged.append(name)
        return _NotFinite(name)

    def number(literal: str):
        value = float(literal)
        if value - value == 0.0:             # neither infinite nor NaN
            return value
        flagged.append(literal)
        return _NotFinite(literal)

    def members(pairs: list):
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        flagged.append(pairs)
        seen: set = set()
        repeated = _Repeated(obj)
        repeated.key = next(k for k, _ in pairs if k in seen or seen.add(k))
        return repeated
    data = json.loads(text, parse_constant=constant, parse_float=number, object_pairs_hook=members)
    if flagged:
        raise RequestInvalid([_first_flagged(data)])
    return data


def _first_flagged(data) -> dict:
    """The error of the first value of ``data`` (in the order written) that is no JSON number or an object that says
    a key twice, where it is (its path of keys and indexes)."""
    stack = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _NotFinite):
            said = value.text if len(value.text) <= 24 else f"{value.text[:12]}...{value.text[-8:]}"
            return {"loc": ["body", *path], "msg": f"{said} is not a finite JSON number (NaN and Infinity are not JSON, "
                    "and a double ends near 1.8e308): send a finite number", "type": "finite_number"}
        if isinstance(value, _Repeated):
            return {"loc": ["body", *path, value.key], "msg": f"the key {shown(value.key)} is given more than once in "
                    "this object (which one counts is not said by JSON): send each key once", "type": "duplicate_key"}
        if isinstance(value, dict):
            stack.extend(reversed([((*path, k), v) for k, v in value.items()]))
        elif isinstance(value, list):
            stack.extend(reversed([((*path, i), v) for i, v in enumerate(value)]))
    raise AssertionError("a flagged value was not found")
