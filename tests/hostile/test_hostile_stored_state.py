"""Stored state, attacked: the evaluation cache tampered with (rows that are still valid SQLite), locked, corrupt or
unusable, and the gate given results no evaluation can produce.

A cached row is trusted only when it is a valid results record (``treckit.testsets.results.check_results``): any
other row is a miss, evaluated again and replaced, said once with the cache file and the row's key, never its
content.  The gate refuses an impossible results file with exit 2, naming the file and the field, never the value.
The longer randomized pass is fuzz_hostile_stored_state.py."""
from __future__ import annotations

import json
import math
import sqlite3

import pytest

from helpers import run_cli

TEST_SET = """name: tiny
version: '1'
queries:
- query_id: q1
  query_text: alpha
  query_type: t1
  relevant_docs:
  - {doc_id: d1, grade: 1}
- query_id: q2
  query_text: beta
  query_type: t2
  relevant_docs:
  - {doc_id: d2, grade: 2}
"""
# alpha: d1 at rank 2 (RR 1/2, nDCG 1/log2(3)); beta: d2 at rank 1 (RR 1, nDCG 1)
FUNCTION = "def search(text):\n    return {'alpha': ['d9', 'd1'], 'beta': ['d2']}[text]\n"
RUN = "q1 Q0 d9 1 2.0 r\nq1 Q0 d1 2 1.0 r\nq2 Q0 d2 1 5.0 r\n"
MRR = (1 / 2 + 1) / 2
NDCG = (1 / math.log2(3) + 1) / 2
MARKER = "CONTENT-OF-THE-ROW"


def _strict(text: str):
    """JSON as a strict reader reads it: NaN and the infinities are not JSON."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def setup(tmp_path, monkeypatch):
    ts = tmp_path / "tiny.yaml"
    ts.write_text(TEST_SET)
    (tmp_path / "search.py").write_text(FUNCTION)
    (tmp_path / "config.yaml").write_text("name: tiny-search\n")
    monkeypatch.setenv("TRECKIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def _evaluate(tmp, capsys, out="out.json"):
    return run_cli(["testset", "eval", tmp / "tiny.yaml", "--function", f"{tmp / 'search.py'}:search", "--config",
                    tmp / "config.yaml", "-m", "mrr", "-m", "ndcg_at_10", "--out", tmp / out], capsys)


def _row(tmp):
    with sqlite3.connect(tmp / "cache" / "evaluations.sqlite") as con:
        [(key, value)] = con.execute("SELECT key, value FROM evaluations").fetchall()
    return key, value


def _store(tmp, key, text):
    with sqlite3.connect(tmp / "cache" / "evaluations.sqlite") as con:
        con.execute("UPDATE evaluations SET value = ? WHERE key = ?", (text, key))


def _set(path: str, value):
    def tamper(d):
        *parents, last = path.split(".")
        for p in parents:
            d = d[int(p)] if isinstance(d, list) else d[p]
        if isinstance(d, list):
            d[int(last)] = value
        else:
            d[last] = value
    return tamper


def _duplicate_qids(d):
    d["per_query"][1]["qid"] = d["per_query"][0]["qid"]


TAMPERED = {
    "empty per-query values": _set("per_query", []),
    "NaN mean": _set("aggregates.mrr.mean", math.nan),
    "bogus schema": _set("schema", "bogus"),
    "text value": _set("per_query.0.mrr", "0.5"),
    "boolean value": _set("per_query.1.mrr", True),
    "huge mean": _set("aggregates.mrr.mean", 1e308),
    "huge integer": _set("aggregates.mrr.mean", 10 ** 30),
    "mean of 1.5": _set("aggregates.ndcg_at_10.mean", 1.5),
    "duplicate qids": _duplicate_qids,
    "mean not of its values": _set("aggregates.mrr.mean", 0.5),
    "unknown measure": _set("measures.0", "mrr_at_0"),
    "per-type count": _set("per_query_type.t1.num_queries", 7),
    "missing query not a query": _set("missing_queries", [MARKER]),
    "negative latency": _set("latency_ms.p50", -1.0),
    "latency without its p95": lambda d: d["latency_ms"].pop("p95"),
    "a query's latency of 1e30 ms (valid) beside a value out of range": lambda d: d["per_query"][0].update(
        latency_ms=10 ** 30, mrr=2),
    "definition of another measure": _set("definitions.mrr.measure", "map"),
}


@pytest.mark.parametrize("tamper", list(TAMPERED.values()), ids=list(TAMPERED))
def test_a_tampered_cache_row_is_a_miss_said_with_the_file_and_key(setup, capsys, tamper):
    """The row passes SQLite's own check, yet it is not a result: evaluated again (the right numbers, a valid JSON
    --out), said once naming the cache file and the key and nothing of the row, replaced, then answered again."""
    tmp = setup
    assert _evaluate(tmp, capsys)[0] == 0
    key, value = _row(tmp)
    row = json.loads(value)
    row["system"]["config"] = {"name": MARKER}          # content that must never reach a message
    tamper(row)
    _store(tmp, key, json.dumps(row))
    code, out, err = _evaluate(tmp, capsys, "again.json")
    assert code == 0, err
    assert "answered from the cache" not in err and "0 queries" not in out
    cache = tmp / "cache" / "evaluations.sqlite"
    said = [ln for ln in err.splitlines() if "evaluation cache" in ln]
    assert said == [f"treckit: the evaluation cache {cache}: the result stored under the key {key} is not a valid "
                    f"result ({said[0].split('(', 1)[1].split(')')[0]}): evaluating again, and replacing it"], err
    assert MARKER not in err and "1e+308" not in err and "1.5" not in err
    got = _strict((tmp / "again.json").read_text())
    assert [r["qid"] for r in got["per_query"]] == ["q1", "q2"]
    assert got["aggregates"]["mrr"]["mean"] == MRR and got["aggregates"]["ndcg_at_10"]["mean"] == pytest.approx(NDCG)
    code, _, err = _evaluate(tmp, capsys, "third.json")                  # the replaced row is answered
    assert code == 0 and "answered from the cache" in err and "not a valid result" not in err
    assert _strict((tmp / "third.json").read_text())["aggregates"] == got["aggregates"]


def test_a_row_that_is_not_json_is_a_miss(setup, capsys):
    tmp = setup
    _evaluate(tmp, capsys)
    key, _ = _row(tmp)
    _store(tmp, key, '{"schema": "treckit.testset-results/2", ' + MARKER)
    code, _, err = _evaluate(tmp, capsys, "again.json")
    assert code == 0 and f"the key {key} is not a valid result (not JSON)" in err and MARKER not in err
    assert _strict((tmp / "again.json").read_text())["aggregates"]["mrr"]["mean"] == MRR


def test_a_locked_cache_is_waited_for_then_left_alone(setup, capsys, monkeypatch):
    """Another connection holds the file's write lock: waited for briefly, then the evaluation goes on without the
    cache (said once), with the right numbers, and the other writer's file is untouched."""
    from treckit.testsets import cache
    tmp = setup
    _evaluate(tmp, capsys)
    key, value = _row(tmp)
    monkeypatch.setattr(cache, "LOCK_WAIT_SECONDS", 0.3)
    holder = sqlite3.connect(tmp / "cache" / "evaluations.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        code, _, err = _evaluate(tmp, capsys, "again.json")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert code == 0 and err.count("is busy") == 1 and "answered from the cache" not in err, err
    assert _strict((tmp / "again.json").read_text())["aggregates"]["mrr"]["mean"] == MRR
    assert _row(tmp) == (key, value) and sorted(p.name for p in (tmp / "cache").iterdir()) == ["evaluations.sqlite"]


def test_a_corrupt_cache_is_set_aside_and_a_new_one_started(setup, capsys):
    tmp = setup
    _evaluate(tmp, capsys)
    (tmp / "cache" / "evaluations.sqlite").write_bytes(b"SQLite format 3\x00" + b"\xff" * 4096)
    code, _, err = _evaluate(tmp, capsys, "again.json")
    assert code == 0 and "is corrupt" in err and "set aside as evaluations.corrupt-" in err, err
    assert _strict((tmp / "again.json").read_text())["aggregates"]["mrr"]["mean"] == MRR
    assert "answered from the cache" in _evaluate(tmp, capsys, "third.json")[2]          # the new file works


def test_a_cache_that_cannot_be_opened_is_left_alone(setup, capsys, monkeypatch):
    """A cache folder that is a file (not writable, not a database): the evaluation goes on without it."""
    tmp = setup
    (tmp / "blocker").write_text(MARKER)
    monkeypatch.setenv("TRECKIT_CACHE_DIR", str(tmp / "blocker" / "cache"))
    code, _, err = _evaluate(tmp, capsys)
    assert code == 0 and "evaluating without it" in err and MARKER not in err, err
    assert _strict((tmp / "out.json").read_text())["aggregates"]["mrr"]["mean"] == MRR
    assert (tmp / "blocker").read_text() == MARKER


# ------------------------------------------------------------------ the gate given impossible results
@pytest.fixture
def results(tmp_path, capsys):
    (tmp_path / "tiny.yaml").write_text(TEST_SET)
    (tmp_path / "run.trec").write_text(RUN)
    code, _, err = run_cli(["testset", "eval", tmp_path / "tiny.yaml", "--run", tmp_path / "run.trec", "-m", "mrr",
                            "-m", "ndcg_at_10", "--out", tmp_path / "base.json"], capsys)
    assert code == 0, err
    return tmp_path


IMPOSSIBLE = [
    # (what the current results say, the field named, what is said of it)
    (_set("aggregates.mrr.mean", 1.5), "aggregates.mrr.mean", "must be from 0 to 1 (the range of mrr)"),
    (_set("aggregates.mrr.mean", 1e308), "aggregates.mrr.mean", "must be from 0 to 1 (the range of mrr)"),
    (_set("aggregates.mrr.mean", -0.25), "aggregates.mrr.mean", "must be from 0 to 1 (the range of mrr)"),
    (_set("aggregates.mrr.mean", math.nan), "aggregates.mrr.mean", "must be a finite number"),
    (_set("aggregates.mrr.mean", 0.7), "aggregates.mrr.mean", "is not the mean of the per-query values of mrr"),
    (_set("aggregates.mrr.median", 0.7), "aggregates.mrr.median", "is not the median of the per-query values of mrr"),
    (_set("aggregates.mrr.std", -1.0), "aggregates.mrr.std", "must be at least 0"),
    (_set("per_query", []), "per_query", "holds no query"),
    (_duplicate_qids, "per_query[1].qid", "a query is listed twice"),
    (_set("per_query.0.mrr", 2.0), "per_query[0].mrr", "must be from 0 to 1 (the range of mrr)"),
    (_set("per_query.0.ndcg_at_10", 10 ** 30), "per_query[0].ndcg_at_10", "must be from 0 to 1"),
    (_set("measures.1", "ndcg_at_0"), "measures[1]", "not a test-set measure"),
    (_set("per_query_type.t1.num_queries", 2), "per_query_type.t1.num_queries", "is not the number of queries"),
    (_set("per_query_type.t2.mrr", 0.5), "per_query_type.t2.mrr", "is not the mean of mrr over the queries of that type"),
    (_set("missing_queries", ["q9"]), "missing_queries", "must list queries of the per-query values"),
    (_set("k", 0), "k", "must be a whole number of at least 1"),
]


@pytest.mark.parametrize("tamper, field, said", IMPOSSIBLE, ids=[f"{f}-{i}" for i, (_, f, _) in enumerate(IMPOSSIBLE)])
def test_the_gate_refuses_impossible_results(results, capsys, tamper, field, said):
    """Exit 2, the file and the field named, the value never echoed (309 digits of 1e308 would be), no verdict."""
    tmp = results
    data = json.loads((tmp / "base.json").read_text())
    tamper(data)
    (tmp / "cur.json").write_text(json.dumps(data))
    code, out, err = run_cli(["gate", "--baseline", tmp / "base.json", "--current", tmp / "cur.json", "--metric", "mrr",
                              "--metric", "ndcg_at_10"], capsys)
    assert code == 2 and out == "", (out, err)
    assert err.startswith(f"treckit: error: {tmp / 'cur.json'}: {field}: {said}"), err
    assert "gate passed" not in err and "1e+308" not in err and "0" * 30 not in err and len(err) < 400, err


def test_the_gate_passes_possible_results_with_their_numbers(results, capsys):
    tmp = results
    code, out, err = run_cli(["gate", "--baseline", tmp / "base.json", "--current", tmp / "base.json", "--metric", "mrr",
                              "--metric", "ndcg_at_10"], capsys)
    assert code == 0 and "gate passed" in err, err
    assert out.splitlines() == [f"mrr              baseline {MRR:.4f}  current {MRR:.4f}  limit {MRR * 0.95:.4f}  pass",
                                f"ndcg_at_10       baseline {NDCG:.4f}  current {NDCG:.4f}  limit {NDCG * 0.95:.4f}  pass"]


def test_the_gate_in_python_validates_too(results):
    """treckit.testsets.gate.gate(...) refuses the same records the command refuses."""
    from treckit.console.errors import InputError
    from treckit.testsets.gate import gate
    base = json.loads((results / "base.json").read_text())
    bad = json.loads(json.dumps(base))
    bad["aggregates"]["mrr"]["mean"] = 1.5
    with pytest.raises(InputError, match=r"^the current results: aggregates\.mrr\.mean: must be from 0 to 1"):
        gate(base, bad, ["mrr"])
    assert gate(base, base, ["mrr"]).passed
