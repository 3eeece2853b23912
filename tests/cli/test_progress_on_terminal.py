"""Progress is drawn on stderr only when stderr is a terminal: the data on stdout and the files written are the
same as without one, and the bar names the step it is at."""
from __future__ import annotations

import os
import pty
import re
import subprocess
import sys

from helpers import patience

TREC_QRELS = "1 0 a1 1\n2 0 b2 1\n"
# queries interleaved (1, 2, 1, 2, ...), 474 bytes: over a third of a 1K memory budget, so the run is read in bounded
# memory, and the interleaving makes that reader start over, shard by shard
INTERLEAVED_RUN = "".join(f"1 Q0 a{i} {i} {100 - i} r\n2 Q0 b{i} {i} {100 - i} r\n" for i in range(1, 16))
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def treckit(args, cwd, stderr_terminal: bool) -> tuple[int, bytes, str]:
    """(exit code, stdout, stderr as text without terminal escapes) of the treckit command ``args``."""
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "200", "LINES": "40"}
    command = [sys.executable, "-m", "treckit", *args]
    if not stderr_terminal:
        r = subprocess.run(command, cwd=cwd, env=env, capture_output=True, timeout=patience(60))
        return r.returncode, r.stdout, r.stderr.decode()
    main, child = pty.openpty()
    try:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=child)
    finally:
        os.close(child)
    seen = b""
    try:
        while True:                               # drained while it runs: a full terminal would stall it
            try:
                chunk = os.read(main, 65536)
            except OSError:                       # EIO: the child end closed (the process ended)
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(main)
    out = proc.stdout.read()
    proc.stdout.close()
    code = proc.wait(patience(60))
    return code, out, ANSI.sub("", seen.decode(errors="replace"))


def test_eval_draws_its_progress_on_a_terminal_and_prints_the_same_numbers(tmp_path):
    (tmp_path / "qrels").write_text(TREC_QRELS)
    (tmp_path / "run").write_text(INTERLEAVED_RUN)
    args = ["eval", "-m", "map", "-m", "num_rel_ret", "--memory-limit", "1K", "qrels", "run"]
    code, plain_out, plain_err = treckit(args, tmp_path, stderr_terminal=False)
    assert code == 0, plain_err
    # AP, query 1: a1 (its one relevant) at rank 1: 1; query 2: b2 at rank 2: 1/2.  MAP 0.75, 2 relevant retrieved
    # (trec_eval 10.0 prints these two lines, in this order)
    assert plain_out == b"num_rel_ret           \tall\t2\nmap                   \tall\t0.7500\n"
    assert "evaluating" not in plain_err           # not a terminal: no progress
    code, out, err = treckit(args, tmp_path, stderr_terminal=True)
    assert (code, out) == (0, plain_out)
    # the bar, then started over for each pass, saying so
    assert "evaluating run" in err and "partitioning run (queries interleaved)" in err
    assert "evaluating run shard by shard" in err


def test_run_conversion_draws_its_steps_on_a_terminal_and_writes_the_same_file(tmp_path):
    (tmp_path / "in.tsv").write_text("1\td1\t2.0\n1\td2\t1.0\n")
    code, _, err = treckit(["run", "in.tsv", "-o", "plain.trec"], tmp_path, stderr_terminal=False)
    assert code == 0, err
    assert (tmp_path / "plain.trec").read_text() == "1 Q0 d1 1 2 treckit\n1 Q0 d2 2 1 treckit\n"
    code, _, err = treckit(["run", "in.tsv", "-o", "shown.trec"], tmp_path, stderr_terminal=True)
    assert code == 0, err
    assert (tmp_path / "shown.trec").read_bytes() == (tmp_path / "plain.trec").read_bytes()
    assert "reading and ordering in.tsv" in err and "writing shown.trec" in err


def untimed(out: bytes) -> bytes:
    """A results table without its latencies, which differ from run to run: the latency line of testset eval, the
    p50 / p95 columns (2 decimals) of system eval."""
    kept = b"".join(line for line in out.splitlines(keepends=True) if b"latency" not in line)
    return re.sub(rb" +", b" ", re.sub(rb"\b\d+\.\d\d\b", b"#", kept))      # columns as wide as their longest


def test_a_retrieval_function_and_a_system_show_their_queries_on_a_terminal_only(tmp_path):
    """testset eval --function, system eval and retrieve --method bow: a bar over the queries asked ("50/50" on the
    sample's 50), on a terminal; piped, nothing but the results."""
    from helpers import ROOT
    sample = ROOT / "data" / "test_sets"
    for args in (["testset", "eval", sample / "clinical_v1.yaml", "--function", sample / "sample_retriever.py:search",
                  "--no-cache"],
                 ["retrieve", "--corpus", sample / "documents.jsonl", "--queries", sample / "clinical_v1.yaml",
                  "--method", "bow", "-o", "bow.trec"],
                 ["system", "eval", sample / "system.yaml", "--test-set", sample / "clinical_v1.yaml", "--no-cache"]):
        args = list(map(str, args))
        code, plain_out, plain_err = treckit(args, tmp_path, stderr_terminal=False)
        assert code == 0, plain_err
        assert "asking" not in plain_err and "search" not in plain_err and "50/50" not in plain_err
        code, out, err = treckit(args, tmp_path, stderr_terminal=True)
        assert code == 0 and untimed(out) == untimed(plain_out)
        assert ("asking" in err or "bag-of-words search" in err) and re.search(r"\b\d+/(50|100)\b", err), err
