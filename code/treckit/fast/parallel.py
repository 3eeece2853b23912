"""Work spread over this machine's cores by threads (for calls that release the GIL: Arrow, numpy,
file reads).  Slice sizes are named in :mod:`treckit.thresholds`; final results never depend on them."""
from __future__ import annotations

import os
from collections import deque
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def pieces(n: int, size: int) -> list[range]:
    """``range(n)`` cut into consecutive ranges of ``size`` (the last one shorter), to work on side by side."""
    size = max(1, size)
    return [range(a, min(n, a + size)) for a in range(0, n, size)]


def numbers(col):
    """A numeric Arrow column as one numpy array: a view of a single chunk, else the
    chunks copied side by side into one array (the copy of a long run's scores costs mostly page
    faults on fresh memory, which the cores take in parallel)."""
    import numpy as np
    import pyarrow as pa

    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    plain = pa.types.is_integer(col.type) or pa.types.is_floating(col.type)
    if len(chunks) == 1 or col.null_count or not plain:
        return col.to_numpy(zero_copy_only=False)      # Arrow's own conversion (a null becomes NaN)
    bounds = np.cumsum([0] + [len(c) for c in chunks])
    out = np.empty(int(bounds[-1]), col.type.to_pandas_dtype())

    def copy(i: int) -> None:
        out[bounds[i]:bounds[i + 1]] = chunks[i].to_numpy()

    for_each(copy, list(range(len(chunks))))
    return out


def for_each(fn: Callable[[T], object], items: Iterable[T]) -> None:
    """``fn`` of each item for its effect, side by side (:func:`ordered_map`); the first error is raised."""
    for _ in ordered_map(fn, items):
        pass


def ordered_map(fn: Callable[[T], R], items: Iterable[T], *, workers: int | None = None) -> Iterator[R]:
    """``fn`` of each item, yielded in the order of ``items``, computed on up to ``workers`` threads
    (default: one per usable core).  At most ``2 * workers`` results are in flight or waiting, so
    memory stays bounded however many items there are.  An exception is raised where its item's
    result would have been yielded; when the caller stops early (an error, or it breaks out), the
    items not yet started are dropped and the running ones are waited for."""
    workers = workers or usable_cores()
    if isinstance(items, (list, tuple)) and len(items) <= 1:
        workers = 1                             # no threads for one item
    items = iter(items)
    if workers == 1:
        yield from map(fn, items)
        return
    from concurrent.futures import ThreadPoolExecutor

    pending: deque = deque()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        try:
            for item in items:
                pending.append(pool.submit(fn, item))
                if len(pending) >= 2 * workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for f in pending:
                f.cancel()
