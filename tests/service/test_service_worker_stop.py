"""How the service stops its evaluation workers: SIGTERM first -- a worker's default action ends it at once, and a
worker that acts on the signal (one measuring itself saves its measurements) gets to -- SIGKILL only for one still
there after a grace."""
from __future__ import annotations

import time

import pytest

from helpers import patience
from service_server import Server, alive, children, sample_test_set

pytest.importorskip("httpx", reason="the service tests need the dev extra (httpx)")
pytest.importorskip("fastapi", reason="the service tests need the service extra")

# user code run by the worker (its system's search): once it has searched, on SIGTERM the process notes its pid,
# then ends as SIGTERM ends a process
NOTES_SIGTERM = """
import os, signal

def _noted(signum, frame):
    with open({marks!r}, "a") as fh:
        fh.write(f"{{os.getpid()}}\\n")
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)

def search(text):
    signal.signal(signal.SIGTERM, _noted)
    return [("PMC2905704", 1.0)]
"""


def test_a_stopping_server_sends_its_worker_sigterm(tmp_path):
    marks = tmp_path / "marks"
    (tmp_path / "noting.py").write_text(NOTES_SIGTERM.format(marks=str(marks)))
    s = Server(tmp_path, system=f"components:\n  noting: {{callable: {tmp_path / 'noting.py'}:search}}\n",
               config="evaluation_workers: 1\ncache: false\n")
    try:
        [worker] = children(s.proc.pid)
        answer = s.post({"test_set": sample_test_set()}, timeout=patience(60))      # the system answers: it searched
        assert answer.status_code == 200, answer.text
    finally:
        s.stop()
    deadline = time.monotonic() + patience(10)
    while alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(worker)
    noted = marks.read_text().split() if marks.exists() else []
    assert str(worker) in noted                           # it was told with SIGTERM, not killed outright
