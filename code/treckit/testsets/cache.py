"""Cached evaluations: the same system on the same test-set content with the same measures is
answered from an SQLite file instead of being evaluated again.

The key is the SHA-256 of (the system's identity, the test set's name, version and content digest,
the measures, k, the nDCG gain, treckit's version), so a changed input is never answered from the
cache.  A system's identity is its config with the content digest of every file it names and the
code of every function it calls (:func:`code_identity`), or a run's digest; a function whose code
cannot be found in a file is not cached.

The file, ``evaluations.sqlite``, lives in ``$TRECKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/treckit``,
else ``~/.cache/treckit``.  Nothing there is ever lost to a mishap:

* **busy**: another process's lock is waited for at most :data:`LOCK_WAIT_SECONDS`; then the
  evaluation goes on without the cache and says so (the file is left alone);
* **corrupt**: only a file SQLite itself finds corrupt (``PRAGMA quick_check``) is set aside, as
  ``evaluations.corrupt-<UTC time>-<n>``, a name no earlier one has, and a new file is started;
* **not a result**: a stored row that is not a valid result (:func:`treckit.testsets.results.check_results`) is a
  miss: evaluated again and replaced, said with the file and the row's key (never its content);
* **size**: the stored results take at most ``$TRECKIT_CACHE_MAX_BYTES`` (a size such as ``512M``;
  ``0``: no bound; default :data:`DEFAULT_MAX_BYTES`); after each store, the least recently used
  results (stored or answered longest ago) are removed until the rest fit.

Messages are treckit's warnings (``treckit: ...`` on stderr in a command; a :class:`CacheWarning`
in Python).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Callable

from .. import __version__, thresholds
from ..console.errors import InputError

from ..console.messages import warn_python
from ..engines.budget import parse_memory_limit
from ..inputs.bounded import loads_json
from ..inputs.sources import file_digest
from ..retrieval.callables import code_files

CACHE_FILE = "evaluations.sqlite"
STORED_FORMAT = 2        # the shape of a stored result (TestSetResult.to_dict): a new shape never reads an old one
LOCK_WAIT_SECONDS = 10.0         # the longest wait for another process's lock on the cache file
LOCK_POLL_SECONDS = 0.1          # ... waited in SQLite this long at a time, so that Ctrl-C is heard meanwhile
DEFAULT_MAX_BYTES = 512 << 20    # stored results beyond this (bytes of their JSON) evict the least recently used
MAX_BYTES_ENV = "TRECKIT_CACHE_MAX_BYTES"
TABLE = "evaluations"
LEGACY_TABLE = "results"         # earlier treckits' rows: never answered (the key holds the version); clear empties it


class CacheWarning(UserWarning):
    """The evaluation cache could not be used as it is (busy, unreadable, corrupt, a function not
    found in a file): the evaluation went on without it, or with a new file."""


def cache_dir(path=None) -> Path:
    if path is not None:
        return Path(path)
    if os.environ.get("TRECKIT_CACHE_DIR"):
        return Path(os.environ["TRECKIT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "treckit"


def cache_key(*, system, test_set, measures, k, gain) -> str:
    ident = {"system": system, "test_set": [test_set.name, test_set.version, test_set.digest],
             "measures": list(measures), "k": k, "gain": gain, "treckit": __version__, "format": STORED_FORMAT}
    text = json.dumps(ident, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def max_bytes() -> int | None:
    """The bound on the stored results' bytes: ``$TRECKIT_CACHE_MAX_BYTES`` or :data:`DEFAULT_MAX_BYTES`;
    None: no bound."""
    text = os.environ.get(MAX_BYTES_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    try:
        return parse_memory_limit(text)
    except InputError:
        raise InputError(f"${MAX_BYTES_ENV}={text!r} is not a size",
                         fix=f"set {MAX_BYTES_ENV} to a size such as 512M or 2G (0: no bound), or unset it") from None


_said: set[str] = set()
_said_lock = threading.Lock()


def say_once(message: str, about: str | None = None) -> None:
    """A cache message, once per process for each thing it is ``about`` (default: the message itself)."""
    with _said_lock:
        if (about or message) in _said:
            return
        _said.add(about or message)
    warn(message)


def warn(message: str) -> None:
    warn_python(message, CacheWarning)


def _busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


class _Unusable(Exception):
    """The cache cannot be used now (busy, unreadable): what to say."""


class ResultCache:
    """A key -> JSON result store in one SQLite file, safe for concurrent readers and writers (module
    docstring).  After one busy or failed access it is not tried again for the rest of this object's
    life (one evaluation), so a busy cache costs one wait and one message."""

    def __init__(self, directory=None):
        self.path = cache_dir(directory) / CACHE_FILE
        self.max_bytes = max_bytes()              # a wrong $TRECKIT_CACHE_MAX_BYTES: said before any work
        self.unusable = False

    # ---------------------------------------------------------------- access
    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=min(LOCK_POLL_SECONDS, LOCK_WAIT_SECONDS), isolation_level=None)
        try:
            con.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
                        "bytes INTEGER NOT NULL, last_use INTEGER NOT NULL)")
            con.execute(f"CREATE INDEX IF NOT EXISTS {TABLE}_by_use ON {TABLE} (last_use)")
        except BaseException:
            con.close()
            raise
        return con

    def _transaction(self, action: Callable[[sqlite3.Connection], Any]):
        """``action(connection)`` in one write transaction (taken at once: a read that would later write
        could otherwise meet another writer without waiting)."""
        con = self._connect()
        try:
            con.execute("BEGIN IMMEDIATE")
            try:
                out = action(con)
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
            return out
        finally:
            con.close()

    def _attempt(self, action):
        """``action`` done in a transaction, tried again while another process holds the file, for at most
        :data:`LOCK_WAIT_SECONDS`; a cache still busy then, or unreadable, raises :class:`_Unusable`; a
        corrupt file is set aside and ``action`` tried on a new one."""
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        set_aside = False
        while True:
            try:
                return self._transaction(action)
            except sqlite3.Error as exc:
                if _busy(exc):
                    if time.monotonic() < deadline:
                        continue
                    raise _Unusable(f"is busy: another process has held it for more than {LOCK_WAIT_SECONDS:g} s "
                                    "(the file is left as it is)") from None
                judged = None if set_aside else self._corrupt()
                if judged is None:
                    raise _Unusable(f"cannot be used ({exc})") from None
                self._set_aside(judged, exc)
                set_aside = True
            except OSError as exc:
                raise _Unusable(f"cannot be used ({exc.strerror or exc})") from None

    def _guarded(self, action, what: str = "evaluating without it"):
        """``action`` through :meth:`_attempt`; an unusable cache is said (once) and gives None."""
        if self.unusable:
            return None
        try:
            return self._attempt(action)
        except _Unusable as exc:
            self.unusable = True
            warn(f"the evaluation cache {self.path} {exc}; {what}")
            return None

    # ---------------------------------------------------------------- corrupt files
    def _corrupt(self) -> os.stat_result | None:
        """The file's status when SQLite finds it corrupt (not merely locked or unreadable), else None."""
        try:
            judged = os.stat(self.path)
            con = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=rw", uri=True, timeout=LOCK_WAIT_SECONDS)
        except (sqlite3.Error, OSError):
            return None
        try:
            rows = con.execute("PRAGMA quick_check").fetchall()
        except sqlite3.OperationalError:      # locked, busy, unreadable: nothing says it is corrupt
            return None
        except sqlite3.DatabaseError:         # not a database, malformed
            return judged
        finally:
            con.close()
        return None if rows == [("ok",)] else judged

    def _set_aside(self, judged: os.stat_result, exc: Exception) -> None:
        """Move the corrupt file ``judged`` (and its journal) to a name never used before (:func:`_claim`);
        a file another process has put in its place meanwhile is left alone."""
        try:
            now = os.stat(self.path)
        except OSError:
            return
        if (now.st_dev, now.st_ino) != (judged.st_dev, judged.st_ino):
            return
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        for n in range(1, 10_000):
            target = self.path.with_name(f"{self.path.stem}.corrupt-{stamp}-{n}")
            try:
                linked = _claim(self.path, target)
            except FileExistsError:
                continue
            except OSError:
                return
            with contextlib.suppress(OSError):
                if linked:
                    os.unlink(self.path)
                journal = Path(f"{self.path}-journal")
                if journal.exists():
                    os.replace(journal, f"{target}-journal")
            warn(f"the evaluation cache {self.path} is corrupt ({exc}): set aside as {target.name}; "
                 "starting a new one")
            return

    # ---------------------------------------------------------------- the store
    def get(self, key: str, read: Callable[[Any], Any] | None = None) -> Any:
        """The stored value (None: none), or what ``read`` makes of it; its use is recorded (eviction is least
        recently used).  A stored value that is not JSON, or that ``read`` refuses (an InputError: not a valid
        result), is a miss: said, naming the file and the key (never the value), and replaced by the next store."""
        def fetch(con):
            row = con.execute(f"SELECT value FROM {TABLE} WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            con.execute(f"UPDATE {TABLE} SET last_use = ? WHERE key = ?", (_next_use(con), key))
            return row[0]
        text = self._guarded(fetch)
        if text is None:
            return None
        try:
            value = loads_json(text)
        except (InputError, ValueError, TypeError, RecursionError):
            return self._miss(key, "not JSON")
        if read is None:
            return value
        try:
            return read(value)
        except (InputError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            part = getattr(exc, "part", None)
            return self._miss(key, f"its {part}" if part else "its shape")

    def _miss(self, key: str, why: str) -> None:
        warn(f"the evaluation cache {self.path}: the result stored under the key {key} is not a valid result ({why}): "
             "evaluating again, and replacing it")

    def put(self, key: str, value: dict) -> None:
        text = json.dumps(value, sort_keys=False, ensure_ascii=False)
        size = len(text.encode("utf-8", "surrogatepass"))
        bound = self.max_bytes
        if bound is not None and size > bound:
            say_once(f"a result of {size:,} bytes is more than the evaluation cache holds ({bound:,} bytes, "
                     f"${MAX_BYTES_ENV}): it is not stored", about=f"too large for {bound}")
            return

        def store(con):
            con.execute(f"INSERT OR REPLACE INTO {TABLE} VALUES (?, ?, ?, ?)", (key, text, size, _next_use(con)))
            if bound is not None:
                _evict(con, bound)
        self._guarded(store, "the result is not stored")

    def clear(self) -> int:
        """Remove every stored result; returns how many there were.  A busy or unreadable cache is an error."""
        def wipe(con):
            n = 0
            for table in (TABLE, LEGACY_TABLE):
                if con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone():
                    n += con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                    con.execute(f"DELETE FROM {table}")
            return n
        if not self.path.exists():
            return 0
        try:
            return self._attempt(wipe)
        except _Unusable as exc:
            raise InputError(f"the evaluation cache {exc}", path=str(self.path),
                             fix="try again when the other treckit is done, or remove the file") from None

    def stored_bytes(self) -> int:
        """The bytes of the stored results (what the bound counts)."""
        got = self._guarded(lambda con: con.execute(f"SELECT COALESCE(SUM(bytes), 0) FROM {TABLE}").fetchone()[0])
        return got or 0


def _next_use(con: sqlite3.Connection) -> int:
    """The next use's number (a counter in the file: one order for every process, whatever the clocks)."""
    return con.execute(f"SELECT COALESCE(MAX(last_use), 0) + 1 FROM {TABLE}").fetchone()[0]


def _evict(con: sqlite3.Connection, bound: int) -> None:
    """Remove the least recently used results until the rest take at most ``bound`` bytes."""
    total = con.execute(f"SELECT COALESCE(SUM(bytes), 0) FROM {TABLE}").fetchone()[0]
    if total <= bound:
        return
    gone = []
    for key, size in con.execute(f"SELECT key, bytes FROM {TABLE} ORDER BY last_use, key"):
        if total <= bound:
            break
        gone.append((key,))
        total -= size
    con.executemany(f"DELETE FROM {TABLE} WHERE key = ?", gone)


def _claim(source: Path, target: Path) -> bool:
    """``source`` given the new name ``target``; FileExistsError when ``target`` exists (it is never replaced).
    A hard link (True: ``source`` is still to be removed); where there are none, ``target`` created empty
    (exclusively), then ``source`` moved over it (False)."""
    try:
        os.link(source, target)
        return True
    except FileExistsError:
        raise
    except OSError:
        pass
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    os.replace(source, target)
    return False


# ---------------------------------------------------------------- the files a free-form config names
def named_files(config: Any, folder=None) -> dict[str, str] | None:
    """The content digest of every file a free-form config names: each text in it that is the name of a
    regular file, read from ``folder`` (the config file's; relative names) and from the current directory,
    so that replacing a corpus or an index the config names is never answered from the cache.  None: a
    file it names cannot be read now (nothing is cached)."""
    texts: list[str] = []
    stack = [config]
    while stack and len(texts) < thresholds.MAX_CONFIG_TEXTS:
        item = stack.pop()
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    out: dict[str, str] = {}
    for text in texts:
        if not text or "\0" in text or len(text) > thresholds.CONFIG_FILE_NAME_MAX_CHARS:
            continue
        for base in ({Path(folder), Path.cwd()} if folder is not None else {Path.cwd()}):
            path = Path(text) if Path(text).is_absolute() else base / text
            try:
                if not path.is_file():
                    continue
                out[str(path.resolve())] = file_digest(path)
            except (InputError, OSError, ValueError):
                return None
    return out


# ---------------------------------------------------------------- the code of a function
_code_seen: "weakref.WeakKeyDictionary[Any, tuple[str, ...] | None]" = weakref.WeakKeyDictionary()
_code_lock = threading.Lock()


def code_identity(fn) -> list[str] | None:
    """The content digests of the files holding ``fn``'s code (the file of its function and of the
    module that defines it, through wrappers, partials, bound methods and callable objects); None
    when one cannot be found in a file (a built-in, code typed at a prompt).  Taken when this
    process first sees ``fn``: the code that runs is the code loaded, even if its file changes later."""
    try:
        with _code_lock:
            if fn in _code_seen:
                got = _code_seen[fn]
                return None if got is None else list(got)
    except TypeError:                  # not weakly referable or not hashable: not remembered
        pass
    files = code_files(fn)
    digests = None
    if files is not None:
        try:
            digests = tuple(sorted({file_digest(f) for f in files}))
        except (InputError, OSError):
            digests = None
    with contextlib.suppress(TypeError):
        with _code_lock:
            _code_seen[fn] = digests
    return None if digests is None else list(digests)
