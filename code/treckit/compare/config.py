"""Systems named by YAML configs, and the digests that identify inputs.

A config names a run file (``run: path``, relative to the config), optionally its ``format`` and
a ``name``.  Its digest is the SHA-256 of its parsed, normalized content (sorted keys, compact
JSON), so reformatting the YAML does not change it.  The evaluator never writes to a config.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..io import PathLike, display_name, read_bytes, read_text


def file_digest(path: PathLike | None) -> str | None:
    """SHA-256 of a file's bytes as stored, streamed (a large file is never held in memory); of the
    bytes read from stdin for ``-``."""
    if path is None:
        return None
    if str(path) == "-":
        return hashlib.sha256(bytes(read_bytes(path))).hexdigest()
    read_bytes_check(path)
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


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


@dataclass(frozen=True)
class SystemConfig:
    name: str
    run_path: Path
    format: str | None
    config_path: Path
    config_digest: str
    settings: dict = field(default_factory=dict, compare=False)     # the parsed config, as read (never written back)


def load_config(path: PathLike) -> SystemConfig:
    import yaml

    name = display_name(path)
    try:
        data = yaml.safe_load(read_text(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"not valid YAML ({getattr(exc, 'problem', exc)})", path=name,
                         line=mark.line + 1 if mark else None, fix="check the indentation and quoting") from None
    if not isinstance(data, dict):
        raise InputError("a config must be a mapping (key: value lines)", path=name, fix="e.g. 'run: runs/bm25.trec'")
    run = data.get("run") or data.get("run_path") or data.get("run_file")
    if run is None:
        if any(k in data for k in ("retriever", "retrieval", "index")):
            raise InputError("this config describes a retrieval setup; running retrievers is not available yet",
                             path=name, fix="point the config at a run file with 'run: path/to/run'")
        raise InputError("the config names no run file", path=name, fix="add 'run: path/to/run'")
    run_path = (Path(path).parent / str(run)) if not Path(str(run)).is_absolute() else Path(str(run))
    return SystemConfig(str(data.get("name") or Path(path).stem), run_path, data.get("format"), Path(path),
                        content_digest(data), data)
