"""Evaluation workers: each evaluation runs in a worker process of its own, so that

* the server process only reads bodies, routes and keeps the metrics: ``/v1/health`` and ``/metrics``
  answer however many evaluations run;
* at most ``evaluation_workers`` evaluations run at once, and at most ``max_waiting_requests`` requests
  wait for one (more are answered 503 with ``Retry-After``): memory is bounded by the workers' count
  times what one body costs (:mod:`.evaluator`);
* an evaluation past ``request_timeout_s``, or whose client went away, or running when the server shuts
  down, really stops: its worker is killed (with its temporary files) and a fresh one started.  A
  thread could only be abandoned, still computing.

A worker is a Python process running :func:`serve` on a connection (file descriptor FD): it reads the
settings, then requests (kind, params, body), and answers (status, payload, gauges, retire) each.
"""
from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import TOKEN_ENV
from .. import thresholds
from ..console.errors import InputError
from ..console.process import give_back_freed_memory, give_memory_back_when_freed, raised_at
from .evaluator import Evaluator, ServerSettings
import treckit

# the worker's program: the current directory is not searched for modules (a treckit.py or pydantic.py lying where
# the server was started is not imported)
WORKER_MAIN = "import sys; sys.path.pop(0); from treckit.service.workers import serve; serve(int(sys.argv[1]))"
WORKER_TMP_PREFIX = "treckit-worker-"   # each worker's temporary directory, removed with it
STARTUP_TIMEOUT_S = 120         # importing the library and loading the system (its index) may take a while
POLL_S = 0.02                   # how often a waiting request looks for a free worker
TERM_GRACE_S = 5                # a stopped worker still there after this long is killed (SIGKILL)


class WorkerFailed(Exception):
    """A worker that stopped without an answer (killed, out of memory, crashed)."""


class Worker:
    """One worker process and the connection to it (the server's side)."""

    def __init__(self, settings_json: str):
        from multiprocessing import Pipe
        ours, theirs = Pipe()
        self.tmp = Path(tempfile.mkdtemp(prefix=WORKER_TMP_PREFIX))
        package_root = str(Path(treckit.__file__).resolve().parents[1])      # the same treckit as the server's
        env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}        # user code runs in a worker: the
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)   # token is not
        env["TMPDIR"] = str(self.tmp)                                        # in its environment
        try:
            self.proc = subprocess.Popen([sys.executable, "-c", WORKER_MAIN, str(theirs.fileno())],
                                         pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         env=env)
        finally:
            theirs.close()
        self.conn = ours
        self.conn.send_bytes(settings_json.encode())

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT_S) -> None:
        """Until the worker has loaded the settings' system; its start-up error as an InputError."""
        try:
            if not self.conn.poll(timeout):
                raise WorkerFailed(f"an evaluation worker did not start in {timeout:g} s")
            said = _received(self.conn)
        except (EOFError, OSError):
            raise WorkerFailed("an evaluation worker stopped while starting (see its messages above)") from None
        if said[0] != "ready":
            self.kill()
            raise InputError(said[1], fix=said[2])

    def exchange(self, kind: str, params: dict, body: bytes):
        """(status, payload, gauges, retire) of one request (blocking: run it in a thread); ``retire``: the worker
        has stopped after answering (it ran out of memory) and must be replaced."""
        try:
            _send(self.conn, [kind, params])
            self.conn.send_bytes(body)
            return _received(self.conn)
        except (EOFError, OSError):
            raise WorkerFailed("the evaluation worker stopped") from None

    def kill(self) -> None:
        """Stop the worker now, whatever it is doing: SIGTERM, whose default action ends it at once (a worker that
        measures itself, as under `make coverage`, first saves what it measured), then SIGKILL for one that is still
        there after TERM_GRACE_S (user code that caught SIGTERM)."""
        try:
            self.proc.terminate()
            try:
                self.proc.wait(TERM_GRACE_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.conn.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


class Saturated(Exception):
    """No worker became free in time, or too many requests wait already."""


class WorkerPool:
    """``size`` workers; requests take one, or wait for one (at most ``max_waiting`` at once, each until its
    deadline).  Safe from any thread and any event loop (the test client runs each request in a loop of its own)."""

    def __init__(self, settings, size: int, max_waiting: int):
        self.settings_json = settings.model_dump_json()
        self.size, self.max_waiting = size, max_waiting
        self._lock = threading.Lock()
        self._idle: list[Worker] = []
        self._busy: set[Worker] = set()
        self._waiting = 0
        self._started = False
        self._closed = False

    def start(self) -> None:
        """Start every worker and wait until each is ready (blocking)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        import atexit
        atexit.register(self.close)              # an app never shut down (a test client's) leaves no worker behind
        workers = [Worker(self.settings_json) for _ in range(self.size)]
        try:
            for w in workers:
                w.wait_ready()
        except BaseException:
            for w in workers:
                w.kill()
            with self._lock:
                self._started = False
            raise
        with self._lock:
            self._idle.extend(workers)

    def ready(self) -> int:
        return len(self._idle) + len(self._busy)

    def running(self) -> int:
        return len(self._busy)

    def waiting(self) -> int:
        return self._waiting

    def _take(self) -> Worker | None:
        """An idle worker whose process is alive (one that died idle, e.g. by the OOM killer, is replaced)."""
        while True:
            with self._lock:
                worker = self._idle.pop() if self._idle else None
                if worker is None or worker.proc.poll() is None:
                    return worker
                self._busy.add(worker)
            self.discard(worker)

    async def acquire(self, deadline: float) -> Worker:
        import anyio
        if not self._started:
            await anyio.to_thread.run_sync(self.start)
        worker = self._take()
        if worker is not None:
            return self._mark_busy(worker)
        with self._lock:
            if self._waiting >= self.max_waiting:
                raise Saturated("every evaluation worker is busy and the queue is full")
            self._waiting += 1
        try:
            while (worker := self._take()) is None:
                if time.monotonic() >= deadline:
                    raise Saturated("every evaluation worker stayed busy until the request's time limit")
                await anyio.sleep(POLL_S)
        finally:
            with self._lock:
                self._waiting -= 1
        return self._mark_busy(worker)

    def _mark_busy(self, worker: Worker) -> Worker:
        with self._lock:
            self._busy.add(worker)
        return worker

    def release(self, worker: Worker) -> None:
        with self._lock:
            self._busy.discard(worker)
            if not self._closed:
                self._idle.append(worker)
                return
        worker.kill()

    def discard(self, worker: Worker, replace: bool = True) -> None:
        """Kill ``worker`` (whatever it was doing stops) and start a fresh one in its place, in the background
        (``replace``: not when the server is shutting down)."""
        with self._lock:
            self._busy.discard(worker)
        worker.kill()
        if replace:
            threading.Thread(target=self._replace, daemon=True, name="treckit-worker-start").start()

    def _replace(self) -> None:
        for attempt in range(3):
            if self._closed:
                return
            try:
                w = Worker(self.settings_json)
                w.wait_ready()
            except Exception as exc:
                print(f"treckit: could not start an evaluation worker ({type(exc).__name__}); "
                      f"{'trying again' if attempt < 2 else 'running with one worker fewer'}", file=sys.stderr)
                time.sleep(1)
                continue
            with self._lock:
                if not self._closed:
                    self._idle.append(w)
                    return
            w.kill()
            return

    def close(self) -> None:
        """Kill every worker (running evaluations stop)."""
        with self._lock:
            self._closed = True
            workers = self._idle + list(self._busy)
            self._idle, self._busy = [], set()
        for w in workers:
            w.kill()


def _send(conn, message) -> None:
    """Messages are JSON both ways (never pickles: what a worker says cannot run code in the server)."""
    conn.send_bytes(json.dumps(message).encode())


def _received(conn):
    return json.loads(conn.recv_bytes())


# ------------------------------------------------------------------ the worker process
def _die_with_the_server() -> None:
    """The worker stops within a second of the server process's death, however it died (even mid-evaluation,
    when no message would tell it).  Not prctl's death signal: that follows the thread that started the worker."""
    server = os.getppid()

    def watch():
        while os.getppid() == server:
            time.sleep(1)
        _remove_own_tmp()
        os._exit(1)
    threading.Thread(target=watch, daemon=True, name="treckit-server-watch").start()
def _remove_own_tmp() -> None:
    """The worker's temporary directory, when the server that made it is gone and cannot remove it."""
    own = os.environ.get("TMPDIR", "")
    if Path(own).name.startswith(WORKER_TMP_PREFIX):
        shutil.rmtree(own, ignore_errors=True)


def serve(fd: int) -> None:
    import signal
    from multiprocessing.connection import Connection

    signal.signal(signal.SIGINT, signal.SIG_IGN)      # Ctrl-C is the server's to handle: it stops the workers
    give_memory_back_when_freed()                     # what an evaluation lets go of goes back to the system
    conn = Connection(fd)
    _die_with_the_server()
    settings = ServerSettings.model_validate_json(conn.recv_bytes())
    try:
        evaluator = Evaluator(settings)
    except InputError as exc:
        _send(conn, ["error", exc.reason if exc.path is None else f"{exc.path}: {exc.reason}", exc.fix])
        return
    _send(conn, ["ready"])
    while True:
        try:
            kind, params = _received(conn)
            body = conn.recv_bytes()
        except (EOFError, OSError):                  # the server is gone
            _remove_own_tmp()
            return
        try:
            answer = evaluator.answer(kind, body, params)
        except MemoryError:
            del body
            _send(conn, [503, {"detail": "the evaluation ran out of memory; the server is still up",
                               "fix": "send a smaller body, or try again when the server is less busy"}, [], True])
            return                                     # a fresh worker takes this one's place
        except Exception as exc:
            print(f"treckit: evaluation failed: {type(exc).__name__} at {raised_at(exc)}", file=sys.stderr, flush=True)
            answer = (500, {"detail": f"evaluation failed ({type(exc).__name__}); the server is still up"}, [])
        except BaseException as exc:              # noqa: BLE001 -- code of the system's that ended the evaluation
            print(f"treckit: evaluation ended by {type(exc).__name__} at {raised_at(exc)}; the worker is replaced",
                  file=sys.stderr, flush=True)
            _send(conn, [500, {"detail": f"the evaluation was ended ({type(exc).__name__}); the server is still up",
                               "fix": "tell the server's operator: the server's log says where"}, [], True])
            return                                     # what it left behind goes with the process
        size = len(body)
        del body
        _send(conn, [*answer, False])
        del answer
        after_request(size)


def after_request(body_bytes: int) -> None:
    """After a body of :data:`~treckit.thresholds.SERVICE_GIVE_BACK_MIN_BYTES` or more, what the request freed goes
    back to the system, so that the next request's peak starts from the idle worker (the collector frees cycles
    first)."""
    if body_bytes >= thresholds.SERVICE_GIVE_BACK_MIN_BYTES:
        gc.collect()
        give_back_freed_memory()

