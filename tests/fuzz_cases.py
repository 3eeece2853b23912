"""Seeded random cases for the differential fuzz of ``treckit eval`` against trec_eval 10.0.

A case is a qrels file, a run file, maybe a z-scores file, and trec_eval's command-line flags; ``case(seed)``
builds the same case for the same seed on every machine (``random.Random(seed)``, no global state).
``compare(case, tmp)`` writes the files, runs both programs and returns ``None`` when they agree (same stdout
bytes, both exit 0 or both exit non-zero) or a ``Difference`` that names the files and the command.

What is generated (each with its own probability, so a few hundred cases cover every item):
  * qrels: grades -1, 0..4 (graded and negative), queries whose judgments are all negative or all 0,
    judged-only queries (in the qrels, not the run), duplicate-free; space- or tab-separated.
  * runs: ties in scores, run-only queries (not in the qrels), varied depths (0 to 40), shuffled lines,
    rank columns that disagree with the scores, extra columns after the tag, odd score spellings
    (``1e0``, ``+1.5``, `` 2.50`` in tab-separated lines as in results.test, ``-0``, ``1E-3``, ``007.5``,
    very long decimals), space-padded and tab-separated lines.
  * ids with ``#`` and ``%``-escapes (``a%20b`` next to ``a!``, whose order differs between the bytes as written
    and the decoded text).
  * flags ``-q -c -n -J -M N -l N -N N -Z FILE``, attached (``-M5``) or separate, sometimes combined (``-qc``).
  * measures: 0 to 4 ``-m`` arguments drawn from every trec_eval 10.0 measure name (TREC_EVAL_MEASURES) and the
    nicknames, with random valid (and sometimes invalid) parameters, repeated, in random order.

Semantics chosen where the two programs differ on purpose:
  * trec_eval 10.0 fails (exit 4, no output) when a judged query is missing from the run and ``-c`` is not given;
    treckit evaluates the shared queries by default.  Those cases run treckit with ``--missing error``, which
    is documented to behave as trec_eval does; stdout (empty) and the failing exit status are compared.
  * treckit refuses input trec_eval reads on (a rank that is not a number, a doc judged twice, a run line
    repeated): reported as ``known`` when treckit says so (exit 2, the message in STRICT).
  * trec_eval crashes or hangs on some inputs (``-M -1`` and other negative ``-M`` segfault; a time-out guards
    against hangs).  Those are reported as ``known`` (``Difference.known`` set), not as failures.
"""
from __future__ import annotations

import os
import random
import re
import shlex
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 20.0          # seconds for one trec_eval call; cases run in well under 0.1 s


def trec_eval_path() -> Path | None:
    """The reference binary: $TRECKIT_TREC_EVAL, else ../shared/tools/trec_eval next to the repository."""
    env = os.environ.get("TRECKIT_TREC_EVAL")
    p = Path(env) if env else ROOT.parent / "shared" / "tools" / "trec_eval"
    return p if p.is_file() and os.access(p, os.X_OK) else None


# ------------------------------------------------------------------ measures and parameters
# trec_eval 10.0's measures (its order) with the kind of parameters each takes and its default columns.  Written out
# here, not read from treckit's registry: the oracle side must not move when the code under test does, and the
# seed -> case mapping stays fixed (tests/conformance/test_fuzz_trec_eval.py checks the registry against this list).
LONG, FRACTIONS, NUMBERS, PAIRS, NONE = "long_cutoffs", "double_cutoffs", "doubles", "pairs", "none"
_STD = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_EVAL_MEASURES: dict[str, tuple[str, tuple]] = {
    "runid": (NONE, ()), "num_q": (NONE, ()), "num_ret": (NONE, ()), "num_rel": (NONE, ()), "num_rel_ret": (NONE, ()),
    "map": (NONE, ()), "gm_map": (NONE, ()), "Rprec": (NONE, ()), "bpref": (NONE, ()), "recip_rank": (NONE, ()),
    "iprec_at_recall": (FRACTIONS, tuple(i / 10 for i in range(11))), "P": (LONG, _STD), "relstring": (NUMBERS, ()),
    "recall": (LONG, _STD), "infAP": (NONE, ()), "gm_bpref": (NONE, ()),
    "Rprec_mult": (FRACTIONS, tuple(i / 5 for i in range(1, 11))), "utility": (NUMBERS, ()), "11pt_avg": (NUMBERS, ()),
    "binG": (NONE, ()), "G": (PAIRS, ()), "ndcg": (PAIRS, ()), "ndcg_rel": (PAIRS, ()), "Rndcg": (PAIRS, ()),
    "ndcg_cut": (LONG, _STD), "map_cut": (LONG, _STD), "relative_P": (LONG, _STD), "success": (LONG, (1, 5, 10)),
    "set_P": (NONE, ()), "set_relative_P": (NONE, ()), "set_recall": (NONE, ()), "set_map": (NONE, ()),
    "set_F": (NUMBERS, ()), "num_nonrel_judged_ret": (NONE, ()), "rbp": (PAIRS, ()), "rbp_resid": (PAIRS, ()),
    "unj": (LONG, (5, 10, 20)),
}
NICKNAMES = ("official", "all_trec", "set")


def measure_names() -> list[str]:
    """Every trec_eval measure name, then the nicknames."""
    return [*TREC_EVAL_MEASURES, *NICKNAMES]


def _atof(text: str) -> float:
    """C's atof on the prefix that parses ('5.7x' -> 5.7, '' -> 0)."""
    for end in range(len(text), 0, -1):
        try:
            return float(text[:end])
        except ValueError:
            continue
    return 0.0


def columns(arg: str) -> list[str]:
    """The column names trec_eval prints for one -m argument (its default columns when no parameters)."""
    name, dot, raw = arg.partition(".")
    kind, default = TREC_EVAL_MEASURES.get(name, (NONE, ()))
    if kind == LONG:
        return [f"{name}_{c}" for c in (sorted(int(_atof(p)) for p in raw.split(",")) if dot else default)]
    if kind == FRACTIONS:
        return [f"{name}_{c:3.2f}" for c in (sorted(_atof(p) for p in raw.split(",")) if dot else default)]
    return [f"{name}_{raw}" if dot else name]


def _cutoffs(r: random.Random) -> str:
    vals = r.sample(range(1, 30), r.randint(1, 3))
    if r.random() < 0.1:
        vals.append(vals[0])                       # duplicate: both programs refuse
    if r.random() < 0.05:
        vals.append(0)                             # not positive: both refuse
    text = [str(v) for v in vals]
    if r.random() < 0.15:
        text[0] = r.choice([f"0{vals[0]}", f"{vals[0]}.7", f"+{vals[0]}"])   # atol reads these
    return ",".join(text)


def _fractions(r: random.Random, top: float = 1.0) -> str:
    vals = sorted(set(round(r.uniform(0, top), r.choice([1, 2, 3])) for _ in range(r.randint(1, 4))))
    text = [r.choice([f"{v}", f"{v}".lstrip("0") or "0", f"{v:.2f}"]) for v in vals]
    return ",".join(text)


def _pairs(r: random.Random) -> str:
    levels = r.sample(range(-1, 5), r.randint(1, 3))
    return ",".join(f"{lv}={r.choice(['0', '1', '2.5', '3', '9', '-1', '0.5'])}" for lv in levels)


def params_for(name: str, r: random.Random) -> str | None:
    """Random parameters trec_eval's ``-m name.params`` accepts (None: the measure takes none)."""
    kind = TREC_EVAL_MEASURES.get(name, (NONE,))[0]
    if kind == LONG:
        return _cutoffs(r)
    if kind == FRACTIONS:
        return _fractions(r, 2.0 if name == "Rprec_mult" else 1.0)
    if kind == NUMBERS:
        if name == "utility":
            return ",".join(r.choice(["2", "-1", "0", "1", "0.5", "-2", "3"]) for _ in range(4))
        if name == "set_F":
            return r.choice(["0.5", "1", "2", "0.25", "3"])
        if name == "relstring":
            return str(r.randint(1, 25))
        return _fractions(r)                        # 11pt_avg: recall levels
    if kind == PAIRS:
        if name.startswith("rbp"):
            return "p=" + r.choice(["0.5", "0.7", "0.8", "0.95", ".9", "0.99"])
        return _pairs(r)
    return None


def measure_args(r: random.Random, names: list[str]) -> list[str]:
    """0 to 4 ``-m`` values, names repeated sometimes, parameters sometimes, in random order."""
    out = []
    for _ in range(r.choice([0, 1, 1, 1, 2, 2, 3, 4])):
        name = r.choice(names)
        if out and r.random() < 0.15:
            name = r.choice(out).split(".")[0]     # the same measure again
        p = params_for(name, r) if r.random() < 0.5 else None
        out.append(f"{name}.{p}" if p else name)
    return out


# ------------------------------------------------------------------ ids and numbers
DOC_STYLES = ["d{n}", "D{n}", "doc-{n}", "x#{n}", "a%20b{n}", "a!{n}", "a%21{n}", "CR93E-{n}", "{n}", "0{n}",
              "a%20b", "a!", "a%2", "msmarco_v2.1_doc_00_{n}#4_1633"]
QID_STYLES = ["{n}", "{n}", "q{n}", "30{n}", "0{n}", "q#{n}", "a%20q{n}", "2024-12{n}"]


def _score_text(r: random.Random, value: float, tabbed: bool) -> str:
    """The same number spelled as trec_eval's atof reads it."""
    s = r.choice(["plain"] * 6 + ["exp", "plus", "zeros", "long", "E", "int"])
    if s == "exp":
        text = f"{value:e}"
    elif s == "plus":
        text = f"+{value}" if str(value)[0] != "-" else f"{value}"
    elif s == "zeros":
        text = f"{value:.2f}".replace("-", "-00") if f"{value:.2f}"[0] == "-" else f"00{value:.2f}"
    elif s == "long":
        text = f"{value:.25f}"
    elif s == "E":
        text = f"{value * 1000:g}E-3"
    elif s == "int" and value == int(value):
        text = str(int(value))
    else:
        text = repr(value)
    if value == 0 and r.random() < 0.3:
        text = r.choice(["-0", "-0.0", "0e0", "+0"])
    if tabbed and r.random() < 0.3:
        text = " " * r.randint(1, 3) + text        # as results.test pads its scores
    return text


@dataclass
class Case:
    seed: int
    qrels: str
    run: str
    flags: list[str]
    zscores: str | None = None
    notes: list[str] = field(default_factory=list)

    def argv(self, qrels: str = "qrels", run: str = "run", zscores: str = "zscores") -> list[str]:
        flags = [zscores if f == "@ZSCORES@" else f for f in self.flags]
        return [*flags, qrels, run]

    def write(self, d: Path) -> list[str]:
        d.mkdir(parents=True, exist_ok=True)
        (d / "qrels").write_text(self.qrels)
        (d / "run").write_text(self.run)
        if self.zscores is not None:
            (d / "zscores").write_text(self.zscores)
        return self.argv(str(d / "qrels"), str(d / "run"), str(d / "zscores"))


def case(seed: int) -> Case:
    r = random.Random(seed)
    notes = []
    nq = r.randint(1, 5)
    qstyle = r.choice(QID_STYLES)
    qids = sorted({qstyle.format(n=r.randint(1, 12)) for _ in range(nq)})
    dstyles = r.sample(DOC_STYLES, r.randint(1, 3))
    pool = sorted({r.choice(dstyles).format(n=r.randint(0, 40)) for _ in range(r.randint(3, 40))})
    qrels_sep = r.choice([" ", " ", "\t"])
    qrels_lines, judged = [], {}
    judged_only = set(r.sample(qids, 1)) if nq > 1 and r.random() < 0.3 else set()
    for q in qids:
        if r.random() < 0.1 and q not in judged_only and nq > 1:
            continue                                   # run-only query
        grades = r.choice([[-1, 0, 1, 2], [0, 1], [0, 1, 2, 3, 4], [0, 0, 0, 1], [-1, 0], [0], [1, 2]])
        if r.random() < 0.03:
            grades = [-1]
            notes.append("all-negative query")
        docs = r.sample(pool, r.randint(1, min(len(pool), 14)))
        judged[q] = {doc: r.choice(grades) for doc in docs}
        for doc, g in judged[q].items():
            qrels_lines.append(qrels_sep.join([q, r.choice(["0", "0", "Q0", "1"]), doc, str(g)]))
    if not qrels_lines:
        q = qids[0]
        judged[q] = {pool[0]: 1}
        qrels_lines.append(f"{q} 0 {pool[0]} 1")
    if r.random() < 0.3:
        r.shuffle(qrels_lines)

    tabbed = r.random() < 0.3
    tag = r.choice(["t", "STANDARD", "run#1", "a%20tag", "x"])
    run_lines = []
    run_qids = [q for q in qids if q not in judged_only]
    if r.random() < 0.15:
        run_qids.append(qstyle.format(n=99))          # run-only query
    ties = r.random() < 0.6
    for q in run_qids:
        depth = r.choice([0, 1, 2, 3, 5, 8, 12, 20, 40]) if r.random() < 0.9 else 0
        depth = min(depth, len(pool) + 5)
        cands = list(judged.get(q, {})) + [d for d in pool if d not in judged.get(q, {})] + [f"u{i}" for i in range(5)]
        docs = r.sample(cands, depth)
        values = [r.choice([0.0, 1.0, 1.5, 2.5, -1.0]) if ties else round(r.uniform(-3, 3), r.choice([1, 3, 6]))
                  for _ in docs]
        for rank, (doc, v) in enumerate(zip(docs, values), 1):
            rank_text = str(rank if r.random() < 0.9 else r.randint(0, 50))
            fields = [q, "Q0", doc, rank_text, _score_text(r, v, tabbed), tag]
            if r.random() < 0.03:
                fields.append("extra")
            run_lines.append(("\t" if tabbed else r.choice([" ", " ", "  "])).join(fields))
    if not run_lines:
        q = run_qids[0] if run_qids else qids[0]
        run_lines.append(f"{q} Q0 {pool[0]} 1 1.0 {tag}")
    if r.random() < 0.2:
        r.shuffle(run_lines)

    names = measure_names()
    flags = []
    for flag in r.sample(["q", "c", "n", "J", "M", "l", "N", "Z"], 8):
        p = {"q": 0.5, "c": 0.3, "n": 0.12, "J": 0.2, "M": 0.2, "l": 0.25, "N": 0.12, "Z": 0.15}[flag]
        if r.random() >= p:
            continue
        if flag in "qcnJ":
            if flags and flags[-1] in ("-q", "-c", "-n", "-J") and r.random() < 0.3:
                flags[-1] += flag                      # -qc
            else:
                flags.append("-" + flag)
            continue
        if flag == "M":
            val = str(r.choice([1, 2, 3, 5, 10, 100]) if r.random() < 0.97 else r.choice([0, -1]))
        elif flag == "l":
            val = str(r.choice([-1, 0, 1, 1, 2, 3, 4]))
        elif flag == "N":
            val = str(r.choice([0, 10, 50, 1000]))
        else:
            val = "@ZSCORES@"
        if flag != "Z" and r.random() < 0.4:
            flags.append(f"-{flag}{val}")
        else:
            flags += [f"-{flag}", val]
    for m in measure_args(r, names):
        flags += (["-m", m] if r.random() < 0.8 else [f"-m{m}"])
    zscores = None
    if "@ZSCORES@" in flags:
        zscores = _zscores(r, flags, sorted(set(qids) | set(run_qids)))
    c = Case(seed, "".join(x + "\n" for x in qrels_lines), "".join(x + "\n" for x in run_lines), flags, zscores, notes)
    c = _odd_input(c, random.Random(seed * 7919 + 1))         # its own stream: the cases above stay as they are
    return _blank_lines(c, random.Random(seed * 7919 + 2))


ODDITIES = ["qrels 5 fields", "qrels 3 fields", "run 5 fields", "repeated run line", "repeated judgment", "CRLF",
            "trailing blanks", "non-ASCII id", "grade 10", "rank not a number", "score inf", "unknown measure",
            "empty parameters", "parameters on a plain measure", "empty run", "qid only in zscores"]


def _blank_lines(c: Case, r: random.Random) -> Case:
    """Now and then an empty or blank line in the qrels or the run (trec_eval refuses it in qrels, not in runs)."""
    if r.random() >= 0.03:
        return c
    which = r.choice(["qrels", "run"])
    lines = getattr(c, which).splitlines(keepends=True)
    lines.insert(r.randrange(len(lines) + 1), r.choice(["\n", "  \n", "\t\n"]))
    c.notes.append(f"blank line in {which}")
    return Case(c.seed, *(("".join(lines), c.run) if which == "qrels" else (c.qrels, "".join(lines))),
                c.flags, c.zscores, c.notes)


# inputs trec_eval reads on and treckit refuses on purpose (see test_trec_eval_regressions.py): note -> its message
STRICT = {"rank not a number": ("is not an integer", "is not a number"), "repeated judgment": ("twice",),
          "repeated run line": ("more than once",)}


def _odd_input(c: Case, r: random.Random) -> Case:
    """Now and then (one case in six) one hostile or unusual input: both programs must agree, or both refuse."""
    if r.random() >= 1 / 6:
        return c
    what = r.choice(ODDITIES)
    c.notes.append(what)
    q, run = c.qrels.splitlines(), c.run.splitlines()
    i, j = r.randrange(len(q)), r.randrange(len(run))
    qf, rf = q[i].split(), run[j].split()
    if what == "qrels 5 fields":
        q[i] += " 2"
    elif what == "qrels 3 fields":
        q[i] = " ".join(qf[:3])
    elif what == "run 5 fields":
        run[j] = " ".join(rf[:5])
    elif what == "repeated run line":
        run.append(" ".join(rf[:3] + ["77", "0.125"] + rf[5:]))
    elif what == "repeated judgment":
        q.append(" ".join(qf[:3] + ["1" if qf[3] != "1" else "0"]))
    elif what == "CRLF":
        return Case(c.seed, c.qrels.replace("\n", "\r\n"), c.run.replace("\n", "\r\n"), c.flags, c.zscores, c.notes)
    elif what == "trailing blanks":
        q[i] += "  "
        run[j] = " " + run[j] + " \t"
    elif what == "non-ASCII id":
        q.append(f"{qf[0]} 0 Zürich 1")
        run.append(f"{rf[0]} Q0 Zürich 3 {rf[4]} {rf[-1]}")
    elif what == "grade 10":
        q[i] = " ".join(qf[:3] + ["10"])
    elif what == "rank not a number":
        run[j] = " ".join(rf[:3] + ["first"] + rf[4:])
    elif what == "score inf":
        run[j] = " ".join(rf[:4] + [r.choice(["inf", "-inf", "1e400"])] + rf[5:])
    elif what == "unknown measure":
        c.flags += ["-m", r.choice(["mapp", "P_5", "ndcg@10", "Map"])]
    elif what == "empty parameters":
        c.flags += ["-m", r.choice(["P.", "ndcg_cut.", "utility."])]
    elif what == "parameters on a plain measure":
        c.flags += ["-m", r.choice(["map.5", "num_q.1", "bpref.2"])]
    elif what == "empty run":
        run = []
    elif what == "qid only in zscores" and c.zscores is not None:
        c.zscores += "zz map 0.5 1\n"
    return Case(c.seed, "".join(x + "\n" for x in q), "".join(x + "\n" for x in run), c.flags, c.zscores, c.notes)


def _zscores(r: random.Random, flags: list[str], qids: list[str]) -> str:
    """Mean and standard deviation for every (query, column) the case can print; sometimes one line missing."""
    args = [flags[i + 1] for i, f in enumerate(flags) if f == "-m"]
    args += [f[2:] for f in flags if f.startswith("-m") and len(f) > 2]
    cols = list(dict.fromkeys(c for arg in [*TREC_EVAL_MEASURES, *args] for c in columns(arg)))
    lines = [f"{q} {c} {r.choice(['0.1000', '0.5', '1.2345', '0'])} {r.choice(['0.5', '1.0000', '0.1234', '2'])}"
             for q in qids for c in cols]
    if lines and r.random() < 0.1:
        lines.pop(r.randrange(len(lines)))
    return "".join(x + "\n" for x in lines)


# ------------------------------------------------------------------ running both
@dataclass
class Outcome:
    status: int | str          # exit status, or "timeout" / "signal N"
    stdout: bytes
    stderr: bytes = b""


def run_trec_eval(binary: Path, argv: list[str], timeout: float = TIMEOUT) -> Outcome:
    try:
        p = subprocess.run([str(binary), *argv], capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        return Outcome("timeout", exc.stdout or b"", exc.stderr or b"")
    if p.returncode < 0:
        return Outcome(f"signal {signal.Signals(-p.returncode).name}", p.stdout, p.stderr)
    return Outcome(p.returncode, p.stdout, p.stderr)


def run_treckit(argv: list[str]) -> Outcome:
    """``treckit eval ARGV`` in-process: measured 0.02 s a case against 0.8 s for a subprocess (start-up)."""
    code, out, err = run_cli(["eval", *argv])
    return Outcome(code, out.encode("utf-8", "surrogateescape"), err.encode("utf-8", "replace"))


def _missing_without_c(c: Case) -> bool:
    """A judged query absent from the run, no -c: trec_eval 10.0 fails; treckit then runs with --missing error."""
    if any(f.startswith("-") and not f.startswith("-m") and "c" in f[1:] and f[1] in "qcnJ" for f in c.flags):
        return False
    judged = {line.split()[0] for line in c.qrels.splitlines() if line.split()}
    ran = {line.split()[0] for line in c.run.splitlines() if line.split()}
    return bool(judged - ran)


@dataclass
class Difference:
    case: Case
    ref: Outcome
    ours: Outcome
    treckit_argv: list[str]
    known: str | None = None          # a trec_eval crash or hang: a documented difference, not a failure

    def report(self, d: Path) -> str:
        """Writes the case's files into ``d`` and returns a reproducer (commands + both outputs)."""
        self.case.write(d)
        args = " ".join(shlex.quote(a) for a in self.case.argv())
        ours_args = " ".join(shlex.quote(a) for a in self.treckit_argv[:len(self.treckit_argv) - len(self.case.argv())])
        lines = [f"# seed {self.case.seed}" + (f"  KNOWN: {self.known}" if self.known else "")
                 + (f"  (inputs: {', '.join(self.case.notes)})" if self.case.notes else ""),
                 f"cd {d}",
                 f"$TE {args}            # trec_eval: status {self.ref.status}",
                 f"treckit eval {ours_args + ' ' if ours_args else ''}{args}   # treckit: status {self.ours.status}",
                 "--- trec_eval stdout", self.ref.stdout.decode("utf-8", "replace"),
                 "--- trec_eval stderr", self.ref.stderr.decode("utf-8", "replace"),
                 "--- treckit stdout", self.ours.stdout.decode("utf-8", "replace"),
                 "--- treckit stderr", self.ours.stderr.decode("utf-8", "replace")]
        text = "\n".join(lines) + "\n"
        (d / "REPRODUCE.txt").write_text(text)
        return text


def compare(c: Case, tmp: Path, binary: Path) -> Difference | None:
    argv = c.write(tmp)
    ref = run_trec_eval(binary, argv)
    ours_argv = (["--missing", "error"] if _missing_without_c(c) else []) + argv
    ours = run_treckit(ours_argv)
    answered = ours.status in (0, 2)          # values, or a clear error; never an internal error
    if isinstance(ref.status, str):
        # trec_eval crashed or hung: a known difference as long as treckit answers
        return Difference(c, ref, ours, ours_argv, f"trec_eval {ref.status}" if answered else None)
    if ref.status != 0 and b"Can't calculate measure" in ref.stderr and all_negative_queries(c):
        # trec_eval 10.0 refuses every measure when a qrels query has only negative judgments
        # ("Can't calculate measure", exit 4); treckit evaluates such a query (no relevant docs)
        return Difference(c, ref, ours, ours_argv, "trec_eval fails on an all-negative query" if answered else None)
    refusal = next((n for n in c.notes if n in STRICT), None)
    if ref.status == 0 and ours.status == 2 and refusal and any(m.encode() in ours.stderr for m in STRICT[refusal]):
        # trec_eval reads on (rank as atol's 0, the last of two judgments, a repeated line counted twice);
        # treckit refuses such input on purpose, with a message naming the line and the fix
        return Difference(c, ref, ours, ours_argv, "treckit refuses on purpose: " + refusal)
    documented = _documented(c, ref, ours)
    if documented:
        return Difference(c, ref, ours, ours_argv, "documented difference: " + documented)
    if ref.status == 0:
        if ours.status == 0 and ours.stdout == ref.stdout:
            return None
    elif ours.status != 0 and ref.stdout.startswith(ours.stdout):
        # both fail; trec_eval may have printed the queries before the failing one, treckit prints nothing
        return None
    return Difference(c, ref, ours, ours_argv)


# differences kept on purpose (docs/trec-eval-differences.md), each pinned by a
# test in test_trec_eval_regressions.py: (what, treckit's refusal message) for inputs treckit refuses ...
DELIBERATE_REFUSALS = (("-l below 0", b"must be at least 0"), ("a gain for grade -1", b"a gain for grade -1"),
                       ("parameters on a measure that takes none", b"takes no parameters"),
                       ("a run holding only blank lines", b"the file is empty: no run lines in it"))
# ... and measures whose printed values may differ: rbp (trec_eval's uninitialised min/max), Rndcg (-nan where the
# ideal gain is 0), and the gain-pair measures given non-integer gains (trec_eval compares gains as integers)
PAIR_MEASURES = ("ndcg", "G", "ndcg_rel", "Rndcg")


def _lines_without(text: bytes, names: tuple[str, ...]) -> list[bytes]:
    out = []
    for line in text.splitlines():
        name = line.split(b"\t", 1)[0].strip().decode("utf-8", "replace").lstrip("Z")
        if not any(name == n or (name.startswith(n + "_") and ("=" in name or n.startswith("rbp"))) for n in names):
            out.append(line)
    return out


def _fractional_gains(c: Case) -> bool:
    flags = " ".join(c.flags)
    return any(not v.lstrip("-").isdigit() for m in re.findall(r"(?:ndcg|G|ndcg_rel|Rndcg)\.(\S+)", flags)
               for v in re.findall(r"=([^,\s]+)", m))


def _documented(c: Case, ref, ours) -> str | None:
    """The documented difference this case shows, if it shows one and nothing else."""
    if ref.status == 0 and ours.status == 2:
        for what, message in DELIBERATE_REFUSALS:
            if message in ours.stderr:
                return "treckit refuses " + what
    if ref.status != 0 and b"Malformed line" in ref.stderr and ours.status == 0 \
            and any(not line.strip() for line in c.qrels.split("\n")[:-1]):
        return "a blank line in the qrels is skipped"
    if ref.status == 0 and ours.status == 0 and ref.stdout != ours.stdout:
        names = ("rbp", "rbp_resid") + (("Rndcg",) if b"-nan" in ref.stdout else ()) \
            + (PAIR_MEASURES if _fractional_gains(c) else ())
        if _lines_without(ref.stdout, names) == _lines_without(ours.stdout, names):
            return "rbp / Rndcg -nan / non-integer gain pairs"
    return None


def all_negative_queries(c: Case) -> set[str]:
    grades: dict[str, list[float]] = {}
    for line in c.qrels.splitlines():
        f = line.split()
        if len(f) == 4:
            grades.setdefault(f[0], []).append(float(f[3]))
    return {q for q, g in grades.items() if max(g) < 0}


# ------------------------------------------------------------------ shrinking a difference to a few lines
def _flag_groups(flags: list[str]) -> list[list[str]]:
    out, i = [], 0
    while i < len(flags):
        n = 2 if flags[i] in ("-m", "-M", "-l", "-N", "-Z") else 1
        out.append(flags[i:i + n])
        i += n
    return out


def minimise(diff: Difference, tmp: Path, binary: Path) -> Difference:
    """The same difference (same exit statuses, first differing line on the same measure) on as few flags, qrels,
    run and z-score lines as one greedy pass after another can get: what a regression test wants."""
    import dataclasses

    def signature(d: Difference | None):
        if d is None or d.known:
            return None
        a, b = d.ref.stdout.splitlines(), d.ours.stdout.splitlines()
        first = next(((x.split() or [b""])[0] for x, y in zip(a, b) if x != y), len(a) - len(b))
        return d.ref.status == 0, d.ours.status == 0, first

    c, want = diff.case, signature(diff)
    changed = True
    while changed:
        changed = False
        for part in ("flags", "qrels", "run", "zscores"):
            if part == "zscores" and c.zscores is None:
                continue
            items = _flag_groups(c.flags) if part == "flags" else getattr(c, part).splitlines(keepends=True)
            i = 0
            while i < len(items):
                rest = items[:i] + items[i + 1:]
                if part == "flags":
                    flat = [x for g in rest for x in g]
                    trial = dataclasses.replace(c, flags=flat, zscores=c.zscores if "@ZSCORES@" in flat else None)
                elif not rest and part != "zscores":
                    i += 1
                    continue
                else:
                    trial = dataclasses.replace(c, **{part: "".join(rest)})
                if signature(compare(trial, tmp, binary)) == want:
                    c, items, changed = trial, rest, True
                else:
                    i += 1
    return compare(c, tmp, binary) or diff
