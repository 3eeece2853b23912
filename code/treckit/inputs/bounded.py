"""Every YAML and JSON document treckit reads -- test sets, system, server, compare and rq configs,
results files -- is read here, within bounds that hold whatever the file holds.

- Size: at most ``limit`` bytes of content, counted after decompression (``.gz``) and on stdin
  (``-``): :data:`treckit.thresholds.CONFIG_READ_LIMIT` for configs, :data:`treckit.thresholds.DOCUMENT_READ_LIMIT` for test sets and
  results files.
- Plain data only: mappings with text keys (each once), lists, strings, numbers, booleans and null.
  YAML anchors and aliases (the "billion laughs" bomb), tags other than the plain ones (``!!binary``,
  ``!!set``, ``!!python/...``) and a second document are errors naming the line.  Dates are the text
  written (configs) or reported (test sets, outside ids, which are always the text written).
- Depth: at most :data:`treckit.thresholds.MAX_DEPTH` levels of nesting, checked while parsing: the first level too
  many stops the read, and nothing recurses (a file nested 100,000 deep fails at once).
- Numbers: at most :data:`treckit.thresholds.MAX_NUMBER_CHARS` characters (CPython's int parsing is quadratic and
  refuses 4,300 digits); a finite number beyond a double's range is an error, not infinity.
- Time and memory grow linearly with the input.  Reading a test set or a results file takes at most
  :data:`treckit.thresholds.MEMORY_FACTOR` (6) times its size beyond the interpreter: its bytes and text (2x) and what
  is built (up to 4x).  A test set is consumed query by query (``stream``): only its checked records
  are kept, never a tree of every query, and nothing outside its queries is built (:data:`NOT_READ`).
  The densest inputs take more, still in proportion: a JSON document at most about 14x
  (:data:`treckit.thresholds.JSON_BYTES_PER_CONTAINER`), a test set of hundreds of thousands of unknown top-level keys
  about 28x, a config (read whole, with the line of every value) up to about 75x its at most 1 MiB.
  At most :data:`treckit.thresholds.MAX_LISTED_PROBLEMS` problems are kept, the rest counted.

YAML is read from PyYAML's events (:mod:`treckit.inputs.yaml_events`: libyaml's parser when PyYAML has it, its
pure reader otherwise), every bound checked on the event that crosses it; JSON by Python's own parser.
"""
from __future__ import annotations

import contextlib
import gc
import json
import re
from typing import Any, Iterator

from ..console.errors import InputError
from .problems import BAD, NOT_READ, Problems
from .sources import PathLike, display_name, read_text
from .yaml_events import LinesNeeded, yaml_tree
from .. import thresholds

_LONE_SURROGATE_HINT = re.compile(r"\\u[dD][89a-fA-F]")


def json_number(text: str, kind):
    """A JSON number's value; hostile lengths (CPython's int parsing is quadratic) are refused."""
    if len(text) > thresholds.MAX_NUMBER_CHARS:
        raise ValueError(f"a number of {len(text)} characters")
    return kind(text)


def _no_duplicate_keys(pairs):
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"the key {dup!r} appears twice in one object")
    return obj


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


def has_surrogate(value: Any) -> bool:
    """Whether ``value`` (text, or a dict or list holding text) holds a lone UTF-16 surrogate, which no UTF-8
    text can hold (a retrieval function's doc ids are checked with it)."""
    return _has_surrogate(value)


def loads_json(text: str, *, duplicate_keys: bool = False) -> Any:
    """``json.loads`` for input that may be hostile: every failure is a ``json.JSONDecodeError``
    (numbers of more than :data:`treckit.thresholds.MAX_NUMBER_CHARS` characters, nesting too deep for the
    parser, lone UTF-16 surrogates such as ``"\\ud800"`` which no UTF-8 text can hold, and, unless
    ``duplicate_keys``, a key twice in one object), so callers report one kind of error."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise json.JSONDecodeError(f"not UTF-8 (byte offset {exc.start})", "", 0) from None
    try:
        value = json.loads(text, parse_int=lambda s: json_number(s, int), parse_float=lambda s: json_number(s, float),
                           object_pairs_hook=None if duplicate_keys else _no_duplicate_keys)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None
    except ValueError as exc:
        raise json.JSONDecodeError(str(exc), text, 0) from None
    if _LONE_SURROGATE_HINT.search(text) and _has_surrogate(value):
        raise json.JSONDecodeError("a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair)", text, 0)
    return value

__all__ = ["BAD", "LinesNeeded", "NOT_READ", "Problems",
           "config_read_limit", "load_yaml_mapping", "parse_json", "parse_yaml_mapping", "read_document", "read_json",
           "without_gc", "yaml_tree"]


# ------------------------------------------------------------------ reading files
def read_document(path: PathLike, limit: int | None, what: str) -> str:
    """The text of a YAML or JSON document: at most ``limit`` bytes once decompressed, stdin included
    (None: :data:`treckit.thresholds.DOCUMENT_READ_LIMIT`)."""
    limit = thresholds.DOCUMENT_READ_LIMIT if limit is None else limit
    return read_text(path, limit=limit, too_large_fix=f"a {what} holds at most {limit:,} bytes; check that this is "
                                                       f"the right file")


def parse_json(text: str, name: str, *, fix: str) -> Any:
    """A JSON document's value (:func:`loads_json`: no long numbers, duplicate keys or lone
    surrogates), at most :data:`treckit.thresholds.MAX_DEPTH` deep and, past
    :data:`treckit.thresholds.JSON_DENSITY_EXEMPT_BYTES`, with at most one list or object per
    :data:`treckit.thresholds.JSON_BYTES_PER_CONTAINER` bytes, or an InputError naming the line."""
    _check_json_density(text, name, fix)
    try:
        value = loads_json(text)
    except json.JSONDecodeError as exc:
        line = exc.lineno if exc.doc else None
        if exc.msg == "nested too deeply":
            line = _json_line_too_deep(text)
        elif exc.msg.startswith("a number of"):
            long_number = re.search(r"[-+0-9.eE]{%d,}" % (thresholds.MAX_NUMBER_CHARS + 1), text)
            line = text.count("\n", 0, long_number.start()) + 1 if long_number else None
        raise InputError(f"not JSON ({exc.msg})", path=name, line=line, fix=fix) from None
    if _deeper_than(value, thresholds.MAX_DEPTH):
        raise InputError(f"nested more than {thresholds.MAX_DEPTH} levels deep", path=name,
                         line=_json_line_too_deep(text), fix=fix)
    return value


def _check_json_density(text: str, name: str, fix: str) -> None:
    per_container = thresholds.JSON_BYTES_PER_CONTAINER
    if (len(text) <= thresholds.JSON_DENSITY_EXEMPT_BYTES
            or (text.count("[") + text.count("{")) * per_container <= len(text)):
        return
    containers = sum(s.count("[") + s.count("{") for s in _JSON_STRING.split(text))     # outside strings
    if containers * per_container > len(text):
        raise InputError(f"{containers:,} lists and objects in {len(text):,} characters: more than one per "
                         f"{per_container} characters, so reading it would take dozens of times its "
                         "size in memory", path=name, fix=fix)


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def read_json(path: PathLike, *, limit: int | None = None, what: str = "results file", fix: str) -> Any:
    """A JSON file's value, read within ``limit`` bytes (None: :data:`treckit.thresholds.DOCUMENT_READ_LIMIT`; see
    :func:`parse_json`)."""
    return parse_json(read_document(path, limit, what), display_name(path), fix=fix)


def _deeper_than(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        children = v.values() if isinstance(v, dict) else v if isinstance(v, list) else ()
        for c in children:
            if isinstance(c, (dict, list)):
                if depth + 1 > limit:
                    return True
                stack.append((c, depth + 1))
    return False


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _json_line_too_deep(text: str) -> int | None:
    """The line where the JSON in ``text`` goes deeper than :data:`treckit.thresholds.MAX_DEPTH` (only when it does)."""
    depth, limit = 0, thresholds.MAX_DEPTH
    for m in _JSON_TOKEN.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > limit:
                return text.count("\n", 0, m.start()) + 1
        elif c in "]}":
            depth -= 1
    return None


def parse_yaml_mapping(text: str, name: str, *, what: str = "config", example: str = "'run: runs/bm25.trec'") -> dict:
    """A config's content (YAML, or JSON, which YAML reads alike): one mapping of plain values, every
    problem listed with its line, or an InputError.  Dates are kept as the text written."""
    data, _, problems = yaml_tree(text, what=what, dates_as_text=True)
    if problems:
        fix = (f"write plain YAML: a mapping with text keys (each once), values as in JSON, no anchors (&), "
               f"aliases (*) or tags (!!), at most {thresholds.MAX_DEPTH} levels deep")
        if problems.total == 1:
            [(line, message)] = problems.listed()
            raise InputError(message, path=name, line=line, fix=fix)
        raise InputError(f"{problems.total} problems in the {what}:\n{problems.lines_text()}", path=name, fix=fix)
    if not isinstance(data, dict):
        raise InputError(f"the file must hold a mapping (key: value lines), not {_kind(data)}", path=name,
                         fix=f"e.g. {example}")
    return data


def load_yaml_mapping(path: PathLike, *, what: str = "config", example: str = "'run: runs/bm25.trec'") -> dict:
    """A YAML (or JSON) config file holding one mapping, read within :func:`config_read_limit` bytes
    (see :func:`parse_yaml_mapping`)."""
    return parse_yaml_mapping(read_document(path, config_read_limit(), what), display_name(path), what=what,
                              example=example)


def config_read_limit() -> int:
    """:data:`treckit.thresholds.CONFIG_READ_LIMIT`, read when a config is read (tests lower it)."""
    return thresholds.CONFIG_READ_LIMIT


def _kind(value: Any) -> str:
    return {type(None): "nothing", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)


@contextlib.contextmanager
def without_gc() -> Iterator[None]:
    """No cyclic garbage collection in the block: reading builds hundreds of thousands of containers
    and no cycles, and each collection would walk them all again."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
