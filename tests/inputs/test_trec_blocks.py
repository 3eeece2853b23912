"""The TREC Arrow path cuts a file into blocks of whole lines (thresholds.ARROW_PARALLEL_BLOCK_BYTES), parses
them side by side and drops the columns it only checks (iteration, rank, tag) as soon as each block passes; a
bad value in any block sends the whole file to the line parser, so the error (message, line number, line, fix)
is the line parser's.

Here the blocks are made small (a few hundred lines each) and the bad value put on a line of the third block:
each case asserts that the reader took the first two blocks and refused the third, and that the error equals
the one the line parser gives for the same file.  Separator bytes Arrow would split differently are searched
block by block: one on a line far down is found too.
"""
from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treckit import thresholds
from treckit.console.errors import InputError
from treckit.inputs.formats import trec
from treckit.inputs.formats.trec import read_trec_qrels, read_trec_run
from treckit.inputs.sources import Source

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


@pytest.fixture
def blocks(monkeypatch):
    """Spy: per read, what the reader got for each block, in file order, up to the first refused one (a
    table, or None for a block Arrow could not convert or its check refused)."""
    reads: list[list] = []
    real = trec.ordered_map

    def spy(fn, items, **kw):
        reads.append([])
        for out in real(fn, items, **kw):
            reads[-1].append(out)
            yield out
    monkeypatch.setattr(trec, "ordered_map", spy)
    return reads


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
    monkeypatch.setattr(thresholds, "ARROW_PARALLEL_BLOCK_BYTES", BLOCK)


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
    got = blocks[-1]
    assert len(got) > 5 and all(t is not None for t in got)
    assert fast.table.column("score").num_chunks == len(got)
    assert fast.to_dict() == slow.to_dict() and fast.tag == slow.tag == "myrun"
    if how == "ranks kept":
        assert fast.table.column("rank").to_pylist() == slow.table.column("rank").to_pylist()
    if how != "lean":
        assert fast.table.column("tag").to_pylist() == slow.table.column("tag").to_pylist() == ["myrun"] * LINES


# (what the bad line becomes; whether Arrow's conversion of its block refuses it or the block's check does;
# what the line parser makes of it)
BAD_RUN_LINES = [
    (lambda q, d: f"{q} Q0 {d} x 1.5 myrun\n".encode(), "conversion", "error"),             # rank not a number
    (lambda q, d: f"{q} Q0 {d} 1.5 1.5 myrun\n".encode(), "conversion", "error"),           # rank not an integer
    (lambda q, d: f"{q} Q0 {d} 99999999999999999999 1.5 myrun\n".encode(), "conversion", "error"),  # beyond 64 bits
    (lambda q, d: f"{q} Q0 {d}  1.5 myrun\n".encode(), "conversion", "error"),              # rank empty
    (lambda q, d: f"{q}  {d} 3 1.5 myrun\n".encode(), "check", "error"),                    # iteration empty
    (lambda q, d: f"{q} Q0 {d} 3 1.5 \n".encode(), "check", "error"),                       # tag empty
    (lambda q, d: f"{q} Q\xff {d} 3 1.5 myrun\n".encode("latin-1"), "conversion", "error"),  # iteration not UTF-8
    (lambda q, d: f"{q} Q0 {d} 3 1.5 my\xffrun\n".encode("latin-1"), "conversion", "error"),  # tag not UTF-8
    (lambda q, d: f"{q} Q0 {d} 3 nan myrun\n".encode(), "check", "error"),                  # NaN score
    (lambda q, d: f"{q} Q0 {d} 3 1.5\n".encode(), "conversion", "error"),                   # five fields
    (lambda q, d: f"{q} Q0 {d} 3 1.5 myrun extra\n".encode(), "conversion", "ok"),          # seven: extra columns
    (lambda q, d: f"#{q} Q0 {d} 3 1.5 myrun\n".encode(), "check", "ok"),                    # a comment line
]


@pytest.mark.parametrize("how", list(READS))
@pytest.mark.parametrize("case", range(len(BAD_RUN_LINES)))
def test_bad_value_in_the_third_block_is_the_line_parsers_error(tmp_path, monkeypatch, blocks, how, case):
    make, _, expected = BAD_RUN_LINES[case]
    lines = _run_lines()
    no = _third_block_line(lines)
    lines[no - 1] = make(1 + (no - 1) // 100, f"doc{no - 1}")
    p = tmp_path / "run"
    p.write_bytes(b"".join(lines))
    read = READS[how]
    slow = _line_parser(monkeypatch, read, p)
    fast = _arrow_path(monkeypatch, read, p)
    assert len(blocks) == 1
    # the first two blocks were read, the third refused (by Arrow's conversion or by the block's check) and
    # nothing after it taken
    got = blocks[0]
    assert len(got) == 3 and got[0] is not None and got[1] is not None and got[2] is None
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
    assert len(blocks) == 1 and len(blocks[0]) == 3 and None not in blocks[0][:2] and blocks[0][2] is None
    assert slow[0] == "error" and slow[2] == no and fast == slow


def test_clean_qrels_read_block_by_block(tmp_path, monkeypatch, blocks):
    p = tmp_path / "qrels"
    p.write_bytes(b"".join(_qrels_lines(LINES * 2)))
    slow = _line_parser(monkeypatch, read_trec_qrels, p)
    fast = _arrow_path(monkeypatch, read_trec_qrels, p)
    assert len(blocks[-1]) > 5 and None not in blocks[-1] and fast == slow and slow[0] == "ok"


@pytest.mark.parametrize("sep", [b"\r", b"\x0b", b"\x0c", b"\t"])
def test_separator_in_a_later_block_sends_the_file_to_the_line_parser(tmp_path, monkeypatch, blocks, sep):
    """A separator byte Arrow would split differently than the line parser, on a line far down (in the last
    block): the blocks before it are read, that one is refused."""
    lines = _run_lines()
    no = len(lines) - 3
    lines[no - 1] = lines[no - 1].replace(b" myrun", sep + b"myrun") if sep != b"\r" else lines[no - 1][:-1] + b"\r\n"
    p = tmp_path / "run"
    p.write_bytes(b"".join(lines))
    slow = _line_parser(monkeypatch, read_trec_run, p)
    fast = _arrow_path(monkeypatch, read_trec_run, p)
    assert fast == slow
    got = blocks[-1]
    assert len(got) > 5 and None not in got[:-1] and got[-1] is None
    assert trec.read_run_fast(Source(p), 6) is None


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=30),
       end=st.booleans(), block=st.integers(1, 80))
def test_line_spans_cut_at_line_ends_and_cover_the_content(tmp_path_factory, lines, end, block):
    """Blocks are whole lines (each ends just after a newline, the last at the end of the content), in
    order, covering every byte once, about ``block`` bytes each; the same for a file and for content held
    in memory."""
    data = b"\n".join(lines) + (b"\n" if end and lines else b"")
    if data.startswith(b"\x1f\x8b"):                                 # read as gzip: not this test's concern
        data = b"x" + data
    p = tmp_path_factory.mktemp("spans") / "f"
    p.write_bytes(data)
    for src in (Source(p), Source.of_bytes(data, "mem")):
        spans = src.line_spans(block)
        assert b"".join(data[a:b] for a, b in spans) == data
        assert all(b > a for a, b in spans) and all(b == c for (_, b), (c, _) in zip(spans, spans[1:]))
        for a, b in spans:
            assert data[b - 1:b] == b"\n" or b == len(data)
            assert b"\n" not in data[a + block - 1:b - 1]          # cut at the first newline past the nominal end


def test_a_file_cut_short_while_it_is_read_is_an_error_naming_it(tmp_path, monkeypatch):
    """Another program truncating the run while treckit reads it: the short read is reported (an input error,
    exit 2, naming the file and the fix), never a crash (a memory-mapped file would kill the process: SIGBUS)."""
    p = tmp_path / "shrinking-run"
    p.write_bytes(b"".join(_run_lines()))
    _small_blocks(monkeypatch)
    src = Source(p)                                   # its size is taken here
    p.write_bytes(b"".join(_run_lines(100)))          # ... and the file is cut short before it is read
    with pytest.raises(InputError) as err:
        trec.read_run_fast(src, 6, lean=True)
    assert "shrinking-run" in str(err.value) and "cut short (truncated) while it was read" in str(err.value) and err.value.fix


@pytest.mark.parametrize("rank, arrow_reads_it", [
    (b"-3", True),                          # a sign: the digit check says no, Arrow's integer conversion says yes
    (b"0000000000000000042", True),         # 19 digits: beyond the digit check, within 64 bits
    (b"9223372036854775807", True),         # the largest 64-bit integer
    (b"+5", False),                         # Arrow refuses a '+', the line parser reads it: the file goes there
])
def test_rank_only_checked_other_spellings_are_converted_as_before(tmp_path, monkeypatch, blocks, rank, arrow_reads_it):
    """Evaluation reads the rank column only to check it: its digits are checked at once, and a block whose
    ranks are spelled otherwise is converted after all, so the file reads as it did (and as the line parser
    reads it)."""
    lines = _run_lines()
    no = _third_block_line(lines)
    q, d = 1 + (no - 1) // 100, f"doc{no - 1}"
    lines[no - 1] = f"{q} Q0 {d} ".encode() + rank + b" 1.5 myrun\n"
    p = tmp_path / "run"
    p.write_bytes(b"".join(lines))
    slow = _line_parser(monkeypatch, READS["lean"], p)
    fast = _arrow_path(monkeypatch, READS["lean"], p)
    assert slow[0] == "ok" and fast == slow
    assert (None not in blocks[-1]) is arrow_reads_it


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.text("0123456789+- x", max_size=21), min_size=1, max_size=8))
def test_short_whole_numbers_only_says_yes_to_what_fits_64_bits(values):
    from treckit.fast.strings import short_whole_numbers

    col = pa.chunked_array([pa.array([v.encode() for v in values], pa.binary())])
    if short_whole_numbers(col):
        assert all(v.isdigit() and v.isascii() and -(1 << 63) <= int(v) < (1 << 63) for v in values)
    else:
        assert not all(v.isdigit() and 1 <= len(v) <= 18 for v in values)
