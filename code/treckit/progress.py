"""Progress for long work: a spinner on stderr when it is a terminal, nothing otherwise."""
from __future__ import annotations

import contextlib
import sys


@contextlib.contextmanager
def status(message: str):
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console
    with Console(stderr=True).status(message):
        yield
