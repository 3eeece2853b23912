"""The one bound on an input line's length (thresholds.MAX_LINE_BYTES), lowered here so that small files cross it:
a line past it is refused with exit 2, naming the file, the line and its first characters, through every command
and staged script, plain or gzip, by the line parsers, the Arrow paths and the streaming engine alike; a line of
exactly the bound is read as it always was.  The checks themselves (in memory, at file offsets, block by block)
agree with a line-by-line count on random content."""
from __future__ import annotations

import gzip
import io
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import ROOT, run_cli, staged
from treckit import thresholds
from treckit.inputs import long_lines
from treckit.inputs.sources import Source
from treckit.console.errors import InputError
from treckit.inputs.formats.beir import read_beir_tsv
from treckit.inputs.formats.jsonl import read_jsonl_run
from treckit.inputs.formats.trec import read_trec_qrels, read_trec_run
from treckit.inputs.formats.tsv import read_tsv_run

QRELS = ROOT / "data" / "ties" / "qrels.test"
RUN = ROOT / "data" / "ties" / "full.run"
BOUND = 1000
LONG = b"x" * 5000          # one line, no newline: a gzip bomb in small


def blocks(path, size: int):
    """The blocks of whole lines the streaming engine reads a run by (inputs.sources.Source.blocks)."""
    return Source(path).blocks(size)


@pytest.fixture
def bound(monkeypatch):
    monkeypatch.setattr(thresholds, "MAX_LINE_BYTES", BOUND)


def _file(tmp_path, data: bytes, gz: bool, name: str = "f") -> str:
    p = tmp_path / (name + (".gz" if gz else ""))
    p.write_bytes(gzip.compress(data) if gz else data)
    return str(p)


def _refused(err: str, path: str, line: int) -> bool:
    return (f"{path}:{line}: line longer than {BOUND:,} bytes, the longest line treckit reads" in err
            and "line: 'xxxxxxxxxx" in err and "fix: check that this is the right file" in err)


QRELS_HEAD = b"301 0 a 1\n301 0 b 0\n"
RUN_HEAD = b"301 Q0 a 1 2.5 t\n301 Q0 b 2 1.5 t\n"
COMMANDS = {        # (argv or staged script, the file's role) -> argv with F for the file
    "qrels": (["qrels", "F", "-o", "OUT"], "qrels"),
    "eval (qrels)": (["eval", "F", RUN], "qrels"),
    "eval (run)": (["eval", QRELS, "F"], "run"),
    "eval (run, streamed)": (["eval", QRELS, "F", "--run-format", "trec", "--memory-limit", "1000"], "run"),
    "run": (["run", "F", "-o", "OUT"], "run"),
    "run (tsv)": (["run", "F", "--run-format", "tsv", "-o", "OUT"], "run"),
    "run (jsonl)": (["run", "F", "--run-format", "jsonl", "-o", "OUT"], "run"),
    "detect": (["detect", "F"], "run"),
    "preprocess_qrels.py": (["preprocess_qrels.py", "--input", "F", "--output", "OUT"], "qrels"),
    "preprocess_run.py": (["preprocess_run.py", "--input", "F", "--output", "OUT"], "run"),
    "evaluate.py (run)": (["evaluate.py", "--run", "F", "--qrels", QRELS], "run"),
    "evaluate.py (qrels)": (["evaluate.py", "--run", RUN, "--qrels", "F"], "qrels"),
}


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_line_past_the_bound_is_refused_by_every_command(tmp_path, capsys, bound, command, gz):
    argv, role = COMMANDS[command]
    path = _file(tmp_path, (QRELS_HEAD if role == "qrels" else RUN_HEAD) + LONG, gz)
    argv = [path if a == "F" else tmp_path / "out" if a == "OUT" else a for a in argv]
    code, _, err = staged(*argv, capsys=capsys) if argv[0].endswith(".py") else run_cli(argv, capsys)
    assert code == 2 and _refused(err, path, 3), err
    assert not (tmp_path / "out").exists()


def test_a_gzip_bomb_is_refused_while_it_is_decompressed(tmp_path, monkeypatch, bound):
    """The line is refused in the first block decompressed, long before the read limit (which the whole content
    would pass: without the line bound this is the "more than N bytes to read into memory" error)."""
    path = _file(tmp_path, b"301 0 a 1\n" + b"x" * (8 << 20), gz=True)
    monkeypatch.setattr(thresholds, "WHOLE_READ_LIMIT", 4 << 20)
    with pytest.raises(InputError) as exc:
        read_trec_qrels(path)
    assert exc.value.line == 2 and exc.value.reason.startswith("line longer than 1,000 bytes")


def test_a_long_line_on_stdin_is_refused_while_it_is_read(monkeypatch, capsys, bound, fresh_streams):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(RUN_HEAD + LONG)))
    code, _, err = run_cli(["run", "-", "-o", "-"], capsys)
    assert code == 2 and _refused(err, "<stdin>", 3), err


def _limits(monkeypatch, fast: bool) -> None:
    """Every reader's Arrow path (``fast``) or its line parser."""
    for name in ("TREC_RUN_FAST_MIN_BYTES", "TREC_QRELS_FAST_MIN_BYTES", "JSONL_FAST_MIN_BYTES"):
        monkeypatch.setattr(thresholds, name, 0 if fast else 1 << 62)


READERS = {
    "trec run": (read_trec_run, lambda n: b"".join(b"%d Q0 d%d %d 1.5 t\n" % (q, q, q) for q in range(5))
                 + b"7 Q0 " + b"d" * n + b" 1 2.5 t\n"),
    "trec qrels": (read_trec_qrels, lambda n: b"".join(b"%d 0 d%d 1\n" % (q, q) for q in range(5))
                   + b"7 0 " + b"d" * n + b" 1\n"),
    "jsonl": (read_jsonl_run, lambda n: b"".join(b'{"id": "%d", "docs": ["a"], "scores": [1.0]}\n' % q for q in range(5))
              + b'{"id": "7", "docs": ["' + b"d" * n + b'"], "scores": [2.0]}\n'),
    "tsv": (read_tsv_run, lambda n: b"".join(b"%d\td%d\t1.5\n" % (q, q) for q in range(5)) + b"7\t" + b"d" * n + b"\t2.5\n"),
    "beir tsv": (read_beir_tsv, lambda n: b"query-id\tcorpus-id\tscore\n" + b"".join(b"%d\td%d\t1\n" % (q, q) for q in range(5))
                 + b"7\t" + b"d" * n + b"\t1\n"),
}


@pytest.mark.parametrize("fast", [False, True], ids=["lines", "arrow"])
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
@pytest.mark.parametrize("reader", READERS)
def test_a_line_of_exactly_the_bound_is_read_and_one_byte_more_is_not(tmp_path, monkeypatch, reader, gz, fast):
    read, content = READERS[reader]
    data = content(900)
    longest = max(len(x) for x in data.split(b"\n"))
    path = _file(tmp_path, data, gz)
    _limits(monkeypatch, fast)
    expected = read(path).table
    assert expected.num_rows == 6 and "d" * 900 in expected.column("docid").to_pylist()
    monkeypatch.setattr(thresholds, "MAX_LINE_BYTES", longest)
    assert read(path).table.equals(expected)
    monkeypatch.setattr(thresholds, "MAX_LINE_BYTES", longest - 1)
    with pytest.raises(InputError) as exc:
        read(path)
    assert exc.value.line == data.count(b"\n") and exc.value.path == path
    assert exc.value.text == data.split(b"\n")[-2][:4 * 200 + 4].decode()      # the line's start, bounded


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_streamed_blocks_are_whole_lines_up_to_the_bound(tmp_path, monkeypatch, gz):
    """The streaming engine's blocks (a plain file read, or a .gz inflated, as it is read): the file's bytes, cut at
    line ends, with a line of the bound read on past a block's end; one byte less and the line that crosses a
    block's end is refused (it is read no further)."""
    data = b"".join(b"%d Q0 d%d 1 1.5 t\n" % (q, q) for q in range(40)) + b"9 Q0 " + b"d" * 300 + b" 1 2.5 t\n" + RUN_HEAD
    path = _file(tmp_path, data, gz=gz)
    monkeypatch.setattr(thresholds, "SOURCE_END_BYTES", 2)          # the .gz is inflated as it is read, not held
    monkeypatch.setattr(thresholds, "INFLATE_PIECE_BYTES", 50)
    longest = max(len(x) for x in data.split(b"\n"))
    monkeypatch.setattr(thresholds, "MAX_LINE_BYTES", longest)
    got = list(blocks(path, 64))
    assert b"".join(b for b, _ in got) == data and all(b.endswith(b"\n") for b, _ in got)
    assert [line for _, line in got] == [1 + b"".join(b for b, _ in got[:i]).count(b"\n") for i in range(len(got))]
    monkeypatch.setattr(thresholds, "MAX_LINE_BYTES", longest - 1)
    with pytest.raises(InputError) as exc:
        list(blocks(path, 64))
    assert exc.value.line == 41 and exc.value.text.startswith("9 Q0 ddd")


def _first_long(data: bytes, bound: int) -> int | None:
    """By hand: the number of the first line longer than ``bound``."""
    return next((no for no, line in enumerate(data.split(b"\n"), 1) if len(line) > bound), None)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300).map(lambda b: bytes(10 if x % 4 == 0 else 97 for x in b)),
       bound=st.integers(0, 40), cuts=st.lists(st.integers(0, 300), max_size=6))
def test_every_check_finds_the_first_long_line(data, bound, cuts):
    thresholds_before = thresholds.MAX_LINE_BYTES
    thresholds.MAX_LINE_BYTES = bound
    try:
        expected = _first_long(data, bound)
        outcomes = []
        for check in (lambda: long_lines.check_held(data, "f"),
                      lambda: long_lines.check_file(lambda a, b: data[a:b], len(data), "f"),
                      lambda: _check_file_in_small_pieces(data),
                      lambda: _watch(data, cuts)):
            try:
                check()
                outcomes.append(None)
            except InputError as exc:
                outcomes.append(exc.line)
                # the line's start: all of it that was read when it crossed the bound (a watch reads no further)
                line = data.split(b"\n")[exc.line - 1].decode()
                assert line.startswith(exc.text) and len(exc.text) >= min(bound + 1, 4 * 200 + 4)
        assert outcomes == [expected] * 4
    finally:
        thresholds.MAX_LINE_BYTES = thresholds_before


def _check_file_in_small_pieces(data: bytes) -> None:
    """check_file looking back a byte, then 2, 4, at most 4 at a time (and counting lines 4 bytes at a time)."""
    before = thresholds.LONG_LINE_LOOK_BACK_BYTES, thresholds.LONG_LINE_LOOK_BACK_MAX_BYTES
    thresholds.LONG_LINE_LOOK_BACK_BYTES, thresholds.LONG_LINE_LOOK_BACK_MAX_BYTES = 1, 4
    try:
        long_lines.check_file(lambda a, b: data[a:b], len(data), "f")
    finally:
        thresholds.LONG_LINE_LOOK_BACK_BYTES, thresholds.LONG_LINE_LOOK_BACK_MAX_BYTES = before


@pytest.mark.parametrize("first, most", [(1, 4), (2, 2), (4096, 1 << 20), (1 << 30, 1 << 30)])
def test_a_file_checked_at_offsets_looks_back_in_pieces_of_the_set_sizes(monkeypatch, first, most):
    """thresholds.LONG_LINE_LOOK_BACK_BYTES and _MAX_BYTES: however small or large the pieces looked back in, the
    same line (the fourth, of 30 bytes) is refused with the same start; the reads come in those pieces."""
    data = b"a" * 9 + b"\n" + (b"b" * 9 + b"\n") * 2 + b"c" * 30 + b"\n" + b"d\n" * 40
    reads = []

    def read(a: int, b: int) -> bytes:
        reads.append(b - a)
        return data[a:b]
    monkeypatch.setattr(thresholds, "MAX_LINE_BYTES", 20)
    monkeypatch.setattr(thresholds, "LONG_LINE_LOOK_BACK_BYTES", first)
    monkeypatch.setattr(thresholds, "LONG_LINE_LOOK_BACK_MAX_BYTES", most)
    fine = data.replace(b"c" * 30, b"c" * 20)
    long_lines.check_file(lambda a, b: fine[a:b], len(fine), "f")
    with pytest.raises(InputError) as exc:
        long_lines.check_file(read, len(data), "f")
    assert exc.value.line == 4 and exc.value.text == "c" * 30
    looked = reads[:-1]                              # the last read is the line's start, for the message
    assert max(looked) <= most
    assert (max(looked) > 4) == (first > 4)          # the default pieces take each look back in one read


def _watch(data: bytes, cuts: list[int]) -> None:
    watch = long_lines.LineWatch("f")
    at = 0
    for cut in sorted(c for c in cuts if c <= len(data)) + [len(data)]:
        watch.feed(data[at:cut])
        at = cut


@pytest.mark.parametrize("piece", [1 << 16, 1000, 7])
@pytest.mark.parametrize("gz", [False, True])
def test_a_run_s_tag_is_its_last_line_s_however_long_that_line(tmp_path, capsys, monkeypatch, trec_eval, piece, gz):
    """The vectorized reader keeps no tag column and takes runid from the last line: a last line longer than the
    64 KiB end of the file it holds is read back whole, a piece at a time (trec_eval: the last line's tag)."""
    import subprocess
    monkeypatch.setattr(thresholds, "TREC_RUN_FAST_MIN_BYTES", 0)
    monkeypatch.setattr(thresholds, "LINE_END_READ_BYTES", piece)
    lines = [f"q{i % 5} Q0 d{i} {i} {100 - i} tagA\n" for i in range(200)]
    data = "".join(lines + [f"q4 Q0 {'x' * 70_000} 201 -5 tagB\n"]).encode()
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(5)))
    run = _file(tmp_path, data, gz, "run")
    code, out, _ = run_cli(["eval", "-m", "runid", "-m", "num_ret", str(qrels), run], capsys)
    plain = tmp_path / "plain"
    plain.write_bytes(data)
    want = subprocess.run([str(trec_eval), "-m", "runid", "-m", "num_ret", str(qrels), str(plain)],
                          capture_output=True, text=True).stdout
    assert code == 0 and out == want and "\ttagB\n" in want
