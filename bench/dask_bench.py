"""Benchmark of the Dask engine on many runs: ``treckit eval`` on N runs of 1M lines, the local engine
against ``--engine dask`` on a ``LocalCluster`` of 1 and 2 worker processes (the scaling curve).

    .venv/bin/python -m bench.dask_bench [--data DIR] [--runs 200] [--workers 1,2] [--repeat 1]

Data: ``--data DIR`` holding ``qrels`` and ``run_*.trec`` (e.g. `python -m bench.generate --mode many --runs 200
--out DIR`: 200 runs of 1,000 queries x 1,000 docs), else generated here into outputs/bench/runs1m: bench/generate.py's
seeded qrels and run (1,000 x 1,000), and N - 1 copies with their scores perturbed by seeded noise (two decimals,
ties common) and their own tags.  Only the first ``--runs`` runs are evaluated.

Each setup is one whole ``treckit eval`` process (wall time, best of ``--repeat``); the cluster is started before
and is not timed (its start, a few seconds, is printed beside), as a team's running cluster would be; its workers
are set up as those of the LocalCluster treckit starts itself (malloc keeping freed memory, as in treckit's own
processes).  Each Dask
output is compared with the local engine's bytes.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PY = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable
MEASURES = ["-m", "ndcg_cut.10", "-m", "recall.100", "-m", "recip_rank", "-m", "map"]


def make_runs(out: Path, runs: int, queries: int = 1000, docs: int = 1000, seed: int = 13) -> tuple[Path, list[Path]]:
    """qrels and ``runs`` runs of ``queries`` x ``docs`` lines (generate.py's run, then perturbed copies)."""
    from .generate import generate

    out.mkdir(parents=True, exist_ok=True)
    base = generate(out, queries, docs, seed)
    qrels = out / "qrels"
    if not qrels.exists():
        qrels.write_bytes(base["qrels"].read_bytes())
    lines = base["run"].read_bytes().splitlines()
    fields = [ln.split(b" ") for ln in lines]
    scores = np.array([float(f[4]) for f in fields])
    paths = []
    for i in range(runs):
        p = out / f"run_{i:03d}.trec"
        paths.append(p)
        if p.exists():
            continue
        noisy = np.round(np.clip(scores + np.random.default_rng(seed + i).normal(0, 2.0, scores.size), 0, None), 2)
        text = [b" ".join([f[0], f[1], f[2], f[3], b"%.2f" % s, b"r%03d" % i]) for f, s in zip(fields, noisy.tolist())]
        p.write_bytes(b"\n".join(text) + b"\n")
        print(f"wrote {p}", file=sys.stderr)
    return qrels, paths


def timed(argv: list[str], out: Path) -> float:
    env = dict(os.environ)
    with open(out, "wb") as fh:
        t = time.perf_counter()
        subprocess.run([PY, "-m", "treckit", "eval", *argv], stdout=fh, env=env, check=True)
        return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--workers", default="1,2", help="worker processes of each LocalCluster, comma-separated")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    data = a.data or ROOT / "outputs" / "bench" / "runs1m"
    have = sorted(data.glob("run_*.trec"))
    if (data / "qrels").exists() and len(have) >= a.runs:
        qrels, runs = data / "qrels", have[: a.runs]
    elif a.data is not None and (have or (data / "qrels").exists()):
        # a folder of the user's with fewer runs than asked for: never add runs of another shape beside them
        raise SystemExit(f"{data} holds {len(have)} runs, fewer than --runs {a.runs}: generate them "
                         f"(python -m bench.generate --mode many --runs {a.runs} --out {data}) or pass --runs {len(have)}")
    else:
        qrels, runs = make_runs(data, a.runs)
    lines = 0
    for r in runs:                                  # counted, not assumed: runs may differ in depth
        with open(r, "rb") as fh:
            lines += sum(1 for _ in fh)
    argv = [*MEASURES, str(qrels), *map(str, runs)]
    print(f"{len(runs)} runs, {lines:,} lines in all ({data}); cores: {os.cpu_count()}")

    import distributed

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ref = Path(tmp) / "local.txt"
        local = min(timed(argv, ref) for _ in range(a.repeat))
        rows.append(("local engine", "-", local, "-", "(reference)"))
        for w in [int(x) for x in a.workers.split(",")]:
            t0 = time.perf_counter()
            with distributed.LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                                          dashboard_address="127.0.0.1:0", silence_logs=40) as cluster:
                from treckit.engines.dask import prepare_own_workers
                with distributed.Client(cluster) as c:
                    prepare_own_workers(c)                  # as the LocalCluster treckit starts itself
                start = time.perf_counter() - t0
                got = Path(tmp) / f"dask{w}.txt"
                wall = min(timed(["--engine", "dask", "--scheduler", cluster.scheduler_address, *argv], got)
                           for _ in range(a.repeat))
                same = "yes" if got.read_bytes() == ref.read_bytes() else "NO"
                rows.append(("dask LocalCluster", str(w), wall, f"{start:.1f}", same))
    print()
    print("| engine | workers | wall s | runs/s | M lines/s | speed-up | cluster start s | output identical |")
    print("|---|---|---|---|---|---|---|---|")
    for name, w, wall, start, same in rows:
        print(f"| {name} | {w} | {wall:.1f} | {len(runs) / wall:.2f} | {lines / wall / 1e6:.2f} | "
              f"{local / wall:.2f}x | {start} | {same} |")


if __name__ == "__main__":
    main()
