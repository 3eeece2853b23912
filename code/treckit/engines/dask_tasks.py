"""A task of the Dask engine on a worker and its outcome on the client: what the task said (stderr, warnings) said
again, its error raised again whole, and a failure of the cluster told apart from one of the input.  Shared by
:mod:`.dask` (a run per task) and :mod:`.dask_partition` (a huge run partitioned by query)."""
from __future__ import annotations

import contextlib
import io
import sys
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..console import spelling
from ..console.errors import InputError, TreckitError


@dataclass
class Outcome:
    """What a task sends back: its value, or the error it raised (as fields, re-raised whole on the
    client), and what it said on stderr and through :mod:`warnings` meanwhile."""

    value: Any = None
    stderr: str = ""
    warned: list = field(default_factory=list)       # (message, category)
    error: tuple | None = None                        # ("input", reason, path, line, text, fix) | ("runtime", message, code)


def captured(fn: Callable, *args, speaking=None, **kwargs) -> Outcome:
    """Run ``fn`` on a worker, its stderr and warnings captured (a worker runs one task at a time:
    threads_per_worker=1 for the clusters started here), its messages worded for the command that submitted
    it (``speaking``: :func:`treckit.console.spelling.current` on the client)."""
    err = io.StringIO()
    out = Outcome()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stderr(err), \
            spelling.running(speaking or spelling.current()):
        warnings.simplefilter("always")
        try:
            out.value = fn(*args, **kwargs)
        except InputError as exc:
            out.error = ("input", exc.reason, exc.path, exc.line, exc.text, exc.fix)
        except TreckitError as exc:
            out.error = ("runtime", str(exc), exc.exit_code)
    out.stderr = err.getvalue()
    out.warned = [(str(w.message), w.category) for w in caught]
    return out


def unwrap(outcome: Outcome) -> Any:
    """On the client: say again what the task said, then return its value or raise its error."""
    if outcome.stderr:
        sys.stderr.write(outcome.stderr)
        sys.stderr.flush()
    for message, category in outcome.warned:
        warnings.warn(message, category, stacklevel=3)
    if outcome.error is not None:
        kind, *rest = outcome.error
        if kind == "input":
            reason, path, line, text, fix = rest
            raise InputError(reason, path=path, line=line, text=text, fix=fix)
        message, code = rest
        err = TreckitError(message)
        err.exit_code = code
        raise err
    return outcome.value


def job_key(what: str) -> str:
    """A task key naming the job's step (``treckit-run-3-<id>``): readable in Dask's dashboard and logs."""
    return f"treckit-{what}-{uuid.uuid4().hex[:12]}"


def results_in_order(client, futures: Sequence, names: Sequence[str]) -> list:
    """Each future's value in the order given (the first failing one, in that order, raises), and a
    lost-worker or cluster failure as a clear error (exit 3) -- the remaining tasks cancelled."""
    try:
        return [unwrap(f.result()) for f in futures]
    except BaseException as exc:
        client.cancel(list(futures))
        if isinstance(exc, TreckitError):
            raise
        failure = cluster_failure(exc, names, futures)
        if failure is None:
            raise
        raise failure from None


def cluster_failure(exc: BaseException, names: Sequence[str], futures: Sequence) -> TreckitError | None:
    """The error to show for a failure of the cluster rather than of the input (None: not one)."""
    from distributed import KilledWorker
    from distributed.comm.core import CommClosedError

    try:
        from distributed.client import FutureCancelledError
    except ImportError:                                    # older distributed: asyncio's CancelledError
        from asyncio import CancelledError as FutureCancelledError
    if isinstance(exc, KilledWorker):
        key = str(getattr(exc, "task", "") or (exc.args[0] if exc.args else ""))
        which = next((n for n, f in zip(names, futures) if f.key == key), key)
        return TreckitError(f"Dask engine: the workers running {which} died, again after Dask's retries "
                            "(distributed.scheduler.allowed-failures); the job was stopped and no result was "
                            "printed: check the workers' memory and logs, then run again")
    if isinstance(exc, (FutureCancelledError, CommClosedError, OSError, TimeoutError)):
        return TreckitError(f"Dask engine: the cluster failed during the job ({type(exc).__name__}: {exc}); the job "
                            "was stopped and no result was printed: check the scheduler and workers, then run again")
    return None
