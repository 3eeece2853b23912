"""The longer randomized pass of stored-state attacks (``make fuzz-hostile``; the suite's cases are
test_hostile_stored_state.py).

Each case mutates a valid results record of ``testset eval`` at a random place (a value replaced by a hostile one, a
field deleted, a row repeated) and gives it to the gate and to the evaluation cache:

- the gate must exit 2 naming the file (a refused record; or the two files' different test sets or definitions), or
  give a verdict (0 or 1) on a record an independent oracle finds possible (every value a finite number in [0, 1],
  at least one query, each qid once, each mean the mean of its values); never a traceback;
- the cache must answer the record only when the gate would take it; otherwise evaluate again, with the right
  numbers and a valid JSON --out, saying the file and the key.

``fuzz(cases, seed, out)`` returns one line per finding; the record of each is written under ``out``."""
from __future__ import annotations

import contextlib
import io
import json
import math
import os
import random
import sqlite3
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from test_hostile_stored_state import FUNCTION, MRR, NDCG, RUN, TEST_SET  # noqa: E402

HOSTILE = [math.nan, math.inf, -math.inf, 1e308, -1e308, 10 ** 30, 1.5, -0.5, 0.5, 0, 1, 0.75, True, False, None, "",
           "x", "0.5", [], {}, [1], {"a": 1}, "q1", "q2", "t1", "mrr", "ndcg_at_10", 2 ** 53 + 1, -0.0, 1e-320]
MEASURES = ("mrr", "ndcg_at_10")


def _paths(node, prefix=()):
    """Every place in a record: (path, value)."""
    yield prefix, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


def mutate(record: dict, r: random.Random) -> tuple[dict, str]:
    """One to three random changes of ``record`` (a copy), and what they were."""
    d, said = record, []
    for _ in range(r.choice((1, 1, 2, 3))):
        d, how = _mutate_once(d, r)
        said.append(how)
    return d, "; ".join(said)


def _mutate_once(record: dict, r: random.Random) -> tuple[dict, str]:
    d = json.loads(json.dumps(record))
    places = [p for p, _ in _paths(d) if p]
    path = r.choice(places)
    parent = d
    for step in path[:-1]:
        parent = parent[step]
    kind = r.random()
    if kind < 0.15 and isinstance(parent, dict):
        del parent[path[-1]]
        return d, f"delete {path}"
    if kind < 0.25 and isinstance(parent, list):
        parent.append(json.loads(json.dumps(parent[path[-1]])))
        return d, f"repeat {path}"
    value = r.choice(HOSTILE)
    parent[path[-1]] = value
    return d, f"set {path} = {value!r}"


def plausible(d) -> bool:
    """The oracle, written apart from treckit's check: what any valid record must at least be."""
    try:
        rows = d["per_query"]
        if not isinstance(rows, list) or not rows or d["schema"] != "treckit.testset-results/2":
            return False
        qids = [row["qid"] for row in rows]
        if len(set(qids)) != len(qids) or not all(isinstance(q, str) for q in qids):
            return False
        for m in d["measures"]:
            values = [row[m] for row in rows]
            if not all(type(v) in (int, float) and math.isfinite(v) and 0 <= v <= 1 for v in values):
                return False
            mean = d["aggregates"][m]["mean"]
            if type(mean) not in (int, float) or not math.isclose(mean, sum(values) / len(values), abs_tol=1e-9):
                return False
        return True
    except (KeyError, TypeError, IndexError):
        return False


def _run(argv) -> tuple[int, str, str]:
    """A command in this process, its warnings printed as the command prints them (stderr)."""
    from treckit.cli.main import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("default")
        try:
            code = main(list(map(str, argv)))
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def fuzz(cases: int, seed: int, out: Path) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    work.mkdir(exist_ok=True)
    (work / "tiny.yaml").write_text(TEST_SET)
    (work / "run.trec").write_text(RUN)
    (work / "search.py").write_text(FUNCTION)
    (work / "config.yaml").write_text("name: fuzz\n")
    os.environ["TRECKIT_CACHE_DIR"] = str(work / "cache")
    code, _, err = _run(["testset", "eval", work / "tiny.yaml", "--run", work / "run.trec", "-m", "mrr", "-m", "ndcg_at_10",
                         "--out", work / "base.json"])
    assert code == 0, err
    base = json.loads((work / "base.json").read_text())
    evaluate = ["testset", "eval", work / "tiny.yaml", "--function", f"{work / 'search.py'}:search", "--config",
                work / "config.yaml", "-m", "mrr", "-m", "ndcg_at_10", "--out", work / "again.json"]
    _run(evaluate)
    with sqlite3.connect(work / "cache" / "evaluations.sqlite") as con:
        [(key, stored)] = con.execute("SELECT key, value FROM evaluations").fetchall()
    cached = json.loads(stored)
    r = random.Random(seed)
    findings: list[str] = []
    for case in range(cases):
        record, how = mutate(base, r)
        (work / "cur.json").write_text(json.dumps(record))
        code, got, err = _run(["gate", "--baseline", work / "base.json", "--current", work / "cur.json", "--metric", "mrr"])
        problem = None
        if code not in (0, 1, 2) or "Traceback" in err or "internal error" in err:
            problem = f"gate exit {code}: {err.strip()[-300:]}"
        elif code == 2 and not err.startswith(f"treckit: error: {work / 'cur.json'}: ") \
                and "different test sets" not in err and "has different definitions" not in err:     # two files' own
            problem = f"gate's error names no file: {err.strip()[:300]}"
        elif code in (0, 1) and not plausible(record):
            problem = f"gate gave a verdict on an impossible record: {got.strip()[:200]}"
        elif len(err) > 2000:
            problem = f"gate said {len(err)} characters"
        if problem is None:
            cache_record, cache_how = mutate(cached, r)
            with sqlite3.connect(work / "cache" / "evaluations.sqlite") as con:
                con.execute("UPDATE evaluations SET value = ? WHERE key = ?", (json.dumps(cache_record), key))
            code, got, err = _run(evaluate)
            answered = "answered from the cache" in err
            how = cache_how
            try:
                again = json.loads((work / "again.json").read_text(),
                                   parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
                numbers = (again["aggregates"]["mrr"]["mean"], round(again["aggregates"]["ndcg_at_10"]["mean"], 12))
            except (ValueError, KeyError, TypeError) as exc:
                numbers = f"--out unreadable ({exc})"
            if code != 0 or "Traceback" in err:
                problem = f"cache: exit {code}: {err.strip()[-300:]}"
            elif answered and not plausible(cache_record):
                problem = "cache answered an impossible record"
            elif not answered and (f"the key {key} is not a valid result" not in err
                                   or numbers != (MRR, round(NDCG, 12))):
                problem = f"cache miss not said or wrong numbers {numbers}: {err.strip()[:300]}"
            with sqlite3.connect(work / "cache" / "evaluations.sqlite") as con:       # the valid row back
                con.execute("UPDATE evaluations SET value = ? WHERE key = ?", (stored, key))
        if problem:
            (out / f"case{case}.json").write_text(json.dumps({"how": how, "record": record}, default=str))
            findings.append(f"case {case} ({how}): {problem}")
    return findings


if __name__ == "__main__":
    found = fuzz(int(sys.argv[1]) if len(sys.argv) > 1 else 50, 0, Path("outputs/fuzz_hostile/stored_state"))
    print("\n".join(found) or "no findings")
