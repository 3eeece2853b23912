"""Hostile inputs to test sets, query files, function configs, compare and the cache: each exits 2 with the file,
the line and the fix (never an internal error), or is never answered from a stale cache."""
from __future__ import annotations

import os

import pytest

from helpers import ROOT, run_cli

SAMPLE = ROOT / "data" / "test_sets" / "clinical_v1.yaml"


def _clean_failure(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    assert err.startswith("treckit: error: ") and "\n  fix: " in err, err
    assert "internal error" not in err and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)


@pytest.mark.parametrize("text, line", [(b"a: 1\x00\n", 1),
                                        (SAMPLE.read_bytes() + b"x\x00y\n", SAMPLE.read_bytes().count(b"\n") + 1)],
                         ids=["small", "after-the-queries"])
def test_a_test_set_holding_a_nul_byte_is_refused_with_its_line(tmp_path, capsys, text, line):
    """A NUL byte is refused by the YAML reader before any query is read: the query checker, never started,
    still reports nothing of its own."""
    bad = tmp_path / "nul.yaml"
    bad.write_bytes(text)
    code, _, err = run_cli(["testset", "validate", bad], capsys)
    _clean_failure(code, err, "nul.yaml", f"line {line}: not valid YAML", "U+0000")


def test_a_file_a_function_config_names_is_in_the_cache_key(tmp_path, capsys, monkeypatch):
    """`testset eval --function F --config C`: replacing a file C names (here the corpus, next to C and named
    relative to it) is evaluated again, never answered from the cache with the old file's numbers."""
    monkeypatch.setenv("TRECKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    system = tmp_path / "system"
    system.mkdir()
    (system / "search.py").write_text(
        "from pathlib import Path\n"
        "def search(query):\n"
        "    return [(Path(__file__).with_name('corpus.txt').read_text().strip(), 1.0)]\n")
    (system / "config.yaml").write_text("corpus: corpus.txt\n")
    argv = ["testset", "eval", SAMPLE, "--function", system / "search.py:search", "--config", system / "config.yaml",
            "-m", "mrr", "--out"]
    (system / "corpus.txt").write_text("PMC2905704\n")           # relevant to two queries, ranked first
    assert run_cli([*argv, tmp_path / "first.json"], capsys)[0] == 0
    (system / "corpus.txt").write_text("no-such-doc\n")
    code, _, err = run_cli([*argv, tmp_path / "second.json"], capsys)
    assert code == 0, err
    assert "answered from the cache" not in err
    import json
    first = json.loads((tmp_path / "first.json").read_text())["aggregates"]["mrr"]["mean"]
    second = json.loads((tmp_path / "second.json").read_text())["aggregates"]["mrr"]["mean"]
    assert first == pytest.approx(2 / 50) and second == 0.0
    code, _, err = run_cli([*argv, tmp_path / "third.json"], capsys)
    assert code == 0 and "answered from the cache" in err, err       # an unchanged file is still a hit


def test_a_folder_given_as_a_test_set_is_said_to_be_one(tmp_path, capsys):
    """A path that exists but is no file is not reported as an unknown test-set name."""
    (tmp_path / "sets.yaml").mkdir()
    code, _, err = run_cli(["testset", "validate", tmp_path / "sets.yaml"], capsys)
    _clean_failure(code, err, "sets.yaml: is a folder, not a file")


def test_a_test_set_read_from_a_pipe_is_read(tmp_path, capsys):
    """`treckit testset validate <(zcat set.yaml.gz)`: the shell gives a pipe's path, which is read as a file."""
    import threading
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)

    def feed():
        with open(pipe, "wb") as fh:
            fh.write(SAMPLE.read_bytes())
    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    code, out, err = run_cli(["testset", "validate", pipe], capsys)
    writer.join(10)
    assert code == 0, err
    assert "50 queries, 1085 judgments; valid" in out


@pytest.mark.parametrize("option", ["--permutations", "--resamples"])
def test_compare_bounds_its_random_draws(tmp_path, capsys, option):
    """A billion bootstrap resamples would need gigabytes and a billion permutations half an hour: the draws
    are bounded, and the bound is said before any run is read."""
    code, _, err = run_cli(["compare", tmp_path / "unread.qrels", tmp_path / "a.trec", tmp_path / "b.trec",
                            option, "1000000000"], capsys)
    _clean_failure(code, err, f"{option.lstrip('-')} must be a whole number from 100 to 1,000,000, got 1000000000")


def test_import_names_what_it_built_when_it_does_not_validate(tmp_path, capsys):
    """The test set `testset import` builds has no file yet: the message says what it is, rather than putting
    the (here empty) --name where a file name goes."""
    (tmp_path / "q.qrels").write_text("q1 0 d1 1\n")
    (tmp_path / "q.tsv").write_text("q1\tsome text\n")
    code, _, err = run_cli(["testset", "import", "--qrels", tmp_path / "q.qrels", "--queries", tmp_path / "q.tsv",
                            "--name", "", "--output", tmp_path / "set.yaml"], capsys)
    _clean_failure(code, err, "treckit: error: the test set built from the judgments and texts (name ''): 1 problem",
                   "name: String should have at least 1 character")
    assert not (tmp_path / "set.yaml").exists()


@pytest.mark.parametrize("line, says", [
    ('{"query_id": null, "query_text": "x"}', "query id must be a string or an integer, found null"),
    ('{"query_id": true, "query_text": "x"}', "query id must be a string or an integer, found true"),
    ('{"query_id": 1.5, "query_text": "x"}', "query id must be a string or an integer, found 1.5"),
    ('{"query_id": "n1", "query_text": "x", "query_type": 5}', "query_type must be non-empty text, found 5"),
    ('{"query_id": "n1", "query_text": "x", "query_type": ""}', 'query_type must be non-empty text, found ""'),
], ids=["null-id", "boolean-id", "float-id", "number-type", "empty-type"])
def test_a_query_line_is_never_coerced(tmp_path, capsys, line, says):
    """An id of null is no query 'None', and a query_type that is no text is no reason to use the default type
    without a word: each is refused with its line, as the run and qrels readers refuse them."""
    (tmp_path / "cand.jsonl").write_text(line + "\n")
    (tmp_path / "labels.qrels").write_text("n1 0 PMC2905704 1\n")
    code, _, err = run_cli(["testset", "refresh", SAMPLE, "--candidates", tmp_path / "cand.jsonl", "--replace", "1",
                            "--labels-a", tmp_path / "labels.qrels", "--labels-b", tmp_path / "labels.qrels",
                            "-o", tmp_path / "next.yaml"], capsys)
    _clean_failure(code, err, "cand.jsonl:1: " + says)
    assert not (tmp_path / "next.yaml").exists()


def test_a_change_to_a_module_a_config_function_imports_is_evaluated_again(tmp_path):
    """The loaded modules beside a function's file are part of its code: a reranker whose helper module
    changed is evaluated again, never answered with the old helper's numbers.  Each evaluation is a process of
    its own, as a CI job's is (a process keeps the code it loaded)."""
    import subprocess
    import sys
    (tmp_path / "helper.py").write_text("def reverse():\n    return False\n")
    (tmp_path / "rr.py").write_text("import helper\n\n\ndef rerank(query, candidates):\n"
                                    "    return candidates[::-1] if helper.reverse() else candidates\n")
    (tmp_path / "system.yaml").write_text(f"corpus: {ROOT / 'data/test_sets/documents.jsonl'}\n"
                                          "components:\n  bow: {method: bow}\nrerank: {callable: rr.py:rerank, depth: 20}\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "code"), "TRECKIT_CACHE_DIR": str(tmp_path / "cache")}

    def mrr_of_reranked() -> str:
        done = subprocess.run([sys.executable, "-m", "treckit", "system", "eval", str(tmp_path / "system.yaml"),
                               "--test-set", str(SAMPLE), "-m", "mrr"], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return next(line.split()[1] for line in done.stdout.splitlines() if line.startswith("bow+rerank"))

    kept = mrr_of_reranked()
    (tmp_path / "helper.py").write_text("def reverse():\n    return True\n")
    reversed_ = mrr_of_reranked()
    assert (kept, reversed_) == ("0.8874", "0.2599")
