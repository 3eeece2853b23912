"""Sizes of thresholds.py that cut work into pieces, or bound what is refused, and that no other test file lowers:
with each one lowered to its smallest value, the work gives the same result as with the default (or is refused
with the message that names the bound)."""
from __future__ import annotations

import io

import pytest
from helpers import ROOT

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


def test_detection_reads_on_for_a_long_first_line_in_pieces_of_the_set_size(tmp_path, monkeypatch):
    """thresholds.DETECT_READ_BYTES: detection reads blocks of whole lines of this many bytes (a long first line
    read to its end), and no further than the lines it needs; the same lines are detected at any size."""
    from treckit.inputs.formats import common
    from treckit.inputs.sources import Source
    path = tmp_path / "run"
    lines = ["1 Q0 " + "d" * 200_000 + " 1 1.5 t", "1 Q0 e 2 1.0 t", "2 Q0 f 1 0.5 t"] + ["3 Q0 g 1 0.5 t"] * 50_000
    path.write_text("\n".join(lines) + "\n")
    asked, given = [], []
    blocks = Source.blocks

    def spied(self, size):
        asked.append(size)
        for data, first in blocks(self, size):
            given.append(len(data))
            yield data, first
    monkeypatch.setattr(Source, "blocks", spied)
    assert common.head_lines(path, 2, "run") == lines[:2]
    first = len(lines[0]) + 1
    assert asked == [1 << 16] and given[0] == first          # the default; the long first line read to its end ...
    assert len(given) == 2 and given[1] < (1 << 16) + 100    # ... then one block more for the second line
    asked.clear(), given.clear()
    monkeypatch.setattr(thresholds, "DETECT_READ_BYTES", 64)
    assert common.head_lines(path, 3, "run") == lines[:3]
    assert asked == [64] and given[0] == first and len(given) == 2 and given[1] < 200      # a block of 64 bytes more

def test_a_pipe_is_waited_on_the_set_time_at_a_time(monkeypatch):
    """thresholds.PIPE_POLL_MS: a pipe whose writer takes 50 ms is waited on 1 ms at a time (many waits) or 10 s at a
    time (one wait, ended by the data); what is read is the same."""
    import os
    import select
    import threading
    import time
    from treckit.inputs import limits

    waits = []
    real_poll = select.poll

    class Poll:
        def __init__(self):
            self.real = real_poll()

        def register(self, *a):
            self.real.register(*a)

        def poll(self, ms):
            got = self.real.poll(ms)
            waits.append((ms, bool(got)))
            return got
    monkeypatch.setattr(select, "poll", Poll)
    data = b"1 Q0 d1 1 1.0 t\n" * 100

    def piped() -> bytes:
        r, w = os.pipe()

        def write():
            time.sleep(0.05)
            os.write(w, data)
            os.close(w)
        writer = threading.Thread(target=write)
        writer.start()
        with open(r, "rb", buffering=0) as fh:
            got = limits.read_pipe(fh, "pipe", 1 << 20)
        writer.join()
        return got

    monkeypatch.setattr(thresholds, "PIPE_POLL_MS", 1)
    assert piped() == data
    first = [w for w in waits if w[1]]
    assert {ms for ms, _ in waits} == {1} and len(waits) > len(first) >= 1     # waits that timed out before the data
    waits.clear()
    monkeypatch.setattr(thresholds, "PIPE_POLL_MS", 10_000)
    assert piped() == data
    assert {ms for ms, _ in waits} == {10_000} and all(ready for _, ready in waits)


def test_where_the_system_does_not_say_its_memory_the_assumed_size_bounds_what_is_read_whole(tmp_path, monkeypatch):
    """thresholds.UNKNOWN_MEMORY_BYTES: what is read whole is bounded by the physical memory, or by this size where
    the system does not say; lowered below a .gz file's content, that content is refused, naming the bound."""
    import gzip
    import os
    from treckit.inputs import limits
    from treckit.inputs.sources import read_bytes
    content = b"1 0 d1 1\n1 0 d2 0\n"
    path = tmp_path / "qrels.gz"
    path.write_bytes(gzip.compress(content))
    assert limits.whole_read_limit() == os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")

    def unknown(name):
        raise ValueError(name)
    monkeypatch.setattr(os, "sysconf", unknown)
    assert limits.whole_read_limit() == thresholds.UNKNOWN_MEMORY_BYTES == 64 << 30
    assert read_bytes(path) == content
    monkeypatch.setattr(thresholds, "UNKNOWN_MEMORY_BYTES", len(content) - 1)
    with pytest.raises(InputError, match=f"more than {len(content) - 1} bytes to read into memory"):
        read_bytes(path)


def test_a_digest_read_a_byte_at_a_time_is_the_same_digest(tmp_path, monkeypatch):
    """thresholds.DIGEST_READ_BYTES: a file's content digest (plain and .gz) is the SHA-256 of its content, however
    large the blocks it is read in."""
    import gzip
    import hashlib
    from treckit.inputs import sources
    content = bytes(range(256)) * 9
    (tmp_path / "plain").write_bytes(content)
    (tmp_path / "packed.gz").write_bytes(gzip.compress(content))
    expected = hashlib.sha256(content).hexdigest()
    for size in (thresholds.DIGEST_READ_BYTES, 1, 7, 1 << 30):
        monkeypatch.setattr(thresholds, "DIGEST_READ_BYTES", size)
        sources.forget_digests()            # read again, not remembered
        assert sources.file_digest(tmp_path / "plain") == sources.file_digest(tmp_path / "packed.gz") == expected


def test_blocks_of_whole_lines_end_at_the_same_place_read_a_byte_at_a_time(tmp_path, monkeypatch):
    """thresholds.LINE_END_READ_BYTES: a plain file cut into blocks of whole lines is cut at the same places however
    far each look for a line's end reads."""
    from treckit.inputs.sources import Source
    text = b"".join(b"q%d Q0 %s 1 1.0 t\n" % (i, b"d" * (i * 7 % 50)) for i in range(60))
    path = tmp_path / "run"
    path.write_bytes(text)
    spans = {block: Source(path).line_spans(block) for block in (1, 10, 100, 1000, 1 << 20)}
    assert all(text[a:b].endswith(b"\n") and b - a >= min(block, len(text) - a)
               for block, cut in spans.items() for a, b in cut)
    assert [len(s) for s in spans.values()] != [1] * 5                # the small blocks cut the file
    for size in (1, 3, 1 << 30):
        monkeypatch.setattr(thresholds, "LINE_END_READ_BYTES", size)
        assert {block: Source(path).line_spans(block) for block in spans} == spans


def test_an_output_to_a_pipe_is_copied_a_byte_at_a_time_alike(tmp_path, monkeypatch):
    """thresholds.COPY_BLOCK_BYTES: an output that is a pipe (a FIFO) gets its content at commit in blocks of this
    many bytes; the reader gets the same bytes whatever their size."""
    import os
    import threading
    from treckit.output.files import atomic_output
    content = "".join(f"q{i} Q0 d{i} 1 {1 / (i + 1)!r} t\n" for i in range(300))

    def through_pipe(name: str) -> str:
        fifo = tmp_path / name
        os.mkfifo(fifo)
        got = []
        reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
        reader.start()
        with atomic_output(fifo) as fh:
            fh.write(content)
        reader.join(10)
        return got[0]
    assert through_pipe("default") == content
    for size in (1, 1 << 30):
        monkeypatch.setattr(thresholds, "COPY_BLOCK_BYTES", size)
        assert through_pipe(f"blocks-{size}") == content


def test_memory_is_handed_back_after_a_large_test_set_only(monkeypatch):
    """thresholds.TESTSET_GIVE_BACK_MIN_BYTES: the sample (45 KB) is below the default, so nothing is handed
    back; with the size lowered below it, the memory freed is handed back once; the test set is the same."""
    from treckit.testsets import load
    calls = []
    monkeypatch.setattr(load, "memory_freed", lambda: calls.append(1))
    default = load_test_set(SAMPLE)
    assert calls == [] and SAMPLE.stat().st_size < thresholds.TESTSET_GIVE_BACK_MIN_BYTES
    monkeypatch.setattr(thresholds, "TESTSET_GIVE_BACK_MIN_BYTES", SAMPLE.stat().st_size - 1)
    again = load_test_set(SAMPLE)
    assert calls == [1] and again.query_ids == default.query_ids and again.model == default.model


def test_digests_are_remembered_for_the_set_number_of_files(tmp_path, monkeypatch):
    """thresholds.DIGESTS_KEPT: three files' digests are all remembered by default; with one kept, only the last
    one read is, the others read again when asked; the digests are the same either way."""
    import hashlib
    from treckit.inputs import sources
    paths = []
    for name in "abc":
        (tmp_path / name).write_text(name * 10)
        paths.append(tmp_path / name)
    expected = [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
    for kept, remembered in ((thresholds.DIGESTS_KEPT, 3), (1, 1)):
        monkeypatch.setattr(thresholds, "DIGESTS_KEPT", kept)
        sources.forget_digests()
        assert [sources.file_digest(p) for p in paths] == expected
        assert sorted(sources.remembered_digests()) == sorted(expected[-remembered:])
        assert [sources.file_digest(p) for p in paths] == expected


def test_a_service_worker_hands_memory_back_after_a_large_body_only(monkeypatch):
    """thresholds.SERVICE_GIVE_BACK_MIN_BYTES: a body one byte short of it hands nothing back, one of its size does;
    lowered, a small body does."""
    pytest.importorskip("pydantic", reason="the service extra: pip install -e '.[service]'")
    from treckit.service import workers
    calls = []
    monkeypatch.setattr(workers, "give_back_freed_memory", lambda: calls.append(1))
    workers.after_request(thresholds.SERVICE_GIVE_BACK_MIN_BYTES - 1)
    assert calls == []
    workers.after_request(thresholds.SERVICE_GIVE_BACK_MIN_BYTES)
    assert calls == [1]
    monkeypatch.setattr(thresholds, "SERVICE_GIVE_BACK_MIN_BYTES", 10)
    workers.after_request(9)
    workers.after_request(10)
    assert calls == [1, 1]
