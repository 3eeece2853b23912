"""Differential fuzz against the reference tools of gdeval's and ndeval's measures, on seeded random cases.

* ``gdeval``: ``treckit.output.gdeval.gdeval_csv`` against ``perl gdeval.pl QRELS RUN K`` (../shared/tools/gdeval.pl
  or $TRECKIT_GDEVAL): the same bytes on stdout, or both refusing the input;
* ``pyndeval``: ``treckit.measures.diversity.evaluate`` against ``pyndeval.RelevanceEvaluator`` (the ndeval C code
  ir_measures calls for alpha_nDCG, ERR_IA, NRBP, ...): the same doubles, bit for bit (NaN where NaN), for every
  query and every measure, with random alpha, beta and relevance level; every fifth case also through
  ir_measures' own names (alpha_nDCG@k, ERR_IA@k, NRBP, nNRBP, AP_IA, P_IA@k, StRecall@k), where a judged
  query the run lacks must get 0 (ir_measures' rule: every judged query has a value);
* ``pyndeval-names``: ``treckit.evaluate`` with ir_measures' diversity names (alpha_nDCG(rel=.., alpha=..,
  judged_only=..)@k, NRBP(alpha=.., beta=..), ...) over subtopic qrels, against pyndeval called as ir_measures calls
  it (the run filtered to judged documents for judged_only, which ir_measures 0.4.3 fails on), every fifth case
  also against ir_measures itself: the same doubles for every query both judged and in the run;
* ``ndeval``: ``treckit.output.ndeval.ndeval_table`` against an ndeval binary ($TRECKIT_NDEVAL; build one with
  ``gcc -O2 -o ndeval src/ndeval.c -lm`` from the pyndeval source package): the same bytes, or both refusing;
* ``compat``: ``treckit.evaluate`` with ``Compat`` (random ``p``, ``normalize``) against ir_measures' compat provider:
  the same doubles for every query both judged and in the run;
* ``cwl``: ``treckit.measures.cwl.evaluate`` against ir_measures' cwl_eval provider (cwl-eval's code) for INST,
  INSQ, RBP, BPM, SDCG and NERR8-11 with random parameters: the same doubles for every query (a judged query the
  run lacks gets 0 there, none here).

    python tests/fuzz_reference.py [--tool gdeval|gdeval-names|pyndeval|pyndeval-names|ndeval|cwl|compat|all] [--cases N]
        [--start S] [--out DIR]

Each difference is written to DIR/<tool>/<seed>/ (the inputs, both outputs) and listed in DIR/SUMMARY.txt.
Inputs treckit refuses on purpose where the tool answers (KNOWN_REFUSALS) count as known, not as differences.
"""
from __future__ import annotations

import argparse
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from treckit.console.errors import InputError

TIMEOUT = 60
# what treckit refuses on purpose where the reference tool prints something (tests/measures/test_gdeval.py and
# tests/measures/test_diversity.py pin each): the words of the refusal -> why
KNOWN_REFUSALS = {
    "is NaN": "gdeval.pl's order of a NaN score depends on its sort algorithm",
    "holds '%'": "gdeval.pl prints the run id inside a printf format",
    "comparison is then circular": "Perl compares these scores in a circle; the order depends on its merge sort",
    "qrels file is empty": "gdeval.pl prints its header alone; treckit refuses an empty qrels as eval and ndeval do",
}


def gdeval_path() -> Path | None:
    p = Path(os.environ.get("TRECKIT_GDEVAL", ROOT.parent / "shared" / "tools" / "gdeval.pl"))
    return p if p.is_file() and shutil.which("perl") else None


def ndeval_path() -> Path | None:
    p = os.environ.get("TRECKIT_NDEVAL")
    return Path(p) if p and Path(p).is_file() else None


# ------------------------------------------------------------------ gdeval cases
@dataclass
class GdevalCase:
    seed: int
    qrels: bytes
    run: bytes
    k: str


def _topic_text(r: random.Random, topic: int) -> str:
    x = r.random()
    if x < 0.08:
        return f"wt{r.randint(9, 12)}-{topic}"
    if x < 0.11:
        return f"a-b-{topic}"
    if x < 0.14:
        return f"0{topic}"                    # the same number written another way
    return str(topic)


def _docno(r: random.Random) -> str:
    x = r.random()
    if x < 0.05:
        return r.choice(["D-1", "doc:1", "Ä1", "x#y", "Z", "a", "A"])
    return f"d{r.randint(0, 40)}"


def _perl_score(r: random.Random) -> str:
    x = r.random()
    if x < 0.35:
        return str(r.randint(-3, 6))
    if x < 0.7:
        return f"{r.uniform(-5, 5):.{r.randint(0, 6)}f}"
    if x < 0.8:
        return f"{r.uniform(0, 1):.3e}"
    if x < 0.84:
        return str(r.choice([2 ** 53 + 1, 2 ** 53, 2 ** 60 + 3, -(2 ** 62)]) + r.randint(0, 2))
    if x < 0.87:
        return r.choice(["1.5abc", "abc", ".5", "1e", "+3", "inf", "-inf", "1_000", "0x10", "9007199254740993.0"])
    return f"{r.randint(0, 3)}.{r.choice(['0', '5', '25', '50'])}"


def gdeval_case(seed: int) -> GdevalCase:
    """Mostly inputs gdeval.pl reads (odd but valid: prefixed or zero-led topics, CRLF, tabs, extra fields, words
    as numbers, ties, integers beyond 2^53, duplicates); one case in seven carries one line gdeval.pl refuses,
    one in fifty a NaN score or a run id with '%' (which treckit refuses on purpose)."""
    r = random.Random(seed)
    plain = r.random() < 0.35             # nothing odd in the run: the path that reads it with the regex engine
    pool = r.sample(range(1, 12), r.randint(1, 6))
    qlines, rlines = [], []
    for t in pool:
        for _ in range(r.randint(0, 25)):
            second = r.choice(["0"] * 30 + ["Q0", "00", "0.0", "-0"])
            grade = r.choice([-2, -1, 0, 0, 1, 1, 1, 2, 2, 3, 4])
            extra = " extra" if r.random() < 0.03 else ""
            qlines.append(f"{_topic_text(r, t)} {second} {_docno(r)} {grade}{extra}")
    runid = "runA" if r.random() < 0.8 else r.choice(["STANDARD", "r-2", "00", "x"])
    for t in r.sample(pool + [12, 13], r.randint(0, min(5, len(pool) + 2))):
        for i in range(r.randint(1, 40)):
            sep = r.choice(["\t", "\t", " \x0b", "\x0c "]) if r.random() < 0.3 and not plain else r.choice(" \t")
            extra = " extra" if r.random() < 0.03 else ""
            tag = runid if r.random() < 0.95 else "other"
            score = _perl_score(r)
            while plain and not (re.fullmatch(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", score)
                                 and abs(float(score)) < 2 ** 53):
                score = _perl_score(r)
            rlines.append(sep.join([_topic_text(r, t), "Q0", _docno(r), str(r.randint(0, 999)), score, tag]) + extra)
    if rlines and r.random() < 0.5:
        rlines.append(rlines[-1].replace("other", runid))          # the last line's run id is printed
    r.shuffle(qlines)
    r.shuffle(rlines)
    x = r.random()
    if x < 1 / 7:                                                    # one line gdeval.pl refuses
        bad = r.choice([("q", "1 1 d1 1"), ("q", "1 0 d1 5"), ("q", "1 0 d1 x"), ("q", ""), ("q", "x 0 d1 1"),
                        ("q", "1 0 d1"), ("r", "1 Q1 d1 1 1 runA"), ("r", "1 Q0 d1 x 1 runA"), ("r", ""),
                        ("r", "1 Q0 d1 1 1 0"), ("r", "1 Q0 d1 1 1"), ("r", "x-y Q0 d1 1 1 runA")])
        target = qlines if bad[0] == "q" else rlines
        target.insert(r.randint(0, len(target)), bad[1])
    elif x < 1 / 7 + 0.02 and rlines:                                # refused by treckit on purpose
        rlines.append(r.choice(["1 Q0 d1 1 nan runA", "1 Q0 d1 1 1 run%s"]))
    newline = "\r\n" if r.random() < 0.1 and not plain else "\n"
    q = newline.join(qlines) + (newline if qlines else "")
    run = newline.join(rlines) + (newline if rlines and r.random() < 0.9 else "")
    k = str(r.choice([1, 2, 3, 5, 10, 20, 100, 1000]))
    return GdevalCase(seed, q.encode(), run.encode(), k)


def gdeval_compare(c: GdevalCase, tmp: Path, script: Path) -> dict | None:
    """None when treckit prints gdeval.pl's bytes (or both refuse); else what differs."""
    from treckit.output.gdeval import gdeval_csv
    tmp.mkdir(parents=True, exist_ok=True)
    qp, rp = tmp / "qrels", tmp / "run"
    qp.write_bytes(c.qrels)
    rp.write_bytes(c.run)
    ref = subprocess.run(["perl", str(script), str(qp), str(rp), c.k], capture_output=True, timeout=TIMEOUT)
    try:
        ours, refused = gdeval_csv(str(qp), str(rp), c.k, warn=None), None
    except InputError as exc:
        ours, refused = b"", str(exc)
    if ref.returncode != 0 and refused is not None:
        return None
    if ref.returncode == 0 and refused is None and ref.stdout == ours:
        return None
    known = next((why for words, why in KNOWN_REFUSALS.items() if refused and words in refused), None)
    return {"known": known, "reference": ref.stdout + ref.stderr, "treckit": ours if refused is None else
            refused.encode(), "files": {"qrels": c.qrels, "run": c.run, "k": c.k.encode()}}


def gdeval_names_case(seed: int) -> GdevalCase:
    """A case both readings read alike (trec_eval's reading for ``treckit eval`` and Perl's for gdeval.pl):
    numeric topics written one way, each document judged and retrieved once per topic, plain decimal scores with
    ties, judgments -1..4."""
    r = random.Random(seed)
    pool = r.sample(range(1, 12), r.randint(1, 6))
    qlines, rlines = [], []
    for t in pool:
        for d in r.sample(range(40), r.randint(0, 25)):
            qlines.append(f"{t} 0 d{d} {r.choice([-1, 0, 0, 1, 1, 1, 2, 2, 3, 4])}")
    qlines = qlines or [f"{pool[0]} 0 d0 1"]        # treckit eval refuses an empty qrels file, gdeval.pl does not
    for t in r.sample(pool + [12], r.randint(1, len(pool) + 1)):
        for d in r.sample(range(40), r.randint(1, 40)):
            score = r.choice([str(r.randint(-3, 6)), f"{r.uniform(-5, 5):.{r.randint(0, 6)}f}"])
            rlines.append(f"{t} Q0 d{d} {r.randint(0, 999)} {score} runA")
    r.shuffle(qlines)
    r.shuffle(rlines)
    return GdevalCase(seed, ("\n".join(qlines) + "\n").encode(), ("\n".join(rlines) + "\n").encode(),
                      str(r.choice([1, 2, 3, 5, 10, 20, 100])))


def gdeval_names_compare(c: GdevalCase, tmp: Path, script: Path) -> dict | None:
    """``treckit eval -m gdeval.nDCG@k -m ERR@k`` against gdeval.pl's printed values (5 decimals) and against the
    doubles of treckit's gdeval reading (gdeval.pl's own, bit for bit, as the gdeval fuzz proves); a query
    gdeval.pl does not print (no judgment above 0) must be 0.  None when all agree."""
    import treckit
    from treckit.inputs.formats import gdeval as reading
    from treckit.measures import gdeval as kernels
    tmp.mkdir(parents=True, exist_ok=True)
    qp, rp = tmp / "qrels", tmp / "run"
    qp.write_bytes(c.qrels)
    rp.write_bytes(c.run)
    ref = subprocess.run(["perl", str(script), str(qp), str(rp), c.k], capture_output=True, timeout=TIMEOUT)
    printed = {ln.split(b",")[1].decode(): (float(ln.split(b",")[2]), float(ln.split(b",")[3]))
               for ln in ref.stdout.splitlines()[1:]} if ref.returncode == 0 else None
    try:
        df = treckit.evaluate(str(qp), str(rp), [f"gdeval.nDCG@{c.k}", f"ERR@{c.k}"], warn=lambda m: None)
        ours = {q: (n, e) for q, n, e in df[df.qid != "all"].itertuples(index=False)}
    except InputError as exc:
        ours = str(exc)
    exact = None
    if printed is not None:
        q = reading.read_qrels(str(qp), warn=None)
        res = kernels.evaluate(q, reading.read_run(str(rp), q, warn=None), int(c.k))
        exact = {t.decode(): (n, e) for t, n, e in zip(res.topics, res.ndcg.tolist(), res.err.tolist())}
    problems = []
    if isinstance(ours, str):          # treckit eval has no query to evaluate, gdeval.pl no topic to print
        if printed or "no queries with both" not in ours:
            problems.append(f"treckit eval refused: {ours}")
    elif printed is None:
        problems.append("gdeval.pl refused, treckit eval did not")
    else:
        for qid, values in ours.items():
            want = exact.get(qid, (0.0, 0.0))
            if values != want or (qid in printed and any(abs(a - b) > 5.000001e-6 for a, b in zip(values, printed[qid]))):
                problems.append(f"{qid}: treckit eval {values}, gdeval.pl {printed.get(qid)}, exact {want}")
        problems += [f"{qid}: printed by gdeval.pl, not evaluated" for qid in set(printed) - set(ours)]
    if not problems:
        return None
    return {"known": None, "reference": ref.stdout + ref.stderr, "treckit": "\n".join(problems).encode(),
            "files": {"qrels": c.qrels, "run": c.run, "k": c.k.encode()}}


# ------------------------------------------------------------------ diversity cases
@dataclass
class DiversityCase:
    seed: int
    qrels: list                   # (qid, subtopic, doc, grade)
    run: dict                     # qid -> {doc: score}
    alpha: float
    beta: float
    rel: int
    measures: list


def diversity_case(seed: int) -> DiversityCase:
    r = random.Random(seed)
    qrels, run = [], {}
    subtopic_names = r.choice([[str(i) for i in range(8)], ["1", "01", "a", "b", "2", "x-1", "3", "4"]])
    for q in range(r.randint(1, 5)):
        qid = r.choice([f"q{q}", str(q), f"Q-{q}"])
        docs = sorted({_docno(r) for _ in range(r.randint(0, 30))})        # sorted: the same case in every process
        for d in docs:
            for s in r.sample(subtopic_names, r.randint(0, 4)):
                qrels.append((qid, s, d, r.choice([-1, 0, 0, 1, 1, 1, 2, 3])))
        if r.random() < 0.05 and qrels:
            qrels.append(r.choice(qrels)[:3] + (r.choice([0, 1]),))     # a (doc, subtopic) judged twice
        if r.random() < 0.85:
            ranked = {}
            for _ in range(r.randint(1, 40)):
                ranked[_docno(r)] = r.choice([float(r.randint(0, 5)), r.uniform(-3, 3), round(r.uniform(0, 1), 2)])
            run[qid] = ranked
    if r.random() < 0.2:
        run["only-run"] = {"d1": 1.0}
    r.shuffle(qrels)
    alpha = r.choice([0.5, 0.5, 0.5, 0.0, 0.1, 0.3, 0.75, 0.9, 1.0])
    beta = r.choice([0.5, 0.5, 0.0, 0.2, 0.8, 1.0])
    rel = r.choice([1, 1, 1, 2, 0])
    cut = [r.randint(1, 20) for _ in range(3)]
    measures = [f"{m}@{c}" for m in ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "P-IA", "strec") for c in cut]
    measures += ["NRBP", "nNRBP", "MAP-IA"]
    return DiversityCase(seed, qrels, run, alpha, beta, rel, measures)


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def pyndeval_compare(c: DiversityCase, with_ir_measures: bool = False) -> dict | None:
    """None when every value is pyndeval's double (and ir_measures', when asked); else the first differences."""
    import pyndeval

    from treckit.measures import diversity as dv
    rows = [(q, d, s) for q, docs in c.run.items() for d, s in docs.items()]
    ref = pyndeval.RelevanceEvaluator(c.qrels, c.measures, relevance_level=c.rel, alpha=c.alpha,
                                      beta=c.beta).evaluate(rows)
    ours = dv.evaluate(dv.prepare(c.qrels, alpha=c.alpha, beta=c.beta, rel=c.rel), c.run, c.measures)
    diffs = []
    if set(ref) != set(ours):
        diffs.append(f"queries: pyndeval {sorted(ref)}, treckit {sorted(ours)}")
    for q in set(ref) & set(ours):
        diffs += [f"{q} {m}: pyndeval {ref[q][m]!r}, treckit {ours[q][m]!r}" for m in c.measures
                  if not _same(ref[q][m], ours[q][m])]
    if with_ir_measures and not diffs:
        diffs += _ir_measures_differences(c, ours)
    if not diffs:
        return None
    return {"known": None, "reference": repr(ref).encode(), "treckit": "\n".join(diffs[:20]).encode(),
            "files": {"case": repr((c.qrels, c.run, c.alpha, c.beta, c.rel, c.measures)).encode()}}


IR_MEASURES_NAMES = {"ERR-IA": "ERR_IA", "nERR-IA": "nERR_IA", "alpha-DCG": "alpha_DCG", "alpha-nDCG": "alpha_nDCG",
                     "P-IA": "P_IA", "strec": "StRecall", "NRBP": "NRBP", "nNRBP": "nNRBP", "MAP-IA": "AP_IA"}


def _ir_measures_differences(c: DiversityCase, ours: dict) -> list[str]:
    """ir_measures' diversity names at ndeval's defaults for alpha and beta (its ERR_IA, nERR_IA and P_IA always
    run with alpha 0.5, and one call computes one parameter set), against treckit's values at those defaults."""
    import contextlib
    import io

    import ir_measures

    from treckit.measures import diversity as dv
    names = {}
    for m in c.measures:
        base, _, cut = m.partition("@")
        text = IR_MEASURES_NAMES[base] + f"(rel={c.rel})" + (f"@{cut}" if cut else "")
        names[ir_measures.parse_measure(text)] = m
    qrels = [ir_measures.Qrel(q, d, g, s) for q, s, d, g in c.qrels]
    run = [ir_measures.ScoredDoc(q, d, s) for q, docs in c.run.items() for d, s in docs.items()]
    with contextlib.redirect_stderr(io.StringIO()):          # its one-subtopic warning
        got = {(m.query_id, names[m.measure]): m.value for m in ir_measures.iter_calc(list(names), qrels, run)}
    mine = dv.evaluate(dv.prepare(c.qrels, rel=c.rel), c.run, c.measures)
    out = []
    for q, values in mine.items():
        for m, v in values.items():
            if (q, m) not in got or not _same(got[(q, m)], v):
                out.append(f"{q} {m}: ir_measures {got.get((q, m))!r}, treckit {v!r}")
    # ir_measures gives every judged query a value: one the run lacks gets the measure's DEFAULT (0)
    judged_not_ranked = {q for q, _, _, _ in c.qrels} - {q for q, docs in c.run.items() if docs}
    for (q, m), v in got.items():
        if q not in mine and (q not in judged_not_ranked or v != 0):
            out.append(f"{q} {m}: ir_measures {v!r}, treckit has no value")
    return out


# ------------------------------------------------------------------ diversity names in treckit eval's path
@dataclass
class DiversityNamesCase:
    seed: int
    qrels: list                   # (qid, subtopic, doc, grade), no (qid, subtopic, doc) twice
    run: dict                     # qid -> {doc: score}
    names: list                   # ir_measures' names with parameters


def diversity_names_case(seed: int) -> DiversityNamesCase:
    """A diversity case (its subtopic qrels without a (query, subtopic, doc) judged twice, which treckit refuses)
    with ir_measures' names at random parameters: rel, alpha, beta, judged_only, cutoffs 1-20."""
    c = diversity_case(seed)
    r = random.Random(seed + 1)
    seen, qrels = set(), []
    for q, s, d, g in c.qrels:
        if (q, s, d) not in seen:
            seen.add((q, s, d))
            qrels.append((q, s, d, g))
    rel = f"rel={c.rel}"
    judged = f", judged_only={r.random() < 0.3}"
    cut = r.randint(1, 20)
    names = [f"alpha_nDCG({rel}, alpha={c.alpha}{judged})@{cut}", f"alpha_DCG({rel}, alpha={c.alpha})@{r.randint(1, 20)}",
             f"ERR_IA({rel}{judged})@{r.randint(1, 20)}", f"nERR_IA({rel})@{cut}", f"P_IA({rel}{judged})@{cut}",
             f"StRecall({rel})@{r.randint(1, 20)}", f"NRBP({rel}, alpha={c.alpha}, beta={c.beta})",
             f"nNRBP({rel}, alpha={c.alpha}, beta={c.beta})", f"AP_IA({rel}{judged})"]
    return DiversityNamesCase(seed, qrels, c.run, names)


def _pyndeval_by_name(c: DiversityNamesCase, name: str) -> dict:
    """{query: value} of one ir_measures name as ir_measures computes it with pyndeval: its parameters mapped as
    its provider maps them, the run filtered to judged documents for judged_only (what its code does before it
    fails with a TypeError in 0.4.3)."""
    import ir_measures
    import pyndeval

    m = ir_measures.parse_measure(name)
    alpha = m["alpha"] if m.NAME in ("alpha_DCG", "alpha_nDCG", "NRBP", "nNRBP") else 0.5
    beta = m["beta"] if m.NAME in ("NRBP", "nNRBP") else 0.5
    ndeval_name = {"AP_IA": "MAP-IA", "StRecall": "strec"}.get(m.NAME, m.NAME.replace("_", "-"))
    if "cutoff" in m.params:
        ndeval_name += f"@{m['cutoff']}"
    judged = {(q, d) for q, _, d, _ in c.qrels}
    only = m.params.get("judged_only", False)
    rows = [(q, d, s) for q, docs in sorted(c.run.items()) for d, s in docs.items() if not only or (q, d) in judged]
    qrels = [pyndeval.SubtopicQrel(q, s, d, g) for q, s, d, g in c.qrels]
    got = pyndeval.RelevanceEvaluator(qrels, [ndeval_name], relevance_level=m["rel"], alpha=alpha,
                                      beta=beta).evaluate(rows)
    out = {q: v[ndeval_name] for q, v in got.items()}
    if only:          # a query left without documents gets ir_measures' default, 0 (it gives every judged query one)
        out.update({q: 0.0 for q in c.run if q not in out and any(x[0] == q for x in c.qrels)})
    return out


def diversity_names_compare(c: DiversityNamesCase, with_ir_measures: bool = False) -> dict | None:
    """treckit.evaluate with ir_measures' names (the path of treckit eval: the registry, the ranking with docno
    ascending ties, the subtopic qrels read from the iteration field) against pyndeval as ir_measures calls it;
    ``with_ir_measures``: also against ir_measures itself (its names without judged_only=True)."""
    import treckit
    from treckit.model import Qrels

    shared = sorted({q for q, _, _, _ in c.qrels} & {q for q, docs in c.run.items() if docs})
    if not shared:
        return None
    qrels = Qrels.from_columns([x[0] for x in c.qrels], [x[2] for x in c.qrels], [x[3] for x in c.qrels],
                               iter=[x[1] for x in c.qrels])
    df = treckit.evaluate(qrels, c.run, c.names, warn=lambda m: None)
    diffs = []
    for name in c.names:
        ours = dict(zip(df.qid, df[name]))
        ref = _pyndeval_by_name(c, name)
        diffs += [f"{q} {name}: pyndeval {ref.get(q)!r}, treckit {ours.get(q)!r}" for q in shared
                  if q not in ref or q not in ours or not _same(ref[q], ours[q])]
    if with_ir_measures and not diffs:
        import contextlib
        import io

        import ir_measures
        plain = [n for n in c.names if "judged_only=True" not in n]
        parsed = {ir_measures.parse_measure(n): n for n in plain}
        qr = [ir_measures.Qrel(q, d, g, s) for q, s, d, g in c.qrels]
        run = [ir_measures.ScoredDoc(q, d, s) for q, docs in c.run.items() for d, s in docs.items()]
        got = {}
        for measure, name in parsed.items():   # one name a call: ir_measures 0.4.3 computes one parameter set a call
            with contextlib.redirect_stderr(io.StringIO()):      # (its run iterator is spent), and warns of subtopics
                got.update({(m.query_id, name): m.value for m in ir_measures.iter_calc([measure], qr, run)})
        for name in plain:
            ours = dict(zip(df.qid, df[name]))
            diffs += [f"{q} {name}: ir_measures {got.get((q, name))!r}, treckit {ours[q]!r}" for q in shared
                      if not _same(got.get((q, name), math.inf), ours[q])]
    if not diffs:
        return None
    return {"known": None, "reference": b"", "treckit": "\n".join(diffs[:20]).encode(),
            "files": {"case": repr((c.qrels, c.run, c.names)).encode()}}


# ------------------------------------------------------------------ Compat (ir_measures' compat provider)
@dataclass
class CompatCase:
    seed: int
    qrels: list                   # (qid, doc, grade), no (qid, doc) twice
    run: dict
    names: list


def compat_case(seed: int) -> CompatCase:
    """Score ties (whole numbers, 0.0), negative scores, relevant documents the run lacks, grade ties settled by the
    qrels' line order, random p and normalize."""
    r = random.Random(seed)
    qrels, run = [], {}
    for q in range(r.randint(1, 4)):
        qid = r.choice([f"q{q}", str(q)])
        qrels += [(qid, d, r.choice([-1, 0, 0, 1, 1, 2, 3])) for d in sorted({_docno(r) for _ in range(r.randint(1, 25))})]
        if r.random() < 0.9:
            run[qid] = {_docno(r): r.choice([float(r.randint(-2, 3)), 0.0, round(r.uniform(-1, 2), 1)])
                        for _ in range(r.randint(1, 60))}
    r.shuffle(qrels)
    names = ["Compat", f"Compat(p={r.choice([0.5, 0.8, 0.95, 0.99])})",
             f"Compat(p={r.choice([0.5, 0.9])}, normalize={r.random() < 0.5})"]
    return CompatCase(seed, qrels, run, names)


def compat_compare(c: CompatCase) -> dict | None:
    """treckit.evaluate with Compat against ir_measures' compat provider: the same doubles for every query both
    judged and in the run."""
    import ir_measures

    import treckit
    from treckit.model import Qrels
    shared = sorted({q for q, _, _ in c.qrels} & set(c.run))
    if not shared:
        return None
    qrels = Qrels.from_columns([x[0] for x in c.qrels], [x[1] for x in c.qrels], [x[2] for x in c.qrels])
    df = treckit.evaluate(qrels, c.run, c.names, warn=lambda m: None)
    qr = [ir_measures.Qrel(q, d, g) for q, d, g in c.qrels]
    scored = [ir_measures.ScoredDoc(q, d, s) for q, docs in c.run.items() for d, s in docs.items()]
    diffs = []
    for name in c.names:
        got = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(name)], qr, scored)}
        ours = dict(zip(df.qid, df[name]))
        diffs += [f"{q} {name}: compat {got.get(q)!r}, treckit {ours.get(q)!r}" for q in shared
                  if got.get(q) != ours.get(q)]
    if not diffs:
        return None
    return {"known": None, "reference": b"", "treckit": "\n".join(diffs[:20]).encode(),
            "files": {"case": repr((c.qrels, c.run, c.names)).encode()}}


# ------------------------------------------------------------------ ndeval (the C program) cases
@dataclass
class NdevalCase:
    seed: int
    qrels: bytes
    run: bytes
    options: dict


def ndeval_case(seed: int) -> NdevalCase:
    r = random.Random(seed)
    ql, rl = [], []
    for t in r.sample(range(1, 8), r.randint(1, 4)):
        all_zero = r.random() < 0.1
        for d in {f"d{r.randint(0, 30)}" for _ in range(r.randint(1, 25))}:
            for s in r.sample(range(9), r.randint(1, 3)):
                ql.append(f"{t} {s} {d} {0 if all_zero else r.choice([0, 0, 1, 2])}")
    for t in r.sample(range(1, 9), r.randint(1, 4)):
        docs = list({f"d{r.randint(0, 40)}" for _ in range(r.randint(1, 30))})
        ranks = r.sample(range(1, 200), len(docs))
        if r.random() < 0.03 and len(ranks) > 1:
            ranks[1] = ranks[0]                                   # a repeated rank: both refuse
        for d, rank in zip(docs, ranks):
            rl.append(f"{r.choice(['', '', 'wt09-'])}{t}\tQ0 {d} {rank} {r.randint(0, 6) / 2} run{seed}")
    r.shuffle(ql)
    r.shuffle(rl)
    options = {}
    for key, value in (("alpha", r.choice([0.3, 0.9, 1.0])), ("beta", r.choice([0.8, 0.1])), ("traditional", True),
                       ("depth", r.randint(1, 25)), ("complete", True)):
        if r.random() < 0.25:
            options[key] = value
    return NdevalCase(seed, ("\n".join(ql) + "\n").encode(), ("\n".join(rl) + "\n").encode(), options)


def ndeval_compare(c: NdevalCase, tmp: Path, binary: Path) -> dict | None:
    from treckit.output.ndeval import ndeval_table
    tmp.mkdir(parents=True, exist_ok=True)
    qp, rp = tmp / "qrels", tmp / "run"
    qp.write_bytes(c.qrels)
    rp.write_bytes(c.run)
    flags = {"alpha": "-alpha", "beta": "-beta", "depth": "-M", "traditional": "-traditional", "complete": "-c"}
    args = []
    for key, value in c.options.items():
        args += [flags[key]] if value is True else [flags[key], str(value)]
    ref = subprocess.run([str(binary), *args, str(qp), str(rp)], capture_output=True, timeout=TIMEOUT)
    try:
        ours, refused = ndeval_table(str(qp), str(rp), **c.options), None
    except InputError as exc:
        ours, refused = b"", str(exc)
    if (ref.returncode != 0 and refused is not None) or (ref.returncode == 0 and refused is None and
                                                          ref.stdout == ours):
        return None
    return {"known": None, "reference": ref.stdout + ref.stderr, "treckit": ours or refused.encode(),
            "files": {"qrels": c.qrels, "run": c.run, "options": repr(c.options).encode()}}


# ------------------------------------------------------------------ C/W/L cases
@dataclass
class CwlCase:
    seed: int
    qrels: list                   # (qid, doc, grade)
    run: dict                     # qid -> {doc: score}, documents in the order the run lists them
    specs: list                   # (name, parameters as ir_measures takes them)


def cwl_case(seed: int) -> CwlCase:
    r = random.Random(seed)
    qrels, run = [], {}
    for q in range(r.randint(1, 4)):
        qid = r.choice([f"q{q}", str(q)])
        for _ in range(r.randint(0, 30)):
            qrels.append((qid, _docno(r), r.choice([-2, -1, 0, 0, 1, 1, 2, 3, 4, 5])))
        if r.random() < 0.9:
            depth = r.randint(1, r.choice([30, 30, 1300]))           # past cwl-eval's 1000 ranks now and then
            run[qid] = {_docno(r) if i < 60 else f"x{i}": r.choice([float(r.randint(0, 5)), r.uniform(-2, 2)])
                        for i in range(depth)}
    top = r.choice([1, 2, 3, 4])
    low = r.choice([0, 0, 0, 1]) if top > 1 else 0
    scale = {"min_rel": low, "max_rel": top}
    specs = [("INST", {"T": r.choice([1.0, 2.0, 0.5]), **scale}), ("INSQ", {"T": r.choice([1.0, 3.0]), **scale}),
             ("RBP", {"p": r.choice([0.8, 0.5, 0.95]), "rel": r.choice([1, 2])}),
             ("BPM", {"T": r.choice([1.0, 2.0]), "cutoff": r.choice([1, 5, 10, 20]), **scale}),
             ("SDCG", {"cutoff": r.choice([1, 2, 5, 10, 20]), **scale}),
             ("NERR8", {"cutoff": r.choice([1, 5, 10]), **scale}), ("NERR9", {"cutoff": r.choice([1, 5, 10]), **scale}),
             ("NERR10", {"p": r.choice([0.9, 0.5]), **scale}), ("NERR11", {"T": r.choice([1.0, 2.0]), **scale})]
    return CwlCase(seed, qrels, run, specs)


def _cwl_by_name(c: CwlCase, text: str, got: dict) -> list[str]:
    """The name in treckit's evaluate (the path of treckit eval: the registry, the ranked view with line-order
    ties) against cwl-eval's values: equal doubles, for the queries both judged and in the run."""
    import treckit
    judged: dict = {}
    for q, d, g in c.qrels:                       # a document judged twice keeps its last judgment, as cwl-eval
        judged.setdefault(q, {})[d] = g
    shared = [q for q in c.run if q in judged]
    if not shared:
        return []
    df = treckit.evaluate(judged, {q: c.run[q] for q in c.run}, [text], warn=lambda m: None)
    ours = dict(zip(df.qid, df[text]))
    return [f"{q} {text} by name: cwl-eval {got.get(q, 0.0)!r}, treckit {ours.get(q)!r}" for q in shared
            if ours.get(q) != got.get(q, 0.0)]


def cwl_compare(c: CwlCase) -> dict | None:
    """None when every value is cwl-eval's (through ir_measures' provider, as ir_measures computes these names)."""
    import logging

    import ir_measures

    from treckit.measures import cwl
    provider = ir_measures.providers.registry["cwl_eval"]
    qrels = [ir_measures.Qrel(q, d, g) for q, d, g in c.qrels]
    run = [ir_measures.ScoredDoc(q, d, s) for q, docs in c.run.items() for d, s in docs.items()]
    diffs = []
    for name, params in c.specs:
        text = name + "(" + ",".join(f"{k}={v!r}" for k, v in params.items() if k != "cutoff") + ")" + \
            (f"@{params['cutoff']}" if "cutoff" in params else "")
        logging.disable(logging.WARNING)           # its notes on grades outside min_rel..max_rel, per call
        try:
            got = {m.query_id: m.value for m in provider.iter_calc([ir_measures.parse_measure(text)], qrels, run)}
        finally:
            logging.disable(logging.NOTSET)
        ours = cwl.evaluate(c.qrels, c.run, name, params)
        diffs += [f"{q} {text}: cwl-eval {got.get(q)!r}, treckit {v!r}" for q, v in ours.items() if got.get(q) != v]
        diffs += [f"{q} {text}: cwl-eval {v!r}, treckit none" for q, v in got.items() if q not in ours and v != 0]
        diffs += _cwl_by_name(c, text, got)
    if not diffs:
        return None
    return {"known": None, "reference": b"", "treckit": "\n".join(diffs[:20]).encode(),
            "files": {"case": repr((c.qrels, c.run, c.specs)).encode()}}


# ------------------------------------------------------------------ the driver
def report(diff: dict, where: Path) -> None:
    where.mkdir(parents=True, exist_ok=True)
    for name, data in diff["files"].items():
        (where / name).write_bytes(data)
    (where / "reference.out").write_bytes(diff["reference"])
    (where / "treckit.out").write_bytes(diff["treckit"])
    if diff["known"]:
        (where / "KNOWN").write_text(diff["known"] + "\n")


def run_tool(tool: str, seeds: range, out: Path) -> tuple[int, list[int], list[int]]:
    """(cases run, seeds that differ, seeds known) for one tool."""
    differ, known, t0 = [], [], time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for i, seed in enumerate(seeds):
            if tool == "gdeval":
                diff = gdeval_compare(gdeval_case(seed), Path(tmp), gdeval_path())
            elif tool == "gdeval-names":
                diff = gdeval_names_compare(gdeval_names_case(seed), Path(tmp), gdeval_path())
            elif tool == "pyndeval":
                diff = pyndeval_compare(diversity_case(seed), with_ir_measures=seed % 5 == 0)
            elif tool == "pyndeval-names":
                diff = diversity_names_compare(diversity_names_case(seed), with_ir_measures=seed % 5 == 0)
            elif tool == "cwl":
                diff = cwl_compare(cwl_case(seed))
            elif tool == "compat":
                diff = compat_compare(compat_case(seed))
            else:
                diff = ndeval_compare(ndeval_case(seed), Path(tmp), ndeval_path())
            if diff is not None:
                (known if diff["known"] else differ).append(seed)
                report(diff, out / tool / f"{seed:07d}")
            if (i + 1) % 500 == 0:
                print(f"fuzz-reference {tool}: {i + 1}/{len(seeds)} cases, {len(differ)} differences, "
                      f"{len(known)} known ({time.monotonic() - t0:.0f} s)", file=sys.stderr)
    return len(seeds), differ, known


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", choices=("gdeval", "gdeval-names", "pyndeval", "pyndeval-names", "ndeval", "cwl", "compat",
                                       "all"),
                    default="all")
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "fuzz_reference")
    a = ap.parse_args(argv)
    available = {"gdeval": gdeval_path() is not None, "gdeval-names": gdeval_path() is not None, "pyndeval": True,
                 "pyndeval-names": True, "ndeval": ndeval_path() is not None, "cwl": True, "compat": True}
    tools = [a.tool] if a.tool != "all" else [t for t, ok in available.items() if ok]
    missing = [t for t in tools if not available[t]]
    if missing:
        print(f"fuzz-reference: {', '.join(missing)} not found (gdeval.pl at ../shared/tools or $TRECKIT_GDEVAL "
              "with perl on PATH; an ndeval binary at $TRECKIT_NDEVAL)", file=sys.stderr)
        return 2
    if a.out.exists():
        shutil.rmtree(a.out)
    a.out.mkdir(parents=True)
    summary, failed = [], False
    for tool in tools:
        cases, differ, known = run_tool(tool, range(a.start, a.start + a.cases), a.out)
        failed = failed or bool(differ)
        summary.append(f"{tool}: {cases} cases from seed {a.start}: {len(differ)} differences, {len(known)} known "
                       f"(treckit refuses on purpose); differences: {' '.join(map(str, differ)) or '-'}; "
                       f"known: {' '.join(map(str, known)) or '-'}")
    (a.out / "SUMMARY.txt").write_text("\n".join(summary) + "\n")
    print("\n".join(summary), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
