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

YAML is read by one of two readers that read alike: a fast reader of the block style treckit writes
(and most people write by hand), line by line, and PyYAML's event parser (libyaml's when installed)
for everything else.  The fast reader hands the whole file to the event parser at the first line it
does not take, so anything unusual is read by PyYAML's rules; a test keeps the two equal.
"""
from __future__ import annotations

import contextlib
import gc
import heapq
import json
import math
import re
from typing import Any, Callable, Iterator

from ..console.errors import InputError
from .sources import PathLike, display_name, read_text
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

BAD = object()          # a value already reported: validation does not report it a second time


class _NotRead:
    """A collection a streamed document holds outside its streamed list, below the top level: only
    the streamed list is data there (a test set's other fields are text), so it is not built."""

    def __repr__(self) -> str:
        return "<a collection, not read>"


NOT_READ = _NotRead()

__all__ = ["BAD", "LinesNeeded", "NOT_READ", "Problems",
           "config_read_limit", "load_yaml_mapping", "parse_json", "parse_yaml_mapping", "read_document", "read_json",
           "without_gc", "yaml_tree"]


# ------------------------------------------------------------------ problems
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


# ------------------------------------------------------------------ YAML
_TAG = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL, _TIMESTAMP, _MAP, _SEQ = (
    _TAG + t for t in ("str", "int", "float", "bool", "null", "timestamp", "map", "seq"))
_PLAIN_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_INFINITY = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
# what YAML does not allow in a stream at all (PyYAML's reader), and what the fast reader leaves to PyYAML
_NON_PRINTABLE = re.compile("[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")
_FAST_LEAVES = re.compile("[\t\r\x85\u2028\u2029\ufeff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Fatal(Exception):
    """A problem after which the rest of the file is not read."""


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_TAG):] if tag.startswith(_TAG) else tag


class _Scalars:
    """Scalars valued as PyYAML's safe loader values them (its resolver and constructor), within the
    bounds; a scalar with a problem is reported and valued :data:`BAD`."""

    def __init__(self, what: str, dates_as_text: bool, problems: Problems) -> None:
        import yaml

        self.what, self.dates_as_text, self.problems = what, dates_as_text, problems
        self.resolvers = yaml.SafeLoader.yaml_implicit_resolvers
        self.constructor = yaml.constructor.SafeConstructor()
        self.node = yaml.ScalarNode
        self.errors = (ValueError, TypeError, ArithmeticError, yaml.YAMLError)
        self._tags: dict[str, str] = {}

    def plain_tag(self, text: str) -> str:
        """The tag YAML gives a plain (unquoted, untagged) scalar."""
        tag = self._tags.get(text)
        if tag is None:
            tag = _STR
            for t, regexp in self.resolvers.get(text[:1], ()):
                if regexp.match(text):
                    tag = t
                    break
            if (len(text) <= thresholds.PLAIN_TAG_MEMO_MAX_CHARS
                    and len(self._tags) < thresholds.PLAIN_TAG_MEMO_ENTRIES):
                self._tags[text] = tag
        return tag

    def value(self, text: str, tag: str, line: int, raw: bool = False, explicit: bool = False) -> Any:
        """The value of a scalar written ``text`` whose tag is ``tag`` (``explicit``: written in the
        file); ``raw``: an id, kept as the text written unless it is null."""
        if tag == _STR:
            return text
        if tag == _NULL:
            return None
        if raw and tag in (_INT, _FLOAT, _BOOL, _TIMESTAMP):
            return text
        if tag == _INT or tag == _FLOAT:
            if len(text) > thresholds.MAX_NUMBER_CHARS:
                self.problems.add(line, f"a number of {len(text):,} characters: no number is that long; "
                                        "quote it to make it text")
                return BAD
            if tag == _INT and _PLAIN_DECIMAL.fullmatch(text):
                return int(text)
            value = self._construct(text, tag, line)
            if tag == _FLOAT and isinstance(value, float) and math.isinf(value) and not _INFINITY.fullmatch(text):
                self.problems.add(line, f"the number {text[:40]} is beyond the range of a double; "
                                        "write .inf for infinity")
                return BAD
            return value
        if tag == _BOOL:
            return self._construct(text, tag, line)
        if tag == _TIMESTAMP and self.dates_as_text:
            return text
        if explicit and tag != _TIMESTAMP:
            self.problems.add(line, f"the tag {_short_tag(tag)} has no place in a {self.what}: write plain values")
        else:
            kind = tag.rsplit(":", 1)[-1]
            self.problems.add(line, f"the value {text[:40]!r} is read by YAML as a {kind}; quote it to make it text")
        return BAD

    def _construct(self, text: str, tag: str, line: int) -> Any:
        build = {_INT: self.constructor.construct_yaml_int, _FLOAT: self.constructor.construct_yaml_float,
                 _BOOL: self.constructor.construct_yaml_bool}[tag]
        try:
            return build(self.node(tag, text))
        except self.errors:
            self.problems.add(line, f"the value {text[:40]!r} is not a valid {tag.rsplit(':', 1)[-1]}")
            return BAD

    def key(self, text: str, tag: str, line: int) -> str | None:
        """A mapping key's text, or None (reported) when YAML reads it as something else."""
        if tag == _STR:
            return text
        kind = tag.rsplit(":", 1)[-1]
        self.problems.add(line, f"a key must be text, found {kind} {text[:40]!r} "
                                "(quote it; in YAML, yes/no/on/off are booleans)")
        return None


class _Frame:
    """An open mapping or list: where its values go and what their lines are recorded under."""

    __slots__ = ("is_map", "value", "path", "lines", "indent", "key", "record", "stream")

    def __init__(self, is_map: bool, value, path: tuple, lines: dict, indent: int = 0) -> None:
        self.is_map, self.value, self.path, self.lines, self.indent = is_map, value, path, lines, indent
        self.key = _KEY            # a mapping's state: the key its next value belongs to
        self.record = None         # (list, index, line) when this is an item of the streamed list
        self.stream = False        # the streamed list itself


_KEY = object()        # a mapping's next node is a key
_SKIP = object()       # a mapping's next value belongs to a refused key: not kept


class _Decline(Exception):
    """The fast reader does not take this file: the event parser reads it."""


def yaml_tree(text: str, raw_keys: tuple[str, ...] = (), *, what: str = "file", dates_as_text: bool = False,
              stream: tuple[str, Callable[[Problems], Callable]] | None = None):
    """(data, {path: line}, :class:`Problems`) from YAML text, building only dicts, lists, str, int,
    float, bool and None; a value with a problem is :data:`BAD` in ``data``, and ``data`` is None
    when the text holds nothing or could not be read to the end.  The values of ``raw_keys`` are
    the text as written.

    ``stream`` = (key, start): the list under the top-level ``key`` is handed over item by item:
    ``start(problems)`` returns ``take(index, value, lines, line)`` whose return value is kept in
    the list instead of the item (``lines``: the item's own, from its path inside the item)."""
    text = text.replace("\r\n", "\n")
    bad = _NON_PRINTABLE.search(text)
    if bad:
        problems = Problems()
        problems.add(text.count("\n", 0, bad.start()) + 1,
                     f"not valid YAML: the character U+{ord(bad.group()):04X} is not allowed in YAML text")
        return None, {}, problems
    try:
        try:
            return _BlockReader(text, raw_keys, what, dates_as_text, stream).read()
        except LinesNeeded:
            return _BlockReader(text, raw_keys, what, dates_as_text, stream, item_lines=True).read()
    except _Decline:
        pass                  # (out of the except block: the traceback, and the line it holds, are let go)
    return _EventReader(text, raw_keys, what, dates_as_text, stream).read()


class LinesNeeded(Exception):
    """Raised by a stream's taker given an item without its lines (``lines`` None) that it must
    report on: the file is read again with every item's lines."""


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


class _Reader:
    def __init__(self, text, raw_keys, what, dates_as_text, stream) -> None:
        self.text, self.raw_keys, self.what = text, frozenset(raw_keys), what
        self.problems = Problems()
        self.scalars = _Scalars(what, dates_as_text, self.problems)
        self.stream_key, self.take = (stream[0], stream[1](self.problems)) if stream else (None, None)
        self.lines: dict[tuple, int] = {}

    def too_deep(self, line: int) -> None:
        self.problems.add(line, f"nested more than {thresholds.MAX_DEPTH} levels deep")
        raise _Fatal

    def close(self, frame: _Frame) -> None:
        """A collection ends: an item of the streamed list is handed over."""
        if frame.record is not None:
            items, index, line = frame.record
            items[index] = self.take(index, BAD if frame.value is None else frame.value, frame.lines, line)

    def place(self, parent: _Frame, line: int, value, is_map: bool | None = None, indent: int = 0) -> _Frame | None:
        """Put a value (or, with ``is_map``, a new collection) in ``parent``; returns the new frame."""
        if parent.is_map:
            slot = parent.key
            parent.key = _KEY
        else:
            slot = len(parent.value) if parent.value is not None else 0
        keep = parent.value is not None and slot is not _SKIP
        path = parent.path + (slot,)
        lines = parent.lines
        record = None
        if keep and parent.stream:
            record, path, lines = (parent.value, slot, line), (), {}
        if is_map is not None:
            built = keep and value is not BAD and value is not NOT_READ
            frame = _Frame(is_map, ({} if is_map else []) if built else None, path, lines, indent)
            frame.record = record
            value = frame.value if built else value if value is NOT_READ else BAD
        else:
            frame = None
        if keep:
            if parent.is_map:
                parent.value[slot] = value
            else:
                parent.value.append(value)
            lines[path] = line
            if record is not None and frame is None:          # a scalar item: handed over now
                parent.value[slot] = self.take(slot, value, lines, line)
        return frame


class _EventReader(_Reader):
    """Any YAML, through PyYAML's events (libyaml's parser when installed): one event at a time,
    nothing recursive."""

    def read(self):
        import yaml

        loader = (yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader)(self.text)
        self.text = None
        frames: list[_Frame] = []
        root: list = []
        documents = 0
        try:
            while loader.check_event():
                event = loader.get_event()
                kind = type(event)
                if kind is yaml.DocumentStartEvent:
                    documents += 1
                    if documents > 1:
                        self.problems.add(event.start_mark.line + 1,
                                          f"a second YAML document (---) in one {self.what}; keep one")
                        raise _Fatal
                    continue
                if kind in (yaml.StreamStartEvent, yaml.StreamEndEvent, yaml.DocumentEndEvent):
                    continue
                if kind in (yaml.MappingEndEvent, yaml.SequenceEndEvent):
                    self.close(frames.pop())
                    continue
                line = event.start_mark.line + 1
                if kind is yaml.AliasEvent or event.anchor is not None:
                    self.problems.add(line, f"YAML anchors and aliases (&, *) are not allowed in a {self.what}; "
                                            "write the values out")
                    raise _Fatal
                parent = frames[-1] if frames else None
                is_key = parent is not None and parent.is_map and parent.key is _KEY
                if kind is yaml.ScalarEvent:
                    self.scalar(event, parent, is_key, line, root)
                    continue
                if len(frames) + 1 > thresholds.MAX_DEPTH:
                    self.too_deep(line)
                is_map = kind is yaml.MappingStartEvent
                refused = event.tag not in (None, "!", _MAP if is_map else _SEQ)
                if refused:
                    self.problems.add(line, f"the tag {_short_tag(event.tag)} has no place in a {self.what}: "
                                            "write plain values")
                if is_key:                         # a mapping or a list as a key: its whole content is left out
                    self.problems.add(line, "a key must be text, found a " + ("mapping" if is_map else "list"))
                    parent.key = _SKIP
                    frame = _Frame(is_map, None, (), {})
                elif parent is None:
                    unread = self.take is not None and not is_map         # a streamed document that is a list
                    frame = _Frame(is_map, None if refused or unread else {} if is_map else [], (), self.lines)
                    root.append(BAD if refused else NOT_READ if unread else frame.value)
                    self.lines[()] = line
                else:
                    streamed = (self.take is not None and parent is frames[0] and parent.is_map and not is_map
                                and parent.key == self.stream_key)
                    unread = self.take is not None and parent is frames[0] and not streamed
                    frame = self.place(parent, line, BAD if refused else NOT_READ if unread else None, is_map)
                    frame.stream = streamed and frame.value is not None
                frames.append(frame)
        except _Fatal:
            return None, self.lines, self.problems
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            problem = exc.problem or exc.context or "syntax error"
            deep = "nesting depth" in problem                                     # libyaml's own bound
            self.problems.add(mark.line + 1 if mark else None,
                              f"nested more than {thresholds.MAX_DEPTH} levels deep" if deep
                              else f"not valid YAML: {problem}")
            return None, self.lines, self.problems
        except yaml.YAMLError as exc:
            self.problems.add(None, f"not valid YAML: {type(exc).__name__}")
            return None, self.lines, self.problems
        finally:
            loader.dispose()
        return (root[0] if root else None), self.lines, self.problems

    def scalar(self, event, parent: _Frame | None, is_key: bool, line: int, root: list) -> None:
        if parent is not None and (parent.value is None or (parent.key is _SKIP and not is_key)):
            if is_key:                     # inside content left out: nothing is valued or reported
                parent.key = _SKIP
            else:
                self.place(parent, line, BAD)
            return
        plain, tag = event.implicit[0], event.tag
        explicit = tag not in (None, "!")
        if not explicit:
            tag = self.scalars.plain_tag(event.value) if plain else _STR
        surrogate = event.style == '"' and _SURROGATE.search(event.value)
        if surrogate:
            self.problems.add(line, "a lone UTF-16 surrogate escape (\\ud800-\\udfff), which UTF-8 text cannot hold")
        if is_key:
            key = None if surrogate else self.scalars.key(event.value, tag, line)
            if key is not None and key in parent.value:
                self.problems.add(line, f"the key {key!r} appears twice in one mapping")
                key = None
            parent.key = _SKIP if key is None else key
            return
        raw = parent is not None and parent.is_map and parent.key in self.raw_keys
        value = BAD if surrogate else self.scalars.value(event.value, tag, line, raw, explicit)
        if parent is None:
            root.append(value)
            self.lines[()] = line
        else:
            self.place(parent, line, value)


# the fast reader's lines: indentation, "- " (a list item), "key:" and the rest
_BLOCK_LINE = re.compile(r"( *)(?:(-)( +|(?=\n|\Z)))?(?:([A-Za-z_][A-Za-z0-9_]*):( +|(?=\n|\Z)))?([^\n]*)(\n|\Z)")
_SINGLE_QUOTED = re.compile(r"'((?:[^']|'')*)'(?: +(?:#.*)?)?")
_DOUBLE_QUOTED = re.compile(r'"([^"\\]*)"(?: +(?:#.*)?)?')
_PLAIN_FIRST = frozenset("-?:,[]{}#&*!|>'\"%@`")
_NOT_PLAIN = _PLAIN_FIRST - {"-"}
_FLOW_KEY = re.compile(r" *([A-Za-z_][A-Za-z0-9_]*): +")
_FLOW_VALUE = re.compile(r""" *(?:'((?:[^']|'')*)' *|"([^"\\]*)" *|((?:-(?=[^ ,\[\]{}#:?])|[^ ,\[\]{}#:?'"&*!|>%@`\-])[^,\[\]{}#:?]*))""")
_FLOW_SEP = re.compile(r" *([,}\]])")
_TRAILER = re.compile(r"(?: +(?:#.*)?)?")


class _BlockReader(_Reader):
    """The block style (``key: value`` lines, ``- `` items, one-line quoted scalars and one-line flow
    collections of scalars), read line by line; anything else declines (:class:`_Decline`).

    The lines inside a streamed item are recorded only with ``item_lines`` (they cost a third of
    the time): without them, an item is handed over with ``lines`` None, and a taker that needs
    them raises :class:`LinesNeeded`."""

    def __init__(self, text, raw_keys, what, dates_as_text, stream, item_lines: bool = False) -> None:
        super().__init__(text, raw_keys, what, dates_as_text, stream)
        self.item_lines = item_lines

    def read(self):
        if _FAST_LEAVES.search(self.text):              # tabs, other line breaks than \n: PyYAML's rules
            raise _Decline
        # a frame (an open collection) is a list, which is cheaper to make than an object:
        # [is_map, value, path, lines (None: not recorded), indent, record, is_streamed]
        frames: list[list] = []
        pending = None               # (frame, key, line): a key whose value starts on a later line
        last = None                  # (frame, slot, text): the plain scalar a more indented line continues
        root = BAD
        raw_keys, scalars, take = self.raw_keys, self.scalars, self.take
        firsts = frozenset(k for k in scalars.resolvers if k)         # what a non-text plain scalar starts with
        key_tags: dict[str, str] = {}
        no = 0
        for m in _BLOCK_LINE.finditer(self.text):
            no += 1
            spaces, dash, dash_spaces, key, _, rest, end = m.groups()
            indent = len(spaces)
            if dash is None and key is None:
                if not rest or rest[0] == "#":                # a blank line or a comment
                    last = None
                    if not end:
                        break
                    continue
                if last is None or indent <= last[0][4]:
                    raise _Decline
                frame, slot, so_far = last
                more = rest.rstrip(" ")
                if more[0] in _PLAIN_FIRST or ": " in more or " #" in more or more.endswith(":"):
                    raise _Decline
                joined = f"{so_far} {more}"
                if scalars.plain_tag(joined) != _STR:
                    raise _Decline
                frame[1][slot] = joined
                last = (frame, slot, joined)
                continue
            last = None
            if pending is not None:
                owner, owner_key, owner_line = pending
                pending = None
                if (dash is None and indent > owner[4]) or (dash is not None and indent >= owner[4]):
                    frames.append(self._push(owner, owner_key, no, dash is None, indent, frames))
                elif owner[3] is not None:
                    owner[3][owner[2] + (owner_key,)] = owner_line      # "key:" and nothing: null
            while frames and frames[-1][4] > indent:
                self._close(frames.pop())
            if dash is None and frames and not frames[-1][0] and frames[-1][4] == indent:
                self._close(frames.pop())             # a list at its mapping's indentation ends at the next key
            if not frames:
                if root is not BAD or (dash is not None and take is not None):
                    raise _Decline
                root = {} if dash is None else []
                self.lines[()] = no
                frames.append([dash is None, root, (), self.lines, indent, None, False])
            top = frames[-1]
            if dash is not None:
                if top[0] or top[4] != indent:
                    raise _Decline
                items = top[1]
                if key is None:
                    if not rest or rest[0] == "#" or top[6]:
                        raise _Decline
                    path = top[2] + (len(items),) if top[3] is not None else None
                    value, plain = self._inline(rest, no, False, path, top[3], len(frames))
                    if path is not None:
                        top[3][path] = no
                    items.append(value)
                    if plain is not None:
                        last = (top, len(items) - 1, plain)
                    continue
                top = self._push(top, len(items), no, True, indent + 1 + len(dash_spaces), frames)
                frames.append(top)
            elif not top[0] or top[4] != indent:
                raise _Decline
            # key: value
            tag = key_tags.get(key)
            if tag is None:
                tag = key_tags[key] = scalars.plain_tag(key)
            mapping = top[1]
            if tag != _STR or key in mapping:
                raise _Decline
            if not rest or rest[0] == "#":
                mapping[key] = None
                pending = (top, key, no)
                continue
            lines = top[3]
            first = rest[0]
            if first in _NOT_PLAIN:
                path = top[2] + (key,) if lines is not None else None
                value, plain = self._inline(rest, no, key in raw_keys, path, lines, len(frames))
            else:
                cut = rest.find(" #")
                text = (rest[:cut] if cut >= 0 else rest).rstrip(" ")
                if ": " in text or text[-1] == ":" or (first == "-" and text[1:2] in ("", " ")):
                    raise _Decline
                if first in firsts:
                    tag = scalars.plain_tag(text)
                    value = scalars.value(text, tag, no, key in raw_keys)
                    plain = text if tag == _STR else None
                else:
                    value = plain = text
                if cut >= 0:
                    plain = None                   # a comment ends the scalar: no line may continue it
            mapping[key] = value
            if lines is not None:
                lines[top[2] + (key,)] = no
            if plain is not None:
                last = (top, key, plain)
        if pending is not None:
            owner, owner_key, owner_line = pending
            if owner[3] is not None:
                owner[3][owner[2] + (owner_key,)] = owner_line
        while frames:
            self._close(frames.pop())
        return (None if root is BAD else root), self.lines, self.problems

    def _push(self, parent: list, slot, line: int, is_map: bool, indent: int, frames: list) -> list:
        """A new collection in ``parent`` (a mapping's key ``slot``, a list's item ``slot``)."""
        if len(frames) + 1 > thresholds.MAX_DEPTH:
            raise _Decline
        value: Any = {} if is_map else []
        if parent[0]:
            parent[1][slot] = value
        else:
            parent[1].append(value)
        record = None
        if parent[6]:                                   # an item of the streamed list
            record = (parent[1], slot, line)
            path, lines = (), ({} if self.item_lines else None)
        else:
            path, lines = parent[2] + (slot,), parent[3]
        if lines is not None:
            lines[path] = line
        streamed = (not is_map and len(frames) == 1 and parent[0] and slot == self.stream_key
                    and self.take is not None)
        if len(frames) == 1 and self.take is not None and not streamed:
            raise _Decline                                # not read (NOT_READ): the event reader's part
        return [is_map, value, path, lines, indent, record, streamed]

    def _close(self, frame: list) -> None:
        if frame[5] is not None:
            items, index, line = frame[5]
            items[index] = self.take(index, frame[1], frame[3], line)

    def _inline(self, rest: str, line: int, raw: bool, path: tuple, lines: dict, depth: int):
        """(value, its text when it is a plain string a later line may continue) of what follows
        ``key: `` or ``- `` on a line, in a collection ``depth`` levels deep."""
        first = rest[0]
        if first == "'":
            m = _SINGLE_QUOTED.fullmatch(rest)
            if m is None:
                raise _Decline
            return m.group(1).replace("''", "'"), None
        if first == '"':
            m = _DOUBLE_QUOTED.fullmatch(rest)
            if m is None:
                raise _Decline
            return m.group(1), None
        if first == "{" or first == "[":
            if depth + 1 > thresholds.MAX_DEPTH or (depth == 1 and self.take is not None):
                raise _Decline                            # NOT_READ, or the streamed list: the event reader's part
            return self._flow(rest, line, path, lines), None
        if first in _PLAIN_FIRST and (first != "-" or rest[1:2] in ("", " ")):
            raise _Decline
        cut = rest.find(" #")
        text = (rest[:cut] if cut >= 0 else rest).rstrip(" ")
        if ": " in text or text.endswith(":"):
            raise _Decline
        tag = self.scalars.plain_tag(text)
        value = self.scalars.value(text, tag, line, raw)
        return value, (text if tag == _STR and cut < 0 else None)       # a comment ends the scalar

    def _flow(self, rest: str, line: int, path: tuple, lines: dict):
        """A one-line ``{key: scalar, ...}`` or ``[scalar, ...]``."""
        is_map = rest[0] == "{"
        out: Any = {} if is_map else []
        close = "}" if is_map else "]"
        pos = 1
        while rest[pos:pos + 1] == " ":
            pos += 1
        if rest[pos:pos + 1] == close:
            pos += 1
        else:
            while True:
                if is_map:
                    km = _FLOW_KEY.match(rest, pos)
                    if km is None:
                        raise _Decline
                    key = km.group(1)
                    if self.scalars.plain_tag(key) != _STR or key in out:
                        raise _Decline
                    pos = km.end()
                vm = _FLOW_VALUE.match(rest, pos)
                if vm is None:
                    raise _Decline
                single, double, plain = vm.groups()
                if plain is not None:
                    text = plain.rstrip(" ")
                    raw = is_map and key in self.raw_keys
                    value = self.scalars.value(text, self.scalars.plain_tag(text), line, raw)
                else:
                    value = single.replace("''", "'") if single is not None else double
                slot = key if is_map else len(out)
                if is_map:
                    out[key] = value
                else:
                    out.append(value)
                if lines is not None:
                    lines[path + (slot,)] = line
                sep = _FLOW_SEP.match(rest, vm.end())
                if sep is None:
                    raise _Decline
                pos = sep.end()
                if sep.group(1) == close:
                    break
                if sep.group(1) != ",":
                    raise _Decline
        if _TRAILER.fullmatch(rest, pos) is None:
            raise _Decline
        return out
