"""Tie-aware kernels (treckit.measures.ties) against plain evaluation, in memory, on a generated run with ties.

    .venv/bin/python -m bench.ties_bench                       # 7,000 x 1,000 = 7M lines, scores of 2 decimals
    .venv/bin/python -m bench.ties_bench --decimals 1 --repeat 3
    .venv/bin/python -m bench.ties_bench --measures official --queries 500

The run and qrels are bench/generate.py's classic data (written to outputs/bench/ on first use, as
run_bench.py does), read once; ``--decimals`` rounds the scores further in memory (1: tie groups of about
ten docs; 0: about a hundred).  Both sides start from the run and qrels in memory:

* plain: ``evaluate_requests`` -- rank once, every kernel, the summary (what ``treckit eval`` does after reading);
* ties: ``tied_ranking`` (each judged doc's tie group) and ``tie_values`` of every measure in each mode.

Reported: the best wall time of ``--repeat`` (the sides taking turns), the peak of the memory numpy and Python
allocate while each side runs (tracemalloc, a run of its own), and what :func:`tie_sources` says of the scores.

Then the commands themselves, side by side (``--commands``, the default; ``--no-commands`` leaves them out):
``treckit eval -m ... QRELS RUN`` and ``treckit eval --tie-aware expected -m ... QRELS RUN``, each a process of
its own, reading the file (the rounded copy written to outputs/bench/ when ``--decimals`` < 2): wall time (best
of ``--repeat``) and peak resident memory (the process's maximum RSS, from ``wait4``), and the ratio of each.
The issue's bound: tie-aware expected at most 2x plain in both.

``--tied-runs`` times something else: ``treckit eval`` and trec_eval, side by side, on bench/generate.py's tied
run (``--mode ties``: every score equal, half of each query's docs judged) and on its untied twin (the same lines,
scores distinct), the bound being tied at most 2x untied in wall time and peak memory:

    .venv/bin/python -m bench.ties_bench --tied-runs --queries 50 --repeat 9
    .venv/bin/python -m bench.ties_bench --tied-runs --queries 7000 --repeat 3
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

MEASURES = ["ndcg_cut.10", "recall.100", "recip_rank", "map"]


def data(queries: int, docs: int, decimals: int):
    import pyarrow as pa

    import generate
    from treckit.api import read_qrels, read_run
    from treckit.model import Run

    out = ROOT / "outputs" / "bench"
    run_path, qrels_path = out / f"run.{queries}x{docs}.trec", out / f"qrels.{queries}x{docs}.trec"
    if not run_path.exists() or not qrels_path.exists():
        print(f"generating {queries} x {docs} lines in {out} ...", file=sys.stderr)
        generate.generate(out, queries, docs)
    run, qrels = read_run(run_path), read_qrels(qrels_path)
    if decimals < 2:
        t = run.table
        score = np.round(t.column("score").to_numpy(), decimals)
        run = Run(t.set_column(t.schema.get_field_index("score"), "score", pa.array(score)), run.name, run.notes,
                  run.written)
    return qrels, run, qrels_path, run_path


def rounded_file(run, run_path: Path, decimals: int) -> Path:
    """The run as a TREC file with its scores rounded to ``decimals`` (written once, next to the run)."""
    if decimals >= 2:
        return run_path
    path = run_path.with_name(f"{run_path.stem}.d{decimals}.trec")
    if not path.exists():
        from treckit.api import write_run
        part = path.with_name(path.name + ".part")
        write_run(run, part)
        os.replace(part, path)
    return path


def command(argv: list[str], program: list[str] | None = None, out=subprocess.DEVNULL) -> tuple[float, float]:
    """(wall seconds, peak RSS in MiB) of ``python -m treckit ARGV`` (or of ``program ARGV``), its output thrown
    away (or written to ``out``)."""
    env = dict(os.environ)
    program = program or [sys.executable, "-m", "treckit"]
    t = time.perf_counter()
    proc = subprocess.Popen([*program, *argv], stdout=out, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(program)} {' '.join(argv)} exited {proc.returncode}")
    return wall, usage.ru_maxrss / 1024


def tied_runs(queries: int, docs: int, names: list[str], repeat: int, trec_eval: str) -> None:
    """``treckit eval`` and trec_eval on generate.py's tied run (every score equal, half the docs judged) and its
    untied twin (the same lines, scores distinct): the four commands take turns round after round (the order
    rotating), each a process of its own; medians of the walls, the largest peak, and whether each output is
    trec_eval's bytes."""
    import generate

    out = ROOT / "outputs" / "bench"
    paths = {k: out / f"{stem}.{queries}x{docs}.trec"
             for k, stem in (("tied", "run.tied"), ("distinct", "run.distinct"), ("qrels", "qrels.half"))}
    if not all(p.exists() for p in paths.values()):
        print(f"generating the tied runs ({queries} x {docs}) in {out} ...", file=sys.stderr)
        generate.generate_ties(out, queries, docs)
    flags = [a for n in names for a in ("-m", n)]
    sides = {f"{tool} {run}": (["eval"] if tool == "treckit" else []) + flags + [str(paths["qrels"]), str(paths[run])]
             for tool in ("treckit", "trec_eval") for run in ("distinct", "tied")}
    program = {k: None if k.startswith("treckit") else [trec_eval] for k in sides}
    same = {}
    for run in ("distinct", "tied"):
        outputs = []
        for tool in ("treckit", "trec_eval"):
            with open(out / f"ties_bench.{tool}.{run}.out", "w+b") as fh:
                command(sides[f"{tool} {run}"], program[f"{tool} {run}"], out=fh)
                fh.seek(0)
                outputs.append(fh.read())
        same[run] = outputs[0] == outputs[1]
    got = {k: [] for k in sides}
    keys = list(sides)
    for r in range(repeat):
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            got[k].append(command(sides[k], program[k]))
    load = os.getloadavg()[0]
    print(f"\n{queries} x {docs} lines, {' '.join(names)}: medians of {repeat} rounds, the commands taking turns "
          f"(load average {load:.1f} at the end, {os.cpu_count()} cores)")
    print("| run | treckit wall (s) | treckit peak (MiB) | trec_eval wall (s) | trec_eval peak (MiB) "
          "| treckit faster | trec_eval's bytes |")
    print("|---|---|---|---|---|---|---|")
    for run in ("distinct", "tied"):
        w, m = statistics.median(x for x, _ in got[f"treckit {run}"]), max(x for _, x in got[f"treckit {run}"])
        tw, tm = statistics.median(x for x, _ in got[f"trec_eval {run}"]), max(x for _, x in got[f"trec_eval {run}"])
        print(f"| {run} | {w:.2f} | {m:.0f} | {tw:.2f} | {tm:.0f} | {tw / w:.1f}x | {'yes' if same[run] else 'NO'} |")
    ratio = [statistics.median(a / b for (a, _), (b, _) in zip(got["treckit tied"], got["treckit distinct"])),
             max(x for _, x in got["treckit tied"]) / max(x for _, x in got["treckit distinct"])]
    print(f"treckit tied / distinct: wall {ratio[0]:.2f}x (median of the rounds' ratios), peak {ratio[1]:.2f}x "
          "(the bound: 2x)")


def commands(qrels_path: Path, run_path: Path, names: list[str], repeat: int) -> None:
    flags = [f"-m{n}" for n in names]
    sides = {"treckit eval": ["eval", *flags, str(qrels_path), str(run_path)],
             "treckit eval --tie-aware expected": ["eval", "--tie-aware", "expected", *flags, str(qrels_path),
                                                   str(run_path)]}
    got = {k: [] for k in sides}
    for r in range(repeat):
        for k in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
            got[k].append(command(sides[k]))
    print(f"\ncommands on {run_path.name}: best of {repeat}, the sides taking turns")
    print("| command | wall best (s) | vs plain | peak RSS (MiB) | vs plain |")
    print("|---|---|---|---|---|")
    w0 = min(w for w, _ in got["treckit eval"])
    m0 = max(m for _, m in got["treckit eval"])
    for k, runs in got.items():
        w, m = min(w for w, _ in runs), max(m for _, m in runs)
        print(f"| {k} | {w:.2f} | {w / w0:.2f}x | {m:.0f} | {m / m0:.2f}x |")


def plain(qrels, run, names):
    from treckit.engines.memory import EvalOptions, evaluate_requests
    from treckit.measures.registry import resolve

    return evaluate_requests(qrels, run, resolve(names), EvalOptions())


def tie_aware(qrels, run, names, modes):
    from treckit.engines.memory import EvalOptions
    from treckit.measures.registry import resolve
    from treckit.measures.ties import SPECS, tie_values, tied_ranking

    tied = tied_ranking(qrels, run, EvalOptions())
    out = {}
    for req in resolve(names):
        if req.measure.value in ("runid", "string"):
            continue
        for mode in modes:
            if mode == "expected" and SPECS[req.measure.name].expected is None:
                continue
            out[req.text, mode] = tie_values(tied, req.measure.name, req.params, mode, kernel=req.measure.kernel,
                                             **dict(req.options))
    return tied, out


def timed(fn, *args) -> tuple[float, float]:
    """(wall, CPU) seconds of one call (CPU: this process's, every thread)."""
    gc.collect()
    t, c = time.perf_counter(), time.process_time()
    fn(*args)
    return time.perf_counter() - t, time.process_time() - c


def peak(fn, *args) -> float:
    gc.collect()
    tracemalloc.start()
    fn(*args)
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top / 2 ** 20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--decimals", type=int, default=2, help="round the scores to this many decimals (2: as generated)")
    ap.add_argument("--measures", default=",".join(MEASURES), help="comma-separated, or a nickname (official)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--commands", action=argparse.BooleanOptionalAction, default=True,
                    help="also time the commands themselves, side by side (default: yes)")
    ap.add_argument("--tied-runs", action="store_true",
                    help="instead: treckit eval and trec_eval on generate.py's tied run and its untied twin")
    ap.add_argument("--trec-eval", default=str(ROOT.parent / "shared" / "tools" / "trec_eval"))
    a = ap.parse_args()
    if a.tied_runs:
        tied_runs(a.queries, a.docs, a.measures.split(","), a.repeat, a.trec_eval)
        return
    from treckit.measures.ties import tie_sources
    from treckit.fast.groups import id_runs, spread

    names = a.measures.split(",")
    qrels, run, qrels_path, run_path = data(a.queries, a.docs, a.decimals)
    starts, code, _ = id_runs(run.table.column("qid"))
    src = tie_sources(spread(np.arange(len(starts)), starts, run.table.num_rows), run.table.column("score").to_numpy())
    print(f"run: {run.table.num_rows} lines, {a.queries} queries; {src.describe()}")
    tie_aware(qrels, run, names, ("expected",))              # warm: scipy.special and first calls
    plain(qrels, run, names)
    sides = {"plain evaluation": lambda: plain(qrels, run, names),
             "tie-aware expected": lambda: tie_aware(qrels, run, names, ("expected",)),
             "tie-aware expected+best+worst": lambda: tie_aware(qrels, run, names, ("expected", "best", "worst"))}
    walls = {k: [] for k in sides}
    for r in range(a.repeat):
        for k in list(sides)[r % len(sides):] + list(sides)[:r % len(sides)]:
            walls[k].append(timed(sides[k]))
    peaks = {k: peak(f) for k, f in sides.items()}

    def best(k):
        return min(w for w, _ in walls[k])

    def cpu(k):
        return statistics.median(c for _, c in walls[k])
    print(f"measures: {' '.join(names)}; {a.repeat} rounds, the sides taking turns (in memory, after reading)")
    print("| side | wall best (s) | wall median (s) | vs plain (best) | CPU median (s) | vs plain (CPU) "
          "| peak numpy+Python memory (MiB) | vs plain |")
    print("|---|---|---|---|---|---|---|---|")
    p0, c0, m0 = best("plain evaluation"), cpu("plain evaluation"), peaks["plain evaluation"]
    for k in sides:
        med = statistics.median(w for w, _ in walls[k])
        print(f"| {k} | {best(k):.3f} | {med:.3f} | {best(k) / p0:.2f}x | {cpu(k):.3f} | {cpu(k) / c0:.2f}x "
              f"| {peaks[k]:.0f} | {peaks[k] / m0:.2f}x |")
    tied, values = tie_aware(qrels, run, names, ("expected", "best", "worst"))
    grouped = int((tied.size > 1).sum())
    print(f"judged retrieved docs: {tied.q.size}, of which in tie groups: {grouped}; "
          f"largest group holding one: {int(tied.size.max()) if tied.size.size else 0}")
    res = plain(qrels, run, names)
    print("| measure | trec_eval | expected | worst | best |")
    print("|---|---|---|---|---|")
    for req in res.requests:
        for j, name in enumerate(req.columns):
            if req.measure.value not in ("double", "long") or (req.text, "best") not in values:
                continue
            trec = res.summary[name]
            got = {m: summary(values[req.text, m][:, j], req.summary) if (req.text, m) in values else float("nan")
                   for m in ("expected", "worst", "best")}
            print(f"| {name} | {trec:.4f} | {got['expected']:.4f} | {got['worst']:.4f} | {got['best']:.4f} |")
    if a.commands:
        commands(qrels_path, rounded_file(run, run_path, a.decimals), names, a.repeat)


def summary(per_query: np.ndarray, how: str) -> float:
    """The per-query values summarised as the engine summarises the measure."""
    if how == "sum":
        return float(per_query.sum())
    if how == "count":
        return float(per_query.size)
    if how == "gm":
        return float(np.exp(per_query.mean()))
    return float(per_query.mean())


if __name__ == "__main__":
    main()
