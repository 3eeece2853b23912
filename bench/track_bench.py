"""A TREC track's run (50 queries x 1,000 docs, two-decimal scores): treckit against trec_eval 10.0, pytrec_eval
and ir_measures, from the command line and in a process (issue #33, targets 1 and 2).

    .venv/bin/python -m bench.track_bench [--pairs 9] [--calls 15] [--trec-eval ../shared/tools/trec_eval]
                                          [--only cli|api] [--out outputs/track_bench]

The data is bench/generate.py's at 50 x 1,000 (its defaults otherwise); every tool computes
``map ndcg_cut.10 recall.1000``.

**Command line.**  Each tool runs as a fresh process (run_bench's shim: wall, CPU and the process's own peak
RSS), the tools taking turns pair by pair (treckit, then the other, in an order that alternates), and the
ratio treckit / other is taken pair by pair: its median is the figure to read on a shared machine.  The
peers: trec_eval 10.0, a pytrec_eval script (read both files, evaluate, print the means) and ir_measures'
command.  ``treckit --help`` and shell completion (``_TRECKIT_COMPLETE=complete_bash``) are timed the same way.
Python writes no bytecode cache when PYTHONDONTWRITEBYTECODE is set (this machine's shells set it): the
processes run without it, as a user's do, so that imports read compiled modules after the first run.

**In a process.**  ``--calls`` rounds in one process (after one warm-up call each), every call once a round in a
rotating order, each divided by pytrec_eval's time of the same round; the medians:
``treckit.evaluate`` from the two files, from DataFrames (PyTerrier's ``qid/docno/score`` run with
``qid/docno/label`` qrels, ir_measures' ``query_id/doc_id/score`` with ``query_id/doc_id/relevance``) and from
``{qid: {docid: value}}`` dicts; pytrec_eval on the dicts built beforehand (a ``RelevanceEvaluator`` made and
run per call, since treckit reads the qrels per call too); ir_measures' ``calc_aggregate`` on the dicts.  The
per-call overhead is ``treckit.evaluate`` on a 1-query, 10-doc run from dicts.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from .generate import generate
from .run_bench import PY, REST_SECONDS, measured_in_detail

ROOT = Path(__file__).resolve().parents[1]
QUERIES, DOCS = 50, 1000
MEASURES = ["map", "ndcg_cut.10", "recall.1000"]
TRECKIT = str(Path(PY).with_name("treckit"))

PYTREC_EVAL_SCRIPT = """
import sys, pytrec_eval
with open(sys.argv[1]) as fh:
    qrels = pytrec_eval.parse_qrel(fh)
with open(sys.argv[2]) as fh:
    run = pytrec_eval.parse_run(fh)
res = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "recall.1000"}).evaluate(run)
for m in ("map", "ndcg_cut_10", "recall_1000"):
    print(m, "all", "%.4f" % (sum(r[m] for r in res.values()) / len(res)))
"""


def data(out: Path) -> tuple[Path, Path]:
    paths = generate(out, QUERIES, DOCS)
    return paths["qrels"], paths["run"]


def environment() -> dict:
    """The benchmark's processes' environment: bytecode cached, as a user's Python does."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


# ---------------------------------------------------------------- whole processes
def commands(qrels: Path, run: Path, trec_eval: str | None) -> dict[str, list[str]]:
    flags = [a for m in MEASURES for a in ("-m", m)]
    tools = {"treckit eval": [TRECKIT, "eval", *flags, str(qrels), str(run)]}
    if trec_eval:
        tools["trec_eval 10.0"] = [trec_eval, *flags, str(qrels), str(run)]
    tools["pytrec_eval script"] = [PY, "-c", PYTREC_EVAL_SCRIPT, str(qrels), str(run)]
    ir_measures = Path(PY).with_name("ir_measures")
    if ir_measures.exists():
        tools["ir_measures command"] = [str(ir_measures), str(qrels), str(run), "AP R@1000 nDCG@10"]
    return tools


def paired(a: list[str], b: list[str], pairs: int, env: dict) -> dict:
    """A and B in turn ``pairs`` times (B first every other pair): each one's medians, and the median of the
    pair-by-pair ratios A / B of wall and CPU time."""
    rows = {"a": [], "b": []}
    measured_in_detail(a)                           # warm-up: bytecode written, files in the page cache
    measured_in_detail(b)
    for i in range(pairs):
        order = (("a", a), ("b", b)) if i % 2 == 0 else (("b", b), ("a", a))
        for name, argv in order:
            time.sleep(REST_SECONDS)
            wall, rss, _, cpu, _ = measured_in_detail(argv)
            rows[name].append((wall, cpu, rss))
    med = {k: [statistics.median(r[j] for r in v) for j in range(3)] for k, v in rows.items()}
    ratio = [statistics.median(x[j] / y[j] for x, y in zip(rows["a"], rows["b"])) for j in range(2)]
    return {"a": med["a"], "b": med["b"], "wall_ratio": ratio[0], "cpu_ratio": ratio[1], "a_rows": rows["a"]}


def cli(qrels: Path, run: Path, trec_eval: str | None, pairs: int) -> None:
    env = environment()
    os.environ.clear()
    os.environ.update(env)                          # run_bench's shim passes this process's environment on
    tools = commands(qrels, run, trec_eval)
    ours = tools.pop("treckit eval")
    outputs = {name: measured_in_detail(argv)[2] for name, argv in [("treckit eval", ours), *tools.items()]}
    if trec_eval:
        same = outputs["treckit eval"] == outputs["trec_eval 10.0"]
        print(f"treckit eval's output {'is' if same else 'IS NOT'} trec_eval's, byte for byte")
    print(f"{'tool':<22} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9}   treckit / tool: wall, cpu (median of pairs)")
    ours_rows = []
    for name, argv in tools.items():
        r = paired(ours, argv, pairs, env)
        ours_rows += r["a_rows"]
        print(f"{name:<22} {r['b'][0]:8.3f} {r['b'][1]:8.3f} {r['b'][2]:9.1f}   {r['wall_ratio']:.2f}x, {r['cpu_ratio']:.2f}x")
    med = [statistics.median(r[j] for r in ours_rows) for j in range(3)]
    print(f"{'treckit eval':<22} {med[0]:8.3f} {med[1]:8.3f} {med[2]:9.1f}   (all its runs above)")
    help_cmd = [TRECKIT, "--help"]
    completion = ["env", "_TRECKIT_COMPLETE=complete_bash", "COMP_WORDS=treckit ev", "COMP_CWORD=1", TRECKIT]
    for name, argv in (("treckit --help", help_cmd), ("completion", completion)):
        r = paired(argv, ours, pairs, env)
        print(f"{name:<22} {r['a'][0]:8.3f} {r['a'][1]:8.3f} {r['a'][2]:9.1f}   "
              f"{r['wall_ratio']:.2f}x treckit eval's wall")


# ---------------------------------------------------------------- in a process
def trec_dicts(qrels: Path, run: Path) -> tuple[dict, dict]:
    q: dict = {}
    for line in qrels.read_text().splitlines():
        qid, _, doc, grade = line.split()
        q.setdefault(qid, {})[doc] = int(grade)
    r: dict = {}
    for line in run.read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        r.setdefault(qid, {})[doc] = float(score)
    return q, r


def frames(q: dict, r: dict):
    import pandas as pd

    qrows = [(qid, d, g) for qid, docs in q.items() for d, g in docs.items()]
    rrows = [(qid, d, s) for qid, docs in r.items() for d, s in docs.items()]
    return {"PyTerrier": (pd.DataFrame(qrows, columns=["qid", "docno", "label"]),
                          pd.DataFrame(rrows, columns=["qid", "docno", "score"])),
            "ir_measures": (pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"]),
                            pd.DataFrame(rrows, columns=["query_id", "doc_id", "score"]))}


def rounds(calls: dict, count: int) -> dict[str, tuple[float, float]]:
    """{name: (median ms, median ratio to the first call)}: every call once a round, in an order that rotates
    round by round, each round's times divided by the first call's of the same round (a shared machine's speed
    drifts from round to round, less within one)."""
    names = list(calls)
    for name in names:
        calls[name]()                               # warm-up: lazy imports, caches
    times = {n: [] for n in names}
    for i in range(count):
        for name in names[i % len(names):] + names[:i % len(names)]:
            t = time.perf_counter()
            calls[name]()
            times[name].append(time.perf_counter() - t)
    base = times[names[0]]
    return {n: (statistics.median(t) * 1000, statistics.median(x / b for x, b in zip(t, base)))
            for n, t in times.items()}


def api(qrels: Path, run: Path, calls: int) -> None:
    import ir_measures
    import pytrec_eval
    import treckit

    q, r = trec_dicts(qrels, run)
    dfs = frames(q, r)
    names = {"map", "ndcg_cut.10", "recall.1000"}
    rows = {"pytrec_eval, dicts": lambda: pytrec_eval.RelevanceEvaluator(q, names).evaluate(r)}
    ours = {"treckit.evaluate, files": lambda: treckit.evaluate(str(qrels), str(run), MEASURES)}
    for kind, (dq, dr) in dfs.items():
        ours[f"treckit.evaluate, {kind} DataFrames"] = lambda dq=dq, dr=dr: treckit.evaluate(dq, dr, MEASURES)
    ours["treckit.evaluate, dicts"] = lambda: treckit.evaluate(q, r, MEASURES)
    rows.update(ours)
    parsed = [ir_measures.parse_measure(m) for m in ("AP", "nDCG@10", "R@1000")]
    rows["ir_measures, dicts"] = lambda: ir_measures.calc_aggregate(parsed, q, r)
    one_q, one_r = {"1": {"d1": 1, "d4": 2}}, {"1": {f"d{i}": float(10 - i) for i in range(10)}}
    rows["treckit.evaluate, 1 query"] = lambda: treckit.evaluate(one_q, one_r, MEASURES)
    check = treckit.evaluate(str(qrels), str(run), MEASURES).set_index("qid").loc["all"]
    ref = pytrec_eval.RelevanceEvaluator(q, names).evaluate(r)
    agree = all(abs(check[m.replace(".", "_")] - statistics.fmean(v[m.replace(".", "_")] for v in ref.values())) < 1e-12
                for m in MEASURES)
    print(f"treckit.evaluate {'agrees' if agree else 'DOES NOT AGREE'} with pytrec_eval on the means")
    print(f"{'call':<42} {'median ms':>10}   / pytrec_eval (median of rounds)")
    for name, (ms, ratio) in rounds(rows, calls).items():
        print(f"{name:<42} {ms:10.2f}   {ratio:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=9)
    ap.add_argument("--calls", type=int, default=15)
    ap.add_argument("--trec-eval", default=None)
    ap.add_argument("--only", choices=["cli", "api"], default=None)
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "track_bench")
    args = ap.parse_args()
    qrels, run = data(args.out)
    print(f"{QUERIES} x {DOCS} run: {run} ({run.stat().st_size / 1e6:.1f} MB); load average "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    if args.only != "api":
        cli(qrels, run, args.trec_eval, args.pairs)
    if args.only != "cli":
        api(qrels, run, args.calls)
    print("load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
