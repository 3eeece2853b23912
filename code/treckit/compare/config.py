"""Systems named by YAML configs, and the digests that identify inputs.

A config names a run file (``run: path``, relative to the config), optionally its ``format`` and
a ``name``.  Its digest is the SHA-256 of its parsed, normalized content (sorted keys, compact
JSON), so reformatting the YAML does not change it.  The evaluator never writes to a config.

Configs are read with a bounded loader: at most :data:`CONFIG_READ_LIMIT` bytes, :data:`MAX_ALIASES`
aliases (a "billion laughs" file of 600 bytes would otherwise expand to gigabytes) and
:data:`MAX_DEPTH` levels of nesting; keys are text and appear once per mapping; dates stay the
text they were written as; ``!!binary``, ``!!set`` and other tags without a JSON equivalent are errors.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .. import io
from ..errors import InputError
from ..formats.detect import RUN_FORMATS
from ..io import CONFIG_READ_LIMIT, PathLike, display_name, read_text

MAX_ALIASES = 16
MAX_DEPTH = 32


def file_digest(path: PathLike | None) -> str | None:
    """SHA-256 of a file's content, streamed (None for no file)."""
    return None if path is None else io.file_digest(path)


def read_bytes_check(path: PathLike) -> None:
    """The errors reading ``path`` would give (missing, a directory, unreadable), without reading it."""
    p = Path(path)
    name = display_name(path)
    if not p.exists():
        raise InputError("no such file", path=name, fix="check the path (relative paths start from the current directory)")
    if p.is_dir():
        raise InputError("is a directory, not a file", path=name, fix="pass the path of a file")
    if not os.access(p, os.R_OK):
        raise InputError("permission denied", path=name, fix="make the file readable")


def content_digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")).hexdigest()


class _ConfigLoader(yaml.SafeLoader):
    """PyYAML's safe loader with bounds on aliases and depth, and JSON-like values only."""

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self._aliases = 0
        self._depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise yaml.composer.ComposerError(None, None, f"more than {MAX_ALIASES} aliases (*name)",
                                                  self.peek_event().start_mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep",
                                                  self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if not isinstance(key, str):
                    raise yaml.constructor.ConstructorError(
                        None, None, f"a key must be text, found {type(key).__name__} {key_node.value!r} "
                        "(quote it; in YAML, yes/no/on/off are booleans)", key_node.start_mark)
                if key in seen:
                    raise yaml.constructor.ConstructorError(None, None, f"the key {key!r} appears twice",
                                                            key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _as_written(loader, node):
    return loader.construct_scalar(node)


def _refused(loader, node):
    raise yaml.constructor.ConstructorError(None, None, f"the tag {node.tag.replace('tag:yaml.org,2002:', '!!')} has no place in a config",
                                            node.start_mark)


_ConfigLoader.add_constructor("tag:yaml.org,2002:timestamp", _as_written)
for _tag in ("binary", "set", "omap", "pairs"):
    _ConfigLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refused)


@dataclass(frozen=True)
class SystemConfig:
    """A config naming a run (``run_path``), or describing a retrieval system (``components``:
    :mod:`treckit.retrieval.system`; then ``run_path`` is None and the system is run on the queries)."""
    name: str
    run_path: Path | None
    format: str | None
    config_path: Path
    config_digest: str
    settings: dict = field(default_factory=dict, compare=False)     # the parsed config, as read (never written back)


_PLAIN_YAML = (f"a config is a plain mapping: text keys, each once, values as in JSON, at most {MAX_ALIASES} "
               "aliases (*name)")


def parse_config(text: str, name: str) -> dict:
    """A config's content as a mapping, or an InputError naming the line."""
    try:
        data = yaml.load(text, Loader=_ConfigLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        syntax = isinstance(exc, (yaml.scanner.ScannerError, yaml.parser.ParserError))
        raise InputError(f"not valid YAML ({getattr(exc, 'problem', None) or exc})", path=name,
                         line=mark.line + 1 if mark else None,
                         fix="check the indentation and quoting" if syntax else _PLAIN_YAML) from None
    except (ValueError, RecursionError) as exc:       # e.g. an integer of thousands of digits
        raise InputError(f"not a usable YAML value ({exc})", path=name, fix="check the values in the config") from None
    if not isinstance(data, dict):
        raise InputError("a config must be a mapping (key: value lines)", path=name, fix="e.g. 'run: runs/bm25.trec'")
    return data


def load_config(path: PathLike) -> SystemConfig:
    name = display_name(path)
    data = parse_config(read_text(path, limit=CONFIG_READ_LIMIT), name)
    key = next((k for k in ("run", "run_path", "run_file") if data.get(k) is not None), None)
    if key is None and "components" in data:        # a retrieval system: run on the queries by compare
        from ..retrieval.system import System
        System(data, Path(path).parent, source=name)  # checked now, before any work
        return SystemConfig(str(data.get("name") or Path(path).stem), None, None, Path(path), content_digest(data), data)
    if key is None:
        raise InputError("the config names no run file and no retrieval components", path=name,
                         fix="add 'run: path/to/run', or components (README: systems as configs)")
    run = data[key]
    if not isinstance(run, str) or not run:
        raise InputError(f"'{key}' must be a path, found {type(run).__name__}", path=name, fix="e.g. 'run: runs/bm25.trec'")
    fmt = data.get("format")
    if fmt is not None and fmt not in RUN_FORMATS:
        raise InputError(f"unknown run format {fmt!r}", path=name, fix=f"use one of {', '.join(RUN_FORMATS)}")
    sys_name = data.get("name")
    if sys_name is not None and not isinstance(sys_name, (str, int, float)):
        raise InputError(f"'name' must be text, found {type(sys_name).__name__}", path=name, fix="e.g. 'name: bm25'")
    run_path = Path(run) if Path(run).is_absolute() else Path(path).parent / run
    return SystemConfig(str(sys_name or Path(path).stem), run_path, fmt, Path(path), content_digest(data), data)
