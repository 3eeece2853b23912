"""What the hostile class "ties and bounds" shares between its suite (test_hostile_ties_and_bounds.py) and its
longer pass (fuzz_hostile_ties_and_bounds.py): commands measured in a process of their own, trec_eval's output,
runs with ties of several shapes, and measure names with parameters up to 2^63 from the whole registry."""
from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

from treckit.measures import subtopics
from treckit.measures.declaration import DOUBLE_CUTS, DOUBLES, LONG_CUTS, PAIRS, QRELS
from treckit.measures.registry import IRM_NAMES, MEASURES

PEAK_MB = 300                      # the bound of every command here (a run of 100 x 1,000 tied lines took 3.3 GB)
ADDRESS_SPACE = 3 << 30            # a child past this fails at once instead of swapping
LONG_MAX = (1 << 63) - 1

_PEAK = textwrap.dedent("""
    import json, resource, subprocess, sys
    limit = int(sys.argv[1])
    def bounded():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    p = subprocess.run(sys.argv[2:], capture_output=True, preexec_fn=bounded)
    print(json.dumps({"code": p.returncode, "out": p.stdout.decode("utf-8", "replace"),
                      "err": p.stderr.decode("utf-8", "replace"),
                      "peak_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
""")


def bounded_memory() -> None:
    """preexec_fn of a child that must fail quickly rather than grow past ADDRESS_SPACE."""
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def measured(argv, cwd=None) -> dict:
    """``argv`` run as a process of its own: its exit code, output and peak resident memory (``peak_mb``), read by
    a small process that starts it (a process started straight from a large one inherits its high-water mark)."""
    p = subprocess.run([sys.executable, "-c", _PEAK, str(ADDRESS_SPACE), *map(str, argv)], capture_output=True,
                       text=True, cwd=cwd, timeout=900)
    got = json.loads(p.stdout)
    got["peak_mb"] = got["peak_kb"] / 1024
    return got


_EVALUATED = textwrap.dedent("""
    import json, sys, tracemalloc
    import treckit
    qrels, run = treckit.read_qrels(sys.argv[1]), treckit.read_run(sys.argv[2])
    tracemalloc.start()
    frame = treckit.evaluate(qrels, run, json.loads(sys.argv[3]), warn=lambda m: None)
    _, peak = tracemalloc.get_traced_memory()
    print(json.dumps({"peak": peak, "rows": frame.to_dict("records")}))
""")


def evaluated(qrels: Path, run: Path, names: list[str]) -> tuple[int, list[dict]]:
    """``treckit.evaluate(qrels, run, names)`` in a process of its own, memory bounded: (the peak of the arrays it
    allocated, as tracemalloc sees numpy's, one row per query)."""
    p = subprocess.run([sys.executable, "-c", _EVALUATED, str(qrels), str(run), json.dumps(names)],
                       capture_output=True, text=True, timeout=900, preexec_fn=bounded_memory)
    if p.returncode != 0:
        raise AssertionError(p.stderr[-2000:])
    got = json.loads(p.stdout)
    return got["peak"], got["rows"]


def treckit_cmd(*args) -> list:
    return [sys.executable, "-m", "treckit", *map(str, args)]


def reference(trec_eval: Path, *args) -> str:
    """trec_eval's standard output for ``args``."""
    return subprocess.run([str(trec_eval), *map(str, args)], capture_output=True, check=True, text=True).stdout


def values_of(trec_eval_text: str) -> dict[tuple[str, str], str]:
    """{(measure, qid): printed value} of trec_eval's output."""
    out = {}
    for line in trec_eval_text.splitlines():
        name, qid, value = line.split("\t")
        out[name.strip(), qid] = value
    return out


# ---------------------------------------------------------------- runs with ties
def grade(k: int) -> int:
    return (0, 1, 2)[k % 3]


def write_run(directory: Path, name: str, lines: list[str], qrels: list[str]) -> tuple[Path, Path]:
    run_path, qrels_path = directory / f"{name}.run", directory / f"{name}.qrels"
    run_path.write_text("".join(lines), encoding="utf-8")
    qrels_path.write_text("".join(qrels), encoding="utf-8")
    return qrels_path, run_path


def random_tied_run(directory: Path, rng: random.Random, name: str = "case") -> tuple[Path, Path]:
    """(qrels, run) of a random run with ties: 1-30 queries of 1-2,000 docs whose scores take 1, 2, 3 or 10 values,
    listed best first, together but unsorted, or interleaved across queries; ids of several kinds (shared long
    prefixes, non-ASCII, '%' escapes, prefixes of one another); a random share of each query's docs judged."""
    lines, qrels = [], []
    values = rng.choice([1, 2, 3, 10])
    layout = rng.choice(["listed", "unsorted", "interleaved"])
    kind = rng.choice(["plain", "prefix", "unicode", "escaped", "nested"])
    for q in range(rng.randint(1, 30)):
        docs = rng.randint(1, 2000)
        ids = [_doc_id(kind, q, k, rng) for k in range(docs)]
        ids = list(dict.fromkeys(ids))
        scores = [float(rng.randrange(values)) for _ in ids]
        if layout == "listed":
            scores.sort(reverse=True)
        share = rng.random()
        lines += [f"{q} Q0 {doc} {k + 1} {score} t\n" for k, (doc, score) in enumerate(zip(ids, scores))]
        qrels += [f"{q} 0 {doc} {rng.choice([-1, 0, 0, 1, 2])}\n" for doc in ids if rng.random() < share]
        qrels.append(f"{q} 0 unretrieved{q} 1\n")
    if layout == "interleaved":
        rng.shuffle(lines)
    return write_run(directory, name, lines, qrels)


def _doc_id(kind: str, q: int, k: int, rng: random.Random) -> str:
    if kind == "prefix":
        return f"clueweb09-en{q:04d}-{rng.randrange(100):02d}-{k:05d}"
    if kind == "unicode":
        return rng.choice(["d", "\u00e9", "\u4e2d", "z", "D"]) + f"{k}" + rng.choice(["", "\u00e9", "a"])
    if kind == "escaped":
        return f"a%{rng.randrange(16):02X}b{k}"
    if kind == "nested":
        return "x" * (k % 40 + 1) + str(k // 40)
    return f"D{q}_{k}"


# ---------------------------------------------------------------- names with parameters up to 2^63
def _big(rng: random.Random) -> int:
    return rng.choice([LONG_MAX, 1 << 62, 10 ** 9, 10 ** 8, 0, -1, rng.randint(-LONG_MAX - 1, LONG_MAX),
                       rng.randint(1, 100)])


def _float(rng: random.Random) -> float:
    return rng.choice([0.0, 0.5, 1.0, 1e300, -1.0, rng.random(), rng.uniform(-1e9, 1e9), 1e-300])


def _trec_name(m, rng: random.Random) -> str:
    if m.params == LONG_CUTS:
        return f"{m.name}." + ",".join(str(_big(rng)) for _ in range(rng.randint(1, 3)))
    if m.params in (DOUBLE_CUTS, DOUBLES):
        return f"{m.name}." + ",".join(repr(rng.choice([_float(rng), _big(rng)])) for _ in range(rng.randint(1, 4)))
    if m.params == PAIRS:
        pairs = [(rng.choice(["p", str(_big(rng))]), rng.choice([_float(rng), _big(rng)]))
                 for _ in range(rng.randint(1, 3))]
        return f"{m.name}." + ",".join(f"{k}={v!r}" for k, v in pairs)
    return m.name


def _irm_value(param, rng: random.Random):
    if param.choices:
        return rng.choice(param.choices)
    if param.dtype is int:
        return _big(rng)
    if param.dtype is float:
        return _float(rng)
    if param.dtype is bool:
        return rng.random() < 0.5
    if param.dtype is dict:
        return {_big(rng) if rng.random() < 0.5 else rng.randint(0, 4): rng.randint(-5, 5)
                for _ in range(rng.randint(0, 3))}
    return "x"


def random_name(rng: random.Random) -> tuple[str, str]:
    """(a measure name with random parameters, the judgments it is measured against), from the whole registry."""
    if rng.random() < 0.5:
        m = rng.choice([m for m in MEASURES if m.trec])
        return _trec_name(m, rng), (QRELS if QRELS in m.formats else m.formats[0])
    name, (m, spec) = rng.choice(sorted(IRM_NAMES.items()))
    args = {k: _irm_value(p, rng) for k, p in spec.params.items() if k != spec.at and rng.random() < 0.6}
    text = name + (f"({', '.join(f'{k}={v!r}' for k, v in args.items())})" if args else "")
    if spec.at in spec.params and rng.random() < 0.9:
        text += f"@{_irm_value(spec.params[spec.at], rng)!r}"
    return text, ("subtopics" if m.reference == subtopics.NDEVAL else QRELS)


_MANY = textwrap.dedent("""
    import contextlib, io, json, sys
    from treckit.cli.main import main
    codes = []
    for argv in json.loads(sys.argv[1]):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code
        codes.append([code, err.getvalue()[-300:]])
    # VmHWM: this process's own peak (ru_maxrss would also hold the RSS of the process it was started from)
    hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    print(json.dumps({"codes": codes, "peak_kb": hwm}))
""")


def judgments(directory: Path) -> dict[str, list]:
    """The judgments each format reads, beside one small run with ties (``directory / "run"``): {format: the
    arguments before the run}."""
    (directory / "run").write_text("1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 2 t\n2 Q0 a 1 1 t\n2 Q0 d 2 1 t\n")
    (directory / "qrels").write_text("1 0 a 1\n1 0 c 0\n1 0 e 2\n2 0 d 1\n2 0 a -1\n")
    (directory / "sub").write_text("1 1 a 1\n1 2 c 1\n2 1 d 1\n2 3 a 1\n")
    (directory / "prefs").write_text("1 g1 s1 a 2\n1 g1 s1 b 1\n1 g1 s1 c 0\n2 g1 s1 d 1\n2 g1 s1 a 0\n")
    (directory / "jg").write_text("1 g1 a 1\n1 g1 c 0\n1 g2 b 2\n2 g1 d 1\n")
    return {QRELS: [directory / "qrels"], "subtopics": [directory / "sub"],
            "prefs": ["-R", "prefs", directory / "prefs"], "qrels_prefs": ["-R", "qrels_prefs", directory / "qrels"],
            "qrels_jg": ["-R", "qrels_jg", directory / "jg"]}


def check_names(directory: Path, names: list[tuple[str, str]]) -> tuple[list[str], float]:
    """Each (name, judgments) evaluated by ``treckit eval`` in one child process: (problems: an exit other than 0 or
    2, the child's peak in MB)."""
    files = judgments(directory)
    argvs = [["eval", "-m", name, *map(str, files[fmt]), str(directory / "run")] for name, fmt in names]
    p = subprocess.run([sys.executable, "-c", _MANY, json.dumps(argvs)], capture_output=True, text=True, timeout=900,
                       preexec_fn=bounded_memory)
    if p.returncode != 0:
        return [f"the child failed ({p.returncode}): {p.stderr[-2000:]}"], 0.0
    got = json.loads(p.stdout)
    problems = [f"{name!r}: exit {code}: {err}" for (name, _), (code, err) in zip(names, got["codes"])
                if code not in (0, 2)]
    return problems, got["peak_kb"] / 1024
