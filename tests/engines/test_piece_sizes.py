"""Sizes of thresholds.py that cut work into pieces, or bound what is refused, and that no other test file lowers:
with each one lowered to its smallest value, the work gives the same result as with the default (or is refused
with the message that names the bound)."""
from __future__ import annotations

import io

import pytest
from conftest import ROOT

from treckit import thresholds
from treckit.console.errors import InputError
from treckit.engines.dask_partition import owned_lines
from treckit.engines.memory import EvalOptions
from treckit.inputs.limits import read_bounded
from treckit.model import Qrels, Run
from treckit.ranking.judged import build_view
from treckit.testsets import load_test_set

SAMPLE = ROOT / "data" / "test_sets" / "clinical_v1.yaml"


def test_a_block_s_last_line_is_the_same_read_on_a_byte_at_a_time(tmp_path, monkeypatch):
    """Each byte range's owned lines: the lines that start in it, the last read on past its end."""
    text = b"q1 0 d1 1 3.5 r\nq1 0 d22 2 3.0 r\nq2 0 a-much-longer-doc-id 1 9 r\n\nq3 0 x 1 1 r\n"
    path = tmp_path / "run"
    path.write_bytes(text)
    size = len(text)
    ranges = [(a, b) for a in range(size) for b in range(a + 1, size + 1)]
    default = [owned_lines(str(path), a, b, size) for a, b in ranges]
    monkeypatch.setattr(thresholds, "DASK_TAIL_READ_BYTES", 1)
    assert [owned_lines(str(path), a, b, size) for a, b in ranges] == default
    # the ranges of one cut into 3 parts give every line once, in order
    cuts = [0, 10, 40, size]
    assert b"".join(owned_lines(str(path), a, b, size) for a, b in zip(cuts, cuts[1:])) == text


def test_what_is_read_whole_is_the_same_read_a_byte_at_a_time(monkeypatch):
    data = bytes(range(256)) * 40
    default = read_bounded(io.BytesIO(data), "f", len(data))
    monkeypatch.setattr(thresholds, "WHOLE_READ_BLOCK_BYTES", 1)
    assert read_bounded(io.BytesIO(data), "f", len(data)) == default == data
    with pytest.raises(InputError, match=f"more than {len(data) - 1:,} bytes to read into memory"):
        read_bounded(io.BytesIO(data), "f", len(data) - 1)


def test_a_test_set_gathered_a_query_at_a_time_is_the_same_test_set(monkeypatch):
    default = load_test_set(SAMPLE)
    monkeypatch.setattr(thresholds, "TESTSET_BLOCK_QUERIES", 1)
    small = load_test_set(SAMPLE)
    assert small.query_ids == default.query_ids and len(small.query_ids) == 50
    assert list(small.queries) == list(default.queries)
    assert small.model == default.model
    assert list(small.model.columns.blocks(7)) == list(default.model.columns.blocks(7))


def test_qrels_with_more_grade_cells_than_the_bound_are_refused_naming_the_counts(monkeypatch):
    qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 2}, "q2": {"d1": 3}})
    run = Run.from_dict({"q1": {"d1": 1.0}, "q2": {"d1": 1.0}})
    view = build_view(qrels, run, EvalOptions())               # 2 queries x 3 grades = 6 cells: counted
    assert view.rel_levels.tolist() == [[1, 1, 0], [0, 0, 1]]
    monkeypatch.setattr(thresholds, "GRADE_COUNT_MAX_CELLS", 5)
    with pytest.raises(InputError, match="the qrels use 3 distinct grades over 2 queries: too many to count per query"):
        build_view(qrels, run, EvalOptions())
