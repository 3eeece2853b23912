"""Budgets and compression (../../../shared/HOSTILE.md: "Compression", "Budgets"; issue 30 items 2 and 3).

* A ``.gz`` is inflated as it is read, a bounded piece at a time, never whole, and detection reads only its head:
  a bomb of newlines, a bomb of one endless line and a truncated ``.gz``, given to every command that reads a run,
  qrels, a corpus or queries, end in exit 2 naming the file (and the line), with the command's peak memory near its
  peak on a two-line input.
* Every command that reads a run or qrels takes ``--memory-limit``; under a small budget, with the sizes the budget
  derives from lowered (:data:`SIZES`), its peak resident memory stays within the budget plus its own peak on a
  two-line input: it evaluates block by block (eval, compare and its tie-aware ranges, detect --ties, gdeval,
  ndeval, testset eval, the staged evaluate.py) or refuses, naming the budget, what it would have to hold whole.

Peaks are measured in the child itself (``VmHWM``: a child started from the test process would otherwise report the
parent's high-water mark), against the same command on a two-line input with the same settings, so that the
interpreter's and the libraries' own memory cancels out.  The large inputs are a few MB: reading one whole (what
the commands did before) costs several times the budget, so every check can fail.
"""
from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import ROOT, patience, run_cli, staged
from treckit import thresholds

MIB = 1 << 20
BUDGET = 4 * MIB
# The sizes the budget derives from, lowered so that inputs of a few MB are read as huge ones are (and the two-line
# inputs take the same paths): the smallest budget, the block sizes, and the fast readers' thresholds at 0.
SIZES = {"MEMORY_LIMIT_MIN": 1 * MIB, "STREAM_BLOCK_MIN_BYTES": 4096, "TREC_RUN_FAST_MIN_BYTES": 0,
         "TREC_QRELS_FAST_MIN_BYTES": 0, "JSONL_FAST_MIN_BYTES": 0, "TEXT_BLOCK_BYTES": 1 << 16,
         "INFLATE_PIECE_BYTES": 1 << 16, "GZIP_READ_BYTES": 1 << 16, "MAX_LINE_BYTES": 1 * MIB}
# What a peak may pass the budget plus the two-line peak by: the allocators' and threads' own noise (measured: up to
# 4 MiB on this project's machine); reading a large input whole costs 25-150 MiB more.
TOLERANCE = 6 * MIB

_SESSION = r"""
import contextlib, io, json, os, sys
from treckit import thresholds
for name, value in json.loads(os.environ["TRECKIT_TEST_SIZES"]).items():
    assert hasattr(thresholds, name), name
    setattr(thresholds, name, value)
from treckit.cli.main import main
from treckit.console.process import give_back_freed_memory


def staged(script, argv):
    import importlib.util
    spec = importlib.util.spec_from_file_location("staged_" + script[:-3], os.path.join(os.environ["SCRIPTS"], script))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main(argv)


def peak():
    with open("/proc/self/status") as status:
        return int(next(line for line in status if line.startswith("VmHWM:")).split()[1]) * 1024


results = []
for argv in json.load(open(sys.argv[1])):
    give_back_freed_memory()                   # what the last command freed is not this one's
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")                        # the high-water mark starts again from the resident size
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = staged(argv[0], argv[1:]) if argv[0].endswith(".py") else main(argv)
    out.flush()
    results.append({"code": code, "out": out.buffer.getvalue().decode("utf-8", "replace"), "err": err.getvalue(),
                    "peak": peak()})
    with open(sys.argv[2], "w") as f:
        json.dump(results, f)
"""


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    peak: int           # bytes

    def __str__(self) -> str:
        return f"exit {self.code}, peak {self.peak / MIB:.1f} MiB; stderr: {self.err[-600:]}"


def _peak_can_be_set_back() -> bool:
    """Whether writing 5 to /proc/self/clear_refs works here (Linux 4.0 and later; some sandboxes refuse it)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def measured(jobs: list[list], cwd: Path, sizes: dict | None = None, env: dict | None = None) -> list[Outcome]:
    """Each command of ``jobs`` (``treckit ARGV``, or a staged script: ``argv[0]`` ends in ``.py``) run in turn in one
    child process with the thresholds ``sizes`` (default :data:`SIZES`): its exit code, output and peak resident
    memory (its own high-water mark, set back to the resident size before each command: the modules loaded and
    the memory kept by earlier commands count alike in every peak, as in a two-line run's).  ``env``: more
    environment variables."""
    if not _peak_can_be_set_back():
        pytest.skip("this kernel does not let a process set back its memory high-water mark (/proc/self/clear_refs)")
    tag = f"{os.getpid()}-{random.random()}"
    jobs_file, results_file = cwd / f".jobs-{tag}", cwd / f".results-{tag}"
    jobs_file.write_text(json.dumps([list(map(str, argv)) for argv in jobs]))
    env = {**os.environ, "TRECKIT_TEST_SIZES": json.dumps(SIZES if sizes is None else sizes),
           "PYTHONPATH": str(ROOT / "code"), "SCRIPTS": str(ROOT / "code" / "evaluation"), **(env or {})}
    p = subprocess.run([sys.executable, "-c", _SESSION, jobs_file, results_file], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=patience(60 + 30 * len(jobs)))
    assert p.returncode == 0, p.stderr[-3000:]
    results = [Outcome(**r) for r in json.loads(results_file.read_text())]
    jobs_file.unlink()
    results_file.unlink()
    return results


# ------------------------------------------------------------------ inputs
def run_lines(queries: int, docs: int, seed: int, tag: str = "sys") -> list[str]:
    """A TREC run, each query's docs best first (scores of four decimals: few ties)."""
    r = random.Random(seed)
    out = []
    for q in range(1, queries + 1):
        scores = sorted((round(r.random() * 10, 4) for _ in range(docs)), reverse=True)
        ids = r.sample(range(50_000), docs)
        out += [f"{q} Q0 doc{q}-{d:05d} {i + 1} {s} {tag}\n" for i, (d, s) in enumerate(zip(ids, scores))]
    return out


def write_inputs(d: Path, size: str, queries: int, docs: int, every: int) -> None:
    """Every input the commands read, of ``queries`` x ``docs`` run lines (a judgment for one line in ``every``)."""
    lines, other = run_lines(queries, docs, 1), run_lines(queries, docs, 2, "other")
    (d / f"run.{size}").write_text("".join(lines))
    (d / f"other.{size}").write_text("".join(other))
    (d / f"run.{size}.gz").write_bytes(gzip.compress("".join(lines).encode(), 6))
    (d / f"run.{size}.tsv").write_text("".join("\t".join(ln.split()[i] for i in (0, 2, 4)) + "\n" for ln in lines))
    by_query: dict[str, list[list[str]]] = {}
    for ln in lines:
        by_query.setdefault(ln.split()[0], []).append(ln.split())
    (d / f"run.{size}.jsonl").write_text("".join(
        json.dumps({"qid": q, "docs": [f[2] for f in fs], "scores": [float(f[4]) for f in fs]}) + "\n"
        for q, fs in by_query.items()))
    judged = [ln.split() for ln in lines[::every]]
    (d / f"qrels.{size}").write_text("".join(f"{f[0]} 0 {f[2]} {i % 5}\n" for i, f in enumerate(judged)))
    (d / f"subtopics.{size}").write_text("".join(f"{f[0]} {i % 3 + 1} {f[2]} {i % 2}\n" for i, f in enumerate(judged)))
    (d / f"queries.{size}.tsv").write_text("".join(f"{q}\tquery {q} text\n" for q in by_query))
    (d / f"testset.{size}.yaml").write_text(json.dumps({"name": "budget", "version": "1", "queries": [
        {"query_id": q, "query_text": f"query {q}", "query_type": "t",
         "relevant_docs": [{"doc_id": f[2], "grade": 1} for f in judged if f[0] == q][:5] or
         [{"doc_id": "none", "grade": 1}]} for q in by_query]}))
    (d / f"system.{size}.yaml").write_text(json.dumps({"components": {"a": {"run": f"run.{size}"},
                                                                        "b": {"run": f"other.{size}"}},
                                                       "fusion_method": "rrf", "rrf_k": 60}))
    r = random.Random(3)
    words = [f"w{i}" for i in range(3000)]
    (d / f"corpus.{size}.jsonl").write_text("".join(
        json.dumps({"_id": f"d{i}", "text": " ".join(r.choices(words, k=40))}) + "\n"
        for i in range(2 if size == "small" else 20_000)))


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """A two-line version (two queries, one doc each: compare's tests then run, as on any real input) and a large
    version (300 queries x 1000 docs, 10 MB) of every input the commands read."""
    d = tmp_path_factory.mktemp("budgets")
    write_inputs(d, "small", 2, 1, 1)
    write_inputs(d, "large", 300, 1000, 200)
    return d


# ------------------------------------------------------------------ every command under a small budget
# every command (and staged script) that reads a run or qrels, with its arguments ({size}: small or large); whether
# it evaluates the large input within the budget (True), or may refuse it, naming the budget (False)
COMMANDS = {
    "eval": (["eval", "-m", "map", "-m", "ndcg_cut.10", "qrels.{size}", "run.{size}"], True),
    "eval .gz": (["eval", "-m", "map", "qrels.{size}", "run.{size}.gz"], True),
    "eval --tie-aware": (["eval", "--tie-aware", "range", "-m", "map", "qrels.{size}", "run.{size}"], True),
    "compare": (["compare", "-m", "map", "qrels.{size}", "run.{size}", "other.{size}"], True),
    "compare --tie-aware": (["compare", "--tie-aware", "range", "-m", "map", "qrels.{size}", "run.{size}",
                             "other.{size}"], True),
    "detect": (["detect", "run.{size}.gz"], True),
    "detect --ties": (["detect", "--ties", "run.{size}"], True),
    "gdeval": (["gdeval", "qrels.{size}", "run.{size}", "20"], True),
    "ndeval": (["ndeval", "subtopics.{size}", "run.{size}"], True),
    "testset eval": (["testset", "eval", "testset.{size}.yaml", "--run", "run.{size}", "--no-cache"], True),
    "evaluate.py": (["evaluate.py", "--run", "run.{size}", "--qrels", "qrels.{size}"], True),
    "qrels": (["qrels", "qrels.{size}", "-o", "-"], False),
    "preprocess_qrels.py": (["preprocess_qrels.py", "--input", "qrels.{size}", "--output", "out.{size}"], False),
    "run": (["run", "run.{size}", "-o", "-"], False),
    "run .jsonl": (["run", "run.{size}.jsonl", "-o", "-"], False),
    "preprocess_run.py": (["preprocess_run.py", "--input", "run.{size}", "--output", "out.{size}"], False),
    "fuse": (["fuse", "run.{size}", "other.{size}", "-o", "-"], False),
    "rq": (["rq", "--test-set", "testset.{size}.yaml", "--run", "run.{size}", "--report-only"], False),
    "system eval": (["system", "eval", "system.{size}.yaml", "--test-set", "testset.{size}.yaml", "--no-cache"], False),
    "retrieve": (["retrieve", "--corpus", "corpus.{size}.jsonl", "--queries", "queries.{size}.tsv", "-o", "-"], False),
}


def with_budget(name: str, size: str, budget: int = BUDGET) -> list[str]:
    """The command ``name``'s arguments for the ``size`` inputs, with ``--memory-limit`` after its name."""
    argv = [a.format(size=size) for a in COMMANDS[name][0]]
    at = 2 if argv[0] in ("testset", "system") else 1
    return argv[:at] + ["--memory-limit", str(budget)] + argv[at:]


def paired(pairs: list[tuple[list, list]], cwd: Path, env: dict | None = None) -> list[tuple[Outcome, Outcome]]:
    """(peak on the two-line input, peak on the large one) of each (small argv, large argv), all in one session
    (:func:`measured`), after a warm-up run of every small one: what a first run loads counts in neither."""
    got = measured([small for small, _ in pairs] + [argv for pair in pairs for argv in pair], cwd, env=env)[len(pairs):]
    return [(got[2 * i], got[2 * i + 1]) for i in range(len(pairs))]


@pytest.fixture(scope="module")
def peaks(files) -> dict[str, tuple[Outcome, Outcome]]:
    """Each command's (peak on the two-line inputs, peak on the large ones) under the budget."""
    return dict(zip(COMMANDS, paired([(with_budget(n, "small"), with_budget(n, "large")) for n in COMMANDS], files)))


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_keeps_its_peak_within_the_budget(peaks, name):
    base, got = peaks[name]
    assert base.code == 0, (name, str(base))
    assert got.code == 0 if COMMANDS[name][1] else got.code in (0, 2), (name, str(got))
    if got.code == 2:                    # refused, naming the budget (in force: the smallest, lowered here)
        assert "(--memory-limit)" in got.err and f"{BUDGET:,} bytes" in got.err, (name, str(got))
    assert got.peak <= base.peak + BUDGET + TOLERANCE, (name, str(base), str(got))


def test_without_a_budget_the_commands_that_stream_hold_the_input_whole(files, peaks):
    """What makes the budget test able to fail: given no budget, the same commands hold the large input whole, at
    several times the budget; under it, the same output."""
    names = [n for n, (_, evaluates) in COMMANDS.items() if evaluates and n not in ("detect", "gdeval", "ndeval")]
    # Arrow on the C library's allocator, as under a budget: mimalloc would keep what one command freed for the next
    whole = paired([(with_budget(n, "small", 0), with_budget(n, "large", 0)) for n in names], files,
                   env={"ARROW_DEFAULT_MEMORY_POOL": "system"})
    for name, (base, got) in zip(names, whole):
        assert got.code == 0 and got.out == peaks[name][1].out, (name, str(got))
        assert got.peak > base.peak + BUDGET + TOLERANCE, (name, str(base), str(got))


# ------------------------------------------------------------------ .gz bombs, endless lines, truncated .gz
def bomb(data: bytes, times: int) -> bytes:
    """gzip of ``data`` repeated ``times`` times, compressed a repeat at a time (never held whole here)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join([z.compress(data) for _ in range(times)] + [z.flush()])


@pytest.fixture(scope="module")
def bombs(tmp_path_factory) -> Path:
    """``newlines.gz``: 64 MiB of newlines (64 KB); ``endless.gz``: one line of 64 MiB (64 KB); ``cut.gz``: a valid
    run whose .gz lost its last quarter; ``tail-cut.gz``: a run's first lines, then 8 MiB of newlines, the .gz cut in
    the newlines (its head reads, its end does not)."""
    d = tmp_path_factory.mktemp("bombs")
    (d / "newlines.gz").write_bytes(bomb(b"\n" * MIB, 64))
    (d / "endless.gz").write_bytes(bomb(b"x" * MIB, 64))
    whole = gzip.compress("".join(run_lines(20, 50, 4)).encode())
    (d / "cut.gz").write_bytes(whole[: len(whole) * 3 // 4])
    head = bomb("".join(run_lines(3, 20, 5)).encode() + b"\n" * MIB, 8)
    (d / "tail-cut.gz").write_bytes(head[: len(head) - 64])
    write_inputs(d, "small", 2, 1, 1)
    return d


# each command's argv with B for the bad file, in each role it reads a file in
READERS = {
    "detect": ["detect", "B"],
    "detect qrels": ["detect", "--role", "qrels", "B"],
    "eval run": ["eval", "qrels.small", "B"],
    "eval run --run-format trec": ["eval", "--run-format", "trec", "qrels.small", "B"],
    "eval run --memory-limit": ["eval", "--memory-limit", str(BUDGET), "--run-format", "trec", "qrels.small", "B"],
    "eval qrels": ["eval", "B", "run.small"],
    "compare": ["compare", "qrels.small", "run.small", "B"],
    "qrels": ["qrels", "B", "-o", "-"],
    "run": ["run", "B", "-o", "-"],
    "run --run-format jsonl": ["run", "--run-format", "jsonl", "B", "-o", "-"],
    "run --run-format tsv": ["run", "--run-format", "tsv", "B", "-o", "-"],
    "fuse": ["fuse", "run.small", "B", "-o", "-"],
    "gdeval run": ["gdeval", "qrels.small", "B", "5"],
    "gdeval qrels": ["gdeval", "B", "run.small", "5"],
    "ndeval run": ["ndeval", "subtopics.small", "B"],
    "ndeval qrels": ["ndeval", "B", "run.small"],
    "rq": ["rq", "--test-set", "testset.small.yaml", "--run", "B"],
    "testset eval": ["testset", "eval", "testset.small.yaml", "--run", "B", "--no-cache"],
    "testset import": ["testset", "import", "--qrels", "B", "--queries", "queries.small.tsv", "--name", "n", "-o", "o"],
    "qrels-verify": ["qrels-verify", "B", "--topics", "queries.small.tsv"],
    "retrieve corpus": ["retrieve", "--corpus", "B", "--queries", "queries.small.tsv", "-o", "-"],
    "retrieve queries": ["retrieve", "--corpus", "corpus.small.jsonl", "--queries", "B", "-o", "-"],
    "evaluate.py": ["evaluate.py", "--run", "B", "--qrels", "qrels.small"],
    "preprocess_run.py": ["preprocess_run.py", "--input", "B", "--output", "o"],
    "preprocess_qrels.py": ["preprocess_qrels.py", "--input", "B", "--output", "o"],
}


def small_input(name: str) -> str:
    """The two-line input in the role the :data:`READERS` command ``name`` reads its bad file in."""
    roles = {"ndeval qrels": "subtopics.small", "retrieve corpus": "corpus.small.jsonl",
             "retrieve queries": "queries.small.tsv", "run --run-format jsonl": "run.small.jsonl",
             "run --run-format tsv": "run.small.tsv"}
    qrels = "qrels" in name or name in ("testset import", "qrels-verify")
    return roles.get(name, "qrels.small" if qrels else "run.small")


def in_process(argv: list[str], bad: Path, capsys, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.chdir(bad.parent)
    argv = [str(bad) if a == "B" else a for a in argv]
    return staged(*argv, capsys=capsys) if argv[0].endswith(".py") else run_cli(argv, capsys)


@pytest.mark.parametrize("name", list(READERS))
def test_a_bomb_of_newlines_is_passed_over_as_it_is_inflated(bombs, capsys, monkeypatch, name):
    """64 MiB of newlines hold nothing to read: every reader says so (exit 2, naming the file), having held no more
    than a piece of them at a time (the peaks: test_a_bomb_costs_what_a_small_file_costs)."""
    code, _, err = in_process(READERS[name], bombs / "newlines.gz", capsys, monkeypatch)
    if name == "retrieve queries":            # no queries: an empty run, as for an empty queries file
        assert code == 0 and "internal error" not in err, err
        return
    assert code == 2 and "newlines.gz" in err and "internal error" not in err, err


@pytest.mark.parametrize("name", list(READERS))
def test_an_endless_line_in_a_gz_is_refused_with_the_file_and_the_line(bombs, capsys, monkeypatch, name):
    monkeypatch.setattr(thresholds, "MAX_LINE_BYTES", MIB)
    code, _, err = in_process(READERS[name], bombs / "endless.gz", capsys, monkeypatch)
    assert code == 2 and "endless.gz:1: line longer than 1,048,576 bytes" in err, err


@pytest.mark.parametrize("name", [n for n in READERS if not n.startswith("detect")])
def test_a_truncated_gz_is_refused_naming_the_file(bombs, capsys, monkeypatch, name):
    code, _, err = in_process(READERS[name], bombs / "cut.gz", capsys, monkeypatch)
    assert code == 2 and "cut.gz: the gzip data is cut short (truncated)" in err, err


def test_detection_reads_only_the_head_of_a_gz(bombs, capsys, monkeypatch):
    """A .gz whose first lines are a run and whose end is cut off: detection, reading the head only, says what it
    is; reading the whole run meets the cut."""
    code, out, err = in_process(["detect", "B"], bombs / "tail-cut.gz", capsys, monkeypatch)
    assert code == 0 and out.startswith("trec\t"), err
    code, _, err = in_process(["run", "B", "-o", "-"], bombs / "tail-cut.gz", capsys, monkeypatch)
    assert code == 2 and "cut short (truncated)" in err, err


@pytest.mark.parametrize("most", [MIB, MIB + 5])
def test_detection_counts_every_blank_line_it_passed_over(bombs, capsys, monkeypatch, most):
    """A bomb of newlines past what detection reads: the message counts every line and byte read before the cut
    (all blank), on a block boundary (1 MiB) or inside a block, never "the first line is longer"."""
    monkeypatch.setattr(thresholds, "DETECT_MAX_BYTES", most)
    monkeypatch.setattr(thresholds, "DETECT_READ_BYTES", 4096)         # many blocks before the cut
    monkeypatch.setattr(thresholds, "INFLATE_PIECE_BYTES", 4096)
    code, _, err = in_process(["detect", "B"], bombs / "newlines.gz", capsys, monkeypatch)
    assert code == 2 and f"newlines.gz: its first {most:,} lines ({most:,} bytes) are blank or comments, and " \
                         f"detection reads at most {most:,} bytes" in err and "longer than" not in err, err


# the commands whose peak on a bomb is measured (in one session): the readers of every kind
MEASURED = ["detect", "eval run --memory-limit", "qrels", "gdeval run", "ndeval run", "retrieve corpus",
            "run --run-format jsonl"]


@pytest.fixture(scope="module")
def bomb_peaks(bombs) -> dict[tuple[str, str], tuple[Outcome, Outcome]]:
    keys = [(name, kind) for name in MEASURED for kind in ("newlines.gz", "endless.gz")]
    return dict(zip(keys, paired([([small_input(name) if a == "B" else a for a in READERS[name]],
                                   [kind if a == "B" else a for a in READERS[name]]) for name, kind in keys], bombs)))


@pytest.mark.parametrize("kind", ["newlines.gz", "endless.gz"])
@pytest.mark.parametrize("name", MEASURED)
def test_a_bomb_costs_what_a_small_file_costs(bomb_peaks, name, kind):
    """A bomb inflating to 64 MiB costs no more than a few pieces of it (a piece: 256 KiB here) over the same
    command on a two-line file; the old readers held it whole (and its lines as strings: gigabytes)."""
    base, got = bomb_peaks[(name, kind)]
    assert got.code == 2 and kind in got.err, str(got)
    assert got.peak <= base.peak + TOLERANCE, (str(base), str(got))
# ------------------------------------------------------------------ what the budget bounds, at its boundaries
@pytest.mark.parametrize("factor,reader", [
    ("IN_MEMORY_BYTES_PER_FILE_BYTE", ["run", "run.small.jsonl", "-o", "-"]),     # Arrow's JSON reader
    ("LINE_READER_BYTES_PER_BYTE", ["run", "run.small.tsv", "-o", "-"]),          # the TSV line reader
    ("INDEX_BYTES_PER_BYTE", ["retrieve", "--corpus", "corpus.small.jsonl", "--queries", "queries.small.tsv",
                              "-o", "-"]),
])
def test_an_input_is_refused_exactly_when_its_estimate_passes_the_budget(bombs, capsys, monkeypatch, factor, reader):
    """The estimate is the content's bytes times the reader's factor; one byte of budget less than it refuses, the
    estimate itself is within the budget (MEMORY_LIMIT_MIN lowered to 1 byte: the budget is the one given)."""
    monkeypatch.chdir(bombs)
    monkeypatch.setattr(thresholds, "MEMORY_LIMIT_MIN", 1)
    monkeypatch.setattr(thresholds, "JSONL_FAST_MIN_BYTES", 0)
    monkeypatch.setattr(thresholds, factor, 1000)
    size = (bombs / reader[1 if reader[0] == "run" else 2]).stat().st_size
    assert run_cli([reader[0], "--memory-limit", size * 1000, *reader[1:]], capsys)[0] == 0
    code, _, err = run_cli([reader[0], "--memory-limit", size * 1000 - 1, *reader[1:]], capsys)
    assert code == 2 and f"its {size:,} bytes of content would take about {size * 1000:,} bytes" in err, err


def test_the_smallest_budget_bounds_what_a_smaller_one_would(bombs, capsys, monkeypatch):
    """A budget below MEMORY_LIMIT_MIN is taken as that minimum for what it bounds (still cutting a streamed run
    into its small blocks): the same input is read under 1 byte as under the minimum, and refused under both when
    the minimum is lowered below its estimate."""
    monkeypatch.chdir(bombs)
    size = (bombs / "run.small.tsv").stat().st_size
    monkeypatch.setattr(thresholds, "LINE_READER_BYTES_PER_BYTE", 1000)
    argv = ["run", "run.small.tsv", "-o", "-"]
    monkeypatch.setattr(thresholds, "MEMORY_LIMIT_MIN", size * 1000)
    assert run_cli(["run", "--memory-limit", "1", *argv[1:]], capsys)[0] == 0
    monkeypatch.setattr(thresholds, "MEMORY_LIMIT_MIN", size * 1000 - 1)
    code, _, err = run_cli(["run", "--memory-limit", "1", *argv[1:]], capsys)
    assert code == 2 and f"the budget of {size * 1000 - 1:,} bytes (--memory-limit)" in err, err


@pytest.mark.parametrize("share,bound", [(64, MIB // 64), (16, MIB // 16)])
def test_within_a_budget_no_line_passes_its_share(bombs, capsys, monkeypatch, share, bound):
    """HELD_LINE_SHARE: under a 1 MiB budget a line of a 64th of it is read, one byte more is refused."""
    monkeypatch.chdir(bombs)
    monkeypatch.setattr(thresholds, "MEMORY_LIMIT_MIN", 1)
    monkeypatch.setattr(thresholds, "HELD_LINE_SHARE", share)
    monkeypatch.setattr(thresholds, "LINE_READER_BYTES_PER_BYTE", 1)          # the line bound alone decides here
    (bombs / "long.run").write_text(f"1 Q0 {'d' * (bound - 13)} 1 1.0 t\n")
    assert len((bombs / "long.run").read_bytes()) - 1 == bound
    assert run_cli(["eval", "--memory-limit", MIB, "qrels.small", "long.run"], capsys)[0] == 0
    (bombs / "long.run").write_text(f"1 Q0 {'d' * (bound - 12)} 1 1.0 t\n")
    code, _, err = run_cli(["eval", "--memory-limit", MIB, "qrels.small", "long.run"], capsys)
    assert code == 2 and f"line longer than {bound:,} bytes, the longest line treckit reads within this " \
                         "--memory-limit" in err, err


@pytest.mark.parametrize("share", [1, 16])
def test_within_a_budget_the_pieces_are_its_share(monkeypatch, share):
    """HELD_PIECE_SHARE: the blocks a reader takes are at most a share of the budget, whatever is asked."""
    from treckit.inputs import held
    from treckit.inputs.sources import Source
    monkeypatch.setattr(thresholds, "MEMORY_LIMIT_MIN", 1)
    monkeypatch.setattr(thresholds, "HELD_PIECE_SHARE", share)
    data = b"".join(b"%d Q0 d 1 1.0 t\n" % i for i in range(2000))
    with held.holding(4096):
        sizes = [len(b) for b, _ in Source.of_bytes(data, "r").blocks(1 << 20)]
    assert b"".join(b for b, _ in Source.of_bytes(data, "r").blocks(1 << 20)) == data
    assert max(sizes) <= 4096 // share + 20 and (share == 1 or len(sizes) > 10)


# ------------------------------------------------------------------ gdeval and ndeval read a part of whole topics at a time
def _reference_run(r: random.Random) -> str:
    """A run for gdeval and ndeval: topic groups (often with a task prefix, 01 beside 1), now and then apart, tied or
    repeated scores and ranks, and now and then a bad line."""
    lines = []
    for _ in range(r.randint(1, 12)):
        topic = r.choice(["1", "01", "2", "wt09-3", "4", "12"])
        for i in range(r.randint(1, 8)):
            lines.append(f"{topic} Q0 d{r.randint(1, 12)} {r.randint(1, 9)} {r.choice(['1', '2.5', '0.5', '-1'])} "
                         f"{r.choice(['run', 'run', 'other'])}")
    if r.random() < 0.2:
        lines.insert(r.randrange(len(lines) + 1), r.choice(["", "x Q0 d 1 1 run", "1 Q0 d1 1 nan run"]))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(40))
def test_gdeval_and_ndeval_by_topics_print_what_the_whole_reading_prints(tmp_path, monkeypatch, seed):
    """The run read a part of whole topics at a time (blocks of a few bytes here: a topic's lines carried on) gives
    the bytes, or the error, of the run read whole, grouped, apart (then read whole) or malformed alike."""
    from treckit.console.errors import InputError
    from treckit.inputs.formats import gdeval as gdeval_in, ndeval as ndeval_in
    from treckit.measures import gdeval as gdeval_measures
    from treckit.output import gdeval as gdeval_out, ndeval as ndeval_out
    r = random.Random(seed)
    run, qrels, subtopics = tmp_path / "run", tmp_path / "qrels", tmp_path / "subtopics"
    run.write_text(_reference_run(r))
    qrels.write_text("".join(f"{t} 0 d{d} {r.randint(0, 4)}\n" for t in ("1", "2", "3", "12") for d in range(1, 9)))
    subtopics.write_text("".join(f"{t} {s} d{d} {r.randint(0, 1)}\n" for t in (1, 2, 3, 12) for s in (1, 2)
                                 for d in range(1, 7)))

    def outcome(call):
        try:
            return call()
        except InputError as exc:
            return ("error", exc.path, exc.line is not None)

    q = gdeval_in.read_qrels(str(qrels), warn=None)
    whole_gdeval = outcome(lambda: gdeval_out.csv_bytes(gdeval_measures.evaluate(
        q, gdeval_in.read_run(str(run), q, warn=None), 5), "5"))
    nq = ndeval_in.read_qrels(str(subtopics))
    whole_ndeval = outcome(lambda: ndeval_out.table_bytes(nq, ndeval_in.read_run(str(run))))
    monkeypatch.setattr(thresholds, "TEXT_BLOCK_BYTES", r.choice([1, 7, 40]))
    assert outcome(lambda: gdeval_out.gdeval_csv(str(qrels), str(run), "5", warn=None)) == whole_gdeval
    assert outcome(lambda: ndeval_out.ndeval_table(str(subtopics), str(run))) == whole_ndeval


def test_a_systems_run_components_share_the_budget_as_the_rankings_they_become(files, capsys, monkeypatch):
    """system eval holds each run component as Python rankings beside every stage's (about 24 bytes per byte of the
    file, 8x what the Arrow reader admits it at): two 10 MB components under 256 MiB each get 256 / (2 x 8) = 16 MiB,
    less than the 3 x 10 MB a reading takes, so the command is refused naming the budget; counted as the reader
    counts (RUN_RANKINGS_SHARE 1: 128 MiB each), the same command evaluates them."""
    monkeypatch.chdir(files)
    argv = ["system", "eval", "--memory-limit", "256M", "system.large.yaml", "--test-set", "testset.large.yaml",
            "--no-cache"]
    assert (files / "run.large").stat().st_size * thresholds.IN_MEMORY_BYTES_PER_FILE_BYTE > (256 << 20) // 16
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and "--memory-limit" in err and out == "", err
    monkeypatch.setattr(thresholds, "RUN_RANKINGS_SHARE", 1)
    code, out, err = run_cli(argv, capsys)
    assert code == 0 and "\nfusion " in out and "\na " in out and "\nb " in out, err
