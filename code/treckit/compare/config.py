"""Systems named by YAML configs, and the digests that identify inputs.

A config names a run file (``run: path``, relative to the config), optionally its ``format`` and
a ``name``.  Its digest is the SHA-256 of its parsed, normalized content (sorted keys, compact
JSON), so reformatting the YAML does not change it.  The evaluator never writes to a config.

Configs are read as every YAML document is (:mod:`treckit.inputs.bounded`): at most
:data:`~treckit.thresholds.CONFIG_READ_LIMIT` bytes, no anchors or aliases (a "billion laughs" file of
600 bytes would otherwise expand to gigabytes), at most :data:`~treckit.thresholds.MAX_DEPTH` levels of
nesting; keys are text and appear once per mapping; dates stay the text they were written as;
``!!binary``, ``!!set`` and other tags without a JSON equivalent are errors.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..console.errors import InputError
from ..inputs.bounded import load_yaml_mapping
from ..inputs.formats import RUN_FORMATS
from ..inputs.sources import PathLike, content_digest, display_name
from ..inputs.urls import is_url
from ..retrieval.system import System


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


def load_config(path: PathLike) -> SystemConfig:
    name = display_name(path)
    data = load_yaml_mapping(path)
    key = next((k for k in ("run", "run_path", "run_file") if data.get(k) is not None), None)
    if key is None and "components" in data:        # a retrieval system: run on the queries by compare
        System(data, Path(path).parent, source=name)  # checked now, before any work
        return SystemConfig(str(data.get("name") or Path(path).stem), None, None, Path(path), content_digest(data), data)
    if key is None:
        raise InputError("the config names no run file and no retrieval components", path=name,
                         fix="add 'run: path/to/run', or components (docs/retrieval.md: systems as configs)")
    run = data[key]
    if not isinstance(run, str) or not run:
        raise InputError(f"'{key}' must be a path, found {type(run).__name__}", path=name, fix="e.g. 'run: runs/bm25.trec'")
    if is_url(run):                 # read as a path, its credentials would be in messages
        raise InputError(f"'{key}' is a URL, and a config names a local run file (a path relative to the config)",
                         path=name, fix="download the run and give its path, e.g. 'run: runs/bm25.trec'")
    fmt = data.get("format")
    if fmt is not None and fmt not in RUN_FORMATS:
        raise InputError(f"unknown run format {fmt!r}", path=name, fix=f"use one of {', '.join(RUN_FORMATS)}")
    sys_name = data.get("name")
    if sys_name is not None and not isinstance(sys_name, (str, int, float)):
        raise InputError(f"'name' must be text, found {type(sys_name).__name__}", path=name, fix="e.g. 'name: bm25'")
    run_path = Path(run) if Path(run).is_absolute() else Path(path).parent / run
    return SystemConfig(str(sys_name or Path(path).stem), run_path, fmt, Path(path), content_digest(data), data)
