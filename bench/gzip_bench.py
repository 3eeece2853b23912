"""A gzipped run against the same run plain, and against its decompression alone (issue 33's target 7: the gzipped
7M-line run costs at most ``gzip -dc`` to /dev/null plus the plain run's time).

    .venv/bin/python -m bench.gzip_bench                        # 7,000 x 1,000 = 7M lines, 5 rounds
    .venv/bin/python -m bench.gzip_bench --rounds 9 --budget 512M

The run and qrels are bench/generate.py's classic data (written to outputs/bench/ on first use, as run_bench.py
does); the .gz copy is written beside it (gzip level 6, Python's gzip module).  Each round runs, in an order that
rotates every round, each a whole process: ``gzip -dc RUN.gz > /dev/null``, ``treckit eval`` of the plain run and
of the .gz (the four measures of run_bench.py), and both again under ``--memory-limit BUDGET``.  Reported: the
median wall time and peak resident memory of each (the process's own, from ``wait4``), the outputs compared, and
the target: the .gz's median against the median of gzip -dc plus the plain run's.
"""
from __future__ import annotations

import argparse
import gzip
import shutil
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from .run_bench import REST_SECONDS, measured

MEASURES = ["-m", "ndcg_cut.10", "-m", "recall.100", "-m", "recip_rank", "-m", "map"]


def data(queries: int, docs: int) -> tuple[Path, Path, Path]:
    """(qrels, run, run.gz) of the classic data, written on first use."""
    from generate import generate
    out = ROOT / "outputs" / "bench"
    paths = generate(out, queries, docs) if not (out / f"run.{queries}x{docs}.trec").exists() else {
        "run": out / f"run.{queries}x{docs}.trec", "qrels": out / f"qrels.{queries}x{docs}.trec"}
    gz = paths["run"].with_name(paths["run"].name + ".gz")
    if not gz.exists():
        with open(paths["run"], "rb") as src, gzip.GzipFile(gz.with_suffix(".part"), "wb", 6, mtime=0) as dst:
            shutil.copyfileobj(src, dst, 1 << 22)
        gz.with_suffix(".part").rename(gz)
    return paths["qrels"], paths["run"], gz


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--budget", default="512M", help="the --memory-limit of the budgeted runs")
    a = ap.parse_args()
    qrels, run, gz = data(a.queries, a.docs)
    treckit = str(ROOT / ".venv" / "bin" / "treckit")
    jobs = {
        "gzip -dc (to /dev/null)": ["sh", "-c", f"exec gzip -dc '{gz}' > /dev/null"],
        "treckit eval, plain": [treckit, "eval", *MEASURES, str(qrels), str(run)],
        "treckit eval, .gz": [treckit, "eval", *MEASURES, str(qrels), str(gz)],
        f"treckit eval --memory-limit {a.budget}, plain": [treckit, "eval", "--memory-limit", a.budget, *MEASURES,
                                                          str(qrels), str(run)],
        f"treckit eval --memory-limit {a.budget}, .gz": [treckit, "eval", "--memory-limit", a.budget, *MEASURES,
                                                        str(qrels), str(gz)],
    }
    got: dict[str, list[tuple[float, float, bytes]]] = {name: [] for name in jobs}
    names = list(jobs)
    for r in range(a.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            time.sleep(REST_SECONDS)
            got[name].append(measured(jobs[name]))
    outputs = {got[name][0][2] for name in names[1:]}
    print(f"{a.queries} x {a.docs} lines: {run.stat().st_size / 2**20:.0f} MiB plain, {gz.stat().st_size / 2**20:.0f} MiB "
          f".gz; {a.rounds} rounds; the evaluations print {'the same bytes' if len(outputs) == 1 else 'DIFFERENT bytes'}")
    print("| command | wall (s), median | min-max | peak RSS (MiB), median |")
    print("|---|---|---|---|")
    med = {}
    for name in names:
        walls = [w for w, _, _ in got[name]]
        med[name] = statistics.median(walls)
        print(f"| {name} | {med[name]:.2f} | {min(walls):.2f}-{max(walls):.2f} | "
              f"{statistics.median(p for _, p, _ in got[name]):.0f} |")
    bound = med[names[0]] + med[names[1]]
    print(f"target 7: .gz {med[names[2]]:.2f} s against gzip -dc + plain {bound:.2f} s: "
          f"{'met' if med[names[2]] <= bound else 'not met'} ({med[names[2]] / bound:.2f}x)")


if __name__ == "__main__":
    main()
