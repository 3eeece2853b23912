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
         "INFLATE_PIECE_BYTES": 1 << 18, "GZIP_READ_BYTES": 1 << 16, "MAX_LINE_BYTES": 1 * MIB}
# What a peak may pass the budget plus the two-line peak by: the allocators' and threads' own noise (measured: up to
# 4 MiB on this project's machine); reading a large input whole costs 25-150 MiB more.
TOLERANCE = 6 * MIB

_CHILD = r"""
import json, os, sys
from treckit import thresholds
for name, value in json.loads(os.environ["TRECKIT_TEST_SIZES"]).items():
    assert hasattr(thresholds, name), name
    setattr(thresholds, name, value)
script = os.environ.get("TRECKIT_TEST_SCRIPT")
if script:
    import importlib.util
    spec = importlib.util.spec_from_file_location("staged", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    code = module.main(sys.argv[1:])
else:
    from treckit.cli.main import main
    code = main(sys.argv[1:])
with open("/proc/self/status") as status:
    peak = next(line for line in status if line.startswith("VmHWM:")).split()[1]
with open(os.environ["TRECKIT_TEST_PEAK"], "w") as out:
    out.write(peak)
from treckit.console.process import exit_now
exit_now(code)
"""


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    peak: int           # bytes

    def __str__(self) -> str:
        return f"exit {self.code}, peak {self.peak / MIB:.1f} MiB; stderr: {self.err[-600:]}"


def measured(argv, cwd: Path, sizes: dict | None = None) -> Outcome:
    """``treckit ARGV`` (or a staged script: ``argv[0]`` ends in ``.py``) in a child process with the thresholds
    ``sizes`` (default :data:`SIZES`): its exit code, output and peak resident memory."""
    peak_file = cwd / f".peak-{os.getpid()}-{random.random()}"
    env = {**os.environ, "TRECKIT_TEST_SIZES": json.dumps(SIZES if sizes is None else sizes),
           "TRECKIT_TEST_PEAK": str(peak_file), "PYTHONPATH": str(ROOT / "code")}
    argv = list(map(str, argv))
    if argv[0].endswith(".py"):
        env["TRECKIT_TEST_SCRIPT"] = str(ROOT / "code" / "evaluation" / argv.pop(0))
    p = subprocess.run([sys.executable, "-c", _CHILD, *argv], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=patience(180))
    peak = int(peak_file.read_text()) * 1024 if peak_file.exists() else 0
    peak_file.unlink(missing_ok=True)
    return Outcome(p.returncode, p.stdout, p.stderr, peak)


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
    version (150 queries x 1000 docs, 5 MB) of every input the commands read."""
    d = tmp_path_factory.mktemp("budgets")
    write_inputs(d, "small", 2, 1, 1)
    write_inputs(d, "large", 150, 1000, 40)
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


@pytest.fixture(scope="module")
def two_line_peaks(files) -> dict[str, Outcome]:
    return {}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_keeps_its_peak_within_the_budget(files, two_line_peaks, name):
    if name not in two_line_peaks:
        two_line_peaks[name] = measured(with_budget(name, "small"), files)
    base = two_line_peaks[name]
    assert base.code == 0, (name, str(base))
    got = measured(with_budget(name, "large"), files)
    if COMMANDS[name][1]:
        assert got.code == 0, (name, str(got))
        assert got.out == measured(with_budget(name, "large", 0), files).out      # the same result, held whole
    else:
        assert got.code in (0, 2), (name, str(got))
    if got.code == 2:                    # refused, naming the budget (in force: the smallest, lowered here)
        assert f"more than the budget of {BUDGET:,} bytes (--memory-limit)" in got.err, (name, str(got))
    assert got.peak <= base.peak + BUDGET + TOLERANCE, (name, str(base), str(got))


@pytest.mark.parametrize("name", ["eval", "detect --ties", "compare --tie-aware"])
def test_without_a_budget_the_same_commands_take_several_times_it(files, two_line_peaks, name):
    """What makes the budget test able to fail: the same commands given no budget hold the large input whole."""
    if name not in two_line_peaks:
        two_line_peaks[name] = measured(with_budget(name, "small"), files)
    whole = measured(with_budget(name, "large", 0), files)
    assert whole.code == 0 and whole.peak > two_line_peaks[name].peak + BUDGET + TOLERANCE, str(whole)


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


# the commands whose peak on a bomb is measured (a child each): the readers of every kind
MEASURED = ["detect", "eval run --run-format trec", "qrels", "gdeval run", "ndeval run", "retrieve corpus",
            "run --run-format jsonl"]


@pytest.mark.parametrize("kind", ["newlines.gz", "endless.gz"])
@pytest.mark.parametrize("name", MEASURED)
def test_a_bomb_costs_what_a_small_file_costs(bombs, name, kind):
    """A bomb inflating to 64 MiB costs no more than a few pieces of it (a piece: 256 KiB here) over the same
    command on a two-line file; the old readers held it whole (and its lines as strings: gigabytes)."""
    argv = READERS[name]
    small = "corpus.small.jsonl" if "corpus" in name else "subtopics.small" if "ndeval" in name else \
        "run.small.jsonl" if "jsonl" in name else "qrels.small" if name == "qrels" else "run.small"
    base = measured([small if a == "B" else a for a in argv], bombs)
    got = measured([kind if a == "B" else a for a in argv], bombs)
    assert got.code == 2 and kind in got.err, str(got)
    assert got.peak <= base.peak + TOLERANCE + 2 * MIB, (str(base), str(got))
