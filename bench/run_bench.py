"""Benchmarks: treckit against its peers, in one run, on seeded generated data.

    .venv/bin/python -m bench.run_bench [--queries 7000] [--docs 1000] [--repeat 3] [--skip-peers] [--trec-eval PATH]

Evaluation: the whole process `treckit eval -m ndcg_cut.10 -m recall.100 -m recip_rank -m map`
against pytrec_eval (trec_eval's C code), ir_measures and ranx computing the same four measures, each
in a fresh process; wall time (best of --repeat) and peak RSS; and whether their means agree.
With --trec-eval (a trec_eval 10.0 binary built separately; none ships with treckit) it is timed too, and
its `-q -m all_trec` output is compared byte for byte with treckit's.
Conversion: `treckit run` from JSONL and from TREC to TREC, against a plain-Python
line-by-line converter doing the same job.
Start-up: `treckit --help` and a 1,500-line evaluation.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
MEASURES = ["ndcg_cut_10", "recall_100", "recip_rank", "map"]

PYTREC = """
import json, resource, sys, pytrec_eval
with open(sys.argv[1]) as f: q = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f: r = pytrec_eval.parse_run(f)
ev = pytrec_eval.RelevanceEvaluator(q, {"ndcg_cut.10", "recall.100", "recip_rank", "map"}).evaluate(r)
m = {k: sum(v[k] for v in ev.values()) / len(ev) for k in %r}
print(json.dumps({"means": m, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
""" % (MEASURES,)

IRM = """
import json, resource, sys, ir_measures
from ir_measures import nDCG, R, RR, AP
agg = ir_measures.calc_aggregate([nDCG@10, R@100, RR, AP], ir_measures.read_trec_qrels(sys.argv[1]), ir_measures.read_trec_run(sys.argv[2]))
m = {"ndcg_cut_10": agg[nDCG@10], "recall_100": agg[R@100], "recip_rank": agg[RR], "map": agg[AP]}
print(json.dumps({"means": m, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

RANX = """
import json, resource, sys
from ranx import Qrels, Run, evaluate
q = Qrels.from_file(sys.argv[1], kind="trec"); r = Run.from_file(sys.argv[2], kind="trec")
res = evaluate(q, r, ["ndcg@10", "recall@100", "mrr", "map"])
m = {"ndcg_cut_10": res["ndcg@10"], "recall_100": res["recall@100"], "recip_rank": res["mrr"], "map": res["map"]}
print(json.dumps({"means": m, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

PLAIN_CONVERT = """
import json, resource, sys
# the plain-Python baseline: one line at a time, sort each query, write TREC
src, dst = sys.argv[1], sys.argv[2]
out = open(dst, "w")
if src.endswith(".jsonl"):
    for line in open(src):
        o = json.loads(line)
        pairs = sorted(zip(o["scores"], o["docs"]), key=lambda p: (-p[0], [-ord(c) for c in p[1]]))
        for i, (s, d) in enumerate(pairs, 1):
            out.write(f"{o['qid']} Q0 {d} {i} {s!r} plain\\n")
else:
    runs = {}
    for line in open(src):
        q, _, d, _, s, _ = line.split()
        runs.setdefault(q, []).append((float(s), d))
    for q, pairs in runs.items():
        pairs.sort(key=lambda p: (-p[0], [-ord(c) for c in p[1]]))
        for i, (s, d) in enumerate(pairs, 1):
            out.write(f"{q} Q0 {d} {i} {s!r} plain\\n")
out.close()
print(json.dumps({"rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

# Peak RSS is read by a small process that forks and waits for the command: on Linux a process's
# ru_maxrss keeps the high-water mark of whatever it was before exec, so a command spawned straight
# from this (possibly large) process would be charged this process's memory.
SHIM = """
import os, sys, time
t = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - t
with open(sys.argv[1], "w") as fh:
    fh.write(f"{wall} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)} {usage.ru_utime + usage.ru_stime} "
             f"{usage.ru_utime}")
"""


def measured(argv: list[str]) -> tuple[float, float, bytes]:
    """(wall seconds, peak RSS in MiB, stdout) of one whole process."""
    return measured_with_cpu(argv)[:3]


def measured_with_cpu(argv: list[str]) -> tuple[float, float, bytes, float]:
    """(wall seconds, peak RSS in MiB, stdout, CPU seconds: user + system) of one whole process."""
    return measured_in_detail(argv)[:4]


def measured_in_detail(argv: list[str]) -> tuple[float, float, bytes, float, float]:
    """:func:`measured_with_cpu` and the user CPU seconds alone (system time, mostly page faults, swings
    far more than user time on a virtual machine whose host is busy)."""
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".txt") as stats:
        subprocess.run([PY, "-c", SHIM, stats.name, *argv], stdout=out, stderr=err, check=False)
        wall, rss, code, cpu, user = stats.read().split()
        out.seek(0)
        err.seek(0)
        if int(code) != 0:
            raise SystemExit(f"benchmark step failed: {' '.join(argv)}\n{err.read().decode()[-2000:]}")
        return float(wall), int(rss) / 1024, out.read(), float(cpu), float(user)


# seconds of rest before each timed command: on a virtual machine, a process that starts right after one that
# freed a lot of memory (trec_eval, pytrec_eval) pays up to 1 s more of page faults than after a pause
REST_SECONDS = 0.5


def best_of(jobs: dict[str, tuple[list[str], int]]) -> dict[str, tuple[float, float, bytes]]:
    """Best wall time (and the peak RSS and output of that run) of each job; the jobs take turns,
    round after round, in an order that rotates every round (no job always follows the same one),
    so a noisy spell on the machine falls on all of them alike."""
    best: dict[str, tuple[float, float, bytes]] = {}
    names = list(jobs)
    for r in range(max(rep for _, rep in jobs.values())):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            argv, rep = jobs[name]
            if r < rep:
                time.sleep(REST_SECONDS)
                got = measured(argv)
                if name not in best or got[0] < best[name][0]:
                    best[name] = got
    return best


def timed_command(argv: list[str], repeat: int) -> float:
    return best_of({"x": (argv, repeat)})["x"][0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-peers", action="store_true")
    ap.add_argument("--trec-eval", type=Path, default=None, help="a trec_eval binary to time and diff against")
    ap.add_argument("--shape", default="bench", help="bench (default) | short-ids (MS MARCO-like: see bench/generate.py)")
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "bench")
    a = ap.parse_args()
    from .generate import generate, shuffled_copy
    tag = ("" if a.shape == "bench" else f"{a.shape}.") + f"{a.queries}x{a.docs}"
    paths = {"run": a.out / f"run.{tag}.trec", "qrels": a.out / f"qrels.{tag}.trec", "jsonl": a.out / f"run.{tag}.jsonl"}
    if not all(p.exists() for p in paths.values()):
        print(f"generating {tag} ...", file=sys.stderr)
        paths = generate(a.out, a.queries, a.docs, shape=a.shape)
    q, r = str(paths["qrels"]), str(paths["run"])
    treckit = str(Path(PY).with_name("treckit"))
    measures = ["-m", "ndcg_cut.10", "-m", "recall.100", "-m", "recip_rank", "-m", "map"]
    jobs = {"treckit eval": ([treckit, "eval", *measures, q, r], a.repeat)}
    if a.trec_eval:
        jobs["trec_eval 10.0 (C binary)"] = ([str(a.trec_eval), *measures, q, r], a.repeat)
    if not a.skip_peers:
        for name, code, rep in (("pytrec_eval", PYTREC, a.repeat), ("ir_measures", IRM, 1), ("ranx", RANX, 1)):
            jobs[name] = ([PY, "-c", code, q, r], rep)
    got = best_of(jobs)
    tk_means = json.loads(measured([treckit, "eval", "--format", "json", *measures, q, r])[2])[0]["summary"]
    t_tk = got["treckit eval"][0]
    lines = sum(1 for _ in open(r, "rb"))
    print(f"\n## Evaluation, {a.queries} queries x up to {a.docs} docs, shape {a.shape} ({lines:,} run lines)\n")
    print("| tool | wall (s) | vs treckit | peak RSS (MiB) | " + " | ".join(MEASURES) + " | agrees with treckit |")
    print("|---|---|---|---|" + "---|" * len(MEASURES) + "---|")
    for name, (t, rss, out) in got.items():
        if name == "treckit eval":
            m = tk_means
        elif name.startswith("trec_eval"):
            # it prints 4 decimals: agreement is treckit printing the very same bytes
            same = out == measured([treckit, "eval", *measures, q, r])[2]
            printed = {line.split()[0]: line.split()[2] for line in out.decode().splitlines()}
            print(f"| {name} | {t:.2f} | {t / t_tk:.1f}x | {rss:.0f} | " + " | ".join(printed[k] for k in MEASURES)
                  + f" | {'yes (byte-identical output)' if same else 'NO'} |")
            continue
        else:
            m = json.loads(out.decode().strip().splitlines()[-1])["means"]
        agree = all(abs(m[k] - tk_means[k]) < 1e-9 for k in MEASURES)
        diff = "" if agree else " (" + ", ".join(f"{k} {m[k] - tk_means[k]:+.2e}" for k in MEASURES if abs(m[k] - tk_means[k]) >= 1e-9) + ")"
        print(f"| {name} | {t:.2f} | {t / t_tk:.1f}x | {rss:.0f} | " + " | ".join(f"{m[k]:.6f}" for k in MEASURES)
              + f" | {'yes' if agree else 'no' + diff} |")
    shuffled = str(shuffled_copy(paths["run"]))
    t_sh, rss_sh, out_sh = best_of({"shuffled": ([treckit, "eval", *measures, q, shuffled], a.repeat)})["shuffled"]
    same = out_sh == measured([treckit, "eval", *measures, q, r])[2]
    print(f"\nThe same run with each query's lines shuffled (`{Path(shuffled).name}`): treckit eval {t_sh:.2f} s, "
          f"{rss_sh:.0f} MiB, {got['trec_eval 10.0 (C binary)'][0] / t_sh:.1f}x faster than trec_eval, " if a.trec_eval else
          f"\nThe same run with each query's lines shuffled (`{Path(shuffled).name}`): treckit eval {t_sh:.2f} s, {rss_sh:.0f} MiB, ",
          end="")
    print(f"same output as for the sorted run: {'yes' if same else 'NO'}")
    if a.trec_eval:
        aq = best_of({"treckit": ([treckit, "eval", "-q", "-m", "all_trec", q, r], a.repeat),
                      "trec_eval": ([str(a.trec_eval), "-q", "-m", "all_trec", q, r], a.repeat)})
        (t1, rss1, tk_out), (t2, rss2, te_out) = aq["treckit"], aq["trec_eval"]
        print(f"\n`-q -m all_trec` ({len(te_out):,} bytes of output): treckit {t1:.2f} s, {rss1:.0f} MiB; trec_eval "
              f"{t2:.2f} s, {rss2:.0f} MiB ({t2 / t1:.1f}x); byte-identical: {'yes' if te_out == tk_out else 'NO'}")
    print(f"\n## Conversion to TREC ({lines:,} lines)\n")
    print("| input | treckit run (s) | peak RSS (MiB) | plain Python (s) | ratio |")
    print("|---|---|---|---|---|")
    for kind in ("jsonl", "run"):
        src = str(paths[kind])
        conv = best_of({
            "treckit": ([treckit, "run", src, "-o", str(a.out / f"converted.{tag}.{kind}.trec"), "--run-name", "treckit",
                         "--order", "desc"], a.repeat),
            "plain": ([PY, "-c", PLAIN_CONVERT, src, str(a.out / f"plain.{tag}.{kind}.trec")], 1)})
        (t1, rss1, _), (t2, _, _) = conv["treckit"], conv["plain"]
        print(f"| {'JSONL' if kind == 'jsonl' else 'TREC'} | {t1:.2f} | {rss1:.0f} | {t2:.2f} | {t2 / t1:.1f}x |")
    print("\n## Start-up\n")
    data = ROOT.parent / "shared" / "data" / "trec_eval"
    t_py = timed_command([PY, "-c", "pass"], a.repeat)
    t_help = timed_command([treckit, "--help"], a.repeat)
    print(f"- bare `python -c pass`: {t_py:.2f} s")
    print(f"- `treckit --help`: {t_help:.2f} s")
    if data.is_dir():
        t_small = timed_command([treckit, "eval", str(data / "qrels.test"), str(data / "results.test")], a.repeat)
        print(f"- `treckit eval qrels.test results.test` (1,500 run lines, official measures): {t_small:.2f} s")


if __name__ == "__main__":
    main()
