"""Writing outputs safely: every output is written to a temporary file beside its target and renamed into place
only when everything succeeded, so an error or Ctrl-C leaves the old file untouched and no half-written one.

Several outputs of one command form a group that is committed together (all of them or none:
:func:`outputs`).  New files get the usual permissions (the umask), an existing file keeps its mode, a
symbolic link keeps pointing where it pointed (its target is rewritten), and devices and pipes
(``/dev/null``, ``/dev/stdout``) are written directly.  An output that is one of the command's inputs
(same file, through any symbolic or hard link) is refused.
"""
from __future__ import annotations

import contextlib
import errno
import gzip
import io
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Iterable, Iterator

from .. import thresholds
from ..console.errors import InputError, os_error
from ..console.process import on_hard_exit
from ..inputs.sources import PathLike, is_stdio


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _stat_or_none(path: PathLike) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _check_output_path(out: PathLike, st: os.stat_result | None) -> None:
    """What can be told before any work: the output is a folder, or a part of its path is a file."""
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise InputError("cannot write: is a folder, not a file", path=str(out), fix="give the path of a file")
    if st is None:
        folder = Path(os.path.realpath(out)).parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if not folder.is_dir():
            raise InputError("cannot write: a part of the path is a file, not a folder", path=str(out),
                             fix="check the folders in the path")


def refuse_overwriting_inputs(inputs: Iterable[PathLike | None], outputs: Iterable[PathLike | None]) -> None:
    """An output that is one of the inputs (the same file through any path, symbolic or hard link),
    or two outputs that are the same file, are refused before anything is read or written; so are
    outputs that are folders or lie below a file."""
    ins = [(p, st) for p in inputs if p is not None and not is_stdio(p) and (st := _stat_or_none(p)) is not None]
    seen: list[tuple[PathLike, os.stat_result | None, str]] = []
    for out in outputs:
        if out is None or is_stdio(out):
            continue
        st = _stat_or_none(out)
        _check_output_path(out, st)
        if st is not None and stat.S_ISREG(st.st_mode):
            for p, ist in ins:
                if _same_file(st, ist):
                    same = "" if os.path.abspath(p) == os.path.abspath(out) else f" (the same file as the input {p})"
                    raise InputError(f"the output would overwrite an input{same}", path=str(out),
                                     fix="write the output to another path")
        real = os.path.realpath(out)
        for other, ost, oreal in seen:
            if real == oreal or (st is not None and ost is not None and stat.S_ISREG(st.st_mode) and _same_file(st, ost)):
                raise InputError(f"two outputs are the same file ({other} and {out})", path=str(out),
                                 fix="give each output its own path")
        seen.append((out, st, real))


def derived_output(input: PathLike, suffix: str) -> str:
    """The default output for an input: ``-`` (stdout) for stdin, else the input's path without its
    compression and format extensions plus ``suffix`` (``preds.jsonl`` -> ``preds_trec``,
    ``x.trec.gz`` -> ``x_trec``), in the input's folder."""
    if is_stdio(input):
        return "-"
    p = Path(input)
    name = p.name
    for ext in (".gz",):
        if name.endswith(ext) and len(name) > len(ext):
            name = name[: -len(ext)]
    stem = Path(name).stem or name
    return str(p.with_name(stem + suffix))


class _Staged:
    """One output being written: ``tmp`` until the group commits, then ``target``."""

    def __init__(self, path: PathLike):
        self.path = str(path)
        st = _stat_or_none(path)                   # follows symbolic links
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise InputError("cannot write: is a folder, not a file", path=self.path, fix="give the path of a file")
        # devices and pipes (/dev/null, /dev/stdout, a FIFO) cannot be renamed over: written directly at commit
        self.direct = st is not None and not stat.S_ISREG(st.st_mode)
        self.existing = st if st is not None and not self.direct else None
        self.target = Path(self.path) if self.direct else Path(os.path.realpath(self.path))
        folder = self.target.parent
        try:
            if self.direct:
                fd, self.tmp = tempfile.mkstemp(prefix="treckit-", suffix=".tmp")
            else:
                folder.mkdir(parents=True, exist_ok=True)
                fd, self.tmp = self._create_beside(folder)
            with os.fdopen(fd, "wb"):
                pass
        except OSError as exc:
            raise os_error(exc, self.path, "write") from None

    def _create_beside(self, folder: Path) -> tuple[int, str]:
        """A new temporary file next to the target, created with mode 0666 so the umask applies
        (mkstemp's 0600 would make every output private); an existing target's mode is kept."""
        import secrets

        for _ in range(100):
            tmp = str(folder / f".{self.target.name}.{secrets.token_hex(4)}.tmp")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
            except FileExistsError:
                continue
            if self.existing is not None:
                with contextlib.suppress(OSError):     # keep the owner where allowed (root), then the mode
                    os.fchown(fd, self.existing.st_uid, self.existing.st_gid)
                os.fchmod(fd, stat.S_IMODE(self.existing.st_mode))
            return fd, tmp
        raise FileExistsError(errno.EEXIST, "no free temporary name", str(folder))

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.tmp)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait until the block is done (a group's renames are all made or none)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class OutputGroup:
    """Outputs written together: each is staged in a temporary file; :meth:`commit` renames them all
    into place, or, if one rename fails, puts the ones already renamed back as they were."""

    def __init__(self) -> None:
        self.staged: list[_Staged] = []

    def stage(self, path: PathLike) -> str:
        real = os.path.realpath(path)
        if any(os.path.realpath(s.path) == real for s in self.staged):
            raise InputError("two outputs are the same file", path=str(path), fix="give each output its own path")
        s = _Staged(path)
        self.staged.append(s)
        return s.tmp

    def discard(self) -> None:
        for s in self.staged:
            s.discard()
        self.staged = []

    def commit(self) -> None:
        with _signals_deferred():
            done: list[tuple[_Staged, str | None]] = []
            current = None
            try:
                for current in (s for s in self.staged if not s.direct):
                    backup = None
                    if current.existing is not None:        # a hard link to the old content, to roll back to
                        backup = f"{current.tmp}.old"
                        try:
                            os.link(current.target, backup)
                        except OSError:
                            backup = None
                    os.replace(current.tmp, current.target)
                    done.append((current, backup))
                for current in (s for s in self.staged if s.direct):
                    with open(current.tmp, "rb") as src, open(current.target, "wb") as dst:
                        shutil.copyfileobj(src, dst, thresholds.COPY_BLOCK_BYTES)
            except OSError as exc:
                for s, backup in reversed(done):
                    with contextlib.suppress(OSError):
                        if backup is not None:
                            os.replace(backup, s.target)
                        else:
                            os.unlink(s.target)
                self.discard()
                raise os_error(exc, current.path if current else None, "write") from None
            finally:
                for s, backup in done:
                    if backup is not None:
                        with contextlib.suppress(OSError):
                            os.unlink(backup)
                for s in self.staged:
                    if s.direct:
                        s.discard()
            self.staged = []


_active_groups: list[OutputGroup] = []


def _discard_every_group() -> None:
    """Every staged output removed: the process is ending now (a second Ctrl-C), and none is committed."""
    for group in list(_active_groups):
        group.discard()


on_hard_exit(_discard_every_group)


@contextlib.contextmanager
def outputs(*paths: PathLike | None, inputs: Iterable[PathLike | None] = ()) -> Iterator[OutputGroup]:
    """A command's outputs as one transaction::

        with outputs(out_json, out_csv, inputs=[qrels, *runs]):
            write_json(...)      # atomic_output / atomic_path inside the block join the group
            write_csv(...)

    Refuses outputs that are inputs (:func:`refuse_overwriting_inputs`); on success every output is
    renamed into place together, on any error or Ctrl-C none is (the old files stay as they were).
    """
    refuse_overwriting_inputs(inputs, paths)
    group = OutputGroup()
    _active_groups.append(group)
    try:
        yield group
    except BaseException:
        group.discard()
        raise
    finally:
        _active_groups.remove(group)
    group.commit()


@contextlib.contextmanager
def _staged_path(path: PathLike) -> Iterator[str]:
    if _active_groups:
        yield _active_groups[-1].stage(path)
        return
    with outputs(path) as group:
        yield group.stage(path)


def _write_error(exc: OSError, path: PathLike, tmp: str) -> Exception:
    """An OSError while writing a staged file: named after the output, not the temporary file."""
    if exc.filename is not None and os.path.abspath(str(exc.filename)) != os.path.abspath(tmp):
        return exc                          # an error about another file (an input read meanwhile)
    if exc.errno is None:                   # Arrow's native writers: the message is all there is
        return InputError(f"cannot write: {exc}", path=str(path), fix="check the free space and permissions")
    return os_error(exc, str(path), "write")


@contextlib.contextmanager
def atomic_path(path: PathLike) -> Iterator[str]:
    """A temp path beside ``path`` for a native writer; renamed into place only on success
    (with the other outputs of the enclosing :func:`outputs` group, if any)."""
    with _staged_path(path) as tmp:
        try:
            yield tmp
        except OSError as exc:
            err = _write_error(exc, path, tmp)
            if err is exc:
                raise
            raise err from None


@contextlib.contextmanager
def atomic_output(path: PathLike, mode: str = "w") -> Iterator[IO]:
    """Write to a temp file beside ``path`` and rename it into place only on success.

    ``-`` writes to stdout.  A path ending in ``.gz`` is gzip-compressed.  A failure
    (an exception inside the block) leaves no file behind and the old one untouched.
    """
    if is_stdio(path):
        yield sys.stdout.buffer if "b" in mode else sys.stdout
        sys.stdout.flush()
        return
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as raw:
            sink: IO = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if str(path).endswith(".gz") else raw
            if "b" in mode:
                yield sink
            else:
                text = io.TextIOWrapper(sink, encoding="utf-8", newline="\n")
                yield text
                text.flush()
                text.detach()
            if sink is not raw:
                sink.close()
