"""Corpus JSONL: one document per line, its id in ``_id`` (BEIR), ``id``, ``docid`` or ``doc_id``,
else its ``title`` (QUEST's documents.jsonl, where the title is the id); its text is ``title`` and
``text`` joined (either may be missing, not both).  The documents keep the file's order: that is the
canonical (story) order the RQ baseline breaks ties by."""
from __future__ import annotations

import json
from dataclasses import dataclass

from ..console.errors import InputError
from ..inputs.sources import PathLike, display_name, read_text
from ..inputs.bounded import loads_json

ID_FIELDS = ("_id", "id", "docid", "doc_id")


@dataclass(frozen=True)
class Corpus:
    """Documents in canonical order: the order of the corpus file."""

    ids: list[str]
    texts: list[str]
    source: str | None = None          # the file it was read from, for messages

    def by_id(self) -> "Corpus":
        """The same documents sorted by id (byte order), for a retriever whose results must not depend on
        the file's order."""
        order = sorted(range(len(self.ids)), key=lambda i: self.ids[i].encode("utf-8", "surrogatepass"))
        return Corpus([self.ids[i] for i in order], [self.texts[i] for i in order], self.source)


def read_corpus(path: PathLike) -> Corpus:
    """The documents of a corpus JSONL, in file order (see the module's docstring for the fields)."""
    name = display_name(path)
    docs: dict[str, str] = {}
    for no, line in enumerate(read_text(path).split("\n"), 1):
        if not line.strip():
            continue
        try:
            obj = loads_json(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not a JSON object ({exc.msg})", path=name, line=no,
                             fix="one JSON object per line: {\"_id\": ..., \"title\": ..., \"text\": ...}") from None
        if not isinstance(obj, dict):
            raise InputError("not a JSON object", path=name, line=no, fix="one JSON object per line")
        doc_id = _document_id(obj, name, no)
        parts = [obj.get(f) for f in ("title", "text")]
        if any(p is not None and not isinstance(p, str) for p in parts) or all(p is None for p in parts):
            raise InputError("a document needs text: 'title' and/or 'text' strings", path=name, line=no,
                             fix="add a 'text' field")
        if doc_id in docs:
            raise InputError(f"the document id {doc_id!r} appears twice", path=name, line=no,
                             fix="give every document a unique id")
        docs[doc_id] = " ".join(p for p in parts if p)
    return _corpus(docs, name)


def _document_id(obj: dict, name: str, no: int) -> str:
    """A corpus line's document id (see the module's docstring), refused when it has none or it is empty."""
    key = next((f for f in ID_FIELDS if f in obj), "title" if "title" in obj else None)
    if key is None or not isinstance(obj[key], (str, int)) or isinstance(obj[key], bool):
        raise InputError("a document needs an id (_id, id, docid, doc_id or title)", path=name, line=no,
                         fix="add an id field")
    doc_id = str(obj[key])
    if not doc_id:
        raise InputError(f"the document's id ({key}) is empty, which a TREC run cannot hold", path=name, line=no,
                         fix="give every document a non-empty id")
    return doc_id


def _corpus(docs: dict[str, str], name: str) -> Corpus:
    """The corpus of the documents read (id -> text, in file order); an error when there are none."""
    if not docs:
        raise InputError("the corpus has no documents", path=name, fix="check the file")
    return Corpus(list(docs), list(docs.values()), name)
