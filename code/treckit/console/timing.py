"""Timed calls whose wall time is the call's own: Python's cyclic garbage collector kept out of them.

A collection falls on whatever allocates when one is due.  A full one walks every object the process tracks
(60 ms with pandas and a BM25 index loaded), so a system that allocates (a reranker building records per
candidate) gets, now and then, a stall inside its timed call that is not its cost and that sets the mean of a
few hundred calls by itself.  So each timed call runs inside :func:`quiet_collector`:

* before the call, the young generations are collected (where everything earlier calls left lies: a
  call runs with the collector off, so nothing it made was promoted while it ran); a full collection here
  would be the very stall;
* during the call the collector is off;
* after it, the collector is on again, so what the call left (its reference cycles) is collected between
  calls, untimed, and memory does not grow over a pass of many calls.

Calls timed on several threads at once share one quiet spell: the collector is off from the first call in
to the last call out, and on again in every gap between them.
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

YOUNG_GENERATIONS = 1        # gc.collect(1): generations 0 and 1

_lock = threading.Lock()
_inside = 0                  # timed calls running now
_was_enabled = False         # whether the collector was on when the first of them came in


@contextmanager
def quiet_collector() -> Iterator[None]:
    """The block (one timed call) with the collector quiet: collected before, off during, on again after
    (when it was on before the first of the calls running at once)."""
    global _inside, _was_enabled
    with _lock:
        if _inside == 0:
            _was_enabled = gc.isenabled()
            gc.collect(YOUNG_GENERATIONS)
            gc.disable()
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _was_enabled:
                gc.enable()
