"""Errors that reach users: each names the file, the line, the offending text and the fix."""
from __future__ import annotations

# Exit codes shared by every command (documented in the README).
EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_RUNTIME = 3


class TreckitError(Exception):
    """Base class of treckit's own errors."""

    exit_code = EXIT_RUNTIME


class InputError(TreckitError):
    """Bad input: a file that cannot be read as asked, with where and how to fix it."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 text: str | None = None, fix: str | None = None) -> None:
        self.path, self.line, self.text, self.fix, self.reason = path, line, text, fix, message
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        full = where + message
        if text is not None:
            shown = text if len(text) <= 200 else text[:200] + "..."
            full += f"\n  line: {shown!r}"
        if fix:
            full += f"\n  fix: {fix}"
        super().__init__(full)


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
