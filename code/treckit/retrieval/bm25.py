"""BM25 over a corpus through bm25s (Lù, 2024), with its index saved to and loaded from disk.

Parameters: ``k1``, ``b``, ``variant`` (bm25s' ``method``: lucene, robertson, atire, bm25l, bm25+),
``stopwords`` (``en`` or none), ``stemmer`` (a Snowball language such as ``english``, or none; the text
``none`` means none too).  The saved index records the corpus digest, the parameters, the versions of
bm25s and PyStemmer, and the content digest of each of its files: an index saved for another corpus,
other parameters or other versions is rebuilt rather than answer from it, and so is one whose files
changed since it was saved (said; an error when its folder cannot be written).  Documents that share
no term with the query (score 0) are not returned.  The corpus is indexed sorted by id (byte order),
so neither the index, its digest nor the results depend on the order of the corpus file.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from ..dependencies import deferred
from ..console.errors import InputError, finite_number
from ..console.messages import warn_python
from ..inputs.bounded import config_read_limit, read_json
from ..inputs.sources import file_digest
from ..output.files import atomic_output
from .corpus import Corpus

np = deferred("numpy")

VARIANTS = ("lucene", "robertson", "atire", "bm25l", "bm25+")
# the stop-word lists bm25s has, by the names it takes
STOPWORDS = ("en", "english", "en_plus", "english_plus", "de", "german", "nl", "dutch", "fr", "french", "es", "spanish",
             "pt", "portuguese", "it", "italian", "ru", "russian", "sv", "swedish", "no", "norwegian", "zh", "chinese",
             "tr", "turkish", "ko", "korean", "da", "danish")
MANIFEST = "treckit-index.json"


@dataclass(frozen=True)
class BM25Params:
    k1: float = 0.9
    b: float = 0.4
    variant: str = "lucene"
    stopwords: str | None = "en"
    stemmer: str | None = "english"

    def __post_init__(self):
        for name in ("stopwords", "stemmer"):          # "none" (a command line, a config) and "" mean none
            if getattr(self, name) in ("", "none"):
                object.__setattr__(self, name, None)
        if self.variant not in VARIANTS:
            raise InputError(f"unknown BM25 variant {self.variant!r}", fix=f"use one of {', '.join(VARIANTS)}")
        if not (finite_number(self.k1) and finite_number(self.b) and self.k1 >= 0 and 0 <= self.b <= 1):
            raise InputError(f"BM25 needs numbers k1 >= 0 (finite) and 0 <= b <= 1 (got k1={self.k1!r:.40}, "
                             f"b={self.b!r:.40})", fix="e.g. k1 0.9, b 0.4")
        if isinstance(self.stopwords, str) and self.stopwords not in STOPWORDS:      # (a list is the words themselves)
            raise InputError(f"no stop-word list for {str(self.stopwords)!r:.60}",
                             fix=f"use one of {', '.join(STOPWORDS)}, or none")
        if self.stemmer is not None and not known_stemmer(self.stemmer):
            raise InputError(f"no Snowball stemmer for {str(self.stemmer)!r:.60}",
                             fix="e.g. --stemmer english, or --stemmer none")


def known_stemmer(name) -> bool:
    """Whether PyStemmer has a Snowball stemmer of this name (a language, or one of its codes)."""
    import Stemmer
    try:
        Stemmer.Stemmer(name)
    except (KeyError, TypeError):
        return False
    return True


def _load_index(bm25s, index_dir):
    """The saved index of ``index_dir``, or an error saying how to rebuild it when its files are damaged."""
    try:
        return bm25s.BM25.load(str(index_dir))
    except (OSError, ValueError, EOFError, KeyError, TypeError) as exc:
        # truncated .npy arrays, cut-short JSON, missing files: the manifest matched, the index does not
        raise InputError(f"the saved BM25 index cannot be read ({type(exc).__name__}: damaged or cut short)",
                         path=str(index_dir),
                         fix="remove the index folder; it is built again (and saved) on the next run") from None


def corpus_digest(corpus: Corpus) -> str:
    """SHA-256 of the documents (ids and texts) in the order given: the order they are indexed in."""
    import hashlib
    h = hashlib.sha256()
    for d, t in zip(corpus.ids, corpus.texts):
        h.update(d.encode("utf-8", "surrogatepass") + b"\0" + t.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def library_versions() -> dict[str, str | None]:
    """The versions of the libraries that index and tokenize (an index built by others may rank otherwise)."""
    from importlib.metadata import PackageNotFoundError, version
    out = {}
    for name in ("bm25s", "PyStemmer"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def _index_files(index_dir: Path) -> dict[str, str]:
    """{file name: content digest} of every file of a saved index but the manifest."""
    return {p.name: file_digest(p, decompress=False) for p in sorted(index_dir.iterdir())
            if p.name != MANIFEST and p.is_file()}


def _changed_file(index_dir: Path, files) -> str | None:
    """The first of ``files`` ({name: digest}, from the manifest) whose content differs or is missing; None: all
    as saved."""
    if not isinstance(files, dict) or not files:
        return MANIFEST
    for name, digest in files.items():
        if not isinstance(name, str) or os.path.basename(name) != name or name in ("", ".", ".."):
            return MANIFEST
        try:
            if file_digest(index_dir / name, decompress=False) != digest:
                return name
        except (InputError, OSError):
            return name
    return None


class BM25Retriever:
    """Index once (or load the saved index), then ``retrieve(queries, k)``."""

    def __init__(self, corpus: Corpus, params: BM25Params = BM25Params(), index_dir: str | Path | None = None,
                 progress: bool = False):
        import bm25s

        corpus = corpus.by_id()         # an index row is a position in this order: the same for any file order
        self.ids, self.params, self.progress = corpus.ids, params, progress
        self._stem = self._stemmer()
        digest = corpus_digest(corpus)
        manifest = {"corpus": digest, "params": asdict(params), "documents": len(corpus.ids),
                    "libraries": library_versions()}
        self.loaded = False
        changed = None
        index_dir = None if index_dir is None else Path(index_dir)
        if index_dir is not None and index_dir.exists() and not index_dir.is_dir():
            raise InputError("the index path is a file, not a folder", path=str(index_dir),
                             fix="give the path of a folder for the index (made if missing, reused after), or "
                                 "remove the file")
        if index_dir is not None and (index_dir / MANIFEST).is_file():
            try:
                saved = read_json(index_dir / MANIFEST, limit=config_read_limit(), what="index manifest",
                                  fix="remove the index folder; it is built again")
            except InputError:               # unreadable: the index is built again
                saved = None
            if isinstance(saved, dict) and {k: saved.get(k) for k in manifest} == manifest:
                changed = _changed_file(index_dir, saved.get("files"))
                if changed is None:
                    self.model = _load_index(bm25s, index_dir)
                    self.loaded = True
                else:
                    warn_python(f"the BM25 index in {index_dir} is not as it was saved ({changed} changed): "
                                "rebuilding it from the corpus")
        if not self.loaded:
            tokens = bm25s.tokenize(corpus.texts, stopwords=params.stopwords or [], stemmer=self._stem,
                                    return_ids=False, show_progress=progress)
            if not any(tokens):
                raise InputError("no document of the corpus has a word to index: every text is empty"
                                 + (f" or stop words ({params.stopwords})" if params.stopwords else ""),
                                 path=corpus.source, fix="check the corpus's text fields"
                                 + (", or keep stop words (--stopwords none)" if params.stopwords else ""))
            self.model = bm25s.BM25(k1=params.k1, b=params.b, method=params.variant)
            self.model.index(tokens, show_progress=progress)
            if index_dir is not None:
                self._save(index_dir, manifest, changed)

    def _save(self, index_dir: Path, manifest: dict, changed: str | None) -> None:
        """The index saved with its manifest, which is written last (an index cut short has none, and is
        rebuilt).  A folder that cannot be written is an error naming it."""
        try:
            index_dir.mkdir(parents=True, exist_ok=True)
            (index_dir / MANIFEST).unlink(missing_ok=True)
            self.model.save(str(index_dir), show_progress=False)
            files = _index_files(index_dir)
        except OSError as exc:
            why = f"its {changed} changed since it was saved, and " if changed else ""
            raise InputError(f"the BM25 index cannot be saved: {why}the folder cannot be written "
                             f"({exc.strerror or exc})", path=str(index_dir),
                             fix="make the folder writable, or name another index folder (or none)") from None
        with atomic_output(index_dir / MANIFEST) as fh:
            fh.write(json.dumps({**manifest, "files": files}))

    def _stemmer(self):
        if not self.params.stemmer:
            return None
        import Stemmer
        try:
            return Stemmer.Stemmer(self.params.stemmer).stemWords
        except KeyError:
            raise InputError(f"no Snowball stemmer for {self.params.stemmer!r}",
                             fix="e.g. --stemmer english, or --stemmer none") from None

    def retrieve(self, queries: list[str], k: int = 100) -> list[list[tuple[str, float]]]:
        import bm25s

        if not queries:
            return []
        tokens = bm25s.tokenize(queries, stopwords=self.params.stopwords or [], stemmer=self._stem,
                                return_ids=False, show_progress=False)
        kk = min(k, len(self.ids))
        docs, scores = self.model.retrieve(tokens, k=kk, show_progress=self.progress, n_threads=0)
        out = []
        for drow, srow in zip(docs, scores):
            keep = srow > 0
            out.append([(self.ids[int(d)], float(s)) for d, s in zip(drow[keep], np.asarray(srow[keep], np.float64))])
        return out
