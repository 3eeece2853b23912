"""Load test of the evaluation service on loopback: requests per second and latency percentiles.

    .venv/bin/python -m bench.service_bench [--requests 400] [--threads 4] [--seconds 60]

Starts `treckit serve` on a free 127.0.0.1 port with data/test_sets/server.yaml, then sends POST
/v1/evaluate with the sample test set and the stored baseline run (answered from the cache after the
first) and, separately, the same test set with a run that changes every request (evaluated each time).
Bounded: stops after --requests or --seconds, whichever comes first; only loopback is ever addressed.
"""
from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    import httpx
    import numpy as np
    import yaml

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=60)
    a = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as cache:
        cfg = Path(cache) / "server.yaml"
        src = ROOT / "data" / "test_sets"
        cfg.write_text(f"system: {src / 'system.yaml'}\ndata_dir: {src}\ncache_dir: {cache}\n")
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
            ts = yaml.safe_load((src / "clinical_v1.yaml").read_text())
            run = (src / "baseline_bow.trec").read_text()
            results = {}
            for label, body_of in (("cached (same run)", lambda i: {"test_set": ts, "run": run}),
                                   ("evaluated (a new run each time)",
                                    lambda i: {"test_set": ts, "run": run.replace(" bow\n", f" r{i}\n")})):
                client = httpx.Client(timeout=30)
                stop = time.time() + a.seconds
                def one(i):
                    if time.time() > stop:
                        return None
                    t0 = time.perf_counter()
                    r = client.post(url + "/v1/evaluate", json=body_of(i))
                    assert r.status_code == 200, r.text
                    return time.perf_counter() - t0
                t0 = time.perf_counter()
                with ThreadPoolExecutor(a.threads) as pool:
                    lat = [x for x in pool.map(one, range(a.requests)) if x is not None]
                wall = time.perf_counter() - t0
                ms = np.array(lat) * 1000
                results[label] = {"requests": len(lat), "rps": round(len(lat) / wall, 1),
                                  "p50_ms": round(float(np.percentile(ms, 50)), 2),
                                  "p99_ms": round(float(np.percentile(ms, 99)), 2)}
                client.close()
            print(json.dumps(results, indent=2))
        finally:
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    main()
