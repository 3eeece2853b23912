"""YAML read from PyYAML's event stream, within bounds (:mod:`treckit.inputs.bounded` says which), building only
dicts, lists, str, int, float, bool and None.

PyYAML's parser (libyaml's, :data:`treckit.thresholds.YAML_LIBYAML`, when PyYAML was built with it; its own pure
reader otherwise) turns the text into events: a collection starts, a scalar, a collection ends.  The values are
built here from those events, one at a time and nothing recursive, rather than through PyYAML's nodes and
constructor, which hold every node of the document at once (a 100,000-query test set: 20 s and 0.7-1 GB that
way).  Scalars are valued as PyYAML's safe loader values them (its resolver and constructor); every bound is
checked on the event that crosses it, so the read stops there: an anchor or alias (the "billion laughs"), a
second document, a collection one level deeper than :data:`treckit.thresholds.MAX_DEPTH`.  A tag other than the
plain ones, a key that is not text or is repeated, a number too long or beyond a double are listed
(:class:`~treckit.inputs.problems.Problems`) and the value marked :data:`~treckit.inputs.problems.BAD`.

A streamed document (a test set) hands the items of one top-level list over one at a time, as each ends
(``stream``), and builds nothing else below its top level (:data:`~treckit.inputs.problems.NOT_READ`).
"""
from __future__ import annotations

import math
import re
from functools import partial
from typing import Any, Callable

from .. import thresholds
from .problems import BAD, NOT_READ, Problems

_TAG = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL, _TIMESTAMP, _MAP, _SEQ = (
    _TAG + t for t in ("str", "int", "float", "bool", "null", "timestamp", "map", "seq"))
_PLAIN_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_INFINITY = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
# what YAML does not allow in a stream at all (PyYAML's reader says so, without the line); compiled on first use,
# since the class's wide ranges cost milliseconds that a command reading no YAML should not pay
_NON_PRINTABLE = "[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]"
_SURROGATE = re.compile("[\ud800-\udfff]")
_REMEMBERED = frozenset((_INT, _FLOAT, _BOOL, _NULL))       # plain values remembered besides text
_UNSEEN = object()


class _Fatal(Exception):
    """A problem after which the rest of the file is not read."""


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_TAG):] if tag.startswith(_TAG) else tag


def event_parser(text: str):
    """PyYAML's event parser over ``text``: libyaml's when PyYAML has it and :data:`treckit.thresholds.YAML_LIBYAML`
    says to use it, else PyYAML's pure reader (the same events, slower).  The text is handed over a piece at a
    time, as a file's would be: given a whole text, libyaml would hold a UTF-8 copy of all of it."""
    import yaml

    pieces = _Pieces(text)
    if thresholds.YAML_LIBYAML and getattr(yaml, "__with_libyaml__", False):
        return yaml.CSafeLoader(pieces)
    return yaml.SafeLoader(pieces)


class _Pieces:
    """A text read as a file is: ``read(size)`` gives the next ``size`` characters."""

    __slots__ = ("text", "at")

    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def read(self, size: int = -1) -> str:
        start = self.at
        self.at = len(self.text) if size < 0 else min(start + size, len(self.text))
        return self.text[start:self.at]


class Scalars:
    """Scalars valued as PyYAML's safe loader values them (its resolver and constructor), within the bounds; a
    scalar with a problem is reported into ``problems`` and valued :data:`BAD`.  The values of short plain texts
    that read as text, numbers, booleans or null are remembered (``remembered``: texts of at most
    :data:`treckit.thresholds.PLAIN_VALUE_MEMO_MAX_CHARS` characters, at most
    :data:`treckit.thresholds.PLAIN_VALUE_MEMO_ENTRIES` of them): a document repeats its keys and small values."""

    def __init__(self, what: str, dates_as_text: bool, problems: Problems) -> None:
        import yaml

        self.what, self.dates_as_text, self.problems = what, dates_as_text, problems
        self.resolvers = yaml.SafeLoader.yaml_implicit_resolvers
        self.constructor = yaml.constructor.SafeConstructor()
        self.node = yaml.ScalarNode
        self.errors = (ValueError, TypeError, ArithmeticError, yaml.YAMLError)
        self.remembered: dict[str, Any] = {}

    def plain_tag(self, text: str) -> str:
        """The tag YAML gives a plain (unquoted, untagged) scalar."""
        for tag, regexp in self.resolvers.get(text[:1], ()):
            if regexp.match(text):
                return tag
        self._remember(text, text)
        return _STR

    def plain(self, text: str, raw: bool, line: int) -> Any:
        """The value of a plain scalar written ``text`` on ``line`` (``raw``: see :meth:`value`)."""
        value = self.remembered.get(text, _UNSEEN)
        if value is not _UNSEEN and (not raw or value is None or value.__class__ is str):
            return value
        tag = self.plain_tag(text)
        if tag is _STR:
            return text
        value = self.value(text, tag, line, raw)
        if value is not BAD and tag in _REMEMBERED and not raw:
            self._remember(text, value)
        return value

    def _remember(self, text: str, value) -> None:
        if (len(text) <= thresholds.PLAIN_VALUE_MEMO_MAX_CHARS
                and len(self.remembered) < thresholds.PLAIN_VALUE_MEMO_ENTRIES):
            self.remembered[text] = value

    def tag_of(self, event) -> tuple[str, bool]:
        """(the tag of a scalar event, whether the file wrote it): an untagged plain scalar's is resolved from its
        text, a quoted or block one's is text (so is the non-specific ``!``)."""
        tag = event.tag
        if tag is None or tag == "!":
            return (self.plain_tag(event.value) if event.implicit[0] else _STR), False
        return tag, True

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
            return self._number(text, tag, line)
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

    def _number(self, text: str, tag: str, line: int) -> Any:
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
    """An open mapping or list: where its values go (``value``; None: its content is left out) and what their
    lines are recorded under (``path`` in ``lines``; ``lines`` None: not recorded)."""

    __slots__ = ("is_map", "value", "path", "lines", "key", "record", "stream")

    def __init__(self, is_map: bool, value, path: tuple, lines) -> None:
        self.is_map, self.value, self.path, self.lines = is_map, value, path, lines
        self.key = _KEY if is_map else None     # a mapping's state: the key its next value belongs to
        self.record = None         # (list, index, line) when this is an item of the streamed list
        self.stream = False        # the streamed list itself


_KEY = object()        # a mapping's next event is a key
_SKIP = object()       # a mapping's next value belongs to a refused key: not kept


class _DocumentLines:
    """The lines of the document's frame: its one value's line is the line of the path ()."""

    __slots__ = ("lines",)

    def __init__(self, lines: dict) -> None:
        self.lines = lines

    def __setitem__(self, path: tuple, line: int) -> None:
        self.lines[()] = line


class _EventReader:
    """One reading of a document's events (see the module's docstring): ``read()`` gives (data, {path: line},
    problems).  The lines inside a streamed item are recorded only with ``item_lines``: without them an item is
    handed over with ``lines`` None, and a taker that needs them raises :class:`LinesNeeded`."""

    def __init__(self, text: str, raw_keys, what: str, dates_as_text: bool, stream, item_lines: bool) -> None:
        self.text, self.raw_keys, self.what, self.item_lines = text, frozenset(raw_keys), what, item_lines
        self.problems = Problems()
        self.scalars = Scalars(what, dates_as_text, self.problems)
        self.stream_key, self.take = (stream[0], stream[1](self.problems)) if stream else (None, None)
        self.lines: dict[tuple, int] = {}
        self.document = _Frame(False, [], (), _DocumentLines(self.lines))     # holds the document's one value
        self.frames = [self.document]
        self.documents = 0
        self.remembered = self.scalars.remembered
        self.typed_starts = frozenset(self.scalars.resolvers)     # what a plain scalar read as more than text starts with

    def read(self):
        import yaml

        parser = event_parser(self.text)
        self.text = None
        try:
            self._read_events(parser.get_event, yaml)
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
            parser.dispose()
        values = self.document.value
        return (values[0] if values else None), self.lines, self.problems

    def _read_events(self, next_event: Callable, yaml) -> None:
        """Every event, in one loop: a scalar (most events) handled as a key or a value, the rest by their kind."""
        scalar = yaml.ScalarEvent
        by_kind = {yaml.MappingStartEvent: partial(self._start, True), yaml.SequenceStartEvent: partial(self._start, False),
                   yaml.MappingEndEvent: self._end, yaml.SequenceEndEvent: self._end, yaml.AliasEvent: self._alias,
                   yaml.DocumentStartEvent: self._start_document, yaml.DocumentEndEvent: _nothing,
                   yaml.StreamStartEvent: _nothing, yaml.StreamEndEvent: _nothing}
        frames, key, value = self.frames, self._key, self._value
        while (event := next_event()) is not None:
            if event.__class__ is scalar:
                frame = frames[-1]
                if frame.key is _KEY:
                    key(event, frame)
                else:
                    value(event, frame)
            else:
                by_kind[event.__class__](event)

    # ---------------------------------------------------------------- scalars
    def _key(self, event, frame: _Frame) -> None:
        """A mapping's key: an untagged plain text met for the first time at once, anything else by the rules."""
        text, container = event.value, frame.value
        if event.tag is None and event.anchor is None and container is not None and text not in container:
            if event.implicit[0]:
                if text[:1] not in self.typed_starts or self.remembered.get(text).__class__ is str:
                    frame.key = text
                    return
            elif event.style != '"' or not _SURROGATE.search(text):
                frame.key = text
                return
        self._key_checked(event, frame)

    def _key_checked(self, event, frame: _Frame) -> None:
        if event.anchor is not None:
            self._alias(event)
        if frame.value is None:                    # inside content left out: nothing is valued or reported
            frame.key = _SKIP
            return
        text = event.value
        line = event.start_mark.line + 1
        if event.style == '"' and _SURROGATE.search(text):
            self._surrogate(line)
            key = None
        else:
            key = self.scalars.key(text, self.scalars.tag_of(event)[0], line)
        if key is not None and key in frame.value:
            self.problems.add(line, f"the key {key!r} appears twice in one mapping")
            key = None
        frame.key = _SKIP if key is None else key

    def _value(self, event, frame: _Frame) -> None:
        """A value in a mapping or a list (or the document's one value)."""
        container, key = frame.value, frame.key
        if event.anchor is not None or container is None or key is _SKIP:
            self._value_left_out(event, frame)
            return
        text = event.value
        if event.tag is not None:
            value = self._tagged(event, key)
        elif event.implicit[0]:                    # plain: text, unless it starts as something else may
            if text[:1] in self.typed_starts:
                value = self.scalars.plain(text, key in self.raw_keys, event.start_mark.line + 1)
            else:
                value = text
        elif event.style == '"' and _SURROGATE.search(text):
            value = self._surrogate(event.start_mark.line + 1)
        else:                                      # quoted, or a block scalar: text
            value = text
        if frame.is_map:
            container[key] = value
            frame.key = _KEY
        else:
            key = len(container)
            container.append(value)
        if frame.stream:                           # an item of the streamed list: handed over now
            line = event.start_mark.line + 1
            container[key] = self.take(key, value, {(): line}, line)
        elif frame.lines is not None:
            frame.lines[frame.path + (key,)] = event.start_mark.line + 1

    def _value_left_out(self, event, frame: _Frame) -> None:
        """A value not kept: inside content left out, or the value of a refused key; an anchor ends the reading."""
        if event.anchor is not None:
            self._alias(event)
        if frame.is_map:
            frame.key = _KEY

    def _tagged(self, event, key):
        """The value of a scalar with a tag (the non-specific ``!`` included)."""
        line = event.start_mark.line + 1
        if event.style == '"' and _SURROGATE.search(event.value):
            return self._surrogate(line)
        tag, explicit = self.scalars.tag_of(event)
        return self.scalars.value(event.value, tag, line, key in self.raw_keys, explicit)

    def _surrogate(self, line: int):
        """BAD, the value of a scalar holding a lone surrogate, now reported."""
        self.problems.add(line, "a lone UTF-16 surrogate escape (\\ud800-\\udfff), which UTF-8 text cannot hold")
        return BAD

    # ---------------------------------------------------------------- collections
    def _start(self, is_map: bool, event) -> None:
        """A mapping or a list starts: an untagged one below the top level at once, any other by the rules."""
        frames = self.frames
        parent = frames[-1]
        if (event.tag is None and event.anchor is None and parent.key is not _KEY
                and len(frames) <= thresholds.MAX_DEPTH and (self.take is None or len(frames) > 2)):
            frames.append(self._place(parent, event.start_mark.line + 1, None, is_map))
        else:
            self._start_checked(is_map, event)

    def _start_checked(self, is_map: bool, event) -> None:
        if event.anchor is not None:
            self._alias(event)
        frames = self.frames
        line = event.start_mark.line + 1
        if len(frames) > thresholds.MAX_DEPTH:
            self.problems.add(line, f"nested more than {thresholds.MAX_DEPTH} levels deep")
            raise _Fatal
        refused = event.tag not in (None, "!", _MAP if is_map else _SEQ)
        if refused:
            self.problems.add(line, f"the tag {_short_tag(event.tag)} has no place in a {self.what}: "
                                    "write plain values")
        parent = frames[-1]
        if parent.key is _KEY:                     # a mapping or a list as a key: its whole content is left out
            self.problems.add(line, "a key must be text, found a " + ("mapping" if is_map else "list"))
            parent.key = _SKIP
            frames.append(_Frame(is_map, None, (), None))
            return
        streamed = unread = False
        if self.take is not None and parent is self.document:
            unread = not is_map                    # a streamed document that is a list
        elif self.take is not None and len(frames) == 2:
            streamed = parent.is_map and not is_map and parent.key == self.stream_key
            unread = not streamed                  # only the streamed list is read below the top level
        frame = self._place(parent, line, BAD if refused else NOT_READ if unread else None, is_map)
        frame.stream = streamed and frame.value is not None
        frames.append(frame)

    def _place(self, parent: _Frame, line: int, value, is_map: bool) -> _Frame:
        """A new collection in ``parent``, built unless ``value`` says it is refused (BAD) or not read (NOT_READ),
        or ``parent``'s content is left out."""
        if parent.is_map:
            slot = parent.key
            parent.key = _KEY
        else:
            slot = len(parent.value) if parent.value is not None else 0
        keep = parent.value is not None and slot is not _SKIP
        path, lines, record = parent.path + (slot,), parent.lines, None
        if parent is self.document:
            path, lines = (), self.lines
        elif keep and parent.stream:               # an item of the streamed list: its lines are its own
            record, path, lines = (parent.value, slot, line), (), ({} if self.item_lines else None)
        built = keep and value is not BAD and value is not NOT_READ
        frame = _Frame(is_map, ({} if is_map else []) if built else None, path, lines)
        frame.record = record
        if keep:
            placed = frame.value if built else value if value is NOT_READ else BAD
            if parent.is_map:
                parent.value[slot] = placed
            else:
                parent.value.append(placed)
            if lines is not None:
                lines[path] = line
        return frame

    def _end(self, event) -> None:
        """A collection ends: an item of the streamed list is handed over."""
        frame = self.frames.pop()
        if frame.record is not None:
            items, index, line = frame.record
            items[index] = self.take(index, BAD if frame.value is None else frame.value, frame.lines, line)

    # ---------------------------------------------------------------- what ends the reading
    def _alias(self, event) -> None:
        self.problems.add(event.start_mark.line + 1, f"YAML anchors and aliases (&, *) are not allowed in a "
                                                     f"{self.what}; write the values out")
        raise _Fatal

    def _start_document(self, event) -> None:
        self.documents += 1
        if self.documents > 1:
            self.problems.add(event.start_mark.line + 1, f"a second YAML document (---) in one {self.what}; keep one")
            raise _Fatal


def _nothing(event) -> None:
    return None


class LinesNeeded(Exception):
    """Raised by a stream's taker given an item without its lines (``lines`` None) that it must
    report on: the file is read again with every item's lines."""


def yaml_tree(text: str, raw_keys: tuple[str, ...] = (), *, what: str = "file", dates_as_text: bool = False,
              stream: tuple[str, Callable[[Problems], Callable]] | None = None):
    """(data, {path: line}, :class:`Problems`) from YAML text, building only dicts, lists, str, int,
    float, bool and None; a value with a problem is :data:`BAD` in ``data``, and ``data`` is None
    when the text holds nothing or could not be read to the end.  The values of ``raw_keys`` are
    the text as written.

    ``stream`` = (key, start): the list under the top-level ``key`` is handed over item by item:
    ``start(problems)`` returns ``take(index, value, lines, line)`` whose return value is kept in
    the list instead of the item (``lines``: the item's own, from its path inside the item, or None: see
    :class:`LinesNeeded`)."""
    text = text.replace("\r\n", "\n")
    bad = re.search(_NON_PRINTABLE, text)
    if bad:
        problems = Problems()
        problems.add(text.count("\n", 0, bad.start()) + 1,
                     f"not valid YAML: the character U+{ord(bad.group()):04X} is not allowed in YAML text")
        return None, {}, problems
    try:
        return _EventReader(text, raw_keys, what, dates_as_text, stream, item_lines=False).read()
    except LinesNeeded:
        pass                  # (out of the except block: the traceback, and the line it holds, are let go)
    return _EventReader(text, raw_keys, what, dates_as_text, stream, item_lines=True).read()
