"""Plain YAML, read safely: configs and test sets are small hand-written files, so anything beyond
plain mappings, lists and scalars is refused before it can cost time or memory.

The text is read as a tree of nodes (no Python objects are built from tags), so every value keeps its
line; anchors and aliases (the "billion laughs" bomb), explicit tags (dates, ``!!binary``, ``!!set``,
``!!python/...``), duplicate keys, deep nesting and oversized files are errors naming the line.
"""
from __future__ import annotations

from .errors import InputError
from .io import PathLike, display_name, read_text

MAX_YAML_BYTES = 64 << 20     # hand-written configuration: anything larger is not one
MAX_DEPTH = 16

def yaml_tree(text: str, raw_keys: tuple[str, ...] = ()):
    """(data, {path: line}, [(line, problem)]) from YAML text, building only dicts, lists, str, int,
    float, bool and None; the values of ``raw_keys`` are kept as the text written.  A value with a
    problem is :data:`BAD` in ``data``."""
    import yaml

    problems: list[tuple[int | None, str]] = []
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                return None, {}, [(event.start_mark.line + 1,
                                   "YAML anchors and aliases (&, *) are not allowed in a test set; write the values out")]
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return None, {}, [(mark.line + 1 if mark else None, f"not valid YAML: {getattr(exc, 'problem', None) or exc}")]
    if root is None:
        return None, {}, problems
    lines: dict[tuple, int] = {}
    data = _node_value(root, (), lines, problems, 0, None, raw_keys)
    return data, lines, problems


def _node_value(node, path: tuple, lines: dict, problems: list, depth: int, key: str | None, raw_keys):
    import yaml

    line = node.start_mark.line + 1
    lines[path] = line
    if depth > MAX_DEPTH:
        problems.append((line, f"nested more than {MAX_DEPTH} levels deep"))
        return BAD
    if isinstance(node, yaml.MappingNode):
        if node.tag != "tag:yaml.org,2002:map":
            problems.append((line, f"the tag {node.tag} is not allowed in a test set"))
            return BAD
        out: dict = {}
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode) or k.tag != "tag:yaml.org,2002:str":
                problems.append((k.start_mark.line + 1, "keys must be plain names"))
                continue
            if k.value in out:
                problems.append((k.start_mark.line + 1, f"the key {k.value!r} appears twice in one mapping"))
                continue
            out[k.value] = _node_value(v, path + (k.value,), lines, problems, depth + 1, k.value, raw_keys)
        return out
    if isinstance(node, yaml.SequenceNode):
        if node.tag != "tag:yaml.org,2002:seq":
            problems.append((line, f"the tag {node.tag} is not allowed in a test set"))
            return BAD
        return [_node_value(v, path + (i,), lines, problems, depth + 1, None, raw_keys) for i, v in enumerate(node.value)]
    return _scalar(node, key in raw_keys, line, problems)


_TIMESTAMP = "tag:yaml.org,2002:timestamp"
BAD = object()          # a value already reported: validation does not report it a second time
_SCALAR_TAGS = {"tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"}


def _scalar(node, raw: bool, line: int, problems: list):
    import yaml

    if raw and node.tag != "tag:yaml.org,2002:null" and node.tag in _SCALAR_TAGS | {_TIMESTAMP}:
        return node.value                 # ids are the text as written (007 stays 007, 2024-01-01 a date-like id)
    if node.tag not in _SCALAR_TAGS:
        kind = node.tag.rsplit(":", 1)[-1]
        problems.append((line, f"the value {node.value[:40]!r} is read by YAML as a {kind}; quote it to make it text"))
        return BAD
    if node.tag == "tag:yaml.org,2002:str":
        return node.value
    return yaml.SafeLoader("").construct_object(node)


def load_yaml_mapping(path: PathLike):
    """A YAML (or JSON) file holding one mapping, read by :func:`yaml_tree`; every problem is listed."""
    from pathlib import Path

    name = display_name(path)
    if str(path) != "-":
        p = Path(path)
        if not p.is_file():
            raise InputError("not a regular file" if p.exists() else "no such file", path=name,
                             fix="give the path of a YAML config file")
        if p.stat().st_size > MAX_YAML_BYTES:
            raise InputError(f"larger than {MAX_YAML_BYTES >> 20} MiB: not a config file", path=name,
                             fix="check that this is the right file")
    data, _, problems = yaml_tree(read_text(path))
    if problems:
        raise InputError("; ".join(f"line {ln}: {msg}" if ln else msg for ln, msg in problems), path=name,
                         fix="write plain YAML: mappings, lists, strings and numbers")
    if not isinstance(data, dict):
        raise InputError("the file must hold a mapping (key: value lines)", path=name, fix="e.g. 'run: runs/bm25.trec'")
    return data
