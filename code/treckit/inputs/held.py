"""How much of its inputs a command may hold in memory: the budget its ``--memory-limit`` gives, set once for the
command's work (:meth:`treckit.engines.budget.MemoryLimit.governing`, the one parse of the option), and what that
budget bounds wherever inputs are read:

* what is held whole (:func:`admit`): a reader that keeps its input's data estimates it (the content's bytes times
  what its kind of reader holds per byte) and refuses, naming the file and the budget, an input that would not fit;
  content that is inflated as it is read (``.gz``) is counted as it comes, and refused as soon as it passes;
* the pieces the readers work on (:func:`piece`): a block of whole lines, an inflated piece, a part parsed beside
  others, each a share of the budget;
* the longest line (:func:`line_bound`), which a reader must hold whole.

A budget below :data:`~treckit.thresholds.MEMORY_LIMIT_MIN` is taken as that minimum for what it bounds (the tests
give budgets of a few bytes to cut runs into tiny blocks); without a budget (no ``--memory-limit``, or 0) inputs
are bounded only by the machine (:func:`~.limits.whole_read_limit`) and the fixed bounds of
:mod:`treckit.thresholds`.
"""
from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Iterator

from .. import thresholds
from ..console.errors import InputError

_BUDGET: ContextVar[int | None] = ContextVar("treckit_held_budget", default=None)
_SHARED: ContextVar[tuple[int, int] | None] = ContextVar("treckit_held_shared", default=None)     # (n, whole budget)


@contextlib.contextmanager
def holding(size: int | None) -> Iterator[None]:
    """While the block runs, inputs are read within the budget of ``size`` bytes (None: no budget)."""
    token = _BUDGET.set(None if size is None else max(size, thresholds.MEMORY_LIMIT_MIN))
    try:
        yield
    finally:
        _BUDGET.reset(token)


@contextlib.contextmanager
def shared(n: int) -> Iterator[None]:
    """While the block runs, each input read gets a ``n``-th of the budget (``n`` inputs held at once: fused runs)."""
    size = _BUDGET.get()
    token = _BUDGET.set(None if size is None else max(1, size // max(1, n)))
    whole = _SHARED.set(None if size is None else (n, size))
    try:
        yield
    finally:
        _BUDGET.reset(token)
        _SHARED.reset(whole)


def budget() -> int | None:
    """The budget in force, in bytes (a command's at least :data:`~treckit.thresholds.MEMORY_LIMIT_MIN`), or None."""
    return _BUDGET.get()


def piece(size: int) -> int:
    """A piece of work of nominally ``size`` bytes, cut to its share of the budget
    (:data:`~treckit.thresholds.HELD_PIECE_SHARE`)."""
    b = budget()
    return size if b is None else max(1, min(size, b // thresholds.HELD_PIECE_SHARE))


def line_bound() -> int:
    """The longest line an input may have: :data:`~treckit.thresholds.MAX_LINE_BYTES`, and within a budget its share
    of it (:data:`~treckit.thresholds.HELD_LINE_SHARE`: a line is held whole, and parsed, at several times its
    size)."""
    b = budget()
    return thresholds.MAX_LINE_BYTES if b is None else min(thresholds.MAX_LINE_BYTES, b // thresholds.HELD_LINE_SHARE)


def admit(name: str, content: int, per_byte: float, *, inflating: bool = False, doing: str = "read whole") -> None:
    """Refuse the input ``name`` when holding what is read of its ``content`` bytes (``per_byte`` bytes of memory
    for each) passes the budget.  ``inflating``: ``content`` is what a ``.gz`` has inflated to so far; ``doing``:
    what takes the memory, for the message."""
    b = budget()
    if b is None or content * per_byte <= b:
        return
    what = (f"its content (past {content:,} bytes inflated so far)" if inflating else f"its {content:,} bytes of content")
    shared_by = _SHARED.get()
    budget_of = (f"the budget of {b:,} bytes" if shared_by is None else
                 f"its share of the budget ({b:,} of {shared_by[1]:,} bytes, for {shared_by[0]} inputs held at once)")
    raise InputError(f"{what} would take about {int(content * per_byte):,} bytes of memory to {doing}, more than "
                     f"{budget_of} (--memory-limit)", path=name,
                     fix="give a larger --memory-limit (or --memory-limit 0: no limit); docs/engines.md lists what "
                         "each command reads in bounded memory")
