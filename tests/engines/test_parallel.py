"""parallel.ordered_map (the TREC reader's blocks side by side), pieces and numbers, and the block-level UTF-8 check."""
from __future__ import annotations

import threading
import time

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treckit.fast.parallel import for_each, numbers, ordered_map, pieces, usable_cores
from treckit.fast.strings import is_utf8, view_as_text


@settings(max_examples=60, deadline=None)
@given(items=st.lists(st.integers(0, 1000), max_size=40), workers=st.integers(1, 4))
def test_results_come_in_the_order_of_the_items(items, workers):
    def slow_square(x):
        time.sleep((x % 3) * 1e-4)              # later items often finish first
        return x * x
    assert list(ordered_map(slow_square, items, workers=workers)) == [x * x for x in items]


def test_results_in_flight_stay_bounded():
    """However many items, at most 2 x workers are started ahead of the one the caller is waiting for."""
    started, lock = [], threading.Lock()

    def note(x):
        with lock:
            started.append(x)
        return x
    consumed = 0
    for x in ordered_map(note, range(1000), workers=3):
        time.sleep(1e-4)
        with lock:
            assert len(started) - consumed <= 2 * 3
        consumed += 1
    assert consumed == 1000


def test_an_error_is_raised_at_its_item_and_the_rest_is_not_started():
    started = []

    def f(x):
        started.append(x)
        if x == 5:
            raise ValueError("five")
        return x
    got = []
    with pytest.raises(ValueError, match="five"):
        for x in ordered_map(f, range(10_000), workers=2):
            got.append(x)
    assert got == [0, 1, 2, 3, 4]
    assert max(started) < 5 + 2 * 2 + 1          # only the window ahead of the failing item was started


def test_stopping_early_drops_the_items_not_started():
    started = []
    gen = ordered_map(lambda x: started.append(x) or x, range(10_000), workers=2)
    assert next(gen) == 0
    gen.close()
    assert len(started) <= 1 + 2 * 2


def test_one_item_or_one_worker_runs_in_the_callers_thread():
    me = threading.get_ident()
    assert list(ordered_map(lambda x: threading.get_ident(), [1])) == [me]
    assert set(ordered_map(lambda x: threading.get_ident(), range(5), workers=1)) == {me}
    assert usable_cores() >= 1


@settings(max_examples=400, deadline=None)
@given(data=st.binary(max_size=64) | st.text(max_size=32).map(lambda s: s.encode("utf-8", "surrogatepass")))
def test_block_utf8_check_agrees_with_pythons_decoder(data):
    """Arrow's check over a whole block accepts exactly what Python's strict UTF-8 decoder accepts (so
    overlong forms and encoded surrogates are refused), as the line parser reads a file."""
    try:
        data.decode("utf-8")
        ok = True
    except UnicodeDecodeError:
        ok = False
    assert is_utf8(pa.py_buffer(data)) is ok


def test_fields_viewed_as_text_keep_their_values():
    col = pa.chunked_array([pa.array([b"a", "é".encode(), b""], pa.binary()), pa.array([b"x y"], pa.binary())])
    text = view_as_text(col)
    assert text.type == pa.string() and text.to_pylist() == ["a", "é", "", "x y"]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 50), size=st.integers(-1, 60))
def test_pieces_cover_the_range_in_order(n, size):
    got = pieces(n, size)
    assert [i for r in got for i in r] == list(range(n))
    assert all(0 < len(r) <= max(1, size) for r in got)


@settings(max_examples=60, deadline=None)
@given(chunks=st.lists(st.lists(st.floats(allow_nan=False), max_size=20), max_size=8))
def test_numbers_of_a_chunked_column_are_its_values_in_order(chunks):
    col = pa.chunked_array([pa.array(c, pa.float64()) for c in chunks], pa.float64())
    got = numbers(col)
    assert got.dtype == np.float64
    assert got.tolist() == [x for c in chunks for x in c]


def test_numbers_of_one_chunk_are_a_view_and_nulls_become_nan():
    arr = pa.array([3, 1, 2], pa.int64())
    assert np.shares_memory(numbers(pa.chunked_array([arr])), np.frombuffer(arr.buffers()[1], np.int64))
    with_null = numbers(pa.chunked_array([pa.array([1, None], pa.int64()), pa.array([3], pa.int64())]))
    assert with_null[0] == 1 and np.isnan(with_null[1]) and with_null[2] == 3
    assert np.isnan(numbers(pa.array([1.5, None]))[1])                  # a plain array with a null too
    assert numbers(pa.chunked_array([pa.array([True]), pa.array([False])])).tolist() == [True, False]


def test_for_each_runs_every_item_and_raises_the_first_error():
    seen, lock = set(), threading.Lock()

    def note(x):
        with lock:
            seen.add(x)
    for_each(note, range(100))
    assert seen == set(range(100))
    with pytest.raises(ZeroDivisionError):
        for_each(lambda x: 1 / (x - 50), range(100))
