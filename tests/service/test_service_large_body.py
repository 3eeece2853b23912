"""A request body over a mebibyte, evaluated by the service's one worker: the numbers are those of the run without
its padding (lines ranked below every document of the run), the worker then hands the memory back and answers the
next request with the same numbers."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from helpers import patience, run_cli
from service_server import BASELINE_RUN, SAMPLE, free_port, sample_test_set

httpx = pytest.importorskip("httpx", reason="the service tests need the dev extra (httpx)")
pytest.importorskip("fastapi", reason="the service tests need the service extra")

MEBIBYTE = 1 << 20          # a body this large makes the worker give its freed memory back to the system


def padded(run_text: str, lines_per_query: int) -> str:
    """The run, then ``lines_per_query`` unjudged documents for each of its queries, scored below all of its own
    (negative scores): no measure the test set asks for can see them."""
    qids = sorted({line.split()[0] for line in run_text.splitlines()})
    pad = "".join(f"{q} Q0 padding-doc-{i:06d} {1000 + i} {-1 - i / 1e6:.6f} bow\n"
                  for q in qids for i in range(lines_per_query))
    return run_text + pad


@pytest.fixture
def one_worker_server(tmp_path):
    port = free_port()
    (tmp_path / "server.yaml").write_text("evaluation_workers: 1\nmax_body_bytes: 4000000\ncache: false\n")
    with open(tmp_path / "server.stderr", "wb") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "treckit", "serve", "--port", str(port), "--config",
                                 str(tmp_path / "server.yaml"), "--log-level", "warning"], stdout=subprocess.DEVNULL,
                                stderr=stderr)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + patience(90)
            while True:                           # ready when its health route answers
                assert proc.poll() is None, (tmp_path / "server.stderr").read_text()
                try:
                    if httpx.get(url + "/v1/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(patience(20))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_a_body_over_a_mebibyte_is_evaluated_and_the_worker_answers_again(one_worker_server, tmp_path, capsys):
    run = BASELINE_RUN.read_text()
    big = {"test_set": sample_test_set(), "run": padded(run, 800), "system": "bow"}
    assert len(json.dumps(big).encode()) > MEBIBYTE
    (tmp_path / "run.trec").write_text(run)
    code, _, err = run_cli(["testset", "eval", SAMPLE, "--run", tmp_path / "run.trec", "--out", tmp_path / "r.json"],
                           capsys)
    assert code == 0, err
    expected = {m: value["mean"] for m, value in json.loads((tmp_path / "r.json").read_text())["aggregates"].items()}

    first = httpx.post(one_worker_server + "/v1/evaluate", json=big, timeout=patience(120))
    assert first.status_code == 200, first.text
    assert first.json()["metrics"] == {m: expected[m] for m in ("recall_at_10", "ndcg_at_10", "mrr")}
    assert first.json()["num_queries"] == 50 and first.json()["missing_queries"] == []
    # the same (only) worker, after giving its memory back: the unpadded run, the same numbers
    second = httpx.post(one_worker_server + "/v1/evaluate", json={**big, "run": run}, timeout=patience(120))
    assert second.status_code == 200, second.text
    assert second.json()["metrics"] == first.json()["metrics"]
