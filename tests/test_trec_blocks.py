"""The TREC Arrow path reads a file a block at a time (thresholds.ARROW_STREAM_BLOCK_BYTES) and drops the
columns it only checks (iteration, rank, tag) as soon as each block passes; a bad value in any block sends
the whole file to the line parser, so the error (message, line number, line, fix) is the line parser's.

Here the blocks are made small (a few hundred lines each) and the bad value put on a line of the third block:
each case asserts that the streaming reader really read two blocks before refusing the third, and that the
error equals the one the line parser gives for the same file.  The separator scan beside it reads the file a
slice at a time (thresholds.SCAN_SLICE_BYTES): a separator byte in a later slice is found too.
"""
from __future__ import annotations

import pytest

from treckit import thresholds
from treckit.errors import InputError
from treckit.formats import trec
from treckit.formats.trec import read_trec_qrels, read_trec_run
from treckit.io import Source

BLOCK = 1 << 15                   # bytes per block: about 900 lines of the runs below; the third block starts
LINES = 10_000                    # past the first 64 KiB, which the reader looks at before reading (about 10 blocks)


def _run_lines(n: int = LINES) -> list[bytes]:
    return [f"{1 + i // 100} Q0 doc{i} {1 + i % 100} {100 - i % 100}.25 myrun\n".encode() for i in range(n)]


def _qrels_lines(n: int = LINES) -> list[bytes]:
    return [f"{1 + i // 100} 0 doc{i} {i % 3}\n".encode() for i in range(n)]


def _third_block_line(lines: list[bytes]) -> int:
    """A line number (1-based) well inside the third block of ``BLOCK`` bytes."""
    offset, start = 0, int(2.5 * BLOCK)
    for no, line in enumerate(lines, 1):
        if offset >= start:
            return no
        offset += len(line)
    raise AssertionError("file too short")


class _CountingReader:
    """A streaming reader that counts the blocks it hands out."""

    def __init__(self, reader, counts: list[int]):
        self.reader, self.counts = reader, counts
        counts.append(0)

    def __enter__(self):
        self.reader.__enter__()
        return self

    def __exit__(self, *exc):
        return self.reader.__exit__(*exc)

    def __iter__(self):
        for block in self.reader:
            self.counts[-1] += 1
            yield block


@pytest.fixture
def blocks(monkeypatch):
    """Spy: per read, (blocks handed out by the streaming reader, what _read_blocks returned: a table,
    None for a block refused by its check, "raised" for a block Arrow could not convert)."""
    counts: list[int] = []
    results: list = []
    real = trec._read_blocks

    def spy(reader, kept):
        try:
            out = real(_CountingReader(reader, counts), kept)
        except Exception:
            results.append("raised")
            raise
        results.append(out)
        return out
    monkeypatch.setattr(trec, "_read_blocks", spy)
    return counts, results


def _outcome(read, path, **kw):
    try:
        got = read(path, **kw)
    except InputError as exc:
        return ("error", exc.reason, exc.line, exc.text, exc.fix)
    return ("ok", got.to_dict())


def _line_parser(monkeypatch, read, path, **kw):
    with monkeypatch.context() as m:
        m.setattr(thresholds, "TREC_RUN_FAST_MIN_BYTES", 1 << 62)
        m.setattr(thresholds, "TREC_QRELS_FAST_MIN_BYTES", 1 << 62)
        return _outcome(read, path, **kw)


def _small_blocks(monkeypatch) -> None:
    """Every TREC file to the Arrow path, read in blocks of ``BLOCK`` bytes."""
    monkeypatch.setattr(thresholds, "TREC_RUN_FAST_MIN_BYTES", 0)
    monkeypatch.setattr(thresholds, "TREC_QRELS_FAST_MIN_BYTES", 0)
    monkeypatch.setattr(thresholds, "ARROW_STREAM_BLOCK_BYTES", BLOCK)


def _arrow_path(monkeypatch, read, path, **kw):
    _small_blocks(monkeypatch)
    return _outcome(read, path, **kw)


READS = {
    "lean": lambda p: read_trec_run(p, lean=True),                 # evaluation: iteration, rank and tag only checked
    "ranks kept": lambda p: read_trec_run(p),                      # iteration only checked
    "no ranks": lambda p: read_trec_run(p, ranks=False),          # iteration and rank only checked
}


@pytest.mark.parametrize("how", list(READS))
def test_clean_file_is_read_block_by_block(tmp_path, monkeypatch, blocks, how):
    """The control: without a bad value the streaming reader takes the whole file, in many blocks, and reads
    what the line parser reads (ranks and tags included where they are kept)."""
    p = tmp_path / "run"
    p.write_bytes(b"".join(_run_lines()))
    read = READS[how]
    with monkeypatch.context() as m:
        m.setattr(thresholds, "TREC_RUN_FAST_MIN_BYTES", 1 << 62)
        slow = read(p)
    _small_blocks(monkeypatch)
    fast = read(p)
    counts, results = blocks
    assert counts[-1] > 5 and results[-1] is not None and results[-1].column("score").num_chunks == counts[-1]
    assert fast.to_dict() == slow.to_dict() and fast.tag == slow.tag == "myrun"
    if how == "ranks kept":
        assert fast.table.column("rank").to_pylist() == slow.table.column("rank").to_pylist()
    if how != "lean":
        assert fast.table.column("tag").to_pylist() == slow.table.column("tag").to_pylist() == ["myrun"] * LINES


# (what the bad line becomes; whether Arrow's conversion refuses it (the block is never handed out), the
# block's check does, or the kept columns' check after the last block; what the line parser makes of it)
BAD_RUN_LINES = [
    (lambda q, d: f"{q} Q0 {d} x 1.5 myrun\n".encode(), "conversion", "error"),             # rank not a number
    (lambda q, d: f"{q} Q0 {d} 1.5 1.5 myrun\n".encode(), "conversion", "error"),           # rank not an integer
    (lambda q, d: f"{q} Q0 {d} 99999999999999999999 1.5 myrun\n".encode(), "conversion", "error"),  # beyond 64 bits
    (lambda q, d: f"{q} Q0 {d}  1.5 myrun\n".encode(), "conversion", "error"),              # rank empty
    (lambda q, d: f"{q}  {d} 3 1.5 myrun\n".encode(), "check", "error"),                    # iteration empty
    (lambda q, d: f"{q} Q0 {d} 3 1.5 \n".encode(), "check", "error"),                       # tag empty
    (lambda q, d: f"{q} Q\xff {d} 3 1.5 myrun\n".encode("latin-1"), "conversion", "error"),  # iteration not UTF-8
    (lambda q, d: f"{q} Q0 {d} 3 1.5 my\xffrun\n".encode("latin-1"), "conversion", "error"),  # tag not UTF-8
    (lambda q, d: f"{q} Q0 {d} 3 nan myrun\n".encode(), "after", "error"),                  # NaN score (kept)
    (lambda q, d: f"{q} Q0 {d} 3 1.5\n".encode(), "conversion", "error"),                   # five fields
    (lambda q, d: f"{q} Q0 {d} 3 1.5 myrun extra\n".encode(), "conversion", "ok"),          # seven: extra columns
    (lambda q, d: f"#{q} Q0 {d} 3 1.5 myrun\n".encode(), "check", "ok"),                    # a comment line
]


@pytest.mark.parametrize("how", list(READS))
@pytest.mark.parametrize("case", range(len(BAD_RUN_LINES)))
def test_bad_value_in_the_third_block_is_the_line_parsers_error(tmp_path, monkeypatch, blocks, how, case):
    make, where, expected = BAD_RUN_LINES[case]
    lines = _run_lines()
    no = _third_block_line(lines)
    lines[no - 1] = make(1 + (no - 1) // 100, f"doc{no - 1}")
    p = tmp_path / "run"
    p.write_bytes(b"".join(lines))
    read = READS[how]
    slow = _line_parser(monkeypatch, read, p)
    fast = _arrow_path(monkeypatch, read, p)
    counts, results = blocks
    if where == "after":
        # a NaN score is refused after the blocks (on the kept score column): every block was read
        assert len(counts) == 1 and counts[0] > 5 and results[0] is not None
    else:
        # the streaming reader handed out the first two blocks, then refused the third: by Arrow's conversion
        # (the block never comes out) or by the block's check (it does, and is refused)
        assert (counts, results) == (([2], ["raised"]) if where == "conversion" else ([3], [None]))
    assert slow[0] == expected and (expected == "ok" or slow[2] == no), slow
    assert fast == slow


@pytest.mark.parametrize("bad", [b"x", b"", b"1.5", b"99999999999999999999", b"\xff"])
def test_bad_grade_or_iteration_in_the_third_block_of_qrels(tmp_path, monkeypatch, blocks, bad):
    lines = _qrels_lines(LINES * 2)
    no = _third_block_line(lines)
    lines[no - 1] = b"3 0 doc7 " + bad + b"\n" if bad != b"\xff" else b"3 \xff doc7 1\n"
    p = tmp_path / "qrels"
    p.write_bytes(b"".join(lines))
    slow = _line_parser(monkeypatch, read_trec_qrels, p)
    fast = _arrow_path(monkeypatch, read_trec_qrels, p)
    counts, results = blocks
    assert (counts, results) == ([2], ["raised"])
    assert slow[0] == "error" and slow[2] == no and fast == slow


def test_clean_qrels_read_block_by_block(tmp_path, monkeypatch, blocks):
    p = tmp_path / "qrels"
    p.write_bytes(b"".join(_qrels_lines(LINES * 2)))
    slow = _line_parser(monkeypatch, read_trec_qrels, p)
    fast = _arrow_path(monkeypatch, read_trec_qrels, p)
    counts, results = blocks
    assert counts[-1] > 5 and results[-1] is not None and fast == slow and slow[0] == "ok"


@pytest.mark.parametrize("sep", [b"\r", b"\x0b", b"\x0c", b"\t"])
def test_separator_in_a_later_slice_sends_the_file_to_the_line_parser(tmp_path, monkeypatch, blocks, sep):
    """The scan for separator bytes Arrow would split differently goes a page at a time here; the byte sits
    on a line far beyond the first page."""
    monkeypatch.setattr(thresholds, "SCAN_SLICE_BYTES", 1)          # rounded up to one page
    lines = _run_lines()
    no = len(lines) - 3
    lines[no - 1] = lines[no - 1].replace(b" myrun", sep + b"myrun") if sep != b"\r" else lines[no - 1][:-1] + b"\r\n"
    p = tmp_path / "run"
    p.write_bytes(b"".join(lines))
    slow = _line_parser(monkeypatch, read_trec_run, p)
    fast = _arrow_path(monkeypatch, read_trec_run, p)
    assert fast == slow
    counts, results = blocks
    assert results and all(r is not None for r in results)           # Arrow read it: only the scan refused it
    assert trec._read_run_fast(Source(p), 6) is None


def test_separator_scan_finds_bytes_at_slice_edges(tmp_path, monkeypatch):
    import mmap

    monkeypatch.setattr(thresholds, "SCAN_SLICE_BYTES", mmap.PAGESIZE)
    size = 5 * mmap.PAGESIZE + 17
    for at in (0, mmap.PAGESIZE - 1, mmap.PAGESIZE, 3 * mmap.PAGESIZE + 5, size - 1):
        data = bytearray(b"a" * size)
        data[at] = 0x0b
        p = tmp_path / f"f{at}"
        p.write_bytes(bytes(data))
        assert trec._holds_any(Source(p), (b"\r", b"\x0b")) is True
        assert trec._holds_any(Source(p), (b"\r", b"\t")) is False
