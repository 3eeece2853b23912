"""Progress for long work, on stderr and only when it is a terminal: a bar over a job's steps
(reading, ordering, writing), each step with its own spinner; a bar over bytes or things counted (queries asked)."""
from __future__ import annotations

import sys




class Steps:
    """``with Steps(["reading", "ordering", "writing"]) as steps: ...; steps.next()`` shows a bar of steps."""

    def __init__(self, names: list[str]):
        self.names, self.i, self._progress, self._task = names, 0, None, None

    def __enter__(self):
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                      TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                                      console=Console(stderr=True), transient=True)
            self._progress.start()
            self._task = self._progress.add_task(self.names[0], total=len(self.names))
        return self

    def next(self) -> None:
        self.i += 1
        if self._progress is not None:
            self._progress.update(self._task, advance=1,
                                  description=self.names[min(self.i, len(self.names) - 1)])

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.stop()
        return False


class Meter:
    """``with Meter("evaluating run", total_bytes) as m: ...; m.advance(n)``: a bar over bytes done (``counts``:
    over things counted, "12/50"), on stderr when it is a terminal (quiet otherwise); ``restart(description)``
    starts it over.  ``advance`` may be called from several threads."""

    def __init__(self, description: str, total: int, counts: bool = False):
        self.description, self.total, self.counts, self._progress, self._task = description, total, counts, None, None

    def __enter__(self):
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (BarColumn, DownloadColumn, MofNCompleteColumn, Progress, SpinnerColumn,
                                       TextColumn, TimeRemainingColumn)
            done = MofNCompleteColumn() if self.counts else DownloadColumn()
            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), done,
                                      TimeRemainingColumn(), console=Console(stderr=True), transient=True)
            self._progress.start()
            self._task = self._progress.add_task(self.description, total=self.total)
        return self

    def advance(self, n: int) -> None:
        if self._progress is not None:
            self._progress.update(self._task, advance=n)

    def restart(self, description: str, total: int | None = None) -> None:
        """Start over (another pass), over ``total`` units (default: the same total)."""
        if total is not None:
            self.total = total
        if self._progress is not None:
            self._progress.reset(self._task, description=description, total=self.total)

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.stop()
        return False
