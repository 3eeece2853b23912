"""Hostile inputs to the second half (test sets, system configs, the user's functions, gate, rq, retrieve, fuse,
the readers' messages): every case exits 2 with the file, the line or the field and the fix; never an
internal error, exit 3 or a traceback; nothing silently accepted; nothing of a file a config names is shown.

Each case is a row of a table where the cases are alike; the expected text is the part of the message that
names where the problem is (a field path, a key path, a file:line) and what it is.
"""
from __future__ import annotations

import copy
import json
import math
import os
from pathlib import Path

import pytest

from helpers import ROOT, run_cli
from treckit.console.errors import InputError

SAMPLE = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
RESULTS = ROOT / "data" / "test_sets" / "baseline_results.json"     # a real results file of `testset eval`
BOW_RUN = ROOT / "data" / "test_sets" / "baseline_bow.trec"
SECRET = "hunter2-SECRET-TOKEN"


def _clean_failure(code: int, err: str, *needles: str) -> None:
    """Exit 2, a treckit error with a fix, each of ``needles`` in the message, no crash."""
    assert code == 2, err
    assert err.startswith("treckit: error: ") and "\n  fix: " in err, err
    assert "internal error" not in err and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)


# ------------------------------------------------------------------ gate: malformed results files
def _set(path: str, value):
    """A mutation setting the field at ``path`` (dots and [i]) to ``value``."""
    def mutate(d):
        *parents, last = _steps(path)
        for step in parents:
            d = d[step]
        d[last] = value
    return mutate


def _delete(path: str):
    def mutate(d):
        *parents, last = _steps(path)
        for step in parents:
            d = d[step]
        del d[last]
    return mutate


def _steps(path: str) -> list:
    out = []
    for part in path.split("."):
        name, _, index = part.partition("[")
        if name:
            out.append(name)
        if index:
            out.append(int(index.rstrip("]")))
    return out


GATE_CASES = [
    # (mutation of the current results, the field the message names)
    (_delete("test_set"), "test_set: missing"),
    (_set("test_set", None), "test_set: must be a mapping"),
    (_delete("test_set.version"), "test_set.version: must be text"),
    (_set("test_set.digest", 5), "test_set.digest: must be text"),
    (_delete("measures"), "measures: missing"),
    (_set("measures", "recall_at_10"), "measures: must be a non-empty list"),
    (_set("measures", []), "measures: must be a non-empty list"),
    (_delete("aggregates"), "aggregates: missing"),
    (_set("aggregates.recall_at_10", 0.5), "aggregates.recall_at_10: must be a mapping"),
    (_set("aggregates.recall_at_10.mean", None), "aggregates.recall_at_10.mean: must be a number, found null"),
    (_set("aggregates.recall_at_10.mean", "0.5"), "aggregates.recall_at_10.mean: must be a number, found text"),
    (_set("aggregates.ndcg_at_10.mean", True), "aggregates.ndcg_at_10.mean: must be a number, found a boolean"),
    (_set("aggregates.recall_at_10.mean", math.inf), "aggregates.recall_at_10.mean: must be a finite number"),
    (_set("aggregates.recall_at_10.mean", math.nan), "aggregates.recall_at_10.mean: must be a finite number"),
    (_delete("aggregates.mrr"), "aggregates: must hold exactly the measures"),
    (_set("definitions.recall_at_10.cutoff", "ten"), "definitions.recall_at_10.cutoff: must be a number or null"),
    (_set("definitions.ndcg_at_10.query_set", ["judged"]), "definitions.ndcg_at_10.query_set: must be one of"),
    (_delete("definitions.mrr"), "definitions: no definition of mrr"),
    (_set("per_query", {}), "per_query: must be a list"),
    (_set("per_query[0]", "q01"), "per_query[0]: must be a mapping"),
    (_delete("per_query[3].qid"), "per_query[3].qid: must be text"),
    (_set("per_query[2].recall_at_10", "x"), "per_query[2].recall_at_10: must be a number"),
    (_delete("per_query[1].ndcg_at_10"), "per_query[1].ndcg_at_10: missing"),
    (_set("per_query_type", []), "per_query_type: must be a mapping"),
    (_set("per_query_type.paraphrase.num_queries", "15"), "per_query_type.paraphrase.num_queries: must be a count"),
    (_set("per_query_type.exact_term.recall_at_10", None), "per_query_type.exact_term.recall_at_10: must be a number"),
    (_set("system", "bm25"), "system: must be a mapping"),
]


@pytest.mark.parametrize("mutate, where", GATE_CASES, ids=[w.split(":")[0] + f"-{i}" for i, (_, w) in enumerate(GATE_CASES)])
def test_gate_names_the_field_of_a_malformed_results_file(tmp_path, capsys, mutate, where):
    base = json.loads(RESULTS.read_text())
    bad = copy.deepcopy(base)
    mutate(bad)
    (tmp_path / "current.json").write_text(json.dumps(bad))
    code, _, err = run_cli(["gate", "--baseline", RESULTS, "--current", tmp_path / "current.json",
                            "--markdown", tmp_path / "gate.md"], capsys)
    _clean_failure(code, err, "current.json: " + where)
    assert not (tmp_path / "gate.md").exists()
    # the same file as the baseline: the same message, naming it
    code, _, err = run_cli(["gate", "--baseline", tmp_path / "current.json", "--current", RESULTS], capsys)
    _clean_failure(code, err, "current.json: " + where)


def test_a_mean_of_400_digits_is_refused_as_the_file_is_read(tmp_path, capsys):
    bad = json.loads(RESULTS.read_text())
    bad["aggregates"]["recall_at_10"]["mean"] = 10 ** 400
    (tmp_path / "current.json").write_text(json.dumps(bad))
    code, _, err = run_cli(["gate", "--baseline", RESULTS, "--current", tmp_path / "current.json"], capsys)
    _clean_failure(code, err, "current.json:1: not JSON (a number of 401 characters)", "pass the --out file")


def test_the_real_results_file_passes_the_gate_against_itself(tmp_path, capsys):
    """The checks refuse the mutations above, not the file they start from."""
    code, _, err = run_cli(["gate", "--baseline", RESULTS, "--current", RESULTS, "--markdown", tmp_path / "g.md"], capsys)
    assert code == 0 and "gate passed" in err
    assert "| recall_at_10 | 0.7116 | 0.7116 | +0.0000 | pass |" in (tmp_path / "g.md").read_text()


def test_gate_report_leaves_out_a_default_metric_the_baseline_lacks(tmp_path, capsys):
    """Gating mrr when only the current results hold ndcg_at_10: the report shows what both hold."""
    base = json.loads(RESULTS.read_text())
    for part in ("aggregates", "definitions"):
        del base[part]["ndcg_at_10"]
    base["measures"].remove("ndcg_at_10")
    for row in [*base["per_query"], *base["per_query_type"].values()]:
        del row["ndcg_at_10"]
    (tmp_path / "b.json").write_text(json.dumps(base))
    code, out, err = run_cli(["gate", "--baseline", tmp_path / "b.json", "--current", RESULTS, "--metric", "mrr",
                              "--markdown", tmp_path / "g.md"], capsys)
    assert code == 0, err
    report = (tmp_path / "g.md").read_text()
    assert "| mrr | 0.8857 | 0.8857 | +0.0000 | pass |" in report and "ndcg_at_10" not in report


# ------------------------------------------------------------------ the user's functions
FUNCTIONS = f'''
import sys

def raises(text):
    helper(text)

def helper(text):
    raise ValueError("{SECRET}")

def raises_in_library(text):
    import json
    return json.loads("{{" + text)

def text_answer(text):
    return "doc-1"

def huge_score(text):
    return [("PMC2905704", 10 ** 400)]

def text_score(text):
    return [("PMC2905704", "x")]

def bool_score(text):
    return [("PMC2905704", True)]

def surrogate_id(text):
    return ["PMC\\udc80"]

def empty_id(text):
    return [""]

def mapping_answer(text):
    return {{"PMC2905704": 1.0}}

def number_answer(text):
    return 7

def generator_raising(text):
    yield "PMC2905704"
    raise RuntimeError("{SECRET}")

def two_arguments(text, other):
    return []

def exits(text):
    sys.exit(0)

def exits_with_text(text):
    sys.exit("{SECRET}")

def interrupted(text):
    raise KeyboardInterrupt

def batch_none(texts):
    return None

def batch_fewer(texts):
    return [[] for _ in texts[1:]]

def batch_text(texts):
    return "ab"

def rerank_raises(text, candidates):
    raise OSError("{SECRET}")

def rerank_one_argument(text):
    return []
'''


@pytest.fixture
def functions(tmp_path, monkeypatch) -> Path:
    p = tmp_path / "fns.py"
    p.write_text(FUNCTIONS)
    monkeypatch.chdir(tmp_path)
    return p


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


FUNCTION_CASES = [
    # (function, --batch, what the message says)
    ("raises", False, ["the retrieval function raises() raised ValueError for query 'q01'", "fns.py:{helper}:"]),
    ("raises_in_library", False, ["raised JSONDecodeError for query 'q01'", "fns.py:{library}:"]),
    ("generator_raising", False, ["raised RuntimeError for query 'q01'", "fns.py:{generator}:"]),
    ("exits", False, ["called sys.exit(0) for query 'q01': a function must return its answer"]),
    ("exits_with_text", False, ["called sys.exit(...) for query 'q01'"]),
    ("text_answer", False, ["text_answer() returned a str for query 'q01', not a ranking"]),
    ("mapping_answer", False, ["returned a dict for query 'q01', not a ranking"]),
    ("number_answer", False, ["returned an int for query 'q01', not a ranking"]),
    ("huge_score", False, ["query 'q01'", "a score that is an integer of 401 digits is too large for a double"]),
    ("text_score", False, ["query 'q01'", "score 'x' is not a number"]),
    ("bool_score", False, ["query 'q01'", "score True is not a number"]),
    ("surrogate_id", False, ["query 'q01'", "not Unicode text (a lone surrogate)"]),
    ("empty_id", False, ["query 'q01'", "an empty text"]),
    ("two_arguments", False, ["two_arguments() takes (text, other); treckit calls it with one argument"]),
    ("batch_none", True, ["the batch function batch_none() returned None for a batch of 50 queries"]),
    ("batch_text", True, ["batch_text() returned a str for a batch of 50 queries, not a list of rankings"]),
    ("batch_fewer", True, ["returned 49 rankings for 50 queries"]),
]


@pytest.mark.parametrize("name, batch, says", FUNCTION_CASES, ids=[c[0] for c in FUNCTION_CASES])
def test_a_function_that_misbehaves_is_named_with_the_query(functions, capsys, name, batch, says):
    code, out, err = run_cli(["testset", "eval", SAMPLE, "--function", f"fns.py:{name}", "--no-cache",
                              *(["--batch"] if batch else []), "--out", "res.json"], capsys)
    lines = {"helper": _line_of(functions, f'raise ValueError("{SECRET}")'),
             "library": _line_of(functions, 'json.loads("{" + text)'), "generator": _line_of(functions, f'RuntimeError("{SECRET}")')}
    _clean_failure(code, err, *(s.format(**lines) for s in says))
    assert SECRET not in err and out == "" and not Path("res.json").exists()


def test_a_functions_exception_text_is_shown_only_when_debugging(functions, capsys, monkeypatch):
    argv = ["testset", "eval", SAMPLE, "--function", "fns.py:raises", "--no-cache"]
    code, _, err = run_cli(argv, capsys)
    _clean_failure(code, err, "TRECKIT_DEBUG=1")
    assert SECRET not in err
    code, _, err = run_cli(argv + ["--debug"], capsys)
    assert code == 2 and f"ValueError: {SECRET}" in err and "in helper" in err
    code, _, err = run_cli(argv, capsys)                 # --debug held for its command only
    assert code == 2 and SECRET not in err
    monkeypatch.setenv("TRECKIT_DEBUG", "1")
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and f"ValueError: {SECRET}" in err


def test_a_function_called_from_several_threads_is_named_alike(functions, capsys):
    code, _, err = run_cli(["testset", "eval", SAMPLE, "--function", "fns.py:raises", "--workers", "3", "--no-cache"], capsys)
    _clean_failure(code, err, "the retrieval function raises() raised ValueError for query 'q")
    assert SECRET not in err


def test_a_keyboard_interrupt_a_function_raises_itself_is_its_error(functions, capsys):
    """No Ctrl-C was received: the KeyboardInterrupt is the function's (a real Ctrl-C: tests/hostile/
    test_hostile_signals.py)."""
    code, _, err = run_cli(["testset", "eval", SAMPLE, "--function", "fns.py:interrupted", "--no-cache"], capsys)
    _clean_failure(code, err, "the retrieval function interrupted() raised KeyboardInterrupt for query 'q01' "
                              "(itself: no Ctrl-C was received)")


@pytest.mark.parametrize("source, says", [
    ("def search(text:\n    return []\n", ["bad.py:1: the retrieval function bad.py:search cannot be loaded: SyntaxError"]),
    (f"raise RuntimeError('{SECRET}')\ndef search(text):\n    return []\n",
     ["bad.py:1: the retrieval function bad.py:search raised RuntimeError while it was imported"]),
    ("import sys\nsys.exit(3)\n", ["bad.py:2: the retrieval function bad.py:search called sys.exit(3) while it was imported"]),
    ("import no_such_module_here\n", ["raised ModuleNotFoundError while it was imported"]),
])
def test_a_function_file_that_cannot_be_loaded_is_named_with_its_line(tmp_path, capsys, monkeypatch, source, says):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.py").write_text(source)
    code, _, err = run_cli(["testset", "eval", SAMPLE, "--function", "bad.py:search", "--no-cache"], capsys)
    _clean_failure(code, err, *says)
    assert SECRET not in err


def _run_config(tmp_path: Path, body: str) -> Path:
    """A system config of one run component (the bag-of-words baseline run) and ``body``."""
    p = tmp_path / "sys.yaml"
    p.write_text(f"components:\n  bow: {{run: {BOW_RUN}}}\n" + body)
    return p


@pytest.mark.parametrize("body, says", [
    ("  fn: {callable: fns.py:raises}\nfusion_method: rrf\n",
     ["the retrieval function raises() raised ValueError for query 'q01'"]),
    ("  fn: {callable: fns.py:batch_none, batch: true}\nfusion_method: rrf\n",
     ["the batch function batch_none() returned None for a batch of 3 queries"]),
    ("  fn: {callable: fns.py:exits}\nfusion_method: rrf\n", ["exits() called sys.exit(0) for query 'q01'"]),
    ("rerank: {callable: fns.py:rerank_raises, depth: 5}\n", ["the reranker rerank_raises() raised OSError for query 'q01'"]),
    ("rerank: fns.py:rerank_one_argument\n",
     ["the reranker fns.py:rerank_one_argument takes (text); treckit calls it with two arguments"]),
])
def test_a_config_function_that_misbehaves_is_named(tmp_path, functions, capsys, body, says):
    cfg = _run_config(tmp_path, body)
    code, _, err = run_cli(["system", "eval", cfg, "--test-set", SAMPLE, "--no-cache"], capsys)
    _clean_failure(code, err, *says)
    assert SECRET not in err
    code, _, err = run_cli(["compare", "--test-set", SAMPLE, "--config", cfg, "--config", cfg], capsys)
    _clean_failure(code, err, *says)
    assert SECRET not in err


def test_the_python_api_reports_a_functions_failure_alike(tmp_path):
    from treckit.testsets.runner import evaluate

    def search(text):
        raise PermissionError(SECRET)
    with pytest.raises(InputError) as got:
        evaluate(search, SAMPLE)
    assert "search() raised PermissionError for query 'q01'" in str(got.value) and SECRET not in str(got.value)
    assert f"{Path(__file__).name}:" in str(got.value)          # where: this file, the line of the raise


# ------------------------------------------------------------------ system configs: checked up front
CONFIG_CASES = [
    # (the config after its run component, the key path and what the message says)
    ("  b: {run: b.trec}\nfusion_method: rrf\nrrf_k: abc\n", "rrf_k: must be a whole number from 0 to 1000000000, found the text 'abc'"),
    ("  b: {run: b.trec}\nfusion_method: rrf\nrrf_k: 1.0e+308\n", "rrf_k: must be a whole number from 0 to 1000000000, found an integer of 309 digits"),
    ("  b: {run: b.trec}\nfusion_method: rrf\nrrf_k: 0.5\n", "rrf_k: must be a whole number from 0 to 1000000000, found 0.5"),
    ("  b: {run: b.trec}\nfusion_method: rrf\nrrf_k: -1\n", "rrf_k: must be a whole number"),
    ("  b: {run: b.trec}\nfusion_method: weighted\nweights: {bow: x, b: 1}\n", "weights.bow: must be a number, found the text 'x'"),
    ("  b: {run: b.trec}\nfusion_method: weighted\nweights: {bow: 0, b: 0.0}\n", "weights: are all 0"),
    ("  b: {run: b.trec}\nfusion_method: weighted\nweights: {bow: 1}\n", "weights: must name every component once (missing: b"),
    ("  b: {run: b.trec}\nfusion_method: combsum\nweights: {bow: 1, b: 2}\n", "weights: apply to fusion_method rrf and weighted, not combsum"),
    ("  b: {run: b.trec}\nfusion_method: rrf\nnorm: minmax\n", "norm: rrf fuses ranks"),
    ("  b: {run: b.trec}\nfusion_method: weighted\nrrf_k: 60\n", "rrf_k: applies to fusion_method rrf, not weighted"),
    ("rerank: {depth: 10}\n", "rerank: names no callable"),
    ("rerank: {callable: fns.py:rerank_raises, depth: abc}\n", "rerank.depth: must be a whole number of 1 or more, found the text 'abc'"),
    ("rerank: {callable: fns.py:rerank_raises, depth: 0}\n", "rerank.depth: must be a whole number of 1 or more, found 0"),
    ("rerank: {callable: fns.py:rerank_raises, depth: -5}\n", "rerank.depth: must be a whole number of 1 or more"),
    ("rerank: {callable: fns.py:rerank_raises, top: 5}\n", "rerank: unknown keys: 'top'"),
    ("  bm: {method: bm25, k1: abc, corpus: docs.jsonl}\nfusion_method: rrf\n", "components.bm.k1: must be a number, found the text 'abc'"),
    ("  bm: {method: bm25, b: 2, corpus: docs.jsonl}\nfusion_method: rrf\n", "components.bm.b: must be a finite number from 0 to 1, found 2"),
    ("  bm: {method: bm25, stopwords: klingon, corpus: docs.jsonl}\nfusion_method: rrf\n", "components.bm.stopwords: no stop-word list for 'klingon'"),
    ("  bm: {method: bm25, stopwords: no, corpus: docs.jsonl}\nfusion_method: rrf\n", "components.bm.stopwords: must be text, found the boolean false"),
    ("  bm: {method: bm25, stemmer: klingon, corpus: docs.jsonl}\nfusion_method: rrf\n", "components.bm.stemmer: no Snowball stemmer for 'klingon'"),
    ("  bm: {method: [bm25], corpus: docs.jsonl}\nfusion_method: rrf\n", "components.bm.method: unknown method: a list"),
    ("  b: {run: b.trec}\nfusion_method: {rrf: 1}\n", "fusion_method: unknown fusion method: a mapping"),
    ("  bm: {method: bm25}\nfusion_method: rrf\n", "components.bm: needs a corpus"),
    ("  fusion: {run: b.trec}\nfusion_method: rrf\n", "components.fusion: 'fusion' is the name of a later stage"),
    ("  b+rerank: {run: b.trec}\nfusion_method: rrf\n", "components.b+rerank: 'b+rerank' is the name of a later stage"),
    ("  b: {run: b.trec, k1: 0.9}\nfusion_method: rrf\n", "components.b: unknown keys: 'k1' (a run component takes run, format)"),
    ("  b: {method: bow, index: idx, corpus: docs.jsonl}\nfusion_method: rrf\n", "components.b: unknown keys: 'index'"),
    ("  b: {callable: fns.py:raises, batch: 'yes'}\nfusion_method: rrf\n", "components.b.batch: must be true or false"),
    ("  b: {dense: {embeddings: d.npy, ids: d.ids}}\nfusion_method: rrf\n", "components.b.dense: needs query_embeddings with query_ids, or a query_encoder"),
    ("  b: {run: b.trec, callable: fns.py:raises}\nfusion_method: rrf\n", "components.b: must have exactly one of"),
    ("depth: 5\n", "depth: is not a setting of a system"),
    ("fusion: rrf\n", "unknown keys: 'fusion'"),
]


@pytest.mark.parametrize("body, says", CONFIG_CASES, ids=[c[1].split(":")[0] + f"-{i}" for i, c in enumerate(CONFIG_CASES)])
def test_a_system_config_is_checked_whole_before_anything_runs(tmp_path, functions, capsys, body, says):
    cfg = _run_config(tmp_path, body)
    for argv in (["system", "eval", cfg, "--test-set", SAMPLE, "--no-cache"],
                 ["compare", "--test-set", SAMPLE, "--config", cfg, "--config", cfg]):
        code, out, err = run_cli(argv, capsys)
        _clean_failure(code, err, f"sys.yaml: {says}")
        assert out == ""


def test_fuse_refuses_what_the_configs_refuse(tmp_path, capsys):
    """The command line's fusion reads its settings as a config's: huge k, all-zero weights, weights or a norm
    that the method does not use."""
    cases = [(["--k", "99999999999999999999"], "RRF's k must be a whole number from 0 to 1,000,000,000, got an integer of 20 digits"),
             (["--method", "weighted", "--weights", "0,0"], "the weights are all 0"),
             (["--method", "combmnz", "--weights", "1,2"], "weights apply to rrf and weighted fusion, not combmnz"),
             (["--method", "rrf", "--norm", "zscore"], "RRF fuses ranks: the normalisation 'zscore' does not apply")]
    for extra, says in cases:
        code, _, err = run_cli(["fuse", BOW_RUN, BOW_RUN, *extra, "-o", tmp_path / "f.trec"], capsys)
        _clean_failure(code, err, says)
        assert not (tmp_path / "f.trec").exists()


# ------------------------------------------------------------------ files a config names: never shown
@pytest.mark.parametrize("content", [f"PATH=/bin\0TOKEN={SECRET}\0HOME=/root\0", f"{{\"key\": \"{SECRET}\"}}\n",
                                     f"q01 Q0 {SECRET} one 1.0 run\n"])
def test_a_file_a_config_names_is_never_quoted(tmp_path, capsys, content):
    (tmp_path / "environ").write_bytes(content.encode())
    cfg = tmp_path / "sys.yaml"
    cfg.write_text("components:\n  a: {run: environ}\n")
    for argv in (["system", "eval", cfg, "--test-set", SAMPLE, "--no-cache"],
                 ["compare", "--test-set", SAMPLE, "--config", cfg, "--config", cfg]):
        code, _, err = run_cli(argv, capsys)
        _clean_failure(code, err, "environ", "content not shown: the file is named by the system config")
        assert SECRET not in err
    # a config naming a run (not a system) hides it too
    (tmp_path / "named.yaml").write_text("run: environ\n")
    named = tmp_path / "named.yaml"
    code, _, err = run_cli(["compare", "--test-set", SAMPLE, "--config", named, "--config", named], capsys)
    _clean_failure(code, err, "content not shown")
    assert SECRET not in err


def test_a_corpus_and_a_function_file_a_config_names_are_never_quoted(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs.jsonl").write_text(f'{{"_id": "{SECRET}", "text": "a"}}\n{{"_id": "{SECRET}", "text": "b"}}\n')
    (tmp_path / "c.yaml").write_text("corpus: docs.jsonl\ncomponents:\n  b: {method: bow}\n")
    code, _, err = run_cli(["system", "eval", tmp_path / "c.yaml", "--test-set", SAMPLE, "--no-cache"], capsys)
    _clean_failure(code, err, "docs.jsonl:2: the document id '…' appears twice (content not shown")
    assert SECRET not in err
    (tmp_path / "f.py").write_text(f"x = '{SECRET}\n")
    (tmp_path / "f.yaml").write_text("components:\n  f: {callable: f.py:search}\n")
    code, _, err = run_cli(["system", "eval", tmp_path / "f.yaml", "--test-set", SAMPLE, "--no-cache"], capsys)
    _clean_failure(code, err, "f.py:1: the retrieval function f.py:search cannot be loaded: SyntaxError")
    assert SECRET not in err


def test_a_reading_notice_about_a_file_a_config_names_shows_none_of_it(tmp_path, capsys):
    (tmp_path / "run.jsonl").write_text(f'{{"id": "{SECRET}", "docs": [], "scores": []}}\n'
                                        '{"id": "q01", "docs": ["PMC2905704"], "scores": [1.0]}\n')
    (tmp_path / "c.yaml").write_text("components:\n  a: {run: run.jsonl}\n")
    code, _, err = run_cli(["system", "eval", tmp_path / "c.yaml", "--test-set", SAMPLE, "--no-cache"], capsys)
    assert code == 0, err
    assert "1 query has no documents (first: …)" in err and "content not shown" in err and SECRET not in err


# ------------------------------------------------------------------ cache rows of any shape
@pytest.mark.parametrize("row", [{}, [], "x", {"definitions": {}, "measures": []},
                                 {"definitions": {"mrr": {}}, "measures": ["mrr"], "test_set": {}}])
def test_a_damaged_cache_row_is_evaluated_again(tmp_path, row):
    import sqlite3

    from treckit.testsets.systems import evaluate_system
    from treckit.testsets.cache import TABLE
    from treckit.testsets import load_test_set
    from treckit.testsets.runner import evaluate
    ts = load_test_set(SAMPLE)

    def search(text):
        return ["PMC2905704"]
    first = evaluate(search, ts, {"name": "one"}, cache_dir=tmp_path)
    cfg = {"components": {"bow": {"run": str(BOW_RUN)}}}
    stages = evaluate_system(cfg, ts, cache_dir=tmp_path)
    with sqlite3.connect(tmp_path / "evaluations.sqlite") as con:
        keys = [k for (k,) in con.execute(f"SELECT key FROM {TABLE}")]
        assert len(keys) == 2
        con.execute(f"UPDATE {TABLE} SET value = ?", (json.dumps(row),))
    again = evaluate(search, ts, {"name": "one"}, cache_dir=tmp_path)
    assert not again.cached and again.metrics == first.metrics
    redone = evaluate_system(cfg, ts, cache_dir=tmp_path)
    assert not redone["bow"].cached and redone["bow"].metrics == stages["bow"].metrics
    with sqlite3.connect(tmp_path / "evaluations.sqlite") as con:       # a stage stored as a damaged row
        con.execute(f"UPDATE {TABLE} SET value = ?", (json.dumps({"bow": row}),))
    assert not evaluate_system(cfg, ts, cache_dir=tmp_path)["bow"].cached


# ------------------------------------------------------------------ retrieve, fuse, refresh, serve, rq, eval -m
def _corpus(tmp_path: Path, texts: list[str]) -> Path:
    p = tmp_path / "docs.jsonl"
    p.write_text("".join(json.dumps({"_id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(texts)))
    return p


@pytest.mark.parametrize("texts, extra, says", [
    (["", "the of and", "   "], [], "docs.jsonl: no document of the corpus has a word to index: every text is empty "
                                   "or stop words (en)"),
    (["", ""], ["--stopwords", "none"], "no document of the corpus has a word to index: every text is empty"),
    (["cats and dogs"], ["--stopwords", "klingon"], "no stop-word list for 'klingon'"),
    (["cats and dogs"], ["--k1", "inf"], "BM25 needs numbers k1 >= 0 (finite)"),
])
def test_retrieve_refuses_what_cannot_be_indexed(tmp_path, capsys, texts, extra, says):
    (tmp_path / "q.tsv").write_text("q1\tcats\n")
    code, _, err = run_cli(["retrieve", "--corpus", _corpus(tmp_path, texts), "--queries", tmp_path / "q.tsv",
                            *extra, "-o", tmp_path / "r.trec"], capsys)
    _clean_failure(code, err, says)
    assert not (tmp_path / "r.trec").exists()


def test_retrieve_index_paths_that_are_no_index(tmp_path, capsys):
    docs = _corpus(tmp_path, ["cats and dogs", "birds sing"])
    (tmp_path / "q.tsv").write_text("q1\tcats\n")
    argv = ["retrieve", "--corpus", docs, "--queries", tmp_path / "q.tsv", "-o", tmp_path / "r.trec", "--index"]
    (tmp_path / "a-file").write_text("not an index\n")
    code, _, err = run_cli(argv + [tmp_path / "a-file"], capsys)
    _clean_failure(code, err, "a-file: the index path is a file, not a folder", "give the path of a folder")
    assert (tmp_path / "a-file").read_text() == "not an index\n"
    code, _, err = run_cli(argv + [tmp_path / "idx"], capsys)
    assert code == 0, err
    built = (tmp_path / "r.trec").read_text()
    for name, cut in (("data.csc.index.npy", 40), ("vocab.index.json", 3)):
        saved = (tmp_path / "idx" / name).read_bytes()
        (tmp_path / "idx" / name).write_bytes(saved[:cut])                 # cut short, the manifest unchanged
        code, _, err = run_cli(argv + [tmp_path / "idx"], capsys)
        # the manifest records each file's digest: a file cut short is noticed and the index rebuilt
        assert code == 0 and f"not as it was saved ({name} changed): rebuilding it from the corpus" in err, err
        assert (tmp_path / "r.trec").read_text() == built and (tmp_path / "idx" / name).read_bytes() == saved


def test_refresh_refuses_a_candidate_without_text(tmp_path, capsys):
    (tmp_path / "c.jsonl").write_text('{"query_id": "n1", "query_text": ""}\n{"query_id": "n2", "query_text": "new"}\n')
    labels = "n1 0 PMC2905704 1\nn2 0 PMC2905704 0\nn1 0 PMC3449609 0\nn2 0 PMC3449609 2\n"
    (tmp_path / "a.txt").write_text(labels)
    (tmp_path / "b.txt").write_text(labels)
    code, _, err = run_cli(["testset", "refresh", SAMPLE, "--candidates", tmp_path / "c.jsonl", "--replace", "2",
                            "--labels-a", tmp_path / "a.txt", "--labels-b", tmp_path / "b.txt",
                            "-o", tmp_path / "next.yaml"], capsys)
    _clean_failure(code, err, "c.jsonl: the candidate query 'n1' has an empty query_text")
    assert not (tmp_path / "next.yaml").exists()


def test_serve_refuses_an_unknown_log_level(capsys):
    code, _, err = run_cli(["serve", "--log-level", "bogus", "--port", "1"], capsys)
    _clean_failure(code, err, "--log-level 'bogus' is not a log level", "critical, error, warning, info, debug, trace")


@pytest.mark.parametrize("threshold", ["nan", "inf", "-inf"])
def test_rq_refuses_a_threshold_that_is_no_number(tmp_path, capsys, threshold):
    code, out, err = run_cli(["rq", "--test-set", SAMPLE, "--run", BOW_RUN, "--threshold", threshold], capsys)
    _clean_failure(code, err, "the RQ threshold must be a finite number")
    assert out == ""


@pytest.mark.parametrize("measure, says", [
    ("ndcg_cut.99999999999999999999", "a cutoff above 9223372036854775807"),
    ("P.5,99999999999999999999", "a cutoff above 9223372036854775807"),
    ("nDCG@99999999999999999999", "cutoff=<an integer of 20 digits> is out of range for nDCG"),
    ("P(rel=99999999999999999999)@5", "rel=<an integer of 20 digits> is out of range for P"),
    ("IPrec@1e400", "recall=inf is out of range for IPrec: a recall level from 0 to 1"),
    ("SetF(beta=1e400)", "beta=inf is out of range for SetF"),
    ("rbp.p=1", "the persistence p must be from 0 up to (not including) 1"),
    ("rbp.p=nan", "'nan' is not a number"),
    ("ndcg.1=1e400", "'1e400' is beyond a double's range"),
    ("utility.1e400,0,0,0", "'1e400' is beyond a double's range"),
    ("iprec_at_recall.-1", "-1 is outside the range of iprec_at_recall's parameters (from 0 to 1)"),
    ("11pt_avg.0.5,2", "2 is outside the range of 11pt_avg's parameters"),
    ("Rprec_mult.1e300", "outside the range of Rprec_mult's parameters"),
    ("relstring.1e30", "outside the range of relstring's parameters"),
])
def test_measure_parameters_are_bounded(tmp_path, capsys, measure, says):
    (tmp_path / "q").write_text("q1 0 d1 1\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 1.0 t\n")
    code, out, err = run_cli(["eval", "-m", measure, tmp_path / "q", tmp_path / "r"], capsys)
    _clean_failure(code, err, says)
    assert out == ""


def test_the_largest_cutoff_trec_eval_reads_is_computed(tmp_path, capsys):
    """2^63 - 1 is trec_eval's own largest cutoff (a larger one it reads as that): computed, named as trec_eval names it."""
    (tmp_path / "q").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    code, out, err = run_cli(["eval", "-m", "ndcg_cut.9223372036854775807", "-m", "P.9223372036854775807",
                              tmp_path / "q", tmp_path / "r"], capsys)
    assert code == 0, err
    assert out.split() == ["P_9223372036854775807", "all", "0.0000", "ndcg_cut_9223372036854775807", "all", "1.0000"]


# ------------------------------------------------------------------ --pushgateway, and URLs that refuse
@pytest.mark.parametrize("url, says", [
    ("not a url", "--pushgateway 'not a url' is not a Pushgateway address"),
    ("http://host:port/", "is not a Pushgateway address"),
    ("ftp://localhost:9091", "is not a Pushgateway address"),
    ("http://127.0.0.1:1/", "http://127.0.0.1:1/: cannot push to the Pushgateway (connection refused)"),
])
def test_a_pushgateway_that_cannot_be_pushed_to_is_said_so(tmp_path, capsys, url, says):
    pytest.importorskip("prometheus_client")
    code, _, err = run_cli(["gate", "--baseline", RESULTS, "--current", RESULTS, "--pushgateway", url], capsys)
    _clean_failure(code, err, says)
    if "not a Pushgateway address" in says:            # checked before any work
        code, out, err = run_cli(["testset", "eval", SAMPLE, "--run", BOW_RUN, "--pushgateway", url], capsys)
        _clean_failure(code, err, says)
        assert out == ""


def test_a_refused_connection_is_no_missing_file(tmp_path, capsys):
    pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp")
    (tmp_path / "q").write_text("q1 0 d1 1\n")
    code, _, err = run_cli(["eval", tmp_path / "q", "http://127.0.0.1:1/run.trec"], capsys)
    _clean_failure(code, err, "http://127.0.0.1:1/run.trec: cannot connect to the server (connection refused)")
    assert "no such file" not in err


# ------------------------------------------------------------------ files cut short while read
def _run_lines(n_queries: int, per_query: int) -> str:
    return "".join(f"q{q} Q0 d{d} {d + 1} {per_query - d} run\n" for q in range(n_queries) for d in range(per_query))


def test_a_run_cut_short_while_streamed_is_reported_as_truncated(tmp_path, monkeypatch):
    """The streaming engine reads a block, and meanwhile the file is truncated: at a line's end (what was read
    would pass for a smaller run) and in a line's middle (its last line would pass for a malformed one)."""
    from treckit import thresholds
    from treckit.api import read_qrels
    from treckit.engines import stream
    from treckit.measures.registry import resolve
    from treckit.inputs.options import RunReading

    text = _run_lines(40, 50)
    (tmp_path / "q").write_text("".join(f"q{q} 0 d{q} 1\n" for q in range(40)))
    qrels = read_qrels(tmp_path / "q")
    monkeypatch.setattr(thresholds, "STREAM_BLOCK_MIN_BYTES", 4096)
    real = stream.read_run_block
    for cut in (text.index("q20 "), text.index("q20 ") + 7):
        path = tmp_path / "run.trec"
        path.write_text(text)
        calls = []

        def truncating(data, *a, **k):
            if not calls:
                os.truncate(path, cut)           # another program cuts the file while the first block is parsed
            calls.append(1)
            return real(data, *a, **k)
        monkeypatch.setattr(stream, "read_run_block", truncating)
        with pytest.raises(InputError) as got:
            stream.evaluate_path(qrels, path, resolve(["map"]), reading=RunReading(), memory_limit=1)
        assert "run.trec: the file was cut short (truncated) while it was read" in str(got.value)
        assert f"of {len(text):,} bytes" in str(got.value)


def test_a_file_cut_short_between_a_look_and_the_read_is_reported_as_truncated(tmp_path, monkeypatch):
    """The readers look at a file (its size, its first lines), then read it a block of lines at a time: a file cut
    short meanwhile."""
    from treckit.inputs import sources as tio
    from treckit.inputs.formats.trec import read_trec_run

    path = tmp_path / "run.trec"
    path.write_text(_run_lines(3, 5))
    real = tio.file_blocks

    def truncating(p, *a, **k):
        os.truncate(path, 40)
        return real(p, *a, **k)
    monkeypatch.setattr(tio, "file_blocks", truncating)
    with pytest.raises(InputError, match=r"run.trec: the file was cut short \(truncated\) while it was read: 40 of"):
        read_trec_run(path)


def test_a_gzip_file_cut_short_is_reported_as_truncated(tmp_path, capsys):
    import gzip
    data = gzip.compress(_run_lines(50, 100).encode())
    (tmp_path / "run.trec.gz").write_bytes(data[: len(data) // 2])
    (tmp_path / "q").write_text("q1 0 d1 1\n")
    code, _, err = run_cli(["eval", tmp_path / "q", tmp_path / "run.trec.gz"], capsys)
    _clean_failure(code, err, "run.trec.gz: the gzip data is cut short (truncated)")
