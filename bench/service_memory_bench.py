"""Memory of the evaluation service for one large request body: peak resident memory of the server
(its process and its evaluation workers) above what each held when idle, for bodies of four shapes.

    .venv/bin/python -m bench.service_memory_bench [--mb 15] [--shapes queries,dict-run,trec-run,testset] [--parallel 1]

Each shape gets a fresh `treckit serve` (defaults: max_body_bytes 16 MiB, max_queries 10,000) on a free
127.0.0.1 port; one small request warms it up, then one body of about --mb MB is sent and the peak
(VmHWM, Linux) of the server and of each of its child processes is read from /proc.  Shapes:

- queries:  a test set of more queries than max_queries (refused);
- dict-run: the sample test set and a {qid: {doc: score}} run;
- trec-run: the sample test set and a TREC run as text;
- testset:  a test set of 10,000 queries, each with many judged documents, and a one-line run.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def body_of(shape: str, size: int) -> bytes:
    import yaml
    ts = yaml.safe_load((ROOT / "data/test_sets/clinical_v1.yaml").read_text())
    if shape == "queries":
        q = ts["queries"][0]
        one = len(json.dumps(dict(q, query_id="x000000")))
        return json.dumps({"test_set": dict(ts, queries=[dict(q, query_id=f"x{i:06d}") for i in range(size // one)]),
                           "run": "x000001 Q0 a 1 1 t\n"}).encode()
    if shape == "dict-run":
        per = len('"d0000000": 0.123456, ')
        n = size // per
        qids = [q["query_id"] for q in ts["queries"]]
        run = {q: {f"d{j:07d}": round(1 - j / n, 6) for j in range(i, n, len(qids))} for i, q in enumerate(qids)}
        return json.dumps({"test_set": ts, "run": run}).encode()
    if shape == "trec-run":
        line = "q01 Q0 d0000000 1 0.123456 sys\n"
        n = size // (len(line) + 1)          # "\\n" in JSON
        qids = [q["query_id"] for q in ts["queries"]]
        text = "".join(f"{qids[j % len(qids)]} Q0 d{j:07d} {j // len(qids) + 1} {1 - j / n:.6f} sys\n" for j in range(n))
        return json.dumps({"test_set": ts, "run": text}).encode()
    if shape == "testset":
        docs = max(1, (size // 10_000 - 120) // len('{"doc_id": "d0000000", "grade": 1}, '))
        queries = [{"query_id": f"x{i:05d}", "query_text": f"query {i}", "query_type": "t",
                    "relevant_docs": [{"doc_id": f"d{i * docs + j:07d}", "grade": 1} for j in range(docs)]}
                   for i in range(10_000)]
        return json.dumps({"test_set": {"name": "big", "version": "1", "queries": queries},
                           "run": "x00001 Q0 a 1 1 t\n"}).encode()
    raise SystemExit(f"unknown shape {shape!r}")


def family(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux /proc)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                kids = Path(f"/proc/{p}/task/{t}/children").read_text().split()
                todo.extend(int(k) for k in kids)
        except OSError:
            pass
    return out


def status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def measure(shape: str, body: bytes, parallel: int = 1) -> dict:
    import httpx
    import yaml
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "server.yaml"
        cfg.write_text("cache: false\n")
        proc = subprocess.Popen([sys.executable, "-m", "treckit", "serve", "--port", str(port), "--config", str(cfg),
                                 "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 60
            while time.time() < deadline:
                try:
                    if httpx.get(url + "/v1/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.2)
            ts = yaml.safe_load((ROOT / "data/test_sets/clinical_v1.yaml").read_text())
            warm = httpx.post(url + "/v1/evaluate", json={"test_set": ts, "run": "q01 Q0 a 1 1 t\n"}, timeout=60)
            assert warm.status_code == 200, warm.text
            pids = family(proc.pid)
            for p in pids:                 # the peak so far (start-up) is not this request's: reset it
                Path(f"/proc/{p}/clear_refs").write_text("5")
            idle = {p: status_kb(p, "VmRSS") for p in pids}
            t0 = time.perf_counter()

            def one(_):
                return httpx.post(url + "/v1/evaluate", content=body, headers={"content-type": "application/json"},
                                  timeout=600).status_code
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(parallel) as pool:
                statuses = list(pool.map(one, range(parallel)))
            took = time.perf_counter() - t0
            peaks = {p: status_kb(p, "VmHWM") for p in family(proc.pid)}
            grown = {p: max(0, peaks[p] - idle.get(p, 0)) for p in peaks}
            total = sum(grown.values())
            workers = [grown[p] for p in peaks if p != proc.pid]
            return {"shape": shape, "body_mb": round(len(body) / 1e6, 1), "parallel": parallel,
                    "status": statuses[0] if parallel == 1 else statuses,
                    "seconds": round(took, 2), "peak_above_idle_mb": round(total / 1024, 1),
                    "factor": round(total * 1024 / len(body), 1),
                    "server_mb": round(grown[proc.pid] / 1024, 1),
                    "busiest_worker_mb": round(max(workers) / 1024, 1) if workers else None}
        finally:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=15)
    ap.add_argument("--shapes", default="queries,dict-run,trec-run,testset")
    ap.add_argument("--parallel", type=int, default=1, help="send the body this many times at once")
    a = ap.parse_args()
    for shape in a.shapes.split(","):
        print(json.dumps(measure(shape, body_of(shape, int(a.mb * 1e6)), a.parallel)), flush=True)


if __name__ == "__main__":
    main()
