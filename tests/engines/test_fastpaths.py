"""The vectorized paths for large files give exactly what the careful line-by-line paths give."""
from __future__ import annotations

import json

import numpy as np
import pytest

from treckit import thresholds
from treckit.api import read_qrels, read_run
from treckit.console.errors import InputError
from treckit.engines.memory import evaluate_requests
from treckit.inputs.formats import jsonl, trec
from treckit.inputs.formats.common import content_lines
from treckit.output import trec as trec_out
from treckit.ranking import order as trec_order
from treckit.ranking import judged as ranking
from treckit.measures.registry import resolve
from treckit.fast.strings import hash64


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A run over 1 MiB (fast path) with ties, shuffled query order and docs shared across queries."""
    rng = np.random.default_rng(5)
    d = tmp_path_factory.mktemp("big")
    lines, qrels, objs = [], [], []
    for q in rng.permutation(400):
        docs = [f"doc{x}" for x in rng.choice(2000, size=120, replace=False)]
        scores = np.round(rng.random(120) * 3, 1)
        lines += [f"{q} Q0 {doc} {i + 1} {s!r} tag{q % 3}\n" for i, (doc, s) in enumerate(zip(docs, scores.tolist()))]
        objs.append(json.dumps({"qid": str(q), "docs": docs, "scores": scores.tolist()}) + "\n")
        for doc in rng.choice(docs, size=6, replace=False):
            qrels.append(f"{q} 0 {doc} {int(rng.integers(-1, 3))}\n")
        qrels.append(f"{q} 0 unretrieved{q} 1\n")
    (d / "run").write_text("".join(lines))
    (d / "run.jsonl").write_text("".join(objs) * 4)   # repeated ids: the fast path must refuse it
    (d / "run1.jsonl").write_text("".join(objs))
    (d / "qrels").write_text("".join(qrels))
    assert (d / "run").stat().st_size > 1 << 20
    return d


def test_trec_fast_read_equals_line_parser(big):
    fast = read_run(big / "run")
    slow = trec.read_run_lines(content_lines(big / "run"), "run", True, False, "auto", 6)
    assert fast.to_dict() == slow.to_dict()
    assert fast.tag == slow.tag == "tag" + str(int(slow.table.column("qid")[-1].as_py()) % 3)
    assert read_run(big / "run", lean=True).tag == slow.tag


def test_trec_fast_read_without_ranks_keeps_everything_else(big):
    full, no_ranks = read_run(big / "run"), read_run(big / "run", ranks=False)
    for col in ("qid", "docid", "score", "tag"):
        assert no_ranks.table.column(col).to_pylist() == full.table.column(col).to_pylist()
    assert no_ranks.table.column("rank").null_count == len(no_ranks)
    assert no_ranks.tag == full.tag


def test_jsonl_fast_read_equals_line_parser(big):
    fast = jsonl.read_jsonl_run_fast(big / "run1.jsonl", jsonl.JsonlFields())
    assert fast is not None
    assert fast.to_dict() == read_run(big / "run").to_dict()
    assert fast.table.column("rank").to_pylist()[:3] == [1, 2, 3]
    with pytest.raises(InputError, match="appears again"):
        read_run(big / "run.jsonl")


def _sorted_copy(big):
    """The same run listed the usual way: each query's lines best score first (ties in any order)."""
    path = big / "run.sorted"
    if not path.exists():
        lines = (big / "run").read_text().splitlines(keepends=True)
        lines.sort(key=lambda line: (int(line.split()[0]), -float(line.split()[4])))
        path.write_text("".join(lines))
    return path


def _interleaved_copy(big):
    """The same run with its lines shuffled, so no query's lines are together."""
    path = big / "run.interleaved"
    if not path.exists():
        lines = (big / "run").read_text().splitlines(keepends=True)
        path.write_text("".join(lines[i] for i in np.random.default_rng(3).permutation(len(lines))))
    return path


@pytest.mark.parametrize("path", ["listed", "query-rows", "comparison", "sort", "interleaved"])
def test_eval_rank_paths_agree(big, monkeypatch, path):
    """All three ways of ranking the judged rows give the same values, and the ranks of a plain
    sort by (score desc, docno desc)."""
    qrels = read_qrels(big / "qrels")
    req = resolve(["all_trec"])
    base = evaluate_requests(qrels, read_run(big / "run"), req)     # a shuffled file
    file = big / "run"
    if path == "listed":
        file = _sorted_copy(big)
        real = trec_order.ranks_in_listed_order
        calls = []
        monkeypatch.setattr(trec_order, "ranks_in_listed_order", lambda *a: calls.append(real(*a)) or calls[-1])
    elif path == "query-rows":
        real = trec_order.ranks_in_query_rows
        calls = []
        monkeypatch.setattr(trec_order, "ranks_in_query_rows", lambda *a: calls.append(real(*a)) or calls[-1])
    elif path == "comparison":
        monkeypatch.setattr(trec_order, "ranks_in_listed_order", lambda *a: None)
        monkeypatch.setattr(trec_order, "ranks_in_query_rows", lambda *a: None)
    elif path == "interleaved":
        file = _interleaved_copy(big)
    else:
        monkeypatch.setattr(thresholds, "RANK_SORT_SLACK", -10**12)     # the full sort, always
        monkeypatch.setattr(trec_order, "ranks_in_listed_order", lambda *a: None)
        monkeypatch.setattr(trec_order, "ranks_in_query_rows", lambda *a: None)
    got = evaluate_requests(qrels, read_run(file, lean=True), req)
    if path in ("listed", "query-rows"):
        assert calls and calls[0] is not None          # that path did the ranking
    assert np.array_equal(np.nan_to_num(got.values), np.nan_to_num(base.values))
    rt = read_run(big / "run").to_dict()
    for qi in (0, 7):
        q = got.view.qids[qi]
        judged = set(qrels.to_dict()[q])
        order = sorted(rt[q].items(), key=lambda x: (x[1], x[0]), reverse=True)
        expected = sorted(i for i, (d, _) in enumerate(order) if d in judged)
        assert sorted(got.view.pos[got.view.q == qi].tolist()) == expected


def test_listed_order_path_refuses_other_orders():
    import pyarrow as pa
    docid = pa.chunked_array([pa.array(["a", "b", "c", "d"])])
    jrows = np.array([1, 3])
    starts = np.array([0, 2])
    ok = trec_order.ranks_in_listed_order(starts, np.array([2.0, 1.0, 5.0, 5.0]), docid, jrows)
    assert ok.tolist() == [1, 0]            # query 1: tie between c and d, d ranks first
    assert trec_order.ranks_in_listed_order(starts, np.array([1.0, 2.0, 5.0, 5.0]), docid, jrows) is None
    # a rise in score across a query boundary is fine
    assert trec_order.ranks_in_listed_order(starts, np.array([2.0, 1.0, 9.0, 5.0]), docid, jrows).tolist() == [1, 1]


def test_hash_collisions_never_change_results(big, monkeypatch):
    """With a hash that collides all the time, candidates multiply but the strings decide."""
    qrels = read_qrels(big / "qrels")
    req = resolve(["all_trec"])
    base = evaluate_requests(qrels, read_run(big / "run"), req)
    real = ranking.hash64

    def weak(arr, group=None, each=None):
        if each is None:
            return real(arr, group) & np.uint64(7)
        return real(arr, group, each=lambda first, h: each(first, h & np.uint64(7)))
    monkeypatch.setattr(ranking, "hash64", weak)
    for file in (big / "run", _sorted_copy(big), _interleaved_copy(big)):
        got = evaluate_requests(qrels, read_run(file), req)
        assert np.array_equal(np.nan_to_num(got.values), np.nan_to_num(base.values))
    text = (big / "run").read_text()
    (big / "run.dup").write_text(text + text.splitlines()[5].replace(" 6 ", " 999 ") + "\n")
    with pytest.raises(InputError, match="more than once"):
        evaluate_requests(qrels, read_run(big / "run.dup"), resolve(["map"]))


def test_duplicate_run_lines_are_an_error_in_eval(big, tmp_path):
    text = (big / "run").read_text()
    first = text.splitlines()[5]
    (tmp_path / "dup").write_text(text + first.replace(" 6 ", " 999 ") + "\n")
    with pytest.raises(InputError, match="more than once"):
        evaluate_requests(read_qrels(big / "qrels"), read_run(tmp_path / "dup", lean=True), resolve(["map"]))


def test_hash64_equal_strings_equal_hashes_and_groups():
    import pyarrow as pa
    vals = ["", "a", "ab", "abcdefgh", "abcdefghi", "abcdefghij" * 5, "Zürich", "a b", "a", "abcdefghi"]
    h = hash64(pa.array(vals))
    for i, x in enumerate(vals):
        for j, y in enumerate(vals):
            assert (h[i] == h[j]) == (x == y)
    g = hash64(pa.array(["x", "x"]), np.array([1, 2]))
    assert g[0] != g[1]


def test_hash64_does_not_depend_on_neighbours_or_slicing():
    import pyarrow as pa
    vals = ["doc496", "unretrieved70", "a", "abcdefghijklmnopq", "Zürich"]
    alone = [int(hash64(pa.array([v]))[0]) for v in vals]
    together = hash64(pa.array(vals)).tolist()
    sliced = [int(hash64(pa.array(vals).slice(i, 1))[0]) for i in range(len(vals))]
    chunked = hash64(pa.chunked_array([pa.array(vals[:2]), pa.array(vals[2:])])).tolist()
    assert alone == together == sliced == chunked


def test_comment_line_that_splits_like_data_is_still_a_comment(big, tmp_path):
    lines = (big / "run").read_text().splitlines(keepends=True)
    lines.insert(len(lines) // 2, "# Q0 looks 1 2.0 like_data\n")
    (tmp_path / "run").write_text("".join(lines))
    run = read_run(tmp_path / "run")
    assert "#" not in set(run.table.column("qid").to_pylist())
    assert run.to_dict() == read_run(big / "run").to_dict()


def test_parallel_writer_gives_the_same_bytes(big, tmp_path, monkeypatch):
    from treckit.api import write_run
    from treckit.ranking.convert import convert_run
    out, _ = convert_run(read_run(big / "run"), order="desc")
    parts = []
    real = trec_out.csv_part
    monkeypatch.setattr(trec_out, "csv_part", lambda t, dest: parts.append(t.num_rows) or real(t, dest))
    write_run(out, tmp_path / "one")
    assert parts == [len(out)]                                  # one piece below the threshold
    monkeypatch.setattr(thresholds, "PARALLEL_WRITE_MIN_ROWS", 10)
    write_run(out, tmp_path / "two")
    assert sorted(parts[1:]) == [len(out) // 2, len(out) - len(out) // 2]     # two halves above it
    assert (tmp_path / "one").read_bytes() == (tmp_path / "two").read_bytes()
    assert (tmp_path / "one").read_text().count("\n") == len(out)
    # atomic writes leave no temporary file behind (they are named .<target>.<random>.tmp)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one", "two"]
