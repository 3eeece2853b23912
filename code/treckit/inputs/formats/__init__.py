"""The formats read, one module per family (:mod:`.trec`, :mod:`.jsonl`, :mod:`.tsv`, :mod:`.beir`, :mod:`.prefs`),
the rules every line reader shares (:mod:`.common`), and :mod:`.detect`, which picks one.

The names of the formats and layouts, and the field names of JSON-lines runs, are here, where the command
line's help and the reader configuration (:mod:`treckit.inputs.options`) take them without loading the readers."""
from __future__ import annotations

from dataclasses import dataclass

QRELS_FORMATS = ("trec", "beir-tsv", "beir-jsonl", "quest")
RUN_FORMATS = ("trec", "trec3", "tsv", "jsonl")
LAYOUTS = ("auto", "docid-spaces", "extra-columns")       # TREC lines with more fields than the format has
TSV_THIRD = ("score", "rank")                             # a TSV run's third column without a header
ROLES = ("run", "qrels")                                  # what a file is read as (treckit detect --role)


@dataclass
class JsonlFields:
    """Field names for JSONL runs; None means: detect."""

    id: str | None = None
    docs: str | None = None
    scores: str | None = None
    hits: str | None = None
    hit_doc: str | None = None
    hit_score: str | None = None
    query: str = "query"
