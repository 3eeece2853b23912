"""Cached evaluations: the same system on the same test-set content with the same measures is
answered from an SQLite file instead of being evaluated again.

The key is the SHA-256 of (the system's identity — its config dict or its run's digest —, the
test set's name, version and content digest, the measures, k, the nDCG gain, treckit's version), so
a changed input can never be served an old result.  The file lives in ``$TRECKIT_CACHE_DIR``, else
``$XDG_CACHE_HOME/treckit``, else ``~/.cache/treckit``; a corrupted file is set aside with a warning
and rebuilt, never a crash.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import warnings
from pathlib import Path

from ..io import loads_json

CACHE_FILE = "evaluations.sqlite"
STORED_FORMAT = 2        # the shape of a stored result (TestSetResult.to_dict): a new shape never reads an old one


def cache_dir(path=None) -> Path:
    if path is not None:
        return Path(path)
    if os.environ.get("TRECKIT_CACHE_DIR"):
        return Path(os.environ["TRECKIT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "treckit"


def cache_key(*, system, test_set, measures, k, gain) -> str:
    from .. import __version__
    ident = {"system": system, "test_set": [test_set.name, test_set.version, test_set.digest],
             "measures": list(measures), "k": k, "gain": gain, "treckit": __version__, "format": STORED_FORMAT}
    text = json.dumps(ident, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResultCache:
    """A key -> JSON result store in one SQLite file (safe for concurrent readers and writers)."""

    def __init__(self, directory=None):
        self.path = cache_dir(directory) / CACHE_FILE

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=30)
        con.execute("CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        return con

    def _guarded(self, action):
        """Run ``action(connection)``; a corrupted or unreadable cache is set aside and rebuilt once."""
        for attempt in (1, 2):
            try:
                con = self._connect()
                try:
                    with con:
                        return action(con)
                finally:
                    con.close()
            except (sqlite3.DatabaseError, json.JSONDecodeError) as exc:
                if attempt == 2:
                    warnings.warn(f"treckit cache {self.path} unusable ({exc}); evaluating without it", RuntimeWarning)
                    return None
                warnings.warn(f"treckit cache {self.path} was corrupted ({exc}); starting a new one", RuntimeWarning)
                self._set_aside()
            except OSError as exc:
                warnings.warn(f"treckit cache {self.path} not available ({exc}); evaluating without it", RuntimeWarning)
                return None
        return None

    def _set_aside(self) -> None:
        try:
            os.replace(self.path, self.path.with_suffix(".corrupt"))
        except OSError:
            pass

    def get(self, key: str) -> dict | None:
        def read(con):
            row = con.execute("SELECT value FROM results WHERE key = ?", (key,)).fetchone()
            return loads_json(row[0]) if row else None
        return self._guarded(read)

    def put(self, key: str, value: dict) -> None:
        text = json.dumps(value, sort_keys=False, ensure_ascii=False)
        self._guarded(lambda con: con.execute("INSERT OR REPLACE INTO results VALUES (?, ?)", (key, text)))

    def clear(self) -> int:
        """Remove every stored result; returns how many there were."""
        def wipe(con):
            n = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
            con.execute("DELETE FROM results")
            return n
        n = self._guarded(wipe) if self.path.exists() else 0
        return n or 0
