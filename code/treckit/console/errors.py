"""Errors that reach users: each names the file, the line, the offending text and the fix."""
from __future__ import annotations

import contextlib
import errno
import math
import re
from typing import Callable, Iterator, Sequence

from . import spelling

# Exit codes shared by every command (documented in the README: Exit codes).
EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_RUNTIME = 3
EXIT_INTERRUPTED = 130


SHOWN_CHARS = 200
"""At most this much of a line or value from a file is quoted in a message (a hostile file may hold a
line of megabytes)."""


def shown(text: str) -> str:
    """``text`` quoted for a message (its repr), cut to :data:`SHOWN_CHARS` characters."""
    return repr(text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "...")


def finite_number(value) -> bool:
    """Whether ``value`` is a number (an int or a float, not a bool) within a double's range, not NaN or infinite:
    what every setting and stored value that is a number must be."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:                    # an integer beyond a double's range
        return False


def shown_number(value) -> str:
    """A number for a message: as written, but an integer too long to quote by its size."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        try:
            digits = str(len(str(abs(value))))
        except ValueError:                   # beyond Python's own limit on converting integers to text
            digits = f"about {int(value.bit_length() * 0.30103) + 1}"
        return f"an integer of {digits} digits"
    return repr(value)


def listing(items: Sequence[str], most: int = 10) -> str:
    """``items`` joined by ", ", the first ``most`` of them, then "... and N more"."""
    shown_items = ", ".join(items[:most])
    return shown_items + (f" ... and {len(items) - most} more" if len(items) > most else "")


# A URL's user information (``scheme://user:password@``: everything between ``://`` and the last ``@`` of its
# authority), and a query parameter that carries a credential (a presigned URL's signature, a SAS token)
_URL_USERINFO = re.compile(r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*://)([^/?#\s'\"<>]*)@")
# ... and an address's without a scheme, as libraries quote it (``'user:password@host:port'``)
# (a host follows: a name, a dotted address, an address and port, or a bracketed one; never a bare number, as in a
# measure's ``{0:0,1:1}@10``)
_BARE_USERINFO = re.compile(r"(?<![\w/:@.%+-])([\w.%+-]+):([^\s'\"/@]*)@(?=[A-Za-z_\[]|\d+(?:\.\d+)+|\d+:\d)")
_SECRET_PARAMETER = re.compile(r"(?i)([?&;](?:[a-z0-9_.-]*(?:sig|signature|token|secret|password|passwd|pwd|credential|"
                               r"api[_-]?key|access[_-]?key|auth)[a-z0-9_.-]*|key|code)=)([^&;#\s'\"<>]+)")
HIDDEN = "***"


def _userinfo_hidden(m: re.Match) -> str:
    user, colon, _ = m.group(2).partition(":")
    return f"{m.group(1)}{user}:{HIDDEN}@" if colon else f"{m.group(1)}{HIDDEN}@"


def without_credentials(text: str) -> str:
    """``text`` with the credentials of every URL in it hidden: ``scheme://user:password@host`` becomes
    ``scheme://user:***@host`` (a user name alone, often a token, becomes ``***@``), and the value of a query
    parameter that carries one (``sig=``, ``X-Amz-Signature=``, ``token=``, ``key=`` ...) becomes ``***``.  Every
    message that may hold a URL goes through it: treckit's errors, warnings and notices, the names of inputs."""
    if "@" not in text and "=" not in text:
        return text
    text = _BARE_USERINFO.sub(lambda m: f"{m.group(1)}:{HIDDEN}@", _URL_USERINFO.sub(_userinfo_hidden, text))
    return _SECRET_PARAMETER.sub(lambda m: m.group(1) + HIDDEN, text)


class TreckitError(Exception):
    """Base class of treckit's own errors; what it says never shows a URL's credentials
    (:func:`without_credentials`)."""

    exit_code = EXIT_RUNTIME

    def __init__(self, message="", *args) -> None:
        super().__init__(without_credentials(message) if isinstance(message, str) else message, *args)


class InputError(TreckitError):
    """Bad input: a file that cannot be read as asked, with where and how to fix it.  The fix names
    options as the command that is running spells them (or as the Python API's keywords: :mod:`treckit.console.spelling`)."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 text: str | None = None, fix: str | None = None) -> None:
        fix = without_credentials(spelling.spell(fix)) if fix else fix
        path = without_credentials(str(path)) if path is not None else None
        message = without_credentials(message)
        if path is not None and holds_system_state(path):
            message, text = content_blanked(message, SYSTEM_STATE_WHY), None
        self.path, self.line, self.text, self.fix, self.reason = path, line, text, fix, message
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        full = where + message
        if text is not None:
            full += f"\n  line: {shown(text)}"
        if fix:
            full += f"\n  fix: {fix}"
        super().__init__(full)

    def without_content(self, why: str) -> "InputError":
        """The same error with nothing of the file's content in it (no line, quoted values blanked):
        for files that were not given as inputs, e.g. a run named by a config, whose content a
        message must never echo.  ``why`` says where the file was named."""
        return InputError(content_blanked(self.reason, why), path=self.path, line=self.line, fix=self.fix)


SYSTEM_STATE = ("/proc/", "/sys/")
# a why says no quote mark: a file named inside another hidden one is blanked twice, and an apostrophe would pair with
# one of the note's (and the note would say "system'…'s")
SYSTEM_STATE_WHY = "the file holds the state of the system, such as the environment of a process"


def holds_system_state(path: str) -> bool:
    """Whether ``path`` is a file of the kernel's (``/proc``, ``/sys``: a process's environment, its command line),
    whose content no message quotes, even of a file named as an input: a mistyped path must not print secrets."""
    import os
    try:
        return os.path.realpath(path).startswith(SYSTEM_STATE)
    except (OSError, ValueError):
        return False


# what a message quotes of a file: quoted values (Python reprs and JSON strings) and the first examples of
# counted cases ("(first: q01)"); digits and names outside them stay
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|(?<=\(first: )[^)]*(?=\))")


def content_blanked(message: str, why: str) -> str:
    """``message`` with what it quotes of a file blanked, and saying why (``why``: where the file was named)."""
    blanked = _QUOTED.sub(lambda m: "'…'" if m.group(0)[:1] in "'\"" else "…", message)
    note = f" (content not shown: {why})"
    return blanked if note in blanked else blanked + note       # blanked again in an outer block: said once


_hidden: list[str] = []         # why, for each content_hidden block running (files are read one at a time)


@contextlib.contextmanager
def content_hidden(why: str) -> Iterator[None]:
    """Errors raised inside the block echo none of the file's content (see :meth:`InputError.without_content`),
    and neither do the readers' notices said meanwhile (:func:`hidden_because`)."""
    _hidden.append(why)
    try:
        yield
    except InputError as exc:
        raise exc.without_content(why) from None
    finally:
        _hidden.pop()


def hidden_because() -> str | None:
    """Why the file being read is not to be quoted (inside :func:`content_hidden`), else None."""
    return _hidden[-1] if _hidden else None


def warning_without_content(warn: Callable[[str], None], why: str) -> Callable[[str], None]:
    """``warn`` for the warnings about a file that is not an input (see :func:`content_hidden`): what they
    quote of it is blanked."""
    def hidden(message: str) -> None:
        warn(content_blanked(message, why))
    return hidden


class Interrupted(TreckitError):
    """Ctrl-C (SIGINT): whatever was being written was discarded."""

    exit_code = EXIT_INTERRUPTED

    def __init__(self) -> None:
        super().__init__("interrupted; no output was left half-written")


class OutputClosed(TreckitError):
    """The reader of our standard output went away (``| head``): nothing more to say, and no error."""

    exit_code = EXIT_OK

    def __init__(self) -> None:
        super().__init__("")


# What each expected OS error means for a file, and how to fix it.  An expected OS error is the
# user's environment (a path, a permission, a full disk), reported like bad input: exit 2.
_OS_ERRORS = {
    errno.ENOENT: ("no such file or folder", "check the path (relative paths start from the current directory)"),
    errno.EACCES: ("permission denied", "check the permissions of the file and its folders, or choose another path"),
    errno.EPERM: ("operation not permitted", "check the permissions and attributes (chattr -i) of the file and its folder"),
    errno.EROFS: ("read-only file system", "write to a location on a writable file system"),
    errno.EISDIR: ("is a folder, not a file", "give the path of a file"),
    errno.ENOTDIR: ("a part of the path is a file, not a folder", "check the folders in the path"),
    errno.ENOSPC: ("no space left on the device", "free some space or write to another disk"),
    errno.EDQUOT: ("disk quota exceeded", "free some space or write to another disk"),
    errno.EFBIG: ("file too large for the file system", "write to another file system"),
    errno.ENAMETOOLONG: ("file name too long", "use a shorter name"),
    errno.ELOOP: ("too many levels of symbolic links", "check the symbolic links in the path"),
    errno.EEXIST: ("already exists", "remove it or choose another path"),
    errno.ETXTBSY: ("the file is busy (a running program)", "choose another path"),
    errno.EMFILE: ("too many open files", "raise the limit (ulimit -n)"),
    errno.ENXIO: ("no reader or device at this path", "open the other end of the pipe first, or give a regular file"),
    errno.EBADF: ("it is closed (the command was started without it: >&- or 2>&-)",
                  "give it somewhere to go: redirect it to a file, or to /dev/null to drop it"),
}


def os_error(exc: OSError, path: str | None = None, action: str = "read") -> TreckitError:
    """An OSError as a message naming the path (``path`` if given, else the one in the error).

    Expected kinds (permissions, missing paths, full or read-only disks ...) are InputErrors (exit 2);
    anything else (an I/O error of the device) is a runtime failure (exit 3), still naming the path.
    """
    name = path if path is not None else (exc.filename if exc.filename is not None else None)
    name = None if name is None else ("<stdin>" if str(name) == "-" else str(name))
    known = _OS_ERRORS.get(exc.errno) if exc.errno is not None else None
    if known is not None:
        reason, fix = known
        return InputError(f"cannot {action}: {reason}", path=name, fix=fix)
    detail = exc.strerror or str(exc) or type(exc).__name__
    err = TreckitError(f"{name + ': ' if name else ''}cannot {action}: {detail}")
    return err


class SkipCounter:
    """Counts lines skipped on request, by kind, so they can be reported rather than lost."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.examples: dict[str, str] = {}

    def add(self, kind: str, example: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        self.examples.setdefault(kind, example)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def report(self) -> str:
        return "; ".join(f"{n} {kind} (first: {self.examples[kind]})" for kind, n in sorted(self.counts.items()))
