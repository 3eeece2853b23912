"""Both sides of every size threshold (treckit.thresholds) on small data: each is lowered and raised in turn and
the results (evaluation values, converted bytes, what the readers read) must equal those of the default setting.
Where a branch is not visible in the result, a spy shows that the other side really ran."""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from helpers import ROOT
from treckit import thresholds
from treckit.ranking import order as trec_order
from treckit.fast import arrow, groups, matrix, strings
from treckit.api import read_qrels, read_run, write_run
from treckit.ranking.convert import convert_run
from treckit.console.errors import InputError
from treckit.engines.memory import evaluate_requests
from treckit.inputs.formats import jsonl, trec
from treckit.output import trec as trec_out
from treckit.measures.registry import resolve

BIG, SMALL = 1 << 62, 0


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """One small run in three layouts (best first, grouped in random order, lines interleaved), with uneven depths
    (one query 300 deep, the others 1 to 40), tied scores, %-escaped ids; qrels with grades -1..3; a JSON-lines copy."""
    rng = np.random.default_rng(11)
    d = tmp_path_factory.mktemp("thresholds")
    lines, qrels, objs = [], [], []
    for q in range(12):
        depth = 300 if q == 3 else int(rng.integers(1, 41))
        docs = [f"d{x}" if x % 7 else f"a%20b{x}" for x in rng.choice(600, size=depth, replace=False)]
        scores = (np.round(rng.random(depth) * 4, 0) / 2).tolist()             # few distinct values: ties
        lines += [(q, -s, doc, f"{q} Q0 {doc} {i + 1} {s!r} t{q % 2}\n") for i, (doc, s) in enumerate(zip(docs, scores))]
        objs.append(json.dumps({"qid": str(q), "docs": docs, "scores": scores}) + "\n")
        for doc in rng.choice(docs, size=min(depth, 8), replace=False):
            qrels.append(f"{q} 0 {doc} {int(rng.integers(-1, 4))}\n")
        qrels.append(f"{q} 0 unretrieved{q} 2\n")
    grouped = [x[3] for x in lines]
    (d / "grouped").write_text("".join(grouped))
    (d / "listed").write_text("".join(x[3] for x in sorted(lines, key=lambda x: (x[0], x[1]))))
    (d / "interleaved").write_text("".join(grouped[i] for i in rng.permutation(len(grouped))))
    (d / "qrels").write_text("".join(qrels))
    (d / "run.jsonl").write_text("".join(objs))
    return d


def outcome(d, tmp_path):
    """Everything the thresholds can touch: values of every measure on every layout, the converted bytes, the
    runs and qrels as read."""
    qrels = read_qrels(d / "qrels")
    req = resolve(["all_trec"])
    out = {"qrels": qrels.to_dict(), "jsonl": read_run(d / "run.jsonl").to_dict()}
    for layout in ("listed", "grouped", "interleaved"):
        run = read_run(d / layout)
        out[layout] = (run.to_dict(), run.tag, run.table.column("rank").to_pylist())
        res = evaluate_requests(qrels, read_run(d / layout, lean=True), req)
        out[layout + " values"] = np.nan_to_num(res.values, nan=-7.0).tolist()
        for order in ("desc", "auto"):
            converted, _ = convert_run(run, order=order)
            write_run(converted, tmp_path / "out")
            out[f"{layout} {order}"] = (tmp_path / "out").read_bytes()
    return out


THRESHOLDS = [
    ("TREC_RUN_FAST_MIN_BYTES", SMALL, BIG),
    ("TREC_QRELS_FAST_MIN_BYTES", SMALL, BIG),
    ("JSONL_FAST_MIN_BYTES", SMALL, BIG),
    ("PARALLEL_WRITE_MIN_ROWS", 2, BIG),
    ("ARROW_BLOCK_BYTES", 4096, 1 << 30),
    ("ARROW_PARALLEL_BLOCK_BYTES", 1, 1 << 40),
    ("RANK_TEXT_TABLE_MAX", -1, BIG),
    ("ID_RENUMBER_SLICE_ROWS", 3, BIG),
    ("CONSTANT_COLUMN_BLOCK_ROWS", 3, BIG),
    ("FEW_RUNS_FRACTION", BIG, 1),
    ("FEW_RUNS_MIN", SMALL, BIG),
    ("RADIX_MAX_CODES", 1, BIG),
    ("STRING_SLICE_ROWS", 3, BIG),
    ("QUERY_MATRIX_GROWTH", SMALL, BIG),
    ("QUERY_MATRIX_SLACK", SMALL, BIG),
    ("QUERY_MATRIX_MAX_QUERIES", SMALL, BIG),
    ("ROW_SORT_SLICE_CELLS", 1, BIG),
    ("RANK_SORT_GROWTH", SMALL, BIG),
    ("RANK_SORT_SLACK", SMALL, BIG),
    ("RANK_BLOCK_CELLS", 1, BIG),
    ("QUERY_ROWS_BLOCK_CELLS", 1, BIG),
    ("TIE_TEXT_SLICE_ROWS", 1, BIG),
    ("REPEAT_BITMAP_MASK", 0, (1 << 22) - 1),
    ("SOURCE_END_BYTES", 2, 1 << 20),
    ("TEXT_BLOCK_BYTES", 1, 1 << 30),
]


# the streaming engine's sizes: both sides (in memory / streamed, grouped / sharded) in tests/engines/test_stream_engine.py
STREAM_THRESHOLDS = {"MEMORY_LIMIT_DEFAULT", "IN_MEMORY_BYTES_PER_FILE_BYTE", "STREAM_BLOCK_SHARE",
                     "STREAM_BLOCK_MIN_BYTES", "SHARD_SHARE", "SHARDS_MAX", "OUTPUT_CHUNK_QUERIES",
                     "GZIP_SHARD_EXPANSION"}
# thresholds whose both sides are run by another test file (on a Dask cluster)
ELSEWHERE = {"DASK_PARTITION_MIN_BYTES": "engines/test_dask_engine.py",
             "DASK_BLOCK_BYTES": "engines/test_dask_engine.py",
             "TESTSET_RUN_MEMORY": "testsets/test_testsets.py", "MAX_LINE_BYTES": "inputs/test_long_lines.py",
             "PERCENT_SCAN_SLICE_BYTES": "ranking/test_tie_order.py",
             "DIVERSITY_BLOCK_CELLS": "measures/test_diversity_names.py",
             "TIE_LATTICE_CHUNK_STATES": "measures/test_ties.py", "TIE_LATTICE_MAX_STATES": "measures/test_ties.py",
             "DIVERSITY_MAX_RANKS": "hostile/test_hostile_ties_and_bounds.py",
             "RUN_RANKINGS_SHARE": "hostile/test_hostile_budgets_and_compression.py",
             "TIE_IPREC_MAX_CELLS": "measures/test_ties.py", "DENSE_DOC_CHUNK_ROWS": "retrieval/test_retrieval.py",
             "RESAMPLE_DRAW_BLOCK": "compare/test_compare.py", "RESAMPLE_DRAW_CELLS": "compare/test_compare.py",
             "RESAMPLE_COUNT_CELLS": "compare/test_compare.py",
             "WHOLE_READ_BLOCK_BYTES": "engines/test_piece_sizes.py", "TESTSET_BLOCK_QUERIES": "engines/test_piece_sizes.py",
             "DASK_TAIL_READ_BYTES": "engines/test_piece_sizes.py", "GRADE_COUNT_MAX_CELLS": "engines/test_piece_sizes.py",
             "SERVICE_GIVE_BACK_MIN_BYTES": "engines/test_piece_sizes.py",
             "WHOLE_READ_LIMIT": "inputs/test_long_lines.py", "CONFIG_READ_LIMIT": "inputs/test_bounded.py",
             "DOCUMENT_READ_LIMIT": "inputs/test_bounded.py", "DETECT_MAX_BYTES": "inputs/test_hostile_inputs.py",
             "GRADE_LIKE_HEAD": "cli/test_sanity_warnings.py",
             "PA_MAX_DOCS": "measures/test_prefs.py", "PAIR_BLOCK_CELLS": "measures/test_prefs.py",
             "CLASS_LIMIT": "measures/test_prefs.py",
             "LONG_LINE_LOOK_BACK_BYTES": "inputs/test_long_lines.py",
             "LONG_LINE_LOOK_BACK_MAX_BYTES": "inputs/test_long_lines.py",
             "DETECT_READ_BYTES": "engines/test_piece_sizes.py", "PIPE_POLL_MS": "engines/test_piece_sizes.py",
             "MEMORY_FACTOR": "inputs/test_bounded.py", "MAX_DEPTH": "inputs/test_bounded.py",
             "MAX_NUMBER_CHARS": "inputs/test_bounded.py", "JSON_DENSITY_EXEMPT_BYTES": "inputs/test_bounded.py",
             "JSON_BYTES_PER_CONTAINER": "inputs/test_bounded.py", "MAX_CONFIG_TEXTS": "testsets/test_testsets.py",
             "MIN_DRAWS": "compare/test_compare.py", "MAX_DRAWS": "compare/test_compare.py",
             "PLAIN_VALUE_MEMO_MAX_CHARS": "inputs/test_bounded.py", "PLAIN_VALUE_MEMO_ENTRIES": "inputs/test_bounded.py",
             "YAML_LIBYAML": "inputs/test_bounded.py",
             "LINE_END_READ_BYTES": "engines/test_piece_sizes.py", "DIGEST_READ_BYTES": "engines/test_piece_sizes.py",
             "COPY_BLOCK_BYTES": "engines/test_piece_sizes.py",
             "TESTSET_GIVE_BACK_MIN_BYTES": "engines/test_piece_sizes.py",
             "UNKNOWN_MEMORY_BYTES": "engines/test_piece_sizes.py",
             "CONFIG_FILE_NAME_MAX_CHARS": "testsets/test_testsets.py",
             "MAX_LISTED_PROBLEMS": "inputs/test_bounded.py", "DIGESTS_KEPT": "engines/test_piece_sizes.py",
             "GZIP_READ_BYTES": "engines/test_stream_engine.py", "INFLATE_PIECE_BYTES": "engines/test_stream_engine.py",
             "MEMORY_LIMIT_MIN": "hostile/test_hostile_budgets_and_compression.py",
             "HELD_PIECE_SHARE": "hostile/test_hostile_budgets_and_compression.py",
             "HELD_LINE_SHARE": "hostile/test_hostile_budgets_and_compression.py",
             "LINE_READER_BYTES_PER_BYTE": "hostile/test_hostile_budgets_and_compression.py",
             "INDEX_BYTES_PER_BYTE": "hostile/test_hostile_budgets_and_compression.py"}


def test_every_threshold_is_listed_here():
    names = {n for n in vars(thresholds) if n.isupper()}
    assert names == {t[0] for t in THRESHOLDS} | STREAM_THRESHOLDS | set(ELSEWHERE)
    tests = ROOT / "tests"
    for name, test_file in ELSEWHERE.items():
        assert name in (tests / test_file).read_text()


@pytest.fixture(scope="module")
def baseline(files, tmp_path_factory):
    return outcome(files, tmp_path_factory.mktemp("base"))


# a growth factor only decides once the constant beside it is out of the way; the Arrow block size and the
# slices only matter where the fast readers and the scattered-id path run
PARTNERS = {"QUERY_MATRIX_GROWTH": {"QUERY_MATRIX_SLACK": 0}, "RANK_SORT_GROWTH": {"RANK_SORT_SLACK": 0},
            "FEW_RUNS_FRACTION": {"FEW_RUNS_MIN": 0},
            "ARROW_BLOCK_BYTES": {"TREC_RUN_FAST_MIN_BYTES": 0, "TREC_QRELS_FAST_MIN_BYTES": 0, "JSONL_FAST_MIN_BYTES": 0},
            "ARROW_PARALLEL_BLOCK_BYTES": {"TREC_RUN_FAST_MIN_BYTES": 0, "TREC_QRELS_FAST_MIN_BYTES": 0},
            "ID_RENUMBER_SLICE_ROWS": {"FEW_RUNS_MIN": 0, "FEW_RUNS_FRACTION": BIG},
            "SOURCE_END_BYTES": {"TREC_RUN_FAST_MIN_BYTES": 0, "TREC_QRELS_FAST_MIN_BYTES": 0, "JSONL_FAST_MIN_BYTES": 0}}


@pytest.mark.parametrize("name,low,high", THRESHOLDS, ids=[t[0] for t in THRESHOLDS])
def test_both_sides_give_the_default_results(files, baseline, tmp_path, monkeypatch, name, low, high):
    for partner, value in PARTNERS.get(name, {}).items():
        monkeypatch.setattr(thresholds, partner, value)
    for value in (low, high):
        monkeypatch.setattr(thresholds, name, value)
        got = outcome(files, tmp_path)
        for key in baseline:
            assert got[key] == baseline[key], (name, value, key)


# ------------------------------------------------------------------ proof that the other side ran
def _spy(monkeypatch, module, fn):
    calls = []
    real = getattr(module, fn)

    def wrapper(*a, **k):
        out = real(*a, **k)
        calls.append(out)
        return out
    monkeypatch.setattr(module, fn, wrapper)
    return calls


@pytest.mark.parametrize("name,module,fn,path", [
    ("TREC_RUN_FAST_MIN_BYTES", trec, "read_run_fast", "grouped"),
    ("TREC_QRELS_FAST_MIN_BYTES", trec, "_arrow_read", "qrels"),
    ("JSONL_FAST_MIN_BYTES", jsonl, "read_jsonl_run_fast", "run.jsonl"),
])
def test_reader_fast_paths_run_below_their_threshold(files, monkeypatch, name, module, fn, path):
    calls = _spy(monkeypatch, module, fn)
    reader = read_qrels if path == "qrels" else read_run
    slow = reader(files / path).to_dict()
    assert all(c is None for c in calls)            # small files: the line reader (a size check may still ask)
    monkeypatch.setattr(thresholds, name, 0)
    assert reader(files / path).to_dict() == slow
    assert calls and calls[-1] is not None          # the Arrow reader read it


@pytest.mark.parametrize("name,kw", [
    ("ARROW_PARALLEL_BLOCK_BYTES", {"columns": 3}),           # every column kept
    ("ARROW_PARALLEL_BLOCK_BYTES", {}),                       # the iteration only checked
    ("ARROW_PARALLEL_BLOCK_BYTES", {"lean": True}),           # iteration, rank and tag only checked
    ("ARROW_PARALLEL_BLOCK_BYTES", {"ranks": False}),         # iteration and rank only checked, the tag kept
])
def test_arrow_blocks_make_chunks(files, tmp_path, monkeypatch, name, kw):
    monkeypatch.setattr(thresholds, "TREC_RUN_FAST_MIN_BYTES", 0)
    path = files / "interleaved"
    if kw.get("columns") == 3:                              # qid docid score
        path = tmp_path / "three"
        path.write_text("".join(" ".join(line.split()[i] for i in (0, 2, 4)) + "\n"
                                for line in (files / "interleaved").read_text().splitlines()))
    whole = trec.read_trec_run(path, **kw)
    monkeypatch.setattr(thresholds, name, 4096)
    chunked = trec.read_trec_run(path, **kw)
    assert chunked.table.column("score").num_chunks > 1 == whole.table.column("score").num_chunks
    assert chunked.to_dict() == whole.to_dict() and chunked.tag == whole.tag
    for column in ("rank", "tag"):
        assert chunked.table.column(column).to_pylist() == whole.table.column(column).to_pylist()


def test_constant_column_in_blocks(monkeypatch):
    monkeypatch.setattr(thresholds, "CONSTANT_COLUMN_BLOCK_ROWS", 3)
    col = arrow.repeated_column(10, "t")
    assert [len(c) for c in col.chunks] == [3, 3, 3, 1] and col.to_pylist() == ["t"] * 10
    assert arrow.repeated_column(0, "t").to_pylist() == []


def test_rank_text_table_and_formatting_agree(monkeypatch):
    ranks = pa.chunked_array([pa.array([1, 2, 10, 0, 99_999], pa.int64())])
    table = trec_out.rank_text(ranks).to_pylist()
    monkeypatch.setattr(thresholds, "RANK_TEXT_TABLE_MAX", -1)
    assert trec_out.rank_text(ranks).to_pylist() == table == ["1", "2", "10", "0", "99999"]


def test_parallel_writer_splits_above_its_threshold(files, tmp_path, monkeypatch):
    calls = _spy(monkeypatch, trec_out, "csv_part")
    run = read_run(files / "listed")
    write_run(run, tmp_path / "one")
    monkeypatch.setattr(thresholds, "PARALLEL_WRITE_MIN_ROWS", 2)
    write_run(run, tmp_path / "two")
    assert len(calls) == 3 and (tmp_path / "one").read_bytes() == (tmp_path / "two").read_bytes()


def test_scattered_qids_take_the_dictionary_path(files, monkeypatch):
    import pyarrow.compute as pc
    col = read_run(files / "interleaved").table.column("qid")
    calls = _spy(monkeypatch, pc, "dictionary_encode")
    few = groups.id_runs(col)
    assert not calls                                 # 12 queries' runs: few enough for the Python pass
    monkeypatch.setattr(thresholds, "FEW_RUNS_MIN", 0)
    monkeypatch.setattr(thresholds, "FEW_RUNS_FRACTION", BIG)
    scattered = groups.id_runs(col)
    assert calls
    assert [x.tolist() if hasattr(x, "tolist") else x for x in scattered] == \
           [x.tolist() if hasattr(x, "tolist") else x for x in few]
    assert groups.id_codes(col)[0].tolist() == [few[2].index(q) for q in col.to_pylist()]


def test_group_order_beyond_16_bits_equals_radix(monkeypatch):
    codes = np.random.default_rng(2).integers(0, 70_000, 5000)
    assert codes.max() >= 1 << 16                    # the comparison sort by default here
    wide = groups.group_order(codes)
    small = codes % 1000
    radix = groups.group_order(small)
    monkeypatch.setattr(thresholds, "RADIX_MAX_CODES", 1)
    assert groups.group_order(small).tolist() == radix.tolist()
    assert wide.tolist() == np.argsort(codes, kind="stable").tolist()
    assert np.all(np.diff(small[radix]) >= 0)


def test_hash_slices_equal_one_piece(monkeypatch):
    arr = pa.chunked_array([pa.array([f"doc{i}" for i in range(10)]), pa.array(["x" * i for i in range(25)])])
    whole = strings.hash64(arr).tolist()
    monkeypatch.setattr(thresholds, "STRING_SLICE_ROWS", 3)
    assert strings.hash64(arr).tolist() == whole
    assert strings.hash64(arr, np.arange(35)).tolist() != whole      # the group is mixed in


def test_query_matrix_refuses_uneven_depths_below_its_limits(monkeypatch):
    lengths = np.array([8, 1, 1])                    # 3 x 8 = 24 cells for 10 values
    assert matrix.query_matrix_pays(lengths, 10)                       # within the slack
    monkeypatch.setattr(thresholds, "QUERY_MATRIX_SLACK", 0)
    assert not matrix.query_matrix_pays(lengths, 10)                   # 24 cells > 2 x 10 values
    monkeypatch.setattr(thresholds, "QUERY_MATRIX_GROWTH", 3)
    assert matrix.query_matrix_pays(lengths, 10)                       # 24 <= 3 x 10
    monkeypatch.setattr(thresholds, "QUERY_MATRIX_MAX_QUERIES", 2)
    assert not matrix.query_matrix_pays(lengths, 10)


def test_queries_laid_out_in_slices(monkeypatch):
    values = np.arange(10.0)
    starts = np.array([0, 8, 9])                     # depths 8, 1, 1
    assert matrix.laid_out(values, np.diff(np.append(starts, 10)), -1.0).tolist() == [
        list(range(8)), [8] + [-1] * 7, [9] + [-1] * 7]
    assert matrix.laid_out(values, np.array([5, 5]), -1.0).tolist() == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert matrix.query_slices(starts, 10) == [(range(0, 3), range(0, 10))]
    monkeypatch.setattr(thresholds, "ROW_SORT_SLICE_CELLS", 8)        # one query (of width 8) per slice
    assert matrix.query_slices(starts, 10) == [(range(0, 1), range(0, 8)), (range(1, 2), range(8, 9)),
                                              (range(2, 3), range(9, 10))]
    monkeypatch.setattr(thresholds, "ROW_SORT_SLICE_CELLS", 16)
    assert matrix.query_slices(starts, 10) == [(range(0, 2), range(0, 9)), (range(2, 3), range(9, 10))]


def test_ranking_switches_to_a_full_sort(files, monkeypatch):
    qrels = read_qrels(files / "qrels")
    run = read_run(files / "interleaved", lean=True)
    calls = _spy(monkeypatch, trec_order, "ranks")        # the full sort
    base = evaluate_requests(qrels, run, resolve(["map", "ndcg", "P.5"])).values
    assert not calls
    monkeypatch.setattr(thresholds, "RANK_SORT_SLACK", 0)
    monkeypatch.setattr(thresholds, "RANK_SORT_GROWTH", 0)
    assert np.array_equal(evaluate_requests(qrels, run, resolve(["map", "ndcg", "P.5"])).values, base)
    assert calls


def test_repeats_found_with_a_one_slot_bitmap(files, tmp_path, monkeypatch):
    monkeypatch.setattr(thresholds, "REPEAT_BITMAP_MASK", 0)          # every key lands in the same slot
    qrels = read_qrels(files / "qrels")
    for layout in ("listed", "interleaved"):
        evaluate_requests(qrels, read_run(files / layout, lean=True), resolve(["map"]))    # no false repeat
        text = (files / layout).read_text()
        line = text.splitlines()[7].split()
        (tmp_path / "dup").write_text(text + f"{line[0]} Q0 {line[2]} 999 0.25 t\n")
        with pytest.raises(InputError, match="more than once"):
            evaluate_requests(qrels, read_run(tmp_path / "dup", lean=True), resolve(["map"]))
