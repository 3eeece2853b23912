"""gdeval's and ndeval's measures: the reference tools and ir_measures side by side with treckit's.

    .venv/bin/python -m bench.reference_bench [--queries 200] [--docs 1000] [--k 20] [--repeat 3] [--budget-only]

Data: bench/generate.py's seeded run and qrels (grades 1-3, score ties), and subtopic qrels made from those
qrels (``generate.subtopic_qrels``, seeded): each judged document on 1-3 of 6 subtopics for ndeval and pyndeval,
on one for treckit eval's budget.  Timed, best of --repeat wall times:

* ``treckit eval -m ERR@K -m alpha_nDCG@K -m nDCG@10`` (and with ``gdeval.nDCG@K`` for ``alpha_nDCG@K``) against
  ``treckit eval -m ndcg_cut.10``, on the subtopic qrels judging each document once (the issue's budget: at most
  1.5x on the 7M-line benchmark run, ``--queries 7000 --docs 1000``);
* gdeval: ``perl gdeval.pl QRELS RUN K``; ``treckit gdeval QRELS RUN K`` (the command, reading included);
  treckit's kernel alone (nDCG@k and ERR@k from arrays of judgments); ir_measures' ERR@k and
  nDCG(dcg='exp-log2')@k (its gdeval provider: it writes the files and runs gdeval.pl);
* C/W/L: ir_measures' INST, RBP(rel=1), SDCG@10 (its cwl_eval provider) and treckit's ``cwl.evaluate``;
* ndeval: an ndeval binary if $TRECKIT_NDEVAL names one; ``treckit ndeval`` (the command); pyndeval on the
  run ranked by score (its Python API); treckit's ``diversity.evaluate`` on the same; ir_measures'
  alpha_nDCG@20, ERR_IA@20, NRBP, P_IA@20, StRecall@20 (its pyndeval provider).

Commands run as fresh processes (start-up included); the APIs in this process, their inputs already in memory.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def command(argv: list[str]):
    return lambda: subprocess.run(argv, check=True, capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget-only", action="store_true",
                    help="time only treckit eval's budget rows (the reference tools take minutes at 7M lines)")
    a = ap.parse_args()
    from .generate import generate, subtopic_qrels

    from treckit.inputs.formats import gdeval as gd_reading
    from treckit.measures import diversity as dv
    from treckit.measures import gdeval as gd
    out = ROOT / "outputs" / "bench" / f"reference_{a.queries}x{a.docs}"
    paths = generate(out, a.queries, a.docs)
    run, qrels = str(paths["run"]), str(paths["qrels"])
    # ndeval's and pyndeval's timings: each judged document on 1-3 of 6 subtopics; treckit eval's budget: on one
    # (the file then serves the trec_eval and gdeval names beside alpha_nDCG, which read the grade of a document)
    subtopics = str(subtopic_qrels(Path(qrels), out / "subtopic_qrels", most=3))
    one_each = str(subtopic_qrels(Path(qrels), out / "subtopic_qrels_one_each"))
    treckit_cli = str(Path(sys.executable).with_name("treckit"))
    script = Path(os.environ.get("TRECKIT_GDEVAL", ROOT.parent / "shared" / "tools" / "gdeval.pl"))
    lines = sum(1 for _ in open(run))
    rows = []

    def row(what: str, seconds: float | None, note: str = "") -> None:
        rows.append((what, seconds, note))
        shown = "-" if seconds is None else f"{seconds:.3f} s"
        print(f"{what:<58} {shown:>10}  {note}", file=sys.stderr)

    print(f"{a.queries} queries x {a.docs} docs = {lines:,} run lines, k = {a.k}", file=sys.stderr)
    # ---- the budget: the new measures by name beside trec_eval's nDCG@10, against ndcg_cut.10 alone
    alone = best(command([treckit_cli, "eval", "-m", "ndcg_cut.10", one_each, run]), a.repeat)
    row("treckit eval -m ndcg_cut.10", alone)
    for names in ([f"ERR@{a.k}", f"alpha_nDCG@{min(a.k, 20)}", "nDCG@10"], [f"ERR@{a.k}", f"gdeval.nDCG@{a.k}", "nDCG@10"]):
        together = best(command([treckit_cli, "eval", *[x for n in names for x in ("-m", n)], one_each, run]),
                        a.repeat)
        row(f"treckit eval -m {' -m '.join(names)}", together,
            f"{together / alone:.2f}x ndcg_cut.10 alone (budget 1.5x)")
    if a.budget_only:
        return 0
    # ---- gdeval
    if script.is_file():
        row("gdeval.pl (perl)", best(command(["perl", str(script), qrels, run, str(a.k)]), a.repeat))
    row("treckit gdeval (command)", best(command([treckit_cli, "gdeval", qrels, run, str(a.k)]), a.repeat))
    q = gd_reading.read_qrels(qrels)
    r = gd_reading.read_run(run, q)
    runs = gd.concatenated(r.gains)
    ideals = gd.concatenated([q.ideal_gains[t] for t in r.topics])
    row("treckit gdeval kernel (nDCG@k + ERR@k from arrays)", best(lambda: gd.ndcg_err(*runs, *ideals, a.k), a.repeat))
    row("treckit gdeval reading (Perl's rules, in process)", best(lambda: gd_reading.read_run(run, q), a.repeat))

    def irm_gdeval():
        import ir_measures
        ir_measures.calc_aggregate([ir_measures.parse_measure(f"ERR@{a.k}"),
                                    ir_measures.parse_measure(f"nDCG(dcg='exp-log2')@{a.k}")],
                                   ir_measures.read_trec_qrels(qrels), ir_measures.read_trec_run(run))
    row("ir_measures ERR@k + nDCG(dcg='exp-log2')@k (runs gdeval.pl)", best(irm_gdeval, a.repeat))
    # ---- ndeval
    ndeval = os.environ.get("TRECKIT_NDEVAL")
    if ndeval:
        row("ndeval (C, -traditional)", best(command([ndeval, "-traditional", subtopics, run]), a.repeat))
    row("treckit ndeval --traditional (command)",
        best(command([treckit_cli, "ndeval", "--traditional", subtopics, run]), a.repeat))
    sub_rows = [(x[0], x[1], x[2], int(x[3])) for x in (line.split() for line in open(subtopics))]
    ranked: dict = {}
    for line in open(run):
        f = line.split()
        ranked.setdefault(f[0], {})[f[2]] = float(f[4])
    flat = [(qid, d, s) for qid, docs in ranked.items() for d, s in docs.items()]
    measures = [f"alpha-nDCG@{min(a.k, 20)}", f"ERR-IA@{min(a.k, 20)}", "NRBP", f"P-IA@{min(a.k, 20)}",
                f"strec@{min(a.k, 20)}"]
    try:
        import pyndeval
        row("pyndeval (qrels prepared + run evaluated)", best(
            lambda: pyndeval.RelevanceEvaluator(sub_rows, measures).evaluate(flat), a.repeat))
    except ImportError:
        row("pyndeval", None, "not installed (the bench extra)")
    row("treckit diversity.evaluate (same)", best(lambda: dv.evaluate(dv.prepare(sub_rows), ranked, measures),
                                                  a.repeat))

    def irm_div():
        import contextlib
        import io

        import ir_measures
        names = [f"alpha_nDCG@{min(a.k, 20)}", f"ERR_IA@{min(a.k, 20)}", "NRBP", f"P_IA@{min(a.k, 20)}",
                 f"StRecall@{min(a.k, 20)}"]
        qr = [ir_measures.Qrel(x[0], x[2], x[3], x[1]) for x in sub_rows]
        with contextlib.redirect_stderr(io.StringIO()):
            ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], qr, ranked)
    row("ir_measures alpha_nDCG, ERR_IA, NRBP, P_IA, StRecall (pyndeval)", best(irm_div, a.repeat))
    # ---- C/W/L
    from treckit.measures import cwl
    plain = [x.split() for x in open(qrels)]
    grades = [(x[0], x[2], int(x[3])) for x in plain]
    specs = [("INST", {"T": 1.0, "max_rel": 3}), ("RBP", {"p": 0.8, "rel": 1}),
             ("SDCG", {"cutoff": 10, "max_rel": 3})]

    def irm_cwl():
        import logging

        import ir_measures
        logging.disable(logging.WARNING)
        qr = [ir_measures.Qrel(q, d, g) for q, d, g in grades]
        ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in ("INST(max_rel=3)", "RBP(rel=1)",
                                                                           "SDCG(max_rel=3)@10")], qr, ranked)
        logging.disable(logging.NOTSET)
    row("ir_measures INST, RBP(rel=1), SDCG@10 (cwl_eval)", best(irm_cwl, a.repeat))
    row("treckit cwl.evaluate (same)", best(lambda: [cwl.evaluate(grades, ranked, n, p) for n, p in specs], a.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
