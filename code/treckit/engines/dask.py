"""The Dask engine (``--engine dask``, ``evaluate(..., engine="dask")``): runs evaluated on a Dask cluster,
with the bytes the local engine prints.

* **Many runs**: one task per run.  The worker reads the run itself (a local path or any fsspec URL: it
  reads its own input), evaluates it with :func:`treckit.engines.memory.evaluate_requests`, and sends back the
  per-query values; the client prints them with the local engine's code, in the order the runs were given.
* **One huge run** (a TREC run of at least :data:`treckit.thresholds.DASK_PARTITION_MIN_BYTES`): partitioned
  by query across the workers (:mod:`treckit.engines.dask_partition`).

On a cluster of your own (``--scheduler``), the workers evaluate about twice as fast when their malloc keeps
freed memory, as treckit's own processes do (a LocalCluster started by treckit is set up so): start them with
``MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824 MALLOC_TOP_PAD_=67108864`` in their
environment (Dask's ``distributed.nanny.pre-spawn-environ`` for workers started by a nanny).  The paths given
must be readable by the workers: URLs, or paths on a file system they share (relative paths are resolved in
each worker's own working directory).

Dask is an optional extra (treckit's ``dask`` extra): nothing here is imported by the local engine,
and ``distributed`` is imported only when a job starts.

What the workers say (warnings about a run, ``treckit: ...`` lines) is captured and said again on the client,
run by run, in order; an error about the input is re-raised on the client whole (file, line, text, fix) and
exits 2 as in the local engine.  A worker lost mid-job: Dask runs its tasks again on the other workers (up to
``distributed.scheduler.allowed-failures`` times); past that the job fails (exit 3) naming the run, and
nothing is printed -- never a partial result shown as complete.
"""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from dataclasses import replace
from typing import Any, Callable, Iterator, Sequence

from . import dask_partition
from ..console.errors import InputError, TreckitError, without_credentials
from ..console.messages import warn_python
from ..console.process import give_memory_back_when_freed, keep_freed_memory
from ..fast.parallel import usable_cores
from ..console import spelling
from ..console.spelling import spell
from ..dependencies import install_hint
from ..inputs.objects import as_run
from ..inputs.reading import read_with
from ..inputs.sources import forget_stream, is_stdio
from ..inputs.urls import is_url
from ..measures import subtopics
from .dask_tasks import captured, job_key, results_in_order
from .memory import evaluate_requests

ENGINES = ("local", "dask")
SCHEDULER_TIMEOUT = "10s"          # how long --scheduler ADDRESS may take to answer
WORKER_WAIT_SECONDS = 60           # how long a job waits for the first worker of a scheduler that has none


def check_engine(engine: str, scheduler: str | None = None) -> str:
    """``engine`` checked (before any file is read): local or dask; ``--scheduler`` only with dask."""
    if engine not in ENGINES:
        raise InputError(f"--engine {engine}: not one of {', '.join(ENGINES)}", fix=" or ".join(f"--engine {e}" for e in ENGINES))
    if scheduler is not None and engine != "dask":
        raise InputError("--scheduler (a Dask client) is for the Dask engine", fix="add --engine dask, or leave out --scheduler")
    if isinstance(scheduler, str) and not scheduler.strip():       # not taken as "start a local cluster"
        raise InputError("--scheduler is empty", fix="give the scheduler's address (tcp://host:8786), or leave out "
                                                     "--scheduler to start a local cluster")
    if engine == "dask":
        require_dask()
    return engine


def require_dask():
    """The ``distributed`` module, or the error that says how to install it (exit 2)."""
    try:
        import distributed
    except ImportError:
        raise InputError("--engine dask needs Dask (dask.distributed), which is not installed",
                         fix=f"{install_hint('dask')}, or leave out --engine dask (the local engine needs nothing more)") from None
    return distributed


@contextlib.contextmanager
def connect(scheduler: str | None = None, client=None) -> Iterator[Any]:
    """The Dask client of a job: ``client`` as given (left open), one connected to ``scheduler``, or a
    ``LocalCluster`` of worker processes started for the job -- closed afterwards in every case (an
    error, Ctrl-C), so that no worker process outlives the command."""
    if client is not None:
        yield client
        return
    distributed = require_dask()
    if scheduler:
        try:
            c = distributed.Client(scheduler, timeout=SCHEDULER_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"cannot reach the Dask scheduler at {scheduler} ({exc})",
                             fix="check the address (e.g. tcp://host:8786) and that the scheduler runs, or leave out "
                                 "--scheduler to start a local cluster") from None
        try:
            wait_for_a_worker(c, scheduler)
            yield c
        finally:
            c.close()
        return
    # the scheduler's HTTP endpoint on a free local port: the default (8787) may be taken by another cluster
    with distributed.LocalCluster(n_workers=usable_cores(), threads_per_worker=1, processes=True,
                                  dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster) as c:
        prepare_own_workers(c)
        yield c


def prepare_own_workers(client) -> None:
    """The workers of a cluster started for treckit set up as treckit's own processes (a cluster given with
    --scheduler is left as its owners set it up)."""
    client.run(_as_treckit_process)


def _as_treckit_process() -> None:
    """In a worker: glibc's malloc keeps freed memory as in the command's own process
    (:func:`treckit.console.process.keep_freed_memory`: Dask's workers trim eagerly, and evaluating a run there then
    spends half its time in page faults); and Ctrl-C, which reaches every process of the terminal's group, is
    left to the command, which closes its workers itself -- without a traceback from each."""
    import signal
    import threading

    keep_freed_memory()
    give_memory_back_when_freed()
    if threading.current_thread() is threading.main_thread():      # the worker's event loop: its main thread
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _same(x):
    return x


def shared(client, value):
    """``value`` (the qrels) as a future every task can take: made by a task rather than scattered, so that
    Dask can make it again when the workers holding it are lost (scattered data cannot be recovered)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Large object.*")      # it is meant to be sent once
        return client.submit(_same, value, key=job_key("qrels"), pure=False)


# ---------------------------------------------------------------- many runs: one task per run
def slim(res):
    """An EvalResult as the client prints it: its per-query values and summary, without the ranking (its
    per-document arrays stay on the worker)."""
    return replace(res, view=None)


def evaluate_path(qrels, path, requests, options, reading, qrels_source, warn, api: bool = False,
                  run=None) -> tuple[str, Any]:
    """On a worker: read one run as the command reads it (``api``: as :func:`treckit.evaluate` reads its
    ``run``, tables and objects included), evaluate it; (run tag, EvalResult).  ``run``: already read
    (stdin or a pipe, which only the client can read)."""
    if run is None:
        run = read_run(path, reading, qrels_source, warn, api)
    if isinstance(path, str):
        forget_stream(path)
    return run.tag, slim(evaluate_requests(qrels, run, requests, options, source=str(path) if not api else "run", warn=warn))


def read_run(path, reading, qrels_source, warn, api: bool):
    if api:
        return as_run(path, reading, qrels_source=qrels_source, warn=warn)
    return read_with(reading, path, lean=True, warn=warn, qrels_source=qrels_source).run


def wait_for_a_worker(c, scheduler: str) -> None:
    """A scheduler without workers would hold the job forever: say so, wait a while, then fail clearly."""
    if c.scheduler_info().get("workers"):
        return
    print(f"treckit: the Dask scheduler at {without_credentials(scheduler)} has no worker yet; waiting up to "
          f"{WORKER_WAIT_SECONDS} s", file=sys.stderr)
    try:
        c.wait_for_workers(1, timeout=WORKER_WAIT_SECONDS)
    except (TimeoutError, OSError):
        raise TreckitError(f"no worker joined the Dask scheduler at {scheduler} within {WORKER_WAIT_SECONDS} s; "
                           "nothing was evaluated\n  fix: start workers (dask worker "
                           + spell(f"{scheduler}), or leave out --scheduler to start a local cluster")) from None


def for_workers(path, remote: bool):
    """The name a worker opens the run ``path`` by: on a cluster of one's own (``--scheduler``, a client given)
    a relative local path is made absolute, since its workers resolve paths from their own directory; the
    workers of the LocalCluster started for the job share this process's directory."""
    if remote and isinstance(path, (str, os.PathLike)) and not is_url(str(path)) and not readable_here_only(path):
        return os.path.abspath(path)
    return path


def check_shared_paths(paths, scheduler: str | None) -> None:
    """With ``--scheduler``, the run files are opened by workers that may run elsewhere, from another directory:
    a relative local path is refused with the fix (an absolute path on a file system the workers share, or a URL)."""
    if not scheduler:
        return
    for p in paths:
        if p is not None and not is_stdio(p) and not is_url(str(p)) and not os.path.isabs(str(p)):
            raise InputError(f"{p}: a relative path, which the workers of {scheduler} would look up from their own "
                             "directory", path=str(p),
                             fix=f"give {os.path.abspath(str(p))} (on a file system the workers share) or a URL "
                                 "(s3://, gs://, http(s)://)")


def readable_here_only(path) -> bool:
    """stdin (``-``) or a pipe (``<(cmd)``, a FIFO): only this process can read it, so it is read here and the
    run sent to a worker."""
    import stat

    if is_stdio(path):
        return True
    if not isinstance(path, (str, os.PathLike)) or is_url(path):
        return False
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def evaluate_runs(qrels, paths: Sequence[Any], requests, options, reading, *, qrels_source=None,
                  scheduler: str | None = None, client=None, warn=None, api: bool = False) -> list[tuple[Any, str, Any]]:
    """``[(path, tag, EvalResult)]`` for each run in ``paths``, in order, as the local engine's loop
    gives them: each run one task, a huge TREC run partitioned by query (:mod:`.dask_partition`).
    Every task is submitted before the first result is awaited; results (and what the workers said)
    are taken in the runs' order, so the first bad run in that order is the one reported."""
    with connect(scheduler, client) as c:
        q = shared(c, qrels)
        jobs = []
        remote = scheduler is not None or client is not None
        for i, shown in enumerate(paths):
            path = for_workers(shown, remote)
            # the diversity measures number subtopics over the whole qrels: such a run is one task, never partitioned
            part = dask_partition.plan(path, reading, options) if not subtopics.asked(requests) else None
            if part is not None:
                jobs.append(dask_partition.submit(c, part, q, qrels, requests, options, warn, key=job_key(f"run-{i}"),
                                                  reading=reading))
            else:
                here = read_run(path, reading, qrels_source, warn, api) if readable_here_only(path) else None
                jobs.append(c.submit(captured, evaluate_path, q, path, requests, options, reading, qrels_source,
                                     warn, api, here, speaking=spelling.current(), key=job_key(f"run-{i}"),
                                     pure=False))
        out = []
        try:
            for path, job in zip(paths, jobs):      # each run under the name it was given
                if isinstance(job, dask_partition.Job):
                    tag, res = dask_partition.collect(c, job, qrels, requests, options, warn)
                else:
                    tag, res = results_in_order(c, [job], [str(path)])[0]
                out.append((path, tag, res))
        finally:
            c.cancel([f for j in jobs for f in (j.futures if isinstance(j, dask_partition.Job) else [j])])
        return out


def evaluate_api(qrels, run, requests, options, reading, *, qrels_source=None, scheduler=None, client=None):
    """:func:`treckit.evaluate` on the Dask engine: the run (a path, URL, table file or object) read and evaluated
    on a worker, a huge TREC run file partitioned by query; its EvalResult."""
    if not isinstance(qrels_source, (str, os.PathLike)):       # only a file's name matters to the reader
        qrels_source = None
    return evaluate_runs(qrels, [run], requests, options, reading, qrels_source=qrels_source, scheduler=scheduler,
                         client=client, warn=warn_python, api=True)[0][2]


# ---------------------------------------------------------------- compare: one task per system
@contextlib.contextmanager
def compare_scorer(scheduler: str | None = None, client=None) -> Iterator[Callable]:
    """The scorer of :func:`treckit.compare.compare.compare` on a Dask cluster: each system given as a run
    file is read (by its own loader: the reading rules of the command) and scored on a worker, one task per
    system; a system run from its config (a retrieval system) is run here, on the client."""
    with connect(scheduler, client) as c:
        def score_all(qrels, systems, score_system):
            q = shared(c, qrels)
            futures = {i: c.submit(captured, score_system, q, s, speaking=spelling.current(),
                                   key=job_key(f"system-{i}"), pure=False)
                       for i, s in enumerate(systems) if s.run is None and s.run_path is not None}
            try:
                for i, s in enumerate(systems):
                    if i in futures:
                        yield results_in_order(c, [futures[i]], [s.run_path])[0]
                    else:
                        yield score_system(qrels, s)
            finally:
                c.cancel(list(futures.values()))
        yield score_all


# ---------------------------------------------------------------- one call on a worker
def on_cluster(fn: Callable, *args, name: str = "task", scheduler: str | None = None, client=None):
    """``fn(*args)`` run on a worker of the cluster (what it says and raises, said and raised here)."""
    with connect(scheduler, client) as c:
        return results_in_order(c, [c.submit(captured, fn, *args, speaking=spelling.current(), key=job_key(name),
                                             pure=False)], [name])[0]
