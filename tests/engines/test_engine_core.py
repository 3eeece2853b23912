"""The engine core: a run evaluated in parts of whole queries (engines.core) gives the in-memory path's bytes.

Every seeded fuzz case of tests/fuzz_cases.py (all trec_eval measures and nicknames, ir_measures names added,
-q -c -n -J -M -l -N -Z, --missing modes) is evaluated whole by ``evaluate_requests`` and in 1..7 hash parts by
``evaluate_part`` + ``merge_parts``; trec_eval text (``format_trec_eval``), the warnings and the errors must agree.
"""
from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

import fuzz_cases
from treckit.cli.evaluate import parse_args
from treckit.engines.core import (QrelsByQuery, check_qrels, empty_run, evaluate_part, merge_parts, query_buckets,
                                  read_run_block, restrict_qrels, split_by_query, split_rows)
from treckit.console.errors import InputError
from treckit.engines.memory import EvalOptions, evaluate_requests, read_zscores
from treckit.measures.registry import resolve
from treckit.model import Qrels, Run
from treckit.output.trec_eval import format_trec_eval
from treckit.inputs.options import RunReading
from treckit.inputs.reading import read_with

IRM = ["nDCG@10", "R@100", "RR@10", "AP", "P(rel=2)@5", "Judged@10", "gm_map", "gm_bpref"]


def _setup(c: fuzz_cases.Case, tmp, extra: list[str] = ()):
    argv = c.write(tmp)
    from treckit.api import read_qrels
    try:
        a = parse_args([*extra, *argv])
        if a.rel_format != "qrels":
            return None
        requests = resolve(a.measures)
        qrels = read_qrels(a.files[0])
        run = read_with(a.reading, a.files[1], lean=True, warn=None).run
        z = read_zscores(a.zscore) if a.zscore else None
    except InputError:
        return None                         # refused while reading: before any engine
    opts = EvalOptions(level=a.level, max_docs=a.max_docs, judged_only=a.judged, complete=a.complete,
                       missing=a.missing, num_docs_in_coll=a.ndocs, zscores=z)
    return a, requests, qrels, run, opts


def _outcome(fn):
    said: list[str] = []
    try:
        res = fn(said.append)
    except InputError as exc:
        return ("error", str(exc), said)
    return (res, said)


def _text(a, res) -> str:
    return format_trec_eval(res, per_query=a.query, summary=a.summary)


def in_parts(qrels: Qrels, run: Run, requests, opts, n: int, source: str, warn, via_index: bool = False):
    """The run split into ``n`` hash parts, each with the judgments of its bucket, merged."""
    parts_rows = split_rows(run, n)
    parts = split_by_query(run, n)
    index = QrelsByQuery(qrels)
    qids = index.qids
    bucket = query_buckets(qids, n)
    values = []
    for i, (part, rows) in enumerate(zip(parts, parts_rows)):
        mine = [q for q, b in zip(qids, bucket.tolist()) if b == i]
        qp = index.take(mine) if via_index else restrict_qrels(qrels, mine)
        pv = evaluate_part(qp, part, requests, opts, source, row_offset=rows)
        values.append(pickle.loads(pickle.dumps(pv)))          # parts travel between processes
    return merge_parts(values, qrels, requests, opts, runid=run.tag, source=source, warn=warn)


def _same_summary(a: dict, b: dict) -> bool:
    """Equal summaries, bit for bit (NaN equal to NaN)."""
    return list(a) == list(b) and all(x == y or (isinstance(x, float) and np.isnan(x) and np.isnan(y))
                                      for x, y in zip(a.values(), b.values()))


def _same(c, tmp, n, extra=(), via_index=False):
    got = _setup(c, tmp, list(extra))
    if got is None:
        return False
    a, requests, qrels, run, opts = got
    src = a.files[1]
    whole = _outcome(lambda w: evaluate_requests(qrels, run, requests, opts, source=src, warn=w))
    split = _outcome(lambda w: in_parts(qrels, run, requests, opts, n, src, w, via_index))
    if whole[0] == "error":
        assert split[0] == "error" and split[1] == whole[1], c.seed
        return True
    assert split[0] != "error", (c.seed, split[1])
    assert _text(a, split[0]) == _text(a, whole[0]), c.seed
    assert split[-1] == whole[-1], c.seed                      # the same warnings, in the same order
    assert _same_summary(split[0].summary, whole[0].summary), c.seed
    return True


@pytest.mark.parametrize("seed", range(0, 300))
def test_parts_match_whole_on_fuzz_cases(tmp_path, seed):
    n = 1 + seed % 7
    c = fuzz_cases.case(seed)
    _same(c, tmp_path, n, via_index=seed % 2 == 0)


@pytest.mark.parametrize("seed", range(300, 340))
@pytest.mark.parametrize("extra", [["--missing", "zero"], ["--missing", "error"], ["-m", "all_trec", "-q", "-c"]]
                         + [["-m", m, "-q"] for m in IRM])
def test_parts_match_whole_with_more_flags_and_ir_measures_names(tmp_path, seed, extra):
    _same(fuzz_cases.case(seed), tmp_path, 2 + seed % 3, extra)


def _big_case(seed: int, nq: int = 40) -> tuple[str, str]:
    """Many queries, graded judgments, ties, run-only and judged-only queries, an id with an escape."""
    r = random.Random(seed)
    qrels, run = [], []
    for q in range(nq):
        qid = f"q{q:03d}" if q % 9 else f"{q}"
        docs = [f"d{j}" for j in range(30)] + ["a%20b", "a!"]
        if q % 11 != 3:                                   # judged
            for d in r.sample(docs, 12):
                qrels.append(f"{qid} 0 {d} {r.choice([-1, 0, 0, 1, 2, 3])}")
        if q % 13 != 5:                                   # in the run
            for rank, d in enumerate(r.sample(docs, r.randint(1, 25)), 1):
                run.append(f"{qid} Q0 {d} {rank} {r.choice([1.0, 0.5, r.random()]):.4f} tag{q % 3}")
    r.shuffle(run)
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


@pytest.mark.parametrize("flags", [["-q", "-m", "all_trec"], ["-q", "-c", "-m", "all_trec"], ["-q", "-J", "-m", "all_trec"],
                                   ["-q", "-c", "-M", "5", "-l", "2", "-m", "all_trec"], ["-q", "-c", "-m", "gm_map", "-m", "gm_bpref"],
                                   ["-q", "-m", "relstring.10", "-c"], ["-q", "-c", "-M", "0", "-m", "official"],
                                   ["-q", "-m", "nDCG@10", "-m", "R@5", "-m", "RR", "-m", "P(rel=2)@5", "-m", "AP(judged_only=True)"],
                                   ["--missing", "zero", "-m", "all_trec"]])
@pytest.mark.parametrize("n", [1, 3, 16])
def test_parts_match_whole_on_a_larger_run(tmp_path, flags, n):
    qrels, run = _big_case(len(flags) * 31 + n)
    c = fuzz_cases.Case(0, qrels, run, flags, None, [])
    assert _same(c, tmp_path, n)


def test_z_scores_are_applied_once_after_the_merge(tmp_path):
    qrels, run = _big_case(5)
    z = "".join(f"q{q:03d} map 0.2 0.1\nq{q:03d} P_5 0.3 0\n" for q in range(40))
    c = fuzz_cases.Case(0, qrels, run, ["-q", "-c", "-Z", "@ZSCORES@", "-m", "map", "-m", "P.5"], z, [])
    assert _same(c, tmp_path, 4)


def test_placeholder_part_and_runid_of_the_last_line(tmp_path):
    """Judged queries in no part are scored with -c's placeholder; the runid is the one given to the merge."""
    qrels = Qrels.from_dict({"a": {"d1": 1, "d2": 2}, "b": {"d1": 1}, "c": {"d3": 0}})
    run = Run.from_columns(["a", "a"], ["d2", "d9"], [2.0, 1.0], tag="r1")
    req = resolve(["num_rel", "num_ret", "map", "runid"])
    opts = EvalOptions(complete=True)
    pv = evaluate_part(restrict_qrels(qrels, ["a"]), run, req, opts)
    assert pv.qids == ["a"] and pv.answered.tolist() == [True]
    res = merge_parts([pv], qrels, req, opts, runid="last")
    assert res.qids == ["a", "b", "c"]
    col = {c: res.values[:, j].tolist() for j, c in enumerate(res.columns)}
    assert col["num_rel"] == [2.0, 1.0, 0.0]            # num_rel from the qrels, also for b and c
    assert col["num_ret"] == [2.0, 0.0, 0.0]            # trec_eval -c resets num_ret of a missing query (checked: trec_eval 10.0)
    assert col["map"] == [1.0 / 2, 0.0, 0.0]            # d2 relevant at rank 1 of 2 relevant
    assert res.summary["runid"] == "last" and res.runid == "last" and res.view is None
    said = []
    res = merge_parts([pv], qrels, req, EvalOptions(), runid="x", warn=said.append)
    assert res.qids == ["a"] and "2 judged queries have no results in the run" in said[0]
    with pytest.raises(InputError, match="2 judged queries have no results"):
        merge_parts([pv], qrels, req, EvalOptions(missing="error"), runid="x")
    with pytest.raises(InputError, match="no queries with both results"):
        merge_parts([evaluate_part(Qrels.from_dict({"z": {"d": 1}}), empty_run(), req)], qrels, req, runid="x")
    with pytest.raises(RuntimeError, match="two parts"):
        merge_parts([pv, pv], qrels, req, opts, runid="x")


def test_split_is_deterministic_and_whole():
    run = Run.from_columns([f"q{i % 17}" for i in range(200)], [f"d{i}" for i in range(200)], list(range(200)))
    parts = split_by_query(run, 5)
    assert sum(len(p) for p in parts) == 200
    seen = [set(p.table.column("qid").to_pylist()) for p in parts]
    assert all(not (seen[i] & seen[j]) for i in range(5) for j in range(i + 1, 5))
    for p, rows in zip(parts, split_rows(run, 5)):
        assert p.table.column("docid").to_pylist() == [f"d{i}" for i in rows.tolist()]     # file order kept
    # the bucket is CRC-32 of the qid's UTF-8 bytes: fixed across processes and machines
    import zlib
    assert query_buckets(["q1", "é"], 7).tolist() == [zlib.crc32(b"q1") % 7, zlib.crc32("é".encode()) % 7]


def test_split_keeps_written_texts():
    run = Run(Run.from_columns(["a", "b"], ["x y", "z"], [1.0, 2.0]).table, written={("a", "x y"): "x%20y"})
    parts = split_by_query(run, 2)
    assert sorted((k, v) for p in parts for k, v in p.written.items()) == [(("a", "x y"), "x%20y")]


def test_qrels_checks_look_at_all_judgments():
    with pytest.raises(InputError, match="twice"):
        check_qrels(Qrels.from_columns(["a", "b", "a"], ["d", "d", "d"], [1, 1, 0]))


def test_block_reads_name_the_true_line(tmp_path):
    reading = RunReading(format="trec")
    block = b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 oops t\n"
    with pytest.raises(InputError) as exc:
        read_run_block(block, str(tmp_path / "big.run"), 1001, reading)
    assert f"{tmp_path / 'big.run'}:1002:" in str(exc.value) and "oops" in str(exc.value)
    with pytest.raises(InputError, match=r":1001:"):
        read_run_block(b"q1 Q0 d\xff 1 2 t\n", str(tmp_path / "big.run"), 1001, reading)
    run = read_run_block(b"q1 Q0 a%20b 1 2.0 t\nq2 Q0 d 1 1 u\n", "x", 5, reading)
    assert run.table.column("docid").to_pylist() == ["a b", "d"] and run.tag == "u"
