"""YAML test sets, the runner, RQ, the gate, the cache and the test-set life cycle."""
from __future__ import annotations

import json
import math
import time
import warnings

import numpy as np
import pytest
import yaml
from hypothesis import given, settings, strategies as st

from helpers import ROOT, default_sigint, patience, run_cli
from treckit.console.errors import InputError
from treckit.measures.definitions import RANKINGS
from treckit.testsets import TestSetError, load_test_set, parse_test_set
from treckit.testsets.schema import Query, QuerySetModel, RelevantDoc, TestSetModel, json_schema
from treckit.testsets.load import TestSet

SAMPLE = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
CORPUS = ROOT / "data" / "test_sets" / "documents.jsonl"

SMALL = """\
name: small
version: "1.0"
queries:
  - query_id: a
    query_text: alpha beta
    query_type: exact_term
    relevant_docs:
      - {doc_id: d1, grade: 3}
      - {doc_id: d2, grade: 1}
      - {doc_id: d3, grade: 0}
  - query_id: b
    query_text: gamma
    query_type: paraphrase
    topK: 2
    relevant_docs:
      - {doc_id: d4, grade: 2}
"""


def small() -> TestSet:
    return parse_test_set(SMALL, "small.yaml")


# ------------------------------------------------------------------ schema and loading
def test_sample_validates_and_counts_types():
    """The test-set document's shape: 50 queries, 20 exact_term, 15 paraphrase, 15 complex_clinical."""
    ts = load_test_set(SAMPLE)
    assert (ts.name, ts.version, len(ts.queries)) == ("clinical", "1", 50)
    assert ts.counts_by_type() == {"exact_term": 20, "paraphrase": 15, "complex_clinical": 15}


def test_every_problem_is_listed_with_its_line():
    text = """\
name: bad
version: "1"
queries:
  - query_id: q1
    query_text: x
    query_type: t
    relevant_docs:
      - {doc_id: d1, grade: 0}
  - query_id: q1
    query_text: y
    query_type: t
    colour: red
    relevant_docs:
      - {doc_id: d2, grade: 4}
      - {doc_id: d2, grade: 1}
      - {doc_id: d3, grade: 2020-01-01}
"""
    with pytest.raises(TestSetError) as e:
        parse_test_set(text, "bad.yaml")
    assert e.value.problems == [
        (4, "query 'q1' has no doc with grade > 0: it cannot be scored"),
        (9, "query_id 'q1' is used twice (first on line 4)"),
        (12, "queries.1.colour: unknown field (allowed: see the schema)"),
        (14, "queries.1.relevant_docs.0.grade: Input should be less than or equal to 3"),
        (15, "query 'q1' lists doc 'd2' twice"),
        (16, "the value '2020-01-01' is read by YAML as a timestamp; quote it to make it text"),
    ]
    assert e.value.exit_code == 2


def test_ids_are_the_text_as_written():
    ts = parse_test_set(SMALL.replace("query_id: a", "query_id: 007").replace("doc_id: d1", "doc_id: 2024-01-01"))
    assert ts.query_ids[0] == "007"
    assert ts.queries[0].relevant_docs[0].doc_id == "2024-01-01"


@pytest.mark.parametrize("text, expected", [
    ("a: &x [1, 2]\nb: *x\n", "anchors and aliases"),
    ("name: !!binary aGVsbG8=\n", "binary"),
    ("name: !!set {a, b}\n", "!!set has no place in a test set"),
    ("name: a\nname: b\n", "appears twice"),
    ("[" * 40 + "]" * 40, "nested more than"),
    ("name: [unclosed\n", "not valid YAML"),
])
def test_hostile_yaml_is_a_clean_error(text, expected):
    with pytest.raises(TestSetError, match=expected.replace("[", r"\[").replace("(", r"\(")):
        parse_test_set(text)


def test_alias_bomb_is_refused_at_once():
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    t0 = time.process_time()                   # this process's CPU time: other work on the machine does not count
    with pytest.raises(TestSetError, match="anchors and aliases"):
        parse_test_set(bomb)
    assert time.process_time() - t0 < 5        # bounded: the aliases are never expanded


def test_name_resolution_through_the_test_set_directory(tmp_path, monkeypatch):
    (tmp_path / "clinical_v2.yaml").write_text(SMALL)
    monkeypatch.setenv("TRECKIT_TEST_SETS", str(tmp_path))
    assert load_test_set("clinical_v2").name == "small"
    with pytest.raises(InputError, match="known test sets: clinical_v2"):
        load_test_set("clinical_v3")


def test_shipped_json_schema_is_the_models_schema():
    shipped = json.loads((ROOT / "code" / "treckit" / "testsets" / "testset.schema.json").read_text())
    assert shipped == json_schema()
    import jsonschema
    import yaml
    jsonschema.validate(yaml.safe_load(SAMPLE.read_text()), shipped)


def test_digest_ignores_formatting_but_not_content():
    a = parse_test_set(SMALL)
    b = parse_test_set(SMALL.replace("{doc_id: d1, grade: 3}", "{grade: 3, doc_id: d1}") + "\n# comment\n")
    c = parse_test_set(SMALL.replace("grade: 3", "grade: 2"))
    assert a.digest == b.digest != c.digest


# ------------------------------------------------------------------ runner
def test_runner_values_by_hand():
    from treckit.testsets.runner import evaluate
    answers = {"alpha beta": ["d9", "d2", "d1"], "gamma": []}
    res = evaluate(lambda text: answers[text], small(), measures=["recall@1", "recall@3", "ndcg_at_3", "mrr"])
    a, b = res.per_query
    # query a: relevant d1 (3), d2 (1); ranking d9, d2, d1
    assert a["recall_at_1"] == 0 and a["recall_at_3"] == 1.0 and a["mrr"] == 0.5
    dcg = (2 ** 1 - 1) / math.log2(3) + (2 ** 3 - 1) / math.log2(4)
    idcg = (2 ** 3 - 1) / math.log2(2) + (2 ** 1 - 1) / math.log2(3)
    assert a["ndcg_at_3"] == pytest.approx(dcg / idcg, abs=1e-12)
    # query b returned nothing: every measure 0, and it still counts
    assert b["recall_at_3"] == b["ndcg_at_3"] == b["mrr"] == 0.0
    assert res.aggregates["mrr"] == {"mean": 0.25, "median": 0.25, "std": pytest.approx(np.std([0.5, 0], ddof=1))}
    assert res.per_query_type == {"exact_term": {"num_queries": 1, "recall_at_1": 0.0, "recall_at_3": 1.0,
                                                 "ndcg_at_3": pytest.approx(dcg / idcg), "mrr": 0.5},
                                  "paraphrase": {"num_queries": 1, "recall_at_1": 0.0, "recall_at_3": 0.0,
                                                 "ndcg_at_3": 0.0, "mrr": 0.0}}
    # linear gain is trec_eval's nDCG, printed under trec_eval's name: the two gains never share one
    linear = evaluate(lambda text: answers[text], small(), measures=["ndcg_at_3"], gain="linear")
    assert linear.measures == ["ndcg_cut_3"] and "ndcg_at_3" not in linear.per_query[0]
    assert linear.per_query[0]["ndcg_cut_3"] == pytest.approx((1 / math.log2(3) + 3 / 2) / (3 + 1 / math.log2(3)))
    assert linear.definitions["ndcg_cut_3"].gain == "linear" and res.definitions["ndcg_at_3"].gain == "exp"


def test_list_order_is_the_ranking_even_with_scores():
    from treckit.testsets.runner import evaluate
    res = evaluate(lambda t: [("d3", 1.0), ("d1", 9.0)] if t == "alpha beta" else [], small(), measures=["mrr"])
    assert res.per_query[0]["mrr"] == 0.5


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=10, max_size=30), st.integers(1, 10), st.randoms(use_true_random=False))
def test_ndcg_equals_scikit_learn_on_exponential_gains(grades, k, rnd):
    from sklearn.metrics import ndcg_score
    from treckit.testsets.runner import evaluate
    if not any(grades):
        grades[0] = 1
    docs = [f"d{i}" for i in range(len(grades))]
    ranking = docs[:]
    rnd.shuffle(ranking)
    model = TestSetModel(name="h", version="1", queries=[Query(query_id="q", query_text="t", query_type="x",
                         relevant_docs=[RelevantDoc(doc_id=d, grade=g) for d, g in zip(docs, grades)])])
    ours = evaluate(lambda t: ranking, TestSet(model), measures=[f"ndcg_at_{k}"]).per_query[0][f"ndcg_at_{k}"]
    scores = np.array([len(ranking) - ranking.index(d) for d in docs], float)      # no ties
    theirs = ndcg_score(np.array([[2 ** g - 1 for g in grades]], float), scores[None, :], k=k)
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_batch_and_workers_give_the_same_values():
    from treckit.testsets.runner import evaluate
    ans = {"alpha beta": ["d1", "x", "d2"], "gamma": ["d4"]}
    one = evaluate(lambda t: ans[t], small())
    many = evaluate(lambda t: ans[t], small(), workers=4)
    batch = evaluate(lambda ts: [ans[t] for t in ts], small(), batch=True)
    assert one.per_query == [{**r, "latency_ms": one.per_query[i]["latency_ms"]} for i, r in enumerate(many.per_query)]
    assert [r["mrr"] for r in batch.per_query] == [r["mrr"] for r in one.per_query] == [1.0, 1.0]


def test_latency_grows_with_injected_delay():
    from treckit.testsets.runner import evaluate
    fast = evaluate(lambda t: ["d1"], small())
    slow = evaluate(lambda t: time.sleep(0.03) or ["d1"], small())
    assert slow.latency_ms["p50"] >= 30 and slow.latency_ms["p50"] > fast.latency_ms["p50"]      # a sleep is never shorter
    assert slow.latency_ms["p95"] >= slow.latency_ms["p50"]


@pytest.mark.parametrize("bad, match", [(lambda t: None, "returned None"), (lambda t: ["d1", "d1"], "returned twice"),
                                        (lambda t: [3], "returned int"), (lambda t: [("d1", float("nan"))], "NaN")])
def test_bad_answers_are_named(bad, match):
    from treckit.testsets.runner import evaluate
    with pytest.raises(InputError, match=match):
        evaluate(bad, small())


# ------------------------------------------------------------------ cache
def test_cache_hits_only_for_the_same_inputs(tmp_path):
    from treckit.testsets.runner import evaluate
    calls = []

    def fn(t):
        calls.append(t)
        return ["d1"]
    cfg = {"fusion_method": "rrf", "rrf_k": 60}
    first = evaluate(fn, small(), cfg, cache_dir=tmp_path)
    again = evaluate(fn, small(), cfg, cache_dir=tmp_path)
    assert len(calls) == 2 and again.cached and not first.cached
    assert again.to_dict() == first.to_dict()
    evaluate(fn, small(), {"fusion_method": "rrf", "rrf_k": 61}, cache_dir=tmp_path)          # another config
    evaluate(fn, parse_test_set(SMALL.replace("gamma", "delta")), cfg, cache_dir=tmp_path)    # another content
    evaluate(fn, small(), cfg, measures=["mrr"], cache_dir=tmp_path)                          # other measures
    evaluate(fn, small(), None, cache_dir=tmp_path)                                           # no config: never cached
    evaluate(fn, small(), None, cache_dir=tmp_path)
    assert len(calls) == 12


def _cache_messages(caught) -> list[str]:
    from treckit.testsets.cache import CacheWarning
    return [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]


CORRUPT_NAME = r"evaluations\.corrupt-\d{8}T\d{6}Z-\d+"


def test_a_corrupt_cache_is_set_aside_under_a_new_name_each_time(tmp_path):
    """A file SQLite cannot read as a database is set aside and a new one started; a second one is set aside
    beside the first (never over it), each keeping its bytes."""
    import re
    from treckit.testsets.runner import evaluate
    db = tmp_path / "evaluations.sqlite"
    for garbage in (b"this is not sqlite" * 100, b"nor is this" * 100):
        db.write_bytes(garbage)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = evaluate(lambda t: ["d1"], small(), {"x": 1}, cache_dir=tmp_path)
        assert res.per_query[0]["mrr"] == 1.0 and not res.cached
        said = _cache_messages(caught)
        assert len(said) == 1 and "is corrupt" in said[0] and "set aside as evaluations.corrupt-" in said[0], said
    aside = sorted(p for p in tmp_path.iterdir() if p.name != "evaluations.sqlite")
    assert len(aside) == 2 and all(re.fullmatch(CORRUPT_NAME, p.name) for p in aside), aside
    assert sorted(p.read_bytes() for p in aside) == sorted([b"this is not sqlite" * 100, b"nor is this" * 100])
    assert evaluate(lambda t: [], small(), {"x": 1}, cache_dir=tmp_path).cached        # the new file works


def test_an_unreadable_cache_is_not_set_aside(tmp_path):
    """Not a database file at all (a folder in its place): evaluated without the cache, said, left alone."""
    from treckit.testsets.runner import evaluate
    (tmp_path / "evaluations.sqlite").mkdir()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = evaluate(lambda t: ["d1"], small(), {"x": 1}, cache_dir=tmp_path)
    assert res.per_query[0]["mrr"] == 1.0
    said = _cache_messages(caught)
    assert len(said) == 1 and "cannot be used" in said[0] and "evaluating without it" in said[0], said
    assert [p.name for p in tmp_path.iterdir()] == ["evaluations.sqlite"] and (tmp_path / "evaluations.sqlite").is_dir()


HOLD_LOCK = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("CREATE TABLE IF NOT EXISTS held (x)")
con.execute("BEGIN " + sys.argv[2])
con.execute("INSERT INTO held VALUES (1)")
print("holding", flush=True)
sys.stdin.readline()                      # held until the test says so (or goes away)
con.execute("COMMIT")
print("committed", flush=True)
"""


def hold_lock(db, lock: str):
    """Another process holding a write transaction on ``db`` until its stdin is closed (``communicate()``)."""
    import subprocess
    import sys
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(db), lock], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "holding"
    return holder


@pytest.mark.parametrize("lock", ["IMMEDIATE", "EXCLUSIVE"])
def test_a_busy_cache_is_waited_for_then_left_alone(tmp_path, monkeypatch, lock):
    """Another process holds a write transaction until the evaluation is over: the evaluation waits the (test's)
    0.3 s, goes on without the cache, says so once; the file is not set aside and the other process's commit goes
    through."""
    import sqlite3
    from treckit.testsets import cache
    from treckit.testsets.runner import evaluate
    monkeypatch.setattr(cache, "LOCK_WAIT_SECONDS", 0.3)
    evaluate(lambda t: ["d1"], small(), {"x": 1}, cache_dir=tmp_path)         # stored: the next one would be a hit
    db = tmp_path / "evaluations.sqlite"
    inode = db.stat().st_ino
    holder = hold_lock(db, lock)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = evaluate(lambda t: ["d1"], small(), {"x": 1}, cache_dir=tmp_path)    # the lock is never let go meanwhile
    finally:
        out, _ = holder.communicate("go\n", timeout=60)
    assert not res.cached and res.per_query[0]["mrr"] == 1.0 and res.per_query[1]["mrr"] == 0.0
    said = _cache_messages(caught)
    assert len(said) == 1 and "is busy" in said[0] and "0.3 s" in said[0] and "left as it is" in said[0], said
    assert holder.returncode == 0 and out.split() == ["committed"]
    assert [p.name for p in tmp_path.iterdir()] == ["evaluations.sqlite"] and db.stat().st_ino == inode
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM held").fetchone() == (1,)
    assert evaluate(lambda t: [], small(), {"x": 1}, cache_dir=tmp_path).cached        # the stored result is still there


def test_a_busy_cache_makes_the_command_say_so(tmp_path, monkeypatch, capsys):
    """In a command the message is treckit's (on stderr), not a Python warning."""
    from treckit.testsets import cache
    monkeypatch.setattr(cache, "LOCK_WAIT_SECONDS", 0.3)
    monkeypatch.setenv("TRECKIT_CACHE_DIR", str(tmp_path))
    (tmp_path / "ts.yaml").write_text(SMALL)
    (tmp_path / "search.py").write_text("def search(text):\n    return ['d1']\n")
    (tmp_path / "cfg.yaml").write_text("name: mine\n")
    argv = ["testset", "eval", tmp_path / "ts.yaml", "--function", f"{tmp_path / 'search.py'}:search",
            "--config", tmp_path / "cfg.yaml", "-m", "mrr"]
    assert run_cli(argv, capsys)[0] == 0
    holder = hold_lock(tmp_path / "evaluations.sqlite", "EXCLUSIVE")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code, out, err = run_cli(argv, capsys)
    finally:
        holder.communicate("go\n", timeout=60)
    assert code == 0 and "0.5000" in out
    assert err.count("treckit: the evaluation cache") == 1 and "is busy" in err and "answered from the cache" not in err
    assert _cache_messages(caught) == []


WAITING_COMMAND = """
import sys
from treckit.testsets import cache
cache.LOCK_WAIT_SECONDS = 3600.0             # a wait only Ctrl-C can end
real_busy = cache._busy
def busy(exc):
    found = real_busy(exc)
    if found and not said:
        said.append(1)
        print("waiting", flush=True)
    return found
said = []
cache._busy = busy
from treckit.cli.main import run
sys.argv = ["treckit", *sys.argv[1:]]
run()
"""


def test_ctrl_c_is_heard_while_waiting_for_a_busy_cache(tmp_path):
    """The wait for another process's lock (here an hour long) is taken a little at a time: Ctrl-C, sent once
    the command says it waits, ends the command with 130 while the lock is still held, and nothing is written."""
    import os
    import signal
    import subprocess
    import sys
    (tmp_path / "ts.yaml").write_text(SMALL)
    (tmp_path / "search.py").write_text("def search(text):\n    return ['d1']\n")
    (tmp_path / "cfg.yaml").write_text("name: mine\n")
    (tmp_path / "cache").mkdir()
    holder = hold_lock(tmp_path / "cache" / "evaluations.sqlite", "EXCLUSIVE")
    try:
        env = {**os.environ, "TRECKIT_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT / "code")}
        cmd = subprocess.Popen([sys.executable, "-c", WAITING_COMMAND, "testset", "eval", str(tmp_path / "ts.yaml"),
                                "--function", f"{tmp_path / 'search.py'}:search", "--config", str(tmp_path / "cfg.yaml"),
                                "--out", str(tmp_path / "r.json")], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
        assert cmd.stdout.readline() == "waiting\n", cmd.communicate()
        cmd.send_signal(signal.SIGINT)
        _, err = cmd.communicate(timeout=patience(60))       # the lock is held throughout: only Ctrl-C ends the wait
    finally:
        holder.kill()
        holder.communicate()
    assert cmd.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    assert not (tmp_path / "r.json").exists()


def test_cache_clear_on_a_busy_cache_is_an_error_not_a_count(tmp_path, monkeypatch, capsys):
    from treckit.testsets import cache
    from treckit.testsets.runner import evaluate
    monkeypatch.setattr(cache, "LOCK_WAIT_SECONDS", 0.3)
    monkeypatch.setenv("TRECKIT_CACHE_DIR", str(tmp_path))
    evaluate(lambda t: ["d1"], small(), {"x": 1}, cache_dir=tmp_path)
    holder = hold_lock(tmp_path / "evaluations.sqlite", "IMMEDIATE")
    try:
        code, out, err = run_cli(["cache", "clear"], capsys)
    finally:
        holder.communicate("go\n", timeout=60)
    assert code == 2 and out == "" and "is busy" in err and "try again" in err
    assert run_cli(["cache", "clear"], capsys)[:2] == (0, f"removed 1 cached evaluations from {tmp_path / 'evaluations.sqlite'}\n")


def _stored_rows(tmp_path) -> list:
    import sqlite3
    with sqlite3.connect(tmp_path / "evaluations.sqlite") as con:
        return con.execute("SELECT key, value FROM evaluations").fetchall()


@pytest.mark.parametrize("damage", [
    lambda d: "{}", lambda d: "not JSON", lambda d: "[1, 2]", lambda d: "null",
    lambda d: json.dumps({**d, "measures": [], "definitions": {}}),          # no measures: nothing else looked at
    lambda d: json.dumps({k: v for k, v in d.items() if k != "test_set"}),
    lambda d: json.dumps({**d, "per_query": "x"}),
    lambda d: json.dumps({**d, "aggregates": {m: {"mean": "high"} for m in d["measures"]}}),
    lambda d: json.dumps({**d, "per_query": [{"qid": "a"}]}),
])
def test_a_damaged_cache_row_is_a_miss(tmp_path, damage):
    """A stored row that is not a result: evaluated again (the right numbers), replaced, no file set aside, and said
    once, naming the cache file and the row's key (never its content)."""
    import sqlite3
    from treckit.testsets.runner import evaluate
    first = evaluate(lambda t: ["d1"], small(), {"x": 1}, cache_dir=tmp_path)
    [(key, value)] = _stored_rows(tmp_path)
    with sqlite3.connect(tmp_path / "evaluations.sqlite") as con:
        con.execute("UPDATE evaluations SET value = ? WHERE key = ?", (damage(json.loads(value)), key))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = evaluate(lambda t: ["d1"], small(), {"x": 1}, cache_dir=tmp_path)
    # by hand: a finds d1 (grade 3) of its d1, d2 (grade 1) first; b finds nothing of d4
    ndcg_a = (2 ** 3 - 1) / ((2 ** 3 - 1) + (2 ** 1 - 1) / math.log2(3))
    assert not again.cached and again.metrics == first.metrics == pytest.approx(
        {"recall_at_5": 0.25, "recall_at_10": 0.25, "recall_at_20": 0.25, "ndcg_at_10": ndcg_a / 2, "mrr": 0.5})
    [said] = _cache_messages(caught)
    assert said.startswith(f"the evaluation cache {tmp_path / 'evaluations.sqlite'}: the result stored under the key "
                           f"{key} is not a valid result (") and said.endswith("): evaluating again, and replacing it")
    assert [p.name for p in tmp_path.iterdir()] == ["evaluations.sqlite"]
    [(same_key, replaced)] = _stored_rows(tmp_path)
    assert same_key == key and json.loads(replaced)["aggregates"] == json.loads(value)["aggregates"]
    assert evaluate(lambda t: ["d1"], small(), {"x": 1}, cache_dir=tmp_path).cached


def test_the_cache_keeps_the_most_recently_used_within_its_bound(tmp_path, monkeypatch):
    """$TRECKIT_CACHE_MAX_BYTES holds two results: storing a third removes the one used longest ago (b:
    a was answered after b was stored)."""
    from treckit.testsets.cache import ResultCache
    from treckit.testsets.runner import evaluate

    def ev(name):
        return evaluate(lambda t: ["d1"], small(), {"c": name}, cache_dir=tmp_path)
    ev("a")
    one = ResultCache(tmp_path).stored_bytes()
    monkeypatch.setenv("TRECKIT_CACHE_MAX_BYTES", str(int(one * 2.5)))
    ev("b")
    assert ev("a").cached
    ev("c")
    assert [ev(x).cached for x in "ac"] == [True, True]
    assert not ev("b").cached and ResultCache(tmp_path).stored_bytes() <= one * 2.5
    assert [ev(x).cached for x in "cb"] == [True, True] and not ev("a").cached       # a went when b came back


def test_a_result_larger_than_the_bound_is_not_stored(tmp_path, monkeypatch):
    from treckit.testsets.runner import evaluate
    monkeypatch.setenv("TRECKIT_CACHE_MAX_BYTES", "100")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert not any(evaluate(lambda t: ["d1"], small(), {"big": 1}, cache_dir=tmp_path).cached for _ in range(2))
    said = _cache_messages(caught)
    assert len(said) == 1 and "more than the evaluation cache holds (100 bytes" in said[0], said


def test_a_wrong_cache_bound_is_an_error_naming_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRECKIT_CACHE_MAX_BYTES", "lots")
    monkeypatch.setenv("TRECKIT_CACHE_DIR", str(tmp_path))
    (tmp_path / "ts.yaml").write_text(SMALL)
    (tmp_path / "search.py").write_text("def search(text):\n    return ['d1']\n")
    (tmp_path / "cfg.yaml").write_text("name: mine\n")
    code, _, err = run_cli(["testset", "eval", tmp_path / "ts.yaml", "--function", f"{tmp_path / 'search.py'}:search",
                            "--config", tmp_path / "cfg.yaml"], capsys)
    assert code == 2 and "$TRECKIT_CACHE_MAX_BYTES='lots' is not a size" in err and "512M" in err


def test_a_changed_function_is_not_answered_from_the_cache(tmp_path, monkeypatch, capsys):
    """testset eval --function F --config C: the function's code is part of the key.  MRR by hand on SMALL:
    ['d1'] -> a: 1, b: 0 (0.5); ['d2', 'd4'] -> a: d2 (grade 1) first, 1; b: d4 second, 1/2 (0.75)."""
    monkeypatch.setenv("TRECKIT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "ts.yaml").write_text(SMALL)
    search = tmp_path / "search.py"
    search.write_text("def search(text):\n    return ['d1']\n")
    (tmp_path / "cfg.yaml").write_text("name: mine\n")
    argv = ["testset", "eval", tmp_path / "ts.yaml", "--function", f"{search}:search", "--config", tmp_path / "cfg.yaml",
            "-m", "mrr", "--out", tmp_path / "r.json"]

    def mrr():
        code, _, err = run_cli(argv, capsys)
        assert code == 0, err
        return json.loads((tmp_path / "r.json").read_text())["aggregates"]["mrr"]["mean"], "from the cache" in err
    assert mrr() == (0.5, False)
    assert mrr() == (0.5, True)
    search.write_text("def search(text):\n    return ['d2', 'd4']\n")
    assert mrr() == (0.75, False)
    assert mrr() == (0.75, True)


def test_a_function_not_in_a_file_is_not_cached_and_said_once(tmp_path):
    from treckit.testsets.runner import evaluate
    scope: dict = {}
    exec(compile("def typed(text):\n    return ['d1']\n", "<typed at a prompt>", "exec"), scope)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = [evaluate(scope["typed"], small(), {"x": 1}, cache_dir=tmp_path).cached for _ in range(2)]
    assert got == [False, False]
    said = _cache_messages(caught)
    assert len(said) == 1 and "typed" in said[0] and "not cached" in said[0], said


def test_cache_clear_command(tmp_path, capsys, monkeypatch):
    from treckit.testsets.runner import evaluate
    evaluate(lambda t: ["d1"], small(), {"x": 1}, cache_dir=tmp_path)
    monkeypatch.setenv("TRECKIT_CACHE_DIR", str(tmp_path))
    code, out, _ = run_cli(["cache", "clear"], capsys)
    assert code == 0 and out.startswith("removed 1 cached evaluations")
    assert not evaluate(lambda t: ["d1"], small(), {"x": 1}, cache_dir=tmp_path).cached


# ------------------------------------------------------------------ RQ and the baseline
def test_bow_cosine_by_hand(tmp_path):
    from treckit.retrieval.bow import BowRetriever
    from treckit.retrieval.corpus import read_corpus
    (tmp_path / "c.jsonl").write_text('{"_id": "b", "text": "cat cat dog"}\n{"_id": "a", "text": "dog"}\n'
                                      '{"_id": "c", "text": "cat dog cat"}\n{"_id": "d", "text": "bird"}\n')
    bow = BowRetriever(read_corpus(tmp_path / "c.jsonl"))
    got = bow.retrieve("cat fish", 10)
    # query (cat 1, fish 1), |q| = sqrt 2; b and c = (cat 2, dog 1), |d| = sqrt 5: cos = 2 / sqrt 10; a: 0
    assert got == [("b", pytest.approx(2 / math.sqrt(10))), ("c", pytest.approx(2 / math.sqrt(10)))]
    assert [d for d, _ in got] == ["b", "c"]            # the tie stays in corpus (file) order


def test_bow_ties_in_corpus_file_order_not_id_order(tmp_path):
    from treckit.retrieval.bow import BowRetriever
    from treckit.retrieval.corpus import read_corpus
    lines = ['{"id": "s1", "text": "anna walks"}', '{"id": "s2", "text": "storm sea"}', '{"id": "s10", "text": "storm sea"}']
    (tmp_path / "story.jsonl").write_text("\n".join(lines) + "\n")
    # query (storm 1, sea 1), |q| = sqrt 2; s2 = s10 = (storm 1, sea 1): cos = 2 / (sqrt 2 * sqrt 2) = 1; s1: 0
    got = BowRetriever(read_corpus(tmp_path / "story.jsonl")).retrieve("storm sea", 5)
    assert got == [("s2", pytest.approx(1.0)), ("s10", pytest.approx(1.0))]   # story order; id bytes put s10 first
    (tmp_path / "reversed.jsonl").write_text("\n".join(lines[::-1]) + "\n")
    assert [d for d, _ in BowRetriever(read_corpus(tmp_path / "reversed.jsonl")).retrieve("storm sea", 5)] == ["s10", "s2"]


def test_rq_by_hand_with_topk_and_strict_threshold():
    from treckit.testsets.rq import rq
    from treckit.retrieval.ranking import run_from_rankings
    ts = small()     # a: k = 5; b: topK = 2
    run = run_from_rankings({"a": [("x", None), ("d2", None), ("d1", None)], "b": [("y", None), ("z", None), ("d4", None)]})
    rep = rq(ts, run, k=5, threshold=0.25)
    assert [(p["qid"], p["k"], p["rr"], p["recall_at_k"]) for p in rep["per_query"]] == [("a", 5, 0.5, 1.0), ("b", 2, 0.0, 0.0)]
    assert rep["value"] == 0.25 and rep["pass"] is False                     # exactly at the threshold fails
    assert rq(ts, run, k=5, threshold=0.2499)["pass"] is True
    assert list(rep) == ["metric", "value", "pass", "k", "threshold", "ranking", "definitions", "recall_at_k",
                         "num_labeled", "num_unlabeled", "unlabeled", "per_query"]
    # b sets topK 2: the definitions say a query's topK replaces k; RQ averages the labelled queries
    assert rep["definitions"]["value"] == {"name": "value", "measure": "recip_rank", "cutoff": 5, "gain": None,
                                           "relevance": 1, "params": "a query's topK replaces k",
                                           "query_set": "labelled", "ranking": "trec_eval"}


def test_rq_without_labelled_queries_is_null():
    from treckit.testsets.rq import rq
    from treckit.retrieval.ranking import run_from_rankings
    model = TestSetModel(name="z", version="1", queries=[Query(query_id="q", query_text="t", query_type="x",
                                                               relevant_docs=[RelevantDoc(doc_id="d", grade=0)])])
    rep = rq(TestSet(model), run_from_rankings({"q": [("d", None)]}))
    assert (rep["value"], rep["pass"], rep["num_labeled"], rep["recall_at_k"]) == (None, None, 0, None)


# a query set as the RQ document has it: q2 without judgments, q4 with none of grade > 0
QUERY_SET = """\
name: story
version: "1"
queries:
  - query_id: q1
    query_text: storm at sea
    query_type: t
    relevant_docs:
      - {doc_id: s2, grade: 1}
  - query_id: q2
    query_text: anna danger
    query_type: t
  - query_id: q3
    query_text: anna storm
    query_type: t
    relevant_docs:
      - {doc_id: s10, grade: 2}
      - {doc_id: s1, grade: 0}
  - query_id: q4
    query_text: sea
    query_type: t
    relevant_docs:
      - {doc_id: s1, grade: 0}
"""
STORY = '{"id": "s1", "text": "anna walks"}\n{"id": "s2", "text": "storm sea"}\n{"id": "s10", "text": "storm sea"}\n'


def test_rq_loading_accepts_unlabelled_queries_validation_does_not():
    with pytest.raises(TestSetError) as e:
        parse_test_set(QUERY_SET, "story.yaml")
    assert e.value.problems == [(9, "queries.1.relevant_docs: Field required"),
                                (18, "query 'q4' has no doc with grade > 0: it cannot be scored")]
    ts = parse_test_set(QUERY_SET, "story.yaml", allow_unlabeled=True)
    assert [len(q.relevant_docs) for q in ts.queries] == [1, 0, 2, 1]
    with pytest.raises(TestSetError, match="grade: Input should be less than or equal to 3"):     # other checks hold
        parse_test_set(QUERY_SET.replace("grade: 2", "grade: 7"), allow_unlabeled=True)


def test_rq_skips_lists_and_counts_unlabelled_queries(tmp_path, capsys):
    (tmp_path / "qs.yaml").write_text(QUERY_SET)
    (tmp_path / "story.jsonl").write_text(STORY)
    code, out, _ = run_cli(["rq", "--test-set", tmp_path / "qs.yaml", "--corpus", tmp_path / "story.jsonl",
                            "--baseline", "bow", "--out", tmp_path / "rq.json"], capsys)
    rep = json.loads((tmp_path / "rq.json").read_text())
    # bag of words, ties in corpus order s1, s2, s10:
    # q1 (storm, at, sea), |q| = sqrt 3: s2 = s10 = 2 / (sqrt 3 sqrt 2); s1 shares nothing: s2 first, RR 1
    # q3 (anna, storm), |q| = sqrt 2: s1 = s2 = s10 = 1 / (sqrt 2 sqrt 2) = 1/2, all tied: s10 third, RR 1/3
    # RQ = (1 + 1/3) / 2 = 2/3 > 0.6: PASS (by id bytes s1, s10, s2 it would be (1/2 + 1/2) / 2 = 0.5, FAIL)
    assert [(p["qid"], p["rr"], p["first_relevant_rank"], p["recall_at_k"]) for p in rep["per_query"]] == \
        [("q1", 1.0, 1, 1.0), ("q3", pytest.approx(1 / 3), 3, 1.0)]
    assert rep["value"] == pytest.approx(2 / 3) and rep["pass"] is True and code == 0
    assert (rep["num_labeled"], rep["num_unlabeled"], rep["unlabeled"]) == (2, 2, ["q2", "q4"])
    assert rep["ranking"] == "bow-corpus-order" and rep["definitions"]["value"]["ranking"] == "bow-corpus-order"
    assert out.splitlines() == ["RQ (MRR@5) = 0.6667 over 2 labelled queries; threshold 0.6: PASS",
                                "Recall@5 = 1.0000",
                                f"ranking: {RANKINGS[rep['ranking']]}",
                                "skipped 2 unlabelled queries (no doc with grade > 0): q2, q4"]


def test_rq_fail_exits_1_unless_report_only(tmp_path, capsys):
    (tmp_path / "qs.yaml").write_text(QUERY_SET)
    (tmp_path / "story.jsonl").write_text(STORY)
    argv = ["rq", "--test-set", tmp_path / "qs.yaml", "--corpus", tmp_path / "story.jsonl", "--baseline", "bow",
            "--threshold", "0.7", "--out", tmp_path / "rq.json"]
    code, out, _ = run_cli(argv, capsys)         # 2/3 (above) <= 0.7
    assert code == 1 and "threshold 0.7: FAIL" in out
    assert json.loads((tmp_path / "rq.json").read_text())["pass"] is False        # the report is written all the same
    code, out, _ = run_cli(argv + ["--report-only"], capsys)
    assert code == 0 and "threshold 0.7: FAIL" in out


def test_rq_without_any_labelled_query_is_null_from_the_command_and_the_api(tmp_path, capsys):
    from treckit.testsets.rq import rq
    from treckit.retrieval.ranking import run_from_rankings
    queries = "".join(f"  - {{query_id: u{i:02d}, query_text: storm, query_type: t}}\n" for i in range(25))
    (tmp_path / "none.yaml").write_text(f"name: none\nversion: '1'\nqueries:\n{queries}")
    (tmp_path / "story.jsonl").write_text(STORY)
    code, out, _ = run_cli(["rq", "--test-set", tmp_path / "none.yaml", "--corpus", tmp_path / "story.jsonl",
                            "--baseline", "bow", "--out", tmp_path / "rq.json"], capsys)
    rep = json.loads((tmp_path / "rq.json").read_text())
    assert code == 0 and (rep["value"], rep["pass"], rep["num_labeled"], rep["num_unlabeled"]) == (None, None, 0, 25)
    assert out.splitlines()[0] == "RQ (MRR@5) = null over 0 labelled queries; threshold 0.6: skipped (no labelled queries)"
    assert out.splitlines()[-1] == ("skipped 25 unlabelled queries (no doc with grade > 0): "
                                    + ", ".join(f"u{i:02d}" for i in range(10)) + " ... and 15 more")
    ts = load_test_set(tmp_path / "none.yaml", allow_unlabeled=True)
    api = rq(ts, run_from_rankings({"u00": [("s2", None)]}))
    assert (api["value"], api["pass"], api["num_unlabeled"]) == (None, None, 25)


def test_rq_command_on_the_sample_baseline(tmp_path, capsys):
    from treckit.retrieval.bow import BowRetriever
    from treckit.retrieval.corpus import read_corpus
    code, out, _ = run_cli(["rq", "--test-set", SAMPLE, "--corpus", CORPUS, "--baseline", "bow", "--out", tmp_path / "rq.json"], capsys)
    rep = json.loads((tmp_path / "rq.json").read_text())
    assert code == 0 and out.startswith(f"RQ (MRR@5) = {rep['value']:.4f} over 50 labelled queries")
    # by hand: 1 / rank of the first doc of grade > 0 in the bag of words' top 5 (its order), 0 when none
    ts, bow = load_test_set(SAMPLE), BowRetriever(read_corpus(CORPUS))
    rr = []
    for q in ts.queries:
        relevant = {d.doc_id for d in q.relevant_docs if d.grade > 0}
        ranks = [i for i, (doc, _) in enumerate(bow.retrieve(q.query_text, 5), 1) if doc in relevant]
        rr.append(1 / ranks[0] if ranks else 0.0)
    assert rep["value"] == pytest.approx(sum(rr) / len(rr))
    # the baseline's own run, scored through a file, gives the same RQ
    code, out, _ = run_cli(["rq", "--test-set", SAMPLE, "--run", ROOT / "data/test_sets/baseline_bow.trec"], capsys)
    assert code == 0 and out.startswith(f"RQ (MRR@5) = {rep['value']:.4f}")


# ------------------------------------------------------------------ gate
def _results(means: dict[str, float], per_query=None) -> dict:
    from treckit.testsets.measures import definitions
    ts = small()
    return {"schema": "treckit.testset-results/2", "test_set": {"name": ts.name, "version": ts.version, "digest": ts.digest},
            "system": {}, "measures": list(means),
            "definitions": {m: d.to_dict() for m, d in definitions(list(means)).items()},
            "aggregates": {m: {"mean": v, "median": v, "std": None} for m, v in means.items()},
            "per_query_type": {(per_query or [{"query_type": "exact_term"}])[0]["query_type"]: {"num_queries": 1, **means}},
            "per_query": per_query or [{"qid": "a", "query_type": "exact_term", **means}]}


@pytest.mark.parametrize("current, absolute, drop, passed", [
    (0.76, False, 0.05, True),     # 0.80 x 0.95 = 0.76: not below it
    (0.7599, False, 0.05, False),
    (0.75, True, 0.05, True),      # 0.80 - 0.05
    (0.7499, True, 0.05, False),
])
def test_gate_boundaries(current, absolute, drop, passed):
    from treckit.testsets.gate import gate
    base = _results({"recall_at_10": 0.8, "ndcg_at_10": 0.5})
    cur = _results({"recall_at_10": current, "ndcg_at_10": 0.5})
    assert gate(base, cur, None, drop, absolute).passed is passed


def test_gate_command_fails_with_a_clear_message_and_a_report(tmp_path, capsys):
    base = _results({"recall_at_10": 0.8, "ndcg_at_10": 0.5}, [{"qid": "a|b", "query_type": "t", "recall_at_10": 0.8, "ndcg_at_10": 0.5}])
    cur = _results({"recall_at_10": 0.6, "ndcg_at_10": 0.5}, [{"qid": "a|b", "query_type": "t", "recall_at_10": 0.6, "ndcg_at_10": 0.5}])
    (tmp_path / "b.json").write_text(json.dumps(base))
    (tmp_path / "c.json").write_text(json.dumps(cur))
    code, out, err = run_cli(["gate", "--baseline", tmp_path / "b.json", "--current", tmp_path / "c.json", "--max-drop", "10%",
                              "--markdown", tmp_path / "r.md"], capsys)
    assert code == 1
    assert "recall_at_10 dropped from 0.8000 to 0.6000 (drop 0.2000; the limit is 0.7200" in err
    md = (tmp_path / "r.md").read_text()
    assert "| recall_at_10 | 0.8000 | 0.6000 | -0.2000 | **FAIL** |" in md and "| a\\|b |" in md
    code, _, err = run_cli(["gate", "--baseline", tmp_path / "b.json", "--current", tmp_path / "c.json", "--metric", "ndcg_at_10"], capsys)
    assert code == 0


def test_gate_refuses_different_test_sets_and_non_results(tmp_path, capsys):
    from treckit.testsets.gate import gate
    other = _results({"recall_at_10": 0.8, "ndcg_at_10": 0.5})
    other["test_set"]["digest"] = "0" * 64
    with pytest.raises(InputError, match="different test sets"):
        gate(_results({"recall_at_10": 0.8, "ndcg_at_10": 0.5}), other)
    (tmp_path / "x.json").write_text("[1, 2]")
    code, _, err = run_cli(["gate", "--baseline", tmp_path / "x.json", "--current", tmp_path / "x.json"], capsys)
    assert code == 2 and "not a results file" in err


def test_sample_gate_against_the_stored_baseline(tmp_path, capsys):
    code, _, _ = run_cli(["testset", "eval", SAMPLE, "--run", ROOT / "data/test_sets/baseline_bow.trec", "--out", tmp_path / "c.json"], capsys)
    assert code == 0
    stored = json.loads((ROOT / "data/test_sets/baseline_results.json").read_text())
    fresh = json.loads((tmp_path / "c.json").read_text())
    assert fresh["aggregates"] == stored["aggregates"]
    code, _, _ = run_cli(["gate", "--baseline", ROOT / "data/test_sets/baseline_results.json", "--current", tmp_path / "c.json"], capsys)
    assert code == 0


def test_testset_eval_names_the_queries_missing_from_the_run(tmp_path, capsys):
    """As the service's missing_queries: the queries without a line in the run, on stderr, counted, the list
    bounded; they still count (scored 0)."""
    ts = load_test_set(SAMPLE)
    lines = (ROOT / "data/test_sets/baseline_bow.trec").read_text().splitlines(keepends=True)
    (tmp_path / "some.trec").write_text("".join(ln for ln in lines if ln.split()[0] not in ("q05", "q07")))
    code, out, err = run_cli(["testset", "eval", SAMPLE, "--run", tmp_path / "some.trec"], capsys)
    assert code == 0 and "50 queries" in out
    assert err == "treckit: the run has no line for 2 of the 50 queries (each scores 0): q05, q07\n"
    (tmp_path / "one.trec").write_text("".join(ln for ln in lines if ln.startswith("q01 ")))
    code, _, err = run_cli(["testset", "eval", SAMPLE, "--run", tmp_path / "one.trec"], capsys)
    shown = ", ".join(q.query_id for q in ts.queries[1:11])
    assert code == 0 and err == f"treckit: the run has no line for 49 of the 50 queries (each scores 0): {shown} ... and 39 more\n"
    code, _, err = run_cli(["testset", "eval", SAMPLE, "--run", ROOT / "data/test_sets/baseline_bow.trec"], capsys)
    assert code == 0 and err == ""


def test_a_runs_reading_notes_reach_testset_eval_and_rq_as_treckit_messages(tmp_path, capsys):
    """Said once, with the prefix and the command line's spelling of the fix (not a Python warning)."""
    (tmp_path / "run.tsv").write_text("q01\tPMC1\t1\nq01\tPMC2\t2\nq02\tPMC3\t1\n")
    for argv in (["testset", "eval", SAMPLE, "--run", tmp_path / "run.tsv"],
                 ["rq", "--test-set", SAMPLE, "--run", tmp_path / "run.tsv", "--report-only"]):
        with warnings.catch_warnings():
            warnings.simplefilter("error")          # a Python warning would fail the command
            code, _, err = run_cli(argv, capsys)
        assert code == 0, err
        said = [ln for ln in err.splitlines() if "third column counts 1, 2, 3" in ln]
        # these commands take no reading options: the fix converts the file once
        assert len(said) == 1 and said[0].startswith("treckit: ")
        assert "convert the file once with `treckit run FILE --tsv-third rank -o FIXED`" in said[0]


# ------------------------------------------------------------------ life cycle
def _many(n_per_type=10) -> TestSet:
    qs = [Query(query_id=f"{t}{i}", query_text=f"text {t}{i}", query_type=t, relevant_docs=[RelevantDoc(doc_id="d", grade=1)])
          for t in ("x", "y") for i in range(n_per_type)]
    return TestSet(TestSetModel(name="m", version="3", queries=qs))


def test_split_is_stratified_deterministic_and_order_free():
    from treckit.testsets.lifecycle import split
    ts = _many()
    train, hold = split(ts, 0.2, seed=0)
    assert len(hold.queries) == 4 and sorted(q.query_type for q in hold.queries) == ["x", "x", "y", "y"]
    shuffled = TestSet(ts.model.replace(queries=reversed(ts.queries)))
    assert set(split(shuffled, 0.2, 0)[1].query_ids) == set(hold.query_ids)
    assert set(split(ts, 0.2, 1)[1].query_ids) != set(hold.query_ids)
    assert set(train.query_ids) | set(hold.query_ids) == set(ts.query_ids)


def test_diff_names_each_change():
    from treckit.testsets.lifecycle import diff
    old = small()
    new = parse_test_set(SMALL.replace("{doc_id: d2, grade: 1}", "{doc_id: d2, grade: 2}").replace("query_id: b", "query_id: c")
                         .replace("alpha beta", "alpha"))
    d = diff(old, new)
    assert d["added"] == ["c"] and d["removed"] == ["b"]
    assert d["relabelled"] == [{"query_id": "a", "added": [], "removed": [], "regraded": {"d2": [1, 2]}}]
    assert d["edited"] == [{"query_id": "a", "fields": ["query_text"]}]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=40),
       st.sampled_from([None, "linear", "quadratic"]))
def test_kappa_equals_scikit_learn(pairs, weights):
    from sklearn.metrics import cohen_kappa_score
    from treckit.testsets.lifecycle import cohen_kappa
    a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    ours = cohen_kappa(a, b, weights)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = cohen_kappa_score(a, b, weights=weights)
    if ours is None:
        assert math.isnan(theirs)
    else:
        assert ours == pytest.approx(theirs, abs=1e-12)


def test_kappa_command_counts_unshared_pairs(tmp_path, capsys):
    (tmp_path / "a").write_text("1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n2 0 d4 1\n")
    (tmp_path / "b").write_text("1 0 d1 1\n1 0 d2 0\n1 0 d3 0\n3 0 d5 1\n")
    code, out, _ = run_cli(["testset", "kappa", tmp_path / "a", tmp_path / "b", "--threshold", "0.3"], capsys)
    rep = json.loads(out)
    # 3 shared pairs: (1,1) (0,0) (1,0): po = 2/3, pe = (2/3)(1/3) + (1/3)(2/3) = 4/9, kappa = (2/3 - 4/9) / (5/9) = 0.4
    assert rep["kappa"] == pytest.approx(0.4) and rep["pairs_judged_by_both"] == 3
    assert (rep["only_in_a"], rep["only_in_b"], rep["pass"], code) == (1, 1, True, 0)
    code, _, _ = run_cli(["testset", "kappa", tmp_path / "a", tmp_path / "b", "--threshold", "0.4"], capsys)
    assert code == 1


def test_refresh_replaces_merges_and_bumps(tmp_path):
    from treckit.model import Qrels
    from treckit.testsets.lifecycle import bump_version, refresh
    ts = _many(3)
    cands = [{"query_id": f"n{i}", "query_text": f"new {i}", "query_type": "prod"} for i in range(4)]
    la = Qrels.from_dict({"n0": {"a": 3, "b": 1}, "n1": {"a": 2}, "n2": {"a": 0}, "n3": {"a": 1, "z": 1}})
    lb = Qrels.from_dict({"n0": {"a": 2, "b": 1}, "n1": {"a": 2}, "n2": {"a": 0}, "n3": {"a": 1}})
    nxt, rep = refresh(ts, cands, 2, la, lb, threshold=0.0)
    assert nxt.version == "4" and len(nxt.queries) == 6
    assert len(rep["added"]) == 2 and set(rep["added"]) <= {"n0", "n1", "n3"}      # n2 has no relevant doc
    assert rep["merge"] == {"agreed": 4, "disagreed_took_lower": 1, "single_annotator_dropped": 1}
    if "n0" in rep["added"]:
        n0 = next(q for q in nxt.queries if q.query_id == "n0")
        assert {d.doc_id: d.grade for d in n0.relevant_docs} == {"a": 2, "b": 1}
    with pytest.raises(InputError, match="agreement too low"):
        refresh(ts, cands, 2, la, Qrels.from_dict({"n0": {"a": 0, "b": 3}, "n1": {"a": 0}, "n2": {"a": 3}, "n3": {"a": 0}}))
    assert [bump_version(v) for v in ("1.2", "v4", "2024a", "x")] == ["1.3", "v5", "2025a", "x.1"]


# ------------------------------------------------------------------ the commands
def test_validate_command_lists_problems(tmp_path, capsys):
    (tmp_path / "t.yaml").write_text(SMALL.replace("grade: 3", "grade: 7"))
    code, _, err = run_cli(["testset", "validate", tmp_path / "t.yaml"], capsys)
    assert code == 2 and "line 8: queries.0.relevant_docs.0.grade: Input should be less than or equal to 3" in err
    code, out, _ = run_cli(["testset", "validate", SAMPLE], capsys)
    assert code == 0 and "exact_term" in out


def test_export_import_round_trip(tmp_path, capsys):
    code, _, _ = run_cli(["testset", "export", SAMPLE, "--qrels", tmp_path / "q.qrels", "--queries", tmp_path / "q.tsv",
                          "--types", tmp_path / "t.tsv"], capsys)
    first = load_test_set(SAMPLE).queries[0]
    assert code == 0 and f"{first.query_id} 0 {first.relevant_docs[0].doc_id} {first.relevant_docs[0].grade}\n" in \
        (tmp_path / "q.qrels").read_text()
    code, _, _ = run_cli(["testset", "import", "--qrels", tmp_path / "q.qrels", "--queries", tmp_path / "q.tsv", "--types",
                          tmp_path / "t.tsv", "--name", "clinical", "--version", "1", "-o", tmp_path / "back.yaml"], capsys)
    assert code == 0
    back, orig = load_test_set(tmp_path / "back.yaml"), load_test_set(SAMPLE)
    assert {q.query_id: ({d.doc_id: d.grade for d in q.relevant_docs}, q.query_text, q.query_type) for q in back.queries} == \
           {q.query_id: ({d.doc_id: d.grade for d in q.relevant_docs}, q.query_text, q.query_type) for q in orig.queries}


def test_qrels_verify_command(tmp_path, capsys):
    (tmp_path / "q").write_text("1 0 a 1\n2 0 b -1\n9 0 c 1\n")
    (tmp_path / "topics.tsv").write_text("1\tone\n2\ttwo\n3\tthree\n")
    code, _, err = run_cli(["qrels", "verify", tmp_path / "q", "--topics", tmp_path / "topics.tsv"], capsys)
    assert code == 1 and "1 expected topics have no judgments: 3" in err and "9" not in err.split("judgments:")[1]
    code, _, err = run_cli(["qrels", "verify", tmp_path / "q", "--topics", tmp_path / "topics.tsv", "--no-extras"], capsys)
    assert code == 1 and "1 topics are judged but not expected: 9" in err
    (tmp_path / "topics.tsv").write_text("1\tone\n2\ttwo\n")
    code, out, _ = run_cli(["qrels", "verify", tmp_path / "q", "--topics", tmp_path / "q", "--no-extras"], capsys)
    assert code == 0 and "all 3 expected topics judged" in out


def test_testset_eval_with_a_function_and_holdout(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TRECKIT_CACHE_DIR", str(tmp_path / "cache"))
    fn = f"{ROOT / 'data/test_sets/sample_retriever.py'}:search"
    code, out, _ = run_cli(["testset", "eval", SAMPLE, "--function", fn, "--out", tmp_path / "r.json", "--holdout", "0.3"], capsys)
    assert code == 0
    d = json.loads((tmp_path / "r.json").read_text())
    # the function is the sample system (system.yaml) asked one query at a time: the system's own evaluation
    from treckit.testsets import evaluate
    system = evaluate(str(ROOT / "data/test_sets/system.yaml"), SAMPLE, cache=False)
    assert d["aggregates"] == system.aggregates
    s = d["split"]
    assert s["gap"]["mrr"] == pytest.approx(s["train"]["mrr"] - s["holdout_part"]["mrr"])
    assert d["latency_ms"]["p95"] >= d["latency_ms"]["p50"] > 0


def test_workflow_example_is_valid_yaml_running_the_gate(capsys):
    import yaml
    code, out, _ = run_cli(["testset", "workflow"], capsys)
    wf = yaml.safe_load(out)
    steps = wf["jobs"]["gate"]["steps"]
    assert code == 0 and any("treckit gate" in s.get("run", "") for s in steps)
    assert any("gh pr comment" in s.get("run", "") for s in steps)


@pytest.mark.parametrize("argv", [
    ["rq", "--test-set", "{ts}", "--run", "{run}", "--out", "{ts}"],
    ["testset", "eval", "{ts}", "--run", "{run}", "--out", "{run}"],
    ["testset", "export", "{ts}", "--qrels", "{ts}"],
    ["retrieve", "--corpus", "{docs}", "--queries", "{ts}", "-o", "{docs}"],
    ["fuse", "{run}", "{run}", "-o", "{run}"],
])
def test_an_output_that_is_an_input_is_refused(tmp_path, capsys, argv):
    import shutil
    files = {"ts": tmp_path / "ts.yaml", "run": tmp_path / "run.trec", "docs": tmp_path / "docs.jsonl"}
    shutil.copy(SAMPLE, files["ts"])
    shutil.copy(ROOT / "data/test_sets/baseline_bow.trec", files["run"])
    shutil.copy(CORPUS, files["docs"])
    before = {k: p.read_bytes() for k, p in files.items()}
    code, _, err = run_cli([a.format(**files) for a in argv], capsys)
    assert code == 2 and "would overwrite an input" in err
    assert {k: p.read_bytes() for k, p in files.items()} == before


# ------------------------------------------------------------------ definitions recorded and gated
def test_gate_never_compares_two_ndcg_gains(tmp_path, capsys):
    """An exp-gain baseline against a linear-gain current run: the names differ, the gate says so (exit 2)."""
    run = ROOT / "data/test_sets/baseline_bow.trec"
    run_cli(["testset", "eval", SAMPLE, "--run", run, "--out", tmp_path / "exp.json"], capsys)
    run_cli(["testset", "eval", SAMPLE, "--run", run, "--gain", "linear", "--out", tmp_path / "lin.json"], capsys)
    code, out, err = run_cli(["gate", "--baseline", tmp_path / "exp.json", "--current", tmp_path / "lin.json"], capsys)
    assert code == 2 and "gate passed" not in err
    assert "the current results have no ndcg_at_10" in err and "ndcg_cut_10" in err
    # the fix names the flag that gives exp gain; run as written, it makes results the gate takes
    assert "they were evaluated with --gain linear" in err
    fix = err.split("fix: evaluate with it (`")[1].split("`")[0]
    assert fix == "treckit testset eval TEST_SET --run RUN --measure ndcg_at_10 --gain exp --out RESULTS.json"
    argv = [{"TEST_SET": SAMPLE, "RUN": run, "RESULTS.json": tmp_path / "fixed.json"}.get(a, a) for a in fix.split()[1:]]
    assert run_cli([*argv, "--measure", "recall_at_10"], capsys)[0] == 0
    code, out, err = run_cli(["gate", "--baseline", tmp_path / "exp.json", "--current", tmp_path / "fixed.json"], capsys)
    assert code == 0, err


def test_gate_refuses_results_whose_definitions_differ(tmp_path, capsys):
    base = _results({"recall_at_10": 0.8, "ndcg_at_10": 0.7})
    cur = json.loads(json.dumps(base))
    cur["definitions"]["recall_at_10"]["query_set"] = "retrieved"
    (tmp_path / "b.json").write_text(json.dumps(base))
    (tmp_path / "c.json").write_text(json.dumps(cur))
    code, _, err = run_cli(["gate", "--baseline", tmp_path / "b.json", "--current", tmp_path / "c.json"], capsys)
    assert code == 2
    renamed = json.loads(json.dumps(cur))                # another definition printed under the name: not a valid record
    renamed["definitions"]["ndcg_at_10"]["gain"] = "linear"
    (tmp_path / "r.json").write_text(json.dumps(renamed))
    code, _, said = run_cli(["gate", "--baseline", tmp_path / "b.json", "--current", tmp_path / "r.json"], capsys)
    assert code == 2 and "r.json: definitions.ndcg_at_10: does not define ndcg_at_10 (its measure, cutoff or gain differ)" in said
    assert "recall_at_10 has different definitions (query_set differs)" in err
    assert "baseline: recall@10; relevant: grade >= 1; queries: judged; ranking: trec_eval" in err
    assert "current:  recall@10; relevant: grade >= 1; queries: retrieved; ranking: trec_eval" in err


def test_gate_refuses_results_without_definitions_and_says_to_rerun_the_baseline(tmp_path, capsys):
    old = _results({"recall_at_10": 0.8, "ndcg_at_10": 0.7})
    del old["definitions"]
    old["schema"] = "treckit.testset-results/1"
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "c.json").write_text(json.dumps(_results({"recall_at_10": 0.8, "ndcg_at_10": 0.7})))
    code, _, err = run_cli(["gate", "--baseline", tmp_path / "old.json", "--current", tmp_path / "c.json"], capsys)
    assert code == 2 and "records no measure definitions" in err and "re-run the baseline" in err


def test_results_record_definitions_and_the_version(tmp_path, capsys):
    import treckit
    run_cli(["testset", "eval", SAMPLE, "--run", ROOT / "data/test_sets/baseline_bow.trec", "-m", "ndcg_at_10",
             "-m", "mrr@5", "--out", tmp_path / "r.json"], capsys)
    d = json.loads((tmp_path / "r.json").read_text())
    assert d["treckit_version"] == treckit.__version__
    assert d["definitions"] == {
        "ndcg_at_10": {"name": "ndcg_at_10", "measure": "ndcg_cut", "cutoff": 10, "gain": "exp", "relevance": 1,
                       "params": "", "query_set": "judged", "ranking": "trec_eval"},
        "mrr_at_5": {"name": "mrr_at_5", "measure": "recip_rank", "cutoff": 5, "gain": None, "relevance": 1,
                     "params": "", "query_set": "judged", "ranking": "trec_eval"}}


# ------------------------------------------------------------------ checks equal to the schema, at any size
def _schema_reference(data, lines, allow_unlabeled=False):
    """What validating with the schema's models said (pydantic, then what the schema cannot say), each
    problem with its line: the reference the query-by-query checks must equal."""
    from pydantic import ValidationError
    from treckit.inputs.bounded import BAD
    from treckit.testsets.load import semantic_problems
    from treckit.testsets.schema import QuerySetModel

    def line_of(loc):
        for n in range(len(loc), -1, -1):
            if loc[:n] in lines:
                return lines[loc[:n]]
        return None
    out = []
    try:
        (QuerySetModel if allow_unlabeled else TestSetModel).model_validate(data)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            if err.get("input") is BAD:
                continue
            where = ".".join(str(p) for p in err["loc"]) or "the file"
            msg = "unknown field (allowed: see the schema)" if err["type"] == "extra_forbidden" else err["msg"]
            out.append((line_of(tuple(err["loc"])), f"{where}: {msg}"))
    problems = out + semantic_problems(data, lines, allow_unlabeled=allow_unlabeled)
    return sorted(problems, key=lambda p: p[0] or 0)


_ODD = st.one_of(st.sampled_from(["", "x", "q1", "d1", "d2", 0, 1, 3, 4, -1, True, None, 2.5, [], {}, ["a"],
                                  {"k": 1}, "2024-01-31"]), st.text(max_size=4))


@st.composite
def _test_set_data(draw):
    """A test set's content with anything wrong or right in any field."""
    def maybe(value):
        return draw(st.one_of(st.just(value), _ODD))

    queries = []
    for i in range(draw(st.integers(0, 4))):
        q = {"query_id": maybe(draw(st.sampled_from(["q1", "q2", "q3"]))), "query_text": maybe("some text"),
             "query_type": maybe("t")}
        if draw(st.booleans()):
            q["topK"] = maybe(5)
        if draw(st.integers(0, 5)):
            q["relevant_docs"] = maybe([{"doc_id": maybe(draw(st.sampled_from(["d1", "d2"]))), "grade": maybe(draw(st.integers(0, 3))),
                                         **({"note": 1} if draw(st.integers(0, 9)) == 0 else {})}
                                        for _ in range(draw(st.integers(0, 3)))])
        if draw(st.integers(0, 9)) == 0:
            q["colour"] = "red"
        for key in draw(st.lists(st.sampled_from(list(q)), max_size=1)):
            del q[key]
        queries.append(maybe(q) if draw(st.integers(0, 9)) == 0 else q)
    data = {"name": maybe("n"), "version": maybe("1"), "queries": maybe(queries)}
    if draw(st.booleans()):
        data["description"] = maybe("about")
    if draw(st.integers(0, 9)) == 0:
        data["owner"] = "me"
    for key in draw(st.lists(st.sampled_from(list(data)), max_size=1)):
        del data[key]
    return data


class _NoAliases(yaml.SafeDumper):
    """Every value written out where it appears (data drawn with one object in two places gets no alias)."""

    def ignore_aliases(self, data):
        return True


@settings(max_examples=400, deadline=None)
@given(_test_set_data(), st.booleans())
def test_the_checks_say_what_the_schema_says(data, allow_unlabeled):
    """Every problem the models and the semantic checks report, word for word and in their order, for
    plain data (the API) and for the same data written as YAML (each with its line)."""
    from treckit.testsets.load import test_set_from_mapping
    expected = _schema_reference(data, {}, allow_unlabeled)
    try:
        test_set_from_mapping(data, allow_unlabeled=allow_unlabeled)
        got = []
    except TestSetError as e:
        got = e.problems
    assert got == expected[:100]

    from treckit.inputs.bounded import yaml_tree
    text = yaml.dump(data, Dumper=_NoAliases, sort_keys=False, allow_unicode=True)
    tree, lines, reader_problems = yaml_tree(text, ("query_id", "doc_id"), what="test set")
    expected = sorted(reader_problems.listed() + _schema_reference(tree, lines, allow_unlabeled), key=lambda p: p[0] or 0) \
        if tree is not None else reader_problems.listed()
    try:
        parse_test_set(text, allow_unlabeled=allow_unlabeled)
        got = []
    except TestSetError as e:
        got = e.problems
    assert got == expected[:100]


def test_at_most_100_problems_are_listed_the_rest_counted(tmp_path, capsys):
    bad = "".join(f"  - query_id: q{i}\n    query_text: t\n    query_type: x\n    relevant_docs:\n"
                  f"      - {{doc_id: d, grade: 9}}\n" for i in range(250))
    (tmp_path / "bad.yaml").write_text("name: b\nversion: '1'\nqueries:\n" + bad)
    with pytest.raises(TestSetError) as e:
        load_test_set(tmp_path / "bad.yaml")
    assert e.value.total == 250 and len(e.value.problems) == 100
    assert e.value.problems[0] == (8, "queries.0.relevant_docs.0.grade: Input should be less than or equal to 3")
    assert e.value.problems[-1] == (503, "queries.99.relevant_docs.0.grade: Input should be less than or equal to 3")
    code, _, err = run_cli(["testset", "validate", tmp_path / "bad.yaml"], capsys)
    assert code == 2 and "250 problems in the test set" in err
    assert err.count("Input should be less than") == 100 and "... and 150 more (the first 100 are listed)" in err


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text(st.characters(exclude_categories=("Zs", "Zl", "Zp", "Cc", "Cs")), min_size=1, max_size=6)
                          .filter(lambda qid: not any(c.isspace() for c in qid)),        # a query id is one TREC field
                          st.text(min_size=1, max_size=8), st.sampled_from(["a", "é", "x y"]),
                          st.one_of(st.none(), st.integers(1, 50)),
                          st.dictionaries(st.text(min_size=1, max_size=5), st.integers(0, 3), min_size=1, max_size=3)),
                unique_by=lambda q: q[0], min_size=1, max_size=5), st.one_of(st.none(), st.text(max_size=10)))
def test_the_digest_is_the_schema_models_canonical_json(queries, description):
    """The digest is what it was: SHA-256 of the schema model's canonical JSON, whatever the text."""
    import hashlib
    from treckit.testsets.load import test_set_from_mapping
    data = {"name": "n", "version": "1", "description": description, "queries": [
        {"query_id": q, "query_text": t, "query_type": k, "topK": top, "relevant_docs": [
            {"doc_id": d, "grade": g} for d, g in docs.items()]} for q, t, k, top, docs in queries]}
    model = QuerySetModel.model_validate(data)
    canonical = json.dumps(model.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    ts = test_set_from_mapping(data, allow_unlabeled=True)
    assert ts.digest == TestSet(model).digest == hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def test_the_sample_keeps_its_digest():
    model = TestSetModel.model_validate(yaml.safe_load(SAMPLE.read_text()))
    canonical = json.dumps(model.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    import hashlib
    assert load_test_set(SAMPLE).digest == hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def test_a_query_file_with_a_huge_number_is_an_error_naming_the_line(tmp_path, capsys):
    from treckit.testsets.topics import read_queries
    (tmp_path / "q.jsonl").write_text('{"_id": "1", "text": "a"}\n{"_id": ' + "1" * 5000 + ', "text": "b"}\n')
    with pytest.raises(InputError, match="a number of 5000 characters") as e:
        read_queries(tmp_path / "q.jsonl")
    assert e.value.line == 2


# ------------------------------------------------------------------ kappa in bounded memory
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-2, 6), st.integers(-2, 6)), min_size=1, max_size=60),
       st.sampled_from([None, "linear", "quadratic"]))
def test_kappa_from_sums_over_pairs_equals_scikit_learn(pairs, weights):
    """The kappa computed from counts and sums over the pairs (no matrix) is scikit-learn's, undefined
    exactly where scikit-learn's is NaN."""
    from sklearn.metrics import cohen_kappa_score
    from treckit.testsets.lifecycle import cohen_kappa
    a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    ours = cohen_kappa(a, b, weights)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = cohen_kappa_score(a, b, weights=weights)
    assert (ours is None) == math.isnan(theirs)
    if ours is not None:
        assert ours == pytest.approx(theirs, abs=1e-12)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_with_many_distinct_grades_equals_scikit_learn(weights):
    from sklearn.metrics import cohen_kappa_score
    from treckit.testsets.lifecycle import cohen_kappa
    rng = np.random.default_rng(5)
    a = rng.integers(0, 1500, 4000)
    b = np.where(rng.random(4000) < 0.6, a + rng.integers(-3, 4, 4000), rng.integers(0, 1500, 4000))
    assert cohen_kappa(a, b, weights) == pytest.approx(cohen_kappa_score(a, b, weights=weights), abs=1e-12)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_of_20000_distinct_grades_in_bounded_memory(weights):
    """Memory follows the pairs, not the square of the distinct grades (three 20,000 x 20,000 matrices
    would take about 10 GB)."""
    import tracemalloc
    from treckit.testsets.lifecycle import cohen_kappa
    rng = np.random.default_rng(7)
    a = rng.permutation(20_000)
    b = np.where(rng.random(20_000) < 0.5, a, rng.permutation(20_000))
    tracemalloc.start()
    k = cohen_kappa(a, b, weights)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 << 20                     # the pairs themselves take 0.5 MB
    assert k == pytest.approx(cohen_kappa(b, a, weights), abs=1e-12)      # kappa is symmetric
    assert cohen_kappa(a, a, weights) == 1.0


def test_an_undefined_kappa_is_said_not_printed_as_none(tmp_path, capsys):
    from treckit.model import Qrels
    from treckit.testsets.lifecycle import refresh
    (tmp_path / "a").write_text("1 0 d1 2\n1 0 d2 2\n")
    (tmp_path / "b").write_text("1 0 d1 2\n1 0 d2 2\n")
    code, out, err = run_cli(["testset", "kappa", tmp_path / "a", tmp_path / "b"], capsys)
    rep = json.loads(out)
    assert code == 1 and rep["kappa"] is None and rep["pass"] is None
    assert rep["kappa_undefined"] == ("both annotators gave all 2 pairs they both judged the same grade (2), so "
                                      "agreement by chance is total and kappa divides zero by zero")
    assert "treckit: kappa is undefined: both annotators gave all 2 pairs" in err and "None" not in err
    same = Qrels.from_dict({"n0": {"a": 1}, "n1": {"a": 1}})
    with pytest.raises(InputError) as e:
        refresh(_many(3), [{"query_id": "n0", "query_text": "t"}], 1, same, same)
    assert "kappa is undefined" in str(e.value) and "None" not in str(e.value)


def test_a_large_run_is_evaluated_as_it_is_read_with_the_same_numbers(tmp_path, capsys, monkeypatch):
    """A TREC run too large for testset eval's budget is streamed, as treckit eval streams one: the same
    values, the same queries said to be missing, the same notes (worded for a command without --order)."""
    from treckit import thresholds
    from treckit.testsets.runner import evaluate_run
    ts = load_test_set(SAMPLE)
    lines = []
    for i, q in enumerate(ts.queries[:40]):                 # the last 10 queries have no line
        docs = [d.doc_id for d in q.relevant_docs][:3] + [f"X{i}_{j}" for j in range(30)]
        # ranks rise with the score in every fifth query: the mark of negated scores
        lines += [f"{q.query_id} Q0 {d} {r} {(r if i % 5 == 0 else -r) + 100} t\n" for r, d in enumerate(docs, 1)]
    (tmp_path / "run.trec").write_text("".join(lines))
    said = {}
    for budget in (thresholds.TESTSET_RUN_MEMORY, 4096):
        monkeypatch.setattr(thresholds, "TESTSET_RUN_MEMORY", budget)
        notes = []
        res = evaluate_run(tmp_path / "run.trec", ts, warn=notes.append)
        said[budget] = (res.aggregates, res.per_query, res.missing_queries, notes)
    assert said[4096] == said[thresholds.MEMORY_LIMIT_DEFAULT // 2]
    aggregates, _, missing, notes = said[4096]
    assert missing == [q.query_id for q in ts.queries[40:]]
    assert len(notes) == 1 and "rank 1 on the lowest score" in notes[0] and "pass --order" not in notes[0]


def test_a_config_s_texts_are_looked_at_as_file_names_up_to_the_bound(tmp_path, monkeypatch):
    """thresholds.MAX_CONFIG_TEXTS: every file a config names keys the cache by its content (its digest), as far as
    the bound on the texts looked at; lowered to 2, the third text (in the order they are looked at) is not."""
    from treckit import thresholds
    from treckit.inputs.sources import file_digest
    from treckit.testsets.cache import named_files
    names = ("corpus.jsonl", "index.bin", "model.pt")
    for name in names:
        (tmp_path / name).write_text(name)
    config = {"corpus": "corpus.jsonl", "retriever": {"index": "index.bin", "k": 10, "model": "model.pt"}}
    digests = {str((tmp_path / n).resolve()): file_digest(tmp_path / n) for n in names}
    assert named_files(config, tmp_path) == digests
    monkeypatch.setattr(thresholds, "MAX_CONFIG_TEXTS", 2)
    named = named_files(config, tmp_path)
    assert len(named) == 2 and named == {k: v for k, v in digests.items() if not k.endswith("corpus.jsonl")}


def test_only_texts_short_enough_to_name_a_file_are_looked_at(tmp_path, monkeypatch):
    """thresholds.CONFIG_FILE_NAME_MAX_CHARS: a text longer than this names no file, so it keys nothing; lowered
    below "corpus.jsonl" (12 characters), that file is left out, the shorter names kept."""
    from treckit import thresholds
    from treckit.inputs.sources import file_digest
    from treckit.testsets.cache import named_files
    names = ("corpus.jsonl", "index.bin")
    for name in names:
        (tmp_path / name).write_text(name)
    config = {"corpus": "corpus.jsonl", "index": "index.bin", "long": "x" * 5000}
    digests = {str((tmp_path / n).resolve()): file_digest(tmp_path / n) for n in names}
    assert named_files(config, tmp_path) == digests
    monkeypatch.setattr(thresholds, "CONFIG_FILE_NAME_MAX_CHARS", 11)
    assert named_files(config, tmp_path) == {k: v for k, v in digests.items() if k.endswith("index.bin")}
