"""Benchmark of `treckit compare` against `treckit eval` on the same runs.

    .venv/bin/python -m bench.compare_bench [--queries 7000] [--docs 1000] [--runs 4] [--repeat 2]

Data: bench/generate.py's seeded qrels and run (7,000 queries x 1,000 docs = 7M lines by default) and
``--runs - 1`` variants of that run, each with its scores perturbed by seeded noise (rounded to two
decimals, so ties stay common) and its own tag; every file is a 7M-line run.  Two whole processes are timed,
the tools taking turns round after round (best wall time of ``--repeat``, the peak RSS of that process):

* ``treckit eval -m ndcg_cut.10 -m recall.100 -m recip_rank -m map QRELS RUN1 ... RUNn``
* ``treckit compare QRELS RUN1 ... RUNn`` with the same measures, every test (t-test, Wilcoxon, randomization
  with 10,000 draws, bootstrap with 10,000 resamples) and ``--out`` JSON.

The target: compare within 1.5x eval's wall time and peak memory.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

from .generate import generate
from .run_bench import PY, measured_in_detail

MEASURES = ["-m", "ndcg_cut.10", "-m", "recall.100", "-m", "recip_rank", "-m", "map"]


EVERY_TEST = ("--test", "t-test", "--test", "wilcoxon", "--test", "randomization", "--test", "bootstrap")  # default: t-test

def measured(argv: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MiB) of one whole process, by run_bench's measuring shim."""
    wall, rss, _, cpu, _ = measured_in_detail(argv)
    return wall, cpu, rss


def variant(run_path: Path, index: int) -> Path:
    """A copy of ``run_path`` with seeded noise on the scores (two decimals) and the tag ``v<index>``."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    out = run_path.with_name(run_path.name.replace(".trec", f".v{index}.trec"))
    if out.exists():
        return out
    t = pcsv.read_csv(run_path, read_options=pcsv.ReadOptions(column_names=["q", "z", "d", "r", "s", "t"]),
                      parse_options=pcsv.ParseOptions(delimiter=" "),
                      convert_options=pcsv.ConvertOptions(column_types={"q": pa.string(), "s": pa.float64()}))
    rng = np.random.default_rng(100 + index)
    s = np.round(t.column("s").to_numpy() + rng.normal(0.0, 2.0, t.num_rows), 2)
    text = pa.compute.binary_join_element_wise(
        t.column("q"), t.column("z"), t.column("d"), t.column("r").cast(pa.string()),
        pa.array([f"{x:.2f}" for x in s.tolist()]), pa.array([f"v{index}"] * t.num_rows), " ")
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w", encoding="ascii") as fh:
        for chunk in text.chunks:
            fh.write("\n".join(chunk.to_pylist()) + "\n")
    tmp.replace(out)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "bench")
    a = ap.parse_args()
    tag = f"{a.queries}x{a.docs}"
    paths = {"run": a.out / f"run.{tag}.trec", "qrels": a.out / f"qrels.{tag}.trec"}
    if not all(p.exists() for p in paths.values()):
        print(f"generating {tag} ...", file=sys.stderr)
        paths = generate(a.out, a.queries, a.docs)
    runs = [str(paths["run"])] + [str(variant(paths["run"], i)) for i in range(1, a.runs)]
    q = str(paths["qrels"])
    treckit = str(Path(PY).with_name("treckit"))
    jobs = {"treckit eval": [treckit, "eval", *MEASURES, q, *runs],
            "treckit compare": [treckit, "compare", *MEASURES, q, *runs, *EVERY_TEST, "--out",
                                str(a.out / f"compare.{tag}.json")]}
    best: dict[str, tuple[float, float, float]] = {}
    for _ in range(a.repeat):                 # the two take turns, so a noisy spell falls on both
        for name, argv in jobs.items():
            got = measured(argv)
            if name not in best or got[0] < best[name][0]:
                best[name] = got
    (te, ce, re_), (tc, cc, rc) = best["treckit eval"], best["treckit compare"]
    lines = sum(1 for _ in open(runs[0], "rb"))
    print(f"\n## compare vs eval, {a.runs} runs x {lines:,} lines ({a.queries} queries)\n")
    print("| command | wall (s) | CPU (s) | peak RSS (MiB) |")
    print("|---|---|---|---|")
    print(f"| treckit eval | {te:.2f} | {ce:.2f} | {re_:.0f} |")
    print(f"| treckit compare (4 tests, JSON) | {tc:.2f} | {cc:.2f} | {rc:.0f} |")
    print(f"\ncompare / eval: wall {tc / te:.2f}x, CPU {cc / ce:.2f}x, memory {rc / re_:.2f}x (target: at most 1.5x)")


if __name__ == "__main__":
    main()
