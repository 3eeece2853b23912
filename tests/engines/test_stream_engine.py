"""Bounded-memory evaluation (engines/stream.py): streamed output == in-memory output, byte for byte.

The budget is lowered (``--memory-limit`` of a few KiB, ``thresholds.STREAM_BLOCK_MIN_BYTES`` of a few dozen
bytes, few shards) so that small runs go through many blocks, carried-over queries and shards; a spy counts
the parts, so each test shows that the streamed side really ran.
"""
from __future__ import annotations

import csv
import gzip
import io
import os
import random
import signal
import subprocess
import sys
import warnings

import pytest
from hypothesis import given, settings, strategies as st

import fuzz_cases
from helpers import ROOT, default_sigint, run_cli
from treckit import thresholds
from treckit.engines import stream
from treckit.inputs.options import RunReading
from treckit.inputs.sources import Source



@pytest.fixture
def tiny(monkeypatch, tmp_path):
    """Blocks of ~48 bytes (one or two lines), up to 5 shards, temporary shards under tmp_path/tmp."""
    monkeypatch.setattr(thresholds, "STREAM_BLOCK_MIN_BYTES", 48)
    monkeypatch.setattr(thresholds, "SHARDS_MAX", 5)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    seen = []
    real = stream.StreamEvaluation.run

    def spy(self):
        try:
            return real(self)
        finally:
            seen.append((len(self.parts), self.shard_dir))
    monkeypatch.setattr(stream.StreamEvaluation, "run", spy)
    return seen, tmp


def treckit(argv):
    return run_cli(["eval", *argv])


def both(argv, tiny_fixture):
    seen, tmp = tiny_fixture
    whole = treckit(["--memory-limit", "0", *argv])
    before = len(seen)
    streamed = treckit(["--memory-limit", "1K", *argv])
    assert list(tmp.iterdir()) == []                            # no shard folder left behind
    return whole, streamed, seen[before:]


def _without_notices(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if "ignored the columns" not in ln and "containing whitespace" not in ln]


def _run_lines(c):
    return [ln for ln in c.run.splitlines() if ln.strip() and not ln.startswith("#")]


@pytest.mark.parametrize("seed", range(0, 160))
def test_streamed_equals_in_memory_on_fuzz_cases(tiny, tmp_path, seed):
    c = fuzz_cases.case(seed)
    argv = c.write(tmp_path / "case")
    if seed % 3 == 0:                     # queries grouped (sorted) and spread over many blocks
        lines = sorted(_run_lines(c), key=lambda ln: ln.split()[0])
        (tmp_path / "case" / "run").write_text("\n".join(lines) + "\n")
    whole, streamed, seen = both(argv, tiny)
    assert streamed[0] == whole[0]
    assert streamed[1] == whole[1], seed
    if whole[0] == 0:
        assert streamed[2] == whole[2], seed
    else:       # an evaluation error stops the stream before the reader's notices for the whole file are said
        assert _without_notices(streamed[2]) == _without_notices(whole[2]), seed
    if whole[0] == 0 and os.path.getsize(tmp_path / "case" / "run") * 3 > 1024:
        assert seen and seen[0][0] >= 1                          # it was streamed


def _grouped_case(seed: int, interleave: bool) -> tuple[str, str]:
    r = random.Random(seed)
    qrels, groups = [], []
    for q in range(25):
        qid = f"{q:02d}" if q % 4 else f"q{q}"
        docs = [f"d{j}" for j in range(20)] + ["a%20b", "a!", "x#1"]
        if q % 7 != 2:
            qrels += [f"{qid} 0 {d} {r.choice([-1, 0, 1, 2, 3])}" for d in r.sample(docs, 8)]
        if q % 9 != 4:
            picked = r.sample(docs, r.randint(1, 15))
            groups.append([f"{qid} Q0 {d} {i} {r.choice([1.0, 2.0, round(r.random(), 3)])} run{q % 3}"
                           for i, d in enumerate(picked, 1)])
    if interleave:
        lines = [ln for g in groups for ln in g]
        r.shuffle(lines)
    else:
        r.shuffle(groups)
        lines = [ln for g in groups for ln in g]
    return "\n".join(qrels) + "\n", "\n".join(lines) + "\n"


FLAGS = [["-q", "-m", "all_trec"], ["-q", "-c", "-m", "all_trec"], ["-q", "-J", "-c", "-m", "all_trec"],
         ["-q", "-c", "-M", "3", "-l", "2", "-m", "all_trec"], ["-q", "-c", "-m", "gm_map", "-m", "gm_bpref", "-m", "relstring.10"],
         ["-q", "-m", "nDCG@10", "-m", "R@5", "-m", "RR", "-m", "P(rel=2)@5", "-m", "Judged@5"], ["-n", "-q", "-m", "official"],
         ["--missing", "zero", "-m", "all_trec"], ["--missing", "error", "-m", "map"], ["-m", "official"],
         ["--format", "json", "-q", "-m", "map", "-m", "P.5"], ["--float32", "-q", "-m", "map", "-m", "ndcg"],
         ["-q", "-c", "-m", "gdeval.nDCG@10", "-m", "ERR@20", "-m", "gdeval.ERR@3", "-m", "ndcg_cut.10"],
         ["-q", "-c", "-m", "INST(max_rel=3)", "-m", "RBP(rel=1)", "-m", "SDCG(max_rel=3)@5", "-m", "P.5"],
         ["-q", "-J", "-m", "INSQ(max_rel=3)", "-m", "NERR8(max_rel=3)@3", "-m", "BPM(max_rel=3)@5"]]


@pytest.mark.parametrize("interleave", [False, True])
@pytest.mark.parametrize("flags", FLAGS)
def test_streamed_equals_in_memory_with_every_flag(tiny, tmp_path, flags, interleave):
    qrels, run = _grouped_case(len(flags), interleave)
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    whole, streamed, seen = both([*flags, str(tmp_path / "qrels"), str(tmp_path / "run")], tiny)
    assert streamed == whole
    assert len(seen) == 1 and seen[0][0] > 3                      # many parts
    assert (seen[0][1] is not None) == interleave                 # shards only for an interleaved run
    if "--missing" not in flags or "zero" in flags:
        assert whole[0] == 0 and whole[1]


@pytest.mark.parametrize("expansion", [1, 64])
@pytest.mark.parametrize("interleave", [False, True])
def test_a_gz_run_is_streamed_as_it_is_inflated(tiny, tmp_path, monkeypatch, interleave, expansion):
    """A .gz run is read block by block as it is inflated (a few bytes at a time here), grouped or through shards,
    whatever its size: the in-memory output; GZIP_SHARD_EXPANSION (its content counted as that many times its
    compressed size) only sets how many shards there are."""
    monkeypatch.setattr(thresholds, "GZIP_SHARD_EXPANSION", expansion)
    monkeypatch.setattr(thresholds, "INFLATE_PIECE_BYTES", 7)
    monkeypatch.setattr(thresholds, "SOURCE_END_BYTES", 2)
    qrels, run = _grouped_case(11, interleave)
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_bytes(gzip.compress(run.encode()))
    whole, streamed, seen = both(["-q", "-m", "all_trec", str(tmp_path / "qrels"), str(tmp_path / "run")], tiny)
    assert streamed == whole and whole[0] == 0 and "\tall\t" in whole[1]
    assert len(seen) == 1 and seen[0][0] > 3 and (seen[0][1] is not None) == interleave
    every_stream, before = tiny[0], len(tiny[0])
    assert treckit(["-q", "-m", "all_trec", str(tmp_path / "qrels"), str(tmp_path / "run")]) == whole    # default budget
    assert len(every_stream) == before + 1                       # streamed under the default budget too


def test_z_scores_and_a_tag_that_changes_on_the_last_line(tiny, tmp_path):
    qrels, run = _grouped_case(3, True)
    run = run + "00 Q0 zz 99 0.5 LAST\n"
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    (tmp_path / "z").write_text("".join(f"{q:02d} map 0.1 0.2\n" for q in range(25)))
    whole, streamed, _ = both(["-q", "-c", "-Z", str(tmp_path / "z"), "-m", "map", "-m", "runid",
                               str(tmp_path / "qrels"), str(tmp_path / "run")], tiny)
    assert streamed == whole and "runid                 \tall\tLAST\n" in whole[1]


def test_a_malformed_line_deep_in_a_streamed_file_names_its_line(tiny, tmp_path):
    lines = [f"{q} Q0 d{j} {j} {100 - j} t" for q in range(40) for j in range(1, 30)]
    lines.insert(700, "# a comment line counts as a line")
    f = lines[1000].split()
    lines[1000] = bad = " ".join(f[:4] + ["1.2.3"] + f[5:])      # the score is not a number
    (tmp_path / "run").write_text("\n".join(lines) + "\n")
    (tmp_path / "qrels").write_text("".join(f"{q} 0 d1 1\n" for q in range(40)))
    whole, streamed, seen = both([str(tmp_path / "qrels"), str(tmp_path / "run")], tiny)
    assert whole[0] == streamed[0] == 2
    assert f"{tmp_path / 'run'}:1001:" in streamed[2] and bad in streamed[2]
    assert streamed[2] == whole[2]


def test_not_utf8_deep_in_a_streamed_file_names_its_line(tiny, tmp_path):
    data = b"".join(f"{q} Q0 d{j} {j} {100 - j} t\n".encode() for q in range(30) for j in range(1, 20))
    cut = data.index(b"\n", 4000) + 1
    data = data[:cut] + b"7 Q0 d\xff 1 1 t\n" + data[cut:]
    (tmp_path / "run").write_bytes(data)
    (tmp_path / "qrels").write_text("0 0 d1 1\n")
    whole, streamed, _ = both([str(tmp_path / "qrels"), str(tmp_path / "run")], tiny)
    line = data[:cut].count(b"\n") + 1
    assert streamed[0] == 2 and f":{line}:" in streamed[2] and streamed[2] == whole[2]


def test_shards_are_removed_after_an_error_and_an_interrupt(tiny, tmp_path, monkeypatch):
    seen, tmp = tiny
    qrels, run = _grouped_case(1, True)
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run + "00 Q0 d1 1 notanumber t\n")
    code, _, err = treckit(["--memory-limit", "1K", str(tmp_path / "qrels"), str(tmp_path / "run")])
    assert code == 2 and "notanumber" in err and seen[-1][1] is not None and list(tmp.iterdir()) == []
    (tmp_path / "run").write_text(run)
    real = stream.StreamEvaluation._evaluate
    calls = []

    def interrupted(self, *a, **k):
        calls.append(os.listdir(self.shard_dir))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, *a, **k)
    monkeypatch.setattr(stream.StreamEvaluation, "_evaluate", interrupted)
    code, out, err = treckit(["--memory-limit", "1K", str(tmp_path / "qrels"), str(tmp_path / "run")])
    assert code == 130 and out == "" and calls[0]                  # shards were there when it was interrupted
    assert list(tmp.iterdir()) == []


def test_ctrl_c_exits_130_and_leaves_no_shards(tmp_path):
    """A real SIGINT to a real process in the middle of writing shards."""
    lines = []
    r = random.Random(2)
    for sweep in range(10):
        for q in range(3000):
            lines.append(f"{q} Q0 d{sweep}x{q} {sweep + 1} {10 - sweep}.{r.randint(0, 99)} t")
    (tmp_path / "run").write_text("\n".join(lines) + "\n")
    (tmp_path / "qrels").write_text("".join(f"{q} 0 d0x{q} 1\n" for q in range(3000)))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    code = ("import time, sys\n"
            "from treckit import thresholds\n"
            "from treckit.engines import stream\n"
            "thresholds.STREAM_BLOCK_MIN_BYTES = 64\n"
            "real = stream.StreamEvaluation._write_shards\n"
            "def slow(self, *a):\n"
            "    print('sharding', flush=True)\n"
            "    time.sleep(60)\n"
            "stream.StreamEvaluation._write_shards = slow\n"
            "from treckit.cli.main import run\n"
            "sys.argv = ['treckit', 'eval', '--memory-limit', '4K', sys.argv[1], sys.argv[2]]\n"
            "run()\n")
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT / "code")}
    p = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "qrels"), str(tmp_path / "run")], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_sigint)
    assert p.stdout.readline() == b"sharding\n"
    assert len(list(tmp.iterdir())) == 1                       # the shard folder exists now
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert list(tmp.iterdir()) == []


def test_plan_streams_only_large_plain_trec_runs(tmp_path, monkeypatch):
    from treckit.inputs.options import RunReading
    (tmp_path / "r").write_text("q Q0 d 1 1 t\n" * 100)
    (tmp_path / "j").write_text('{"qid": "q", "docs": ["d"], "scores": [1]}\n' * 100)
    size = os.path.getsize(tmp_path / "r")
    assert not stream.plan(tmp_path / "r", RunReading(), None).stream
    assert not stream.plan(tmp_path / "r", RunReading(), size * thresholds.IN_MEMORY_BYTES_PER_FILE_BYTE).stream
    assert stream.plan(tmp_path / "r", RunReading(), size).stream
    p = stream.plan(tmp_path / "j", RunReading(), 10)
    assert not p.stream and "only TREC 6-column runs" in p.why
    assert "--skip-malformed" in stream.plan(tmp_path / "r", RunReading(skip_malformed=True), 10).why
    assert "only TREC" in stream.plan(tmp_path / "r", RunReading(order="asc"), 10).why


@pytest.mark.parametrize("text,want", [("2G", 2 << 30), ("512M", 512 << 20), ("1.5GiB", 3 << 29), ("100000", 100000),
                                       ("0", None), ("none", None), ("64k", 64 << 10),
                                       ("0.0001K", 1), ("0.5", 1), ("0.0K", None)])     # below a byte: 1, not "no limit"
def test_memory_limit_sizes(text, want):
    assert stream.parse_memory_limit(text) == want


def test_a_bad_memory_limit_is_refused_before_reading():
    code, out, err = treckit(["--memory-limit", "lots", "/nonexistent/q", "/nonexistent/r"])
    assert code == 2 and "--memory-limit lots" in err and "nonexistent" not in err


def test_a_large_non_trec_run_is_read_whole_with_a_note(tiny, tmp_path):
    (tmp_path / "run.jsonl").write_text("".join(f'{{"qid": "{q}", "docs": ["d1", "d2"], "scores": [2, 1]}}\n'
                                                for q in range(50)))
    (tmp_path / "qrels").write_text("".join(f"{q} 0 d2 1\n" for q in range(50)))
    whole, streamed, seen = both(["-m", "map", str(tmp_path / "qrels"), str(tmp_path / "run.jsonl")], tiny)
    assert streamed[1] == whole[1] and "map                   \tall\t0.5000\n" == whole[1]
    assert "read whole into memory" in streamed[2] and not seen


@pytest.mark.parametrize("form", ["plain", "gzip", "held"])
def test_blocks_cut_at_line_ends_with_their_first_line_numbers(tmp_path, monkeypatch, form):
    """The one reader of blocks (inputs.sources.Source.blocks), which the streaming engine reads a run through: a
    plain file, a .gz inflated a few bytes at a time, and content held in memory give the same blocks of lines."""
    monkeypatch.setattr(thresholds, "GZIP_READ_BYTES", 5)
    monkeypatch.setattr(thresholds, "INFLATE_PIECE_BYTES", 3)
    monkeypatch.setattr(thresholds, "SOURCE_END_BYTES", 2)         # the .gz is not held: inflated as it is read
    data = b"a\nbb\n\nccc\n" * 50 + b"last-no-newline"
    (tmp_path / "f").write_bytes(gzip.compress(data) if form == "gzip" else data)
    src = Source(str(tmp_path / "f")) if form != "held" else Source.of_bytes(data, "f")
    assert src.gzip == (form == "gzip") and src.plain == (form == "plain")
    got = list(src.blocks(7))
    assert b"".join(b for b, _ in got) == data
    offset = 0
    assert len(got) > 20
    for block, first in got:
        assert block.endswith(b"\n") or (block is got[-1][0] and block.endswith(b"last-no-newline"))
        assert data.count(b"\n", 0, offset) + 1 == first
        offset += len(block)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 9), st.sampled_from([0.0, 1.0, 0.5, 2.25])),
                min_size=1, max_size=60, unique_by=lambda x: (x[0], x[1])),
       st.lists(st.tuples(st.integers(0, 7), st.integers(0, 9), st.integers(-1, 3)), min_size=1, max_size=40,
                unique_by=lambda x: (x[0], x[1])),
       st.booleans())
def test_hypothesis_streamed_equals_in_memory(tmp_path_factory, run, qrels, complete):
    d = tmp_path_factory.mktemp("h")
    (d / "run").write_text("".join(f"{q} Q0 d{doc} 1 {s} t\n" for q, doc, s in run))
    (d / "qrels").write_text("".join(f"{q} 0 d{doc} {g}\n" for q, doc, g in qrels))
    argv = ["-q", "-m", "all_trec"] + (["-c"] if complete else []) + [str(d / "qrels"), str(d / "run")]
    old = (thresholds.STREAM_BLOCK_MIN_BYTES, thresholds.SHARDS_MAX)
    thresholds.STREAM_BLOCK_MIN_BYTES, thresholds.SHARDS_MAX = 32, 3
    try:
        # a budget of 1 byte: every run is streamed, however few its lines
        assert stream.plan(d / "run", RunReading(), 1).stream
        assert treckit(["--memory-limit", "1", *argv]) == treckit(["--memory-limit", "0", *argv])
    finally:
        thresholds.STREAM_BLOCK_MIN_BYTES, thresholds.SHARDS_MAX = old


def test_compare_streams_a_large_run_with_the_same_report(tiny, tmp_path):
    seen, _ = tiny
    qrels, run = _grouped_case(7, False)
    _, other = _grouped_case(8, True)
    for name, text in (("qrels", qrels), ("a", run), ("b", other)):
        (tmp_path / name).write_text(text)
    outs = {}
    for limit in ("0", "1K"):
        out = tmp_path / f"c{limit}.csv"
        assert run_cli(["compare", "--memory-limit", limit, "--k", "3", "-m", "map", "-m", "P.5",
                        tmp_path / "qrels", tmp_path / "a", tmp_path / "b", "--csv", out])[0] == 0
        outs[limit] = out.read_text()
    hits = [row["hits"] for row in csv.DictReader(io.StringIO(outs["0"]))]
    assert outs["0"] == outs["1K"] and any(h != "[]" for h in hits)      # per-query values and the hits
    assert len(seen) == 2 and seen[0][1] is None and seen[1][1] is not None


def test_staged_script_and_python_api_stream_too(tiny, tmp_path):
    seen, _ = tiny
    qrels, run = _grouped_case(9, True)
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    import treckit
    from treckit.stages import cutoff_table
    a = cutoff_table(tmp_path / "qrels", tmp_path / "run", [1, 5], memory_limit=1024)
    b = cutoff_table(tmp_path / "qrels", tmp_path / "run", [1, 5], memory_limit=None)
    assert a == b and len(seen) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = treckit.evaluate(tmp_path / "qrels", tmp_path / "run", ["map", "P.5"], memory_limit="1K")
        y = treckit.evaluate(tmp_path / "qrels", tmp_path / "run", ["map", "P.5"], memory_limit=0)
    assert x.equals(y) and len(seen) == 2
    env = {**os.environ, "PYTHONPATH": str(ROOT / "code")}
    script = [sys.executable, str(ROOT / "code" / "evaluation" / "evaluate.py"), "--run", str(tmp_path / "run"),
              "--qrels", str(tmp_path / "qrels"), "--cutoffs", "1", "5"]
    streamed = subprocess.run(script + ["--memory-limit", "1"], capture_output=True, env=env)
    whole = subprocess.run(script + ["--memory-limit", "0"], capture_output=True, env=env)
    assert streamed.returncode == whole.returncode == 0 and streamed.stdout == whole.stdout and b"MAP" in whole.stdout


@pytest.mark.parametrize("compressed", [False, True])
def test_a_file_beyond_the_whole_read_limit_is_read_by_blocks_not_refused(tiny, tmp_path, monkeypatch, compressed):
    """The line reader takes a file (or a .gz, inflated as it is read) a block of lines at a time, never whole: the
    whole-read limit (stdin, pipes) does not refuse it, in memory or streamed."""
    qrels, run = _grouped_case(4, True)
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_bytes(gzip.compress(run.encode()) if compressed else run.encode())
    whole = treckit(["-m", "map", str(tmp_path / "qrels"), str(tmp_path / "run")])
    assert whole[0] == 0 and "map" in whole[1]
    monkeypatch.setattr(thresholds, "WHOLE_READ_LIMIT", 2000)              # the run is larger; the qrels fit
    monkeypatch.setattr(thresholds, "TEXT_BLOCK_BYTES", 500)
    assert len(run) > 2000 > os.path.getsize(tmp_path / "qrels")
    assert treckit(["--memory-limit", "0", "-m", "map", str(tmp_path / "qrels"), str(tmp_path / "run")]) == whole
    assert treckit(["--memory-limit", "1K", "-m", "map", str(tmp_path / "qrels"), str(tmp_path / "run")]) == whole


def test_sanity_warnings_name_the_same_queries_and_docs_when_sharded(tiny, tmp_path):
    """The qid-spelling warning lists run queries in file order, the no-judged-doc warning the first line of a
    judged query: the same across shards as in memory."""
    r = random.Random(5)
    lines = [f"0{q} Q0 d{j} {j} {10 - j} t" for q in range(1, 9) for j in range(1, 6)] + \
            [f"9 Q0 x{j} {j} {10 - j} t" for j in range(1, 6)]
    r.shuffle(lines)
    (tmp_path / "run").write_text("\n".join(lines) + "\n")
    (tmp_path / "qrels").write_text("".join(f"{q} 0 d1 1\n" for q in range(1, 10)))
    whole, streamed, seen = both(["-m", "map", str(tmp_path / "qrels"), str(tmp_path / "run")], tiny)
    assert "spelled differently" in whole[2] and "retrieves none of the judged documents" in whole[2]
    assert streamed == whole and seen[0][1] is not None


def test_no_room_for_shards_is_a_clear_error(tiny, tmp_path, monkeypatch):
    qrels, run = _grouped_case(6, True)
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    (tmp_path / "afile").write_text("")
    for tmp in ("afile", "missing"):               # the temporary folder cannot be made there
        monkeypatch.setenv("TMPDIR", str(tmp_path / tmp))
        code, out, err = treckit(["--memory-limit", "1K", str(tmp_path / "qrels"), str(tmp_path / "run")])
        assert code == 2 and out == "" and "internal" not in err
        assert err.startswith(f"treckit: error: {tmp_path / tmp}: cannot write the temporary shards of a run whose "
                              "queries are interleaved: ")
        assert "fix: set TMPDIR to a writable folder with free space" in err


@pytest.mark.parametrize("chunk", [1, 2, 1 << 40])
def test_trec_eval_text_is_the_same_in_pieces(tmp_path, monkeypatch, chunk):
    qrels, run = _grouped_case(11, False)
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    argv = ["-q", "-c", "-m", "all_trec", str(tmp_path / "qrels"), str(tmp_path / "run")]
    base = treckit(argv)
    from treckit.output import records, trec_eval
    pieces = []
    real = trec_eval.trec_eval_chunks

    def spy(*a, **k):
        for p in real(*a, **k):
            pieces.append(p)
            yield p
    monkeypatch.setattr(records, "trec_eval_chunks", spy)           # where the writer takes it from
    monkeypatch.setattr(thresholds, "OUTPUT_CHUNK_QUERIES", chunk)
    assert treckit(argv) == base and base[1].count("\tall\t") > 10
    nq = len({ln.split("\t")[1] for ln in base[1].splitlines()} - {"all"})
    assert nq > 10 and len(pieces) == -(-nq // chunk)            # the summary ends the last piece


def test_a_run_opening_with_a_long_comment_header_is_read_whole_and_streamed(tiny, tmp_path, trec_eval, shared):
    """More comment lines than format detection's first read and than a stream block (both once refused the file:
    'first line is longer than 64 MiB' / 'no run lines found'); trec_eval skips no line here, so the comments go
    to a copy it reads without them."""
    data = shared / "trec_eval"
    body = (data / "results.test").read_text()
    run = tmp_path / "run"
    run.write_text("".join(f"# header line {i} of a run written by some tool\n" for i in range(3000)) + body)
    (tmp_path / "plain").write_text(body)
    qrels = str(data / "qrels.test")
    expected = subprocess.run([str(trec_eval), "-q", "-c", qrels, str(tmp_path / "plain")], capture_output=True,
                              text=True, check=True).stdout
    whole, streamed, seen = both(["-q", "-c", qrels, str(run)], tiny)
    assert whole == (0, expected, "") and streamed == whole
    assert seen and seen[0][0] == 3                               # streamed, one part per query


def test_the_python_api_checks_memory_limit_whatever_the_run(tmp_path):
    """A bad memory_limit is refused as `treckit eval --memory-limit` refuses it, also where it would not be used
    (a run given as a data frame, which is in memory already), never silently ignored."""
    import pandas as pd

    import treckit
    from treckit.console.errors import InputError
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    frame = pd.DataFrame({"qid": ["q1", "q1"], "docid": ["d1", "d2"], "score": [2.0, 1.0]})
    assert treckit.evaluate(qrels, frame, ["P.1"], memory_limit="1K")["P_1"].tolist() == [1.0, 1.0]      # q1, all
    for bad in ("10x", "", -5):
        with pytest.raises(InputError, match="not a size"):
            treckit.evaluate(qrels, frame, ["P.1"], memory_limit=bad)


@pytest.mark.skipif(sys.platform == "win32", reason="needs setrlimit")
def test_shards_stay_within_the_open_file_limit(tmp_path):
    """An interleaved run under a tiny budget wants thousands of shards, each a file open for writing: with
    `ulimit -n 64` they are capped below the limit (fewer, larger shards), the same output, not "too many
    open files"."""
    rng = random.Random(5)
    lines = [f"q{q} Q0 d{d} 1 {rng.random():.3f} t\n" for d in range(6) for q in range(400)]   # interleaved
    (tmp_path / "run").write_text("".join(lines))
    (tmp_path / "qrels").write_text("".join(f"q{q} 0 d{q % 6} 1\n" for q in range(400)))
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)); "
            "from treckit.cli.main import main; sys.exit(main(sys.argv[1:]))")
    argv = ["-q", "-m", "map", str(tmp_path / "qrels"), str(tmp_path / "run")]
    limited = subprocess.run([sys.executable, "-c", code, "eval", "--memory-limit", "100", *argv], capture_output=True,
                             text=True)
    whole = subprocess.run([sys.executable, "-c", code, "eval", "--memory-limit", "0", *argv], capture_output=True,
                           text=True)
    assert limited.returncode == 0, limited.stderr
    assert limited.stdout == whole.stdout and len(whole.stdout.splitlines()) == 401
    assert stream.files_we_may_open() >= 2
