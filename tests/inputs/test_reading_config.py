"""One reader configuration (treckit.inputs.options.RunReading): `run`, `eval`, `compare`, the staged scripts and
the Python API read a run the same way, so evaluating a file and evaluating its conversion give the same
bytes; TREC runs are ranked by score as written (trec_eval), rank-valued files by rank."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import treckit
from helpers import ROOT, run_cli
from treckit.model import Qrels

SAMPLE = ROOT / "data" / "quest_sample"
GOLD, PRED = SAMPLE / "test.jsonl", SAMPLE / "bm25_predictions.jsonl"


def trec_eval_binary() -> str:
    for p in (os.environ.get("TRECKIT_TREC_EVAL"), ROOT.parent / "shared" / "tools" / "trec_eval",
              Path("/work/shared/tools/trec_eval")):
        if p and Path(p).is_file() and os.access(p, os.X_OK):
            return str(p)
    pytest.skip("trec_eval 10.0 not found (../shared/tools/trec_eval or $TRECKIT_TREC_EVAL)")


def recip_rank(capsys, *argv) -> tuple[str, str]:
    """(treckit eval -m recip_rank ARGV's summary value, its stderr)."""
    code, out, err = run_cli(["eval", "-m", "recip_rank", *argv], capsys)
    assert code == 0, err
    return out.split()[-1], err


def trec_eval_recip_rank(qrels, run) -> str:
    te = subprocess.run([trec_eval_binary(), "-m", "recip_rank", str(qrels), str(run)], capture_output=True, text=True)
    return te.stdout.split()[-1]


# ---------------------------------------------------------------- random runs in every format
DOCS = ["d1", "d2", "d3", "d4", "d5", "d6", "Rio 2", "a%b"]
PLAIN_DOCS = [d for d in DOCS if " " not in d]
SCORES = st.one_of(st.sampled_from([-3.5, -1.0, -0.5, 0.0, 1.0, 2.25, 7.0]),
                   st.floats(-20, 20, allow_nan=False, allow_infinity=False))
FORMATS = ("trec", "trec3", "tsv", "tsv-header", "tsv-rank", "tsv-rank-header", "jsonl", "jsonl-noscores", "jsonl-hits",
           "jsonl-gold")      # the last: no ids, lines in reverse order, joined to a gold file by query text


@st.composite
def run_case(draw):
    fmt = draw(st.sampled_from(FORMATS))
    pool = PLAIN_DOCS if fmt in ("trec", "trec3") else DOCS
    queries = []
    for q in range(draw(st.integers(1, 4))):
        docs = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=6, unique=True))
        negated = draw(st.booleans())          # QUEST's BM25: all scores <= 0
        scores = [(-abs(s) if negated else s) for s in draw(st.lists(SCORES, min_size=len(docs), max_size=len(docs)))]
        ranks = draw(st.permutations(range(1, len(docs) + 1)))
        queries.append((f"q{q}", docs, scores, list(ranks)))
    dup = draw(st.booleans()) and fmt not in ("tsv-rank", "tsv-rank-header")
    if dup:                       # a doc listed twice for a query, with another score
        q, docs, scores, ranks = queries[0]
        queries[0] = (q, docs + [docs[0]], scores + [draw(SCORES)], ranks + [len(docs) + 1])
    options = []
    order = draw(st.sampled_from([None, "auto", "desc", "asc", "given", "score", "rank"]))
    if order:
        options += ["--order", order]
    if draw(st.booleans()):
        options += ["--ties", draw(st.sampled_from(["keep", "break", "docid-asc"]))]
    if dup:
        options += ["--duplicates", draw(st.sampled_from(["keep-first", "keep-max", "keep-last"]))]
    if fmt == "tsv-rank":
        options += ["--tsv-third", "rank"]
    if fmt == "jsonl-gold":
        options += ["--gold", "GOLD"]              # the path is filled in by write_case
    grades = draw(st.lists(st.sampled_from([None, 0, 1, 2]), min_size=len(DOCS), max_size=len(DOCS)))
    return fmt, queries, options, grades


def write_case(tmp: Path, fmt: str, queries) -> Path:
    lines = []
    if fmt in ("tsv-header", "tsv-rank-header"):
        lines.append("qid\tdocid\tscore" if fmt == "tsv-header" else "qid\tpid\trank")
    if fmt == "jsonl-gold":
        (tmp / "gold.jsonl").write_text("".join(json.dumps({"id": q, "query": f"text of {q}", "docs": ["x"]}) + "\n"
                                                for q, *_ in queries))
    for q, docs, scores, ranks in (reversed(queries) if fmt == "jsonl-gold" else queries):
        if fmt.startswith("jsonl"):
            if fmt == "jsonl-gold":
                obj = {"query": f"text of {q}", "docs": docs, "scores": scores}
            elif fmt == "jsonl":
                obj = {"id": q, "docs": docs, "scores": scores}
            elif fmt == "jsonl-noscores":
                obj = {"id": q, "docs": docs}
            else:
                obj = {"qid": q, "hits": [{"docid": d, "score": s} for d, s in zip(docs, scores)]}
            lines.append(json.dumps(obj))
            continue
        for d, s, r in zip(docs, scores, ranks):
            lines.append({"trec": f"{q} Q0 {d} {r} {s!r} tag", "trec3": f"{q} {d} {s!r}",
                          "tsv": f"{q}\t{d}\t{s!r}", "tsv-header": f"{q}\t{d}\t{s!r}",
                          "tsv-rank": f"{q}\t{d}\t{r}", "tsv-rank-header": f"{q}\t{d}\t{r}"}[fmt])
    path = tmp / {"trec": "run.trec", "trec3": "run.txt"}.get(fmt, "run.jsonl" if fmt.startswith("jsonl") else "run.tsv")
    path.write_text("\n".join(lines) + "\n")
    return path


def write_qrels(tmp: Path, queries, grades) -> Path:
    rows = [(q, d, g) for q, *_ in queries for d, g in zip(DOCS, grades) if g is not None] or [(queries[0][0], "d1", 1)]
    rows += [(q, "judged-only", 1) for q, *_ in queries]          # every query judged: no query is skipped
    path = tmp / "qrels"
    treckit.write_qrels(Qrels.from_columns(*zip(*rows)), path)
    return path


def _api_options(options: list[str]) -> dict:
    return {k[2:].replace("-", "_"): v for k, v in zip(options[::2], options[1::2])}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run_case())
def test_evaluating_a_file_equals_evaluating_its_conversion(tmp_path_factory, capsys, case):
    """eval(read + convert) == eval(convert -> write -> read back), byte for byte, in every format and
    with every ordering option: through the CLI (`eval RUN OPTS` vs `run RUN OPTS -o X; eval X`) and
    through the API (`evaluate(RUN, **opts)` vs `write_run(read_run(RUN, **opts)); evaluate(X)`)."""
    fmt, queries, options, grades = case
    tmp = tmp_path_factory.mktemp("case")
    run, qrels = write_case(tmp, fmt, queries), write_qrels(tmp, queries, grades)
    options = [str(tmp / "gold.jsonl") if o == "GOLD" else o for o in options]
    converted = tmp / "converted.trec"
    code_run, _, err_run = run_cli(["run", run, "-o", converted, *options], capsys)
    code_direct, direct, err_direct = run_cli(["eval", "-q", "-m", "all_trec", qrels, run, *options], capsys)
    assert code_run == code_direct, (err_run, err_direct)
    if code_run:
        assert code_run == 2 and "duplicate" not in err_run          # only bad input fails, and alike
        return
    code_back, back, err = run_cli(["eval", "-q", "-m", "all_trec", qrels, converted], capsys)
    assert code_back == 0, err
    assert direct == back and "map" in direct

    opts = _api_options(options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", treckit.InputWarning)
        api_direct = treckit.evaluate(qrels, run, ["map", "P.5", "ndcg_cut.10", "recip_rank", "num_ret"], **opts)
        via_api = tmp / "via_api.trec"
        treckit.write_run(treckit.read_run(run, **opts), via_api)
        api_back = treckit.evaluate(qrels, via_api, ["map", "P.5", "ndcg_cut.10", "recip_rank", "num_ret"])
    pd.testing.assert_frame_equal(api_direct, api_back, check_exact=True)
    # the API's numbers are the CLI's (trec_eval's 4 decimals)
    summary = {ln.split()[0]: ln.split()[2] for ln in direct.splitlines() if ln.split()[1] == "all"}
    assert f"{api_direct.iloc[-1]['map']:.4f}" == summary["map"]


# ---------------------------------------------------------------- TREC runs: trec_eval's reading
def test_trec_runs_are_ranked_by_score_as_written(tmp_path, capsys):
    """A TREC run with all-negative scores listed most-negative first (rank 1) is ranked by score as
    written, as trec_eval ranks it: `auto` never negates a TREC file, in `eval` or in `run`."""
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 best 1\n1 0 other 0\n")
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 best 1 -9.5 bm25\n1 Q0 mid 2 -4.0 bm25\n1 Q0 worst 3 -1.0 bm25\n")
    assert recip_rank(capsys, qrels, run)[0] == "0.3333"          # trec_eval: -1.0 first, best third
    converted = tmp_path / "c.trec"
    run_cli(["run", run, "-o", converted], capsys)
    assert [ln.split()[2] for ln in converted.read_text().splitlines()] == ["worst", "mid", "best"]
    assert recip_rank(capsys, "--order", "asc", qrels, run)[0] == "1.0000"    # said explicitly: most negative first
    assert trec_eval_recip_rank(qrels, run) == "0.3333"


def test_trec_order_rank_uses_the_rank_column(tmp_path, capsys):
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n")
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 b 2 9.0 t\n1 Q0 a 1 1.0 t\n")          # scores say b first, ranks say a first
    assert recip_rank(capsys, qrels, run)[0] == "0.5000"
    for order in ("rank", "given"):
        assert recip_rank(capsys, "--order", order, qrels, run)[0] == "1.0000"
    assert treckit.evaluate(qrels, run, "recip_rank", order="rank")["recip_rank"].iloc[-1] == 1.0


# ---------------------------------------------------------------- rank-valued TSV (MS MARCO qid pid rank)
@pytest.mark.parametrize("header", [False, True])
def test_rank_valued_tsv_is_ranked_by_rank(tmp_path, capsys, header):
    ms = tmp_path / "ms.tsv"
    ms.write_text(("qid\tpid\trank\n" if header else "") + "1\tgood\t1\n1\tbad1\t2\n1\tbad2\t3\n")
    flag = [] if header else ["--tsv-third", "rank"]
    out = tmp_path / "ms.trec"
    code, _, err = run_cli(["run", ms, "-o", out, *flag], capsys)
    assert code == 0, err
    lines = [ln.split() for ln in out.read_text().splitlines()]
    assert [ln[2] for ln in lines] == ["good", "bad1", "bad2"] and [ln[3] for ln in lines] == ["1", "2", "3"]
    assert all(float(ln[4]) > 0 for ln in lines)           # positive scores: no rule can take them for negated
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 good 1\n")
    assert recip_rank(capsys, qrels, ms, *flag)[0] == "1.0000"          # good is first: 1/1
    api = treckit.evaluate(qrels, ms, "recip_rank", **({} if header else {"tsv_third": "rank"}))
    assert api["recip_rank"].iloc[-1] == 1.0
    assert trec_eval_recip_rank(qrels, out) == "1.0000"


def test_tsv_third_column_as_score_by_default(tmp_path, capsys):
    """Without a header or --tsv-third the third column is a score (higher first): bad2 (3) leads."""
    ms = tmp_path / "ms.tsv"
    ms.write_text("1\tgood\t1\n1\tbad1\t2\n1\tbad2\t3\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 good 1\n")
    value, err = recip_rank(capsys, qrels, ms)
    assert value == "0.3333" and "pass --tsv-third rank" in err      # said, not guessed
    scores = tmp_path / "scores.tsv"
    scores.write_text("1\tgood\t9.5\n1\tbad1\t2\n1\tbad2\t3\n")
    value, err = recip_rank(capsys, qrels, scores)
    assert value == "1.0000" and "tsv-third" not in err


# ---------------------------------------------------------------- QUEST predictions: ids, gold join
def test_quest_predictions_eval_equals_run_then_eval(tmp_path, capsys):
    """QUEST's BM25 predictions: negated BM25 scores, no ids, shuffled against the gold file.  `eval --gold`
    equals `run --gold` then `eval`, and trec_eval on the converted files gives the same number."""
    qrels, conv = tmp_path / "qrels", tmp_path / "bm25.trec"
    assert run_cli(["qrels", GOLD, "-o", qrels], capsys)[0] == 0
    assert run_cli(["run", PRED, "--gold", GOLD, "-o", conv], capsys)[0] == 0
    code, direct, err = run_cli(["eval", "-m", "map", "-m", "recip_rank", GOLD, PRED, "--gold", GOLD], capsys)
    assert code == 0, err
    assert "ranked as negated" in err and "matched to the gold file by query text" in err
    _, back, _ = run_cli(["eval", "-m", "map", "-m", "recip_rank", GOLD, conv], capsys)
    assert direct == back
    te = subprocess.run([trec_eval_binary(), "-m", "map", "-m", "recip_rank", str(qrels), str(conv)],
                        capture_output=True, text=True)
    assert te.stdout == back
    api = treckit.evaluate(GOLD, PRED, ["map"], gold=GOLD, per_query=False)
    assert f"{api['map'][0]:.4f}" == direct.split()[2]


def test_id_less_predictions_out_of_gold_order_are_an_error(tmp_path, capsys):
    for argv in (["eval", "-m", "map", GOLD, PRED], ["compare", GOLD, PRED, PRED]):
        code, _, err = run_cli(argv, capsys)
        assert code == 2 and "not in the gold file's order" in err and f"--gold {GOLD}" in err
    with pytest.raises(treckit.InputError, match="not in the gold file's order"):
        treckit.evaluate(GOLD, PRED, "map")


@pytest.mark.parametrize("command", ["eval", "compare", "run", "eval-in-gold-order"])
def test_id_less_lines_are_reported_once(tmp_path, capsys, command):
    """JSONL lines without a query id, numbered by line: one message per command, not one from the format
    reader and another from the run's reader."""
    gold_lines = GOLD.read_text().splitlines()
    by_text = {json.loads(ln)["query"]: ln for ln in PRED.read_text().splitlines()}
    ordered = tmp_path / "ordered.jsonl"          # the predictions in the gold file's order
    ordered.write_text("\n".join(by_text[json.loads(g)["query"]] for g in gold_lines) + "\n")
    qrels = tmp_path / "q.trec"
    assert run_cli(["qrels", GOLD, "-o", qrels], capsys)[0] == 0
    argv = {"eval": ["eval", "-m", "map", qrels, ordered],
            "compare": ["compare", qrels, ordered, ordered, "--name", "a", "--name", "b", "-m", "map"],
            "run": ["run", ordered, "-o", tmp_path / "x.trec"],
            "eval-in-gold-order": ["eval", "-m", "map", GOLD, ordered]}[command]
    code, _, err = run_cli(argv, capsys)
    assert code == 0, err
    about = [ln for ln in err.splitlines() if "no query id" in ln or "no id field" in ln]
    runs = 2 if command == "compare" else 1
    assert len(about) == runs and all(ln.startswith(f"treckit: {ordered}: {len(gold_lines)} JSONL lines have no query id "
                                                    "and were numbered by line (1, 2, ...)") for ln in about), err


def test_id_less_predictions_in_gold_order_are_numbered_with_a_warning(tmp_path, capsys):
    gold_lines = GOLD.read_text().splitlines()
    by_text = {json.loads(ln)["query"]: ln for ln in PRED.read_text().splitlines()}
    ordered = tmp_path / "ordered.jsonl"          # the predictions in the gold file's order
    ordered.write_text("\n".join(by_text[json.loads(g)["query"]] for g in gold_lines) + "\n")
    code, by_line, err = run_cli(["eval", "-m", "map", GOLD, ordered], capsys)
    assert code == 0, err
    _, joined, _ = run_cli(["eval", "-m", "map", GOLD, PRED, "--gold", GOLD], capsys)
    assert by_line == joined
    code, _, err = run_cli(["run", ordered, "-o", tmp_path / "x.trec"], capsys)
    assert code == 0 and "numbered by line" in err and "--gold" in err
    with pytest.warns(treckit.InputWarning, match="numbered by line"):
        treckit.read_run(ordered)
    other = tmp_path / "other_split.jsonl"        # predictions for queries the gold file does not have
    other.write_text('{"query": "not a gold query", "docs": ["x"], "scores": [1.0]}\n')
    code, _, err = run_cli(["eval", "-m", "map", "--missing", "zero", GOLD, other], capsys)
    assert code == 0 and "1 of 1 JSONL lines without a query id have a query text that the gold file" in err


def test_compare_reads_runs_as_eval_does(tmp_path, capsys):
    conv = tmp_path / "bm25.trec"
    run_cli(["run", PRED, "--gold", GOLD, "-o", conv], capsys)
    out = tmp_path / "c.json"
    code, _, err = run_cli(["compare", GOLD, PRED, conv, "--gold", GOLD, "-m", "map", "--name", "jsonl",
                            "--name", "trec", "--out", out], capsys)
    assert code == 0, err
    systems = json.loads(out.read_text())["systems"]
    _, direct, _ = run_cli(["eval", "-m", "map", GOLD, conv], capsys)
    assert systems["jsonl"]["metrics"] == systems["trec"]["metrics"]
    assert f"{systems['jsonl']['metrics']['macro']['map']:.4f}" == direct.split()[2]


def test_staged_scripts_take_the_same_options(tmp_path):
    qrels = tmp_path / "qrels"
    subprocess.run([sys.executable, ROOT / "code/evaluation/preprocess_qrels.py", "--input", GOLD, "--output", qrels],
                   check=True, capture_output=True)
    r = subprocess.run([sys.executable, ROOT / "code/evaluation/evaluate.py", "--run", PRED, "--qrels", qrels,
                        "--gold", GOLD, "--cutoffs", "10", "--output", tmp_path / "direct.json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    conv = tmp_path / "bm25.trec"
    r = subprocess.run([sys.executable, ROOT / "code/evaluation/preprocess_run.py", "--input", PRED, "--run_name", "bm25",
                        "--gold", GOLD, "--output", conv], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    subprocess.run([sys.executable, ROOT / "code/evaluation/evaluate.py", "--run", conv, "--qrels", qrels,
                    "--cutoffs", "10", "--output", tmp_path / "back.json"], check=True, capture_output=True)
    direct, back = (json.loads((tmp_path / f).read_text()) for f in ("direct.json", "back.json"))
    assert direct == back and direct["num_queries"] == 8
    r = subprocess.run([sys.executable, ROOT / "code/evaluation/evaluate.py", "--run", PRED, "--qrels", qrels,
                        "--order", "bogus"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown order 'bogus'" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("flag,value", [("--order", "bogus"), ("--tsv-third", "bogus"), ("--duplicates", "bogus"),
                                        ("--layout", "bogus"), ("--ties", "bogus"), ("--run-format", "bogus")])
def test_bad_reading_options_are_refused_everywhere(tmp_path, capsys, flag, value):
    run = tmp_path / "r.trec"
    run.write_text("1 Q0 a 1 1.0 t\n")
    qrels = tmp_path / "q"
    qrels.write_text("1 0 a 1\n")
    for argv in (["run", run, "-o", tmp_path / "o"], ["eval", qrels, run], ["compare", qrels, run, run]):
        code, _, err = run_cli([*argv, flag, value], capsys)
        assert code == 2 and f"'{value}'" in err and flag in err, (argv, err)
    with pytest.raises(treckit.InputError):
        treckit.read_run(run, **{flag[2:].replace("-", "_").replace("run_format", "format"): value})


def test_one_table_of_reading_options():
    """Every reading option exists on run, eval, compare and the staged scripts, with one default."""
    import argparse

    from treckit.cli.evaluate import READING_FLAGS
    from treckit.cli.main import get_app
    from treckit.inputs.options import FLAGS, RunReading
    from treckit.stages import add_reading_arguments
    import typer.main

    app = typer.main.get_command(get_app())
    for name in ("run", "compare"):
        opts = {o for p in app.commands[name].params for o in p.opts}
        assert {f.flag for f in FLAGS} <= opts, name
    assert set(READING_FLAGS) == {f.flag for f in FLAGS}
    ap = argparse.ArgumentParser()
    add_reading_arguments(ap)
    assert {f.flag for f in FLAGS} <= set(ap._option_string_actions)
    d = RunReading()
    assert (d.order, d.ties, d.duplicates, d.tsv_third, d.id_base, d.layout) == ("auto", "keep", "error", "score", 1, "auto")


def test_layout_and_skip_malformed_read_trec_qrels_too(tmp_path, capsys):
    """Where qrels and runs are read together, --layout and --skip-malformed (which the qrels reader's errors
    name) apply to TREC qrels as well: `treckit eval` and `treckit compare` keep `auto` by default."""
    qrels = tmp_path / "raw_qrels"
    qrels.write_text("8 0 District 9 1\n8 0 Rio 2 0\n8 0 American Psycho (film) 1\n9 0 Saw 3 1\n9 0 x 0\n")
    run = tmp_path / "r.trec"
    run.write_text("8 Q0 District%209 1 2 t\n8 Q0 Rio%202 2 1 t\n9 Q0 x 1 3 t\n9 Q0 Saw%203 2 2 t\n")
    code, _, err = run_cli(["eval", "-m", "recip_rank", qrels, run], capsys)
    assert code == 2 and "ambiguous line of 5 fields" in err and "--layout docid-spaces" in err
    value, err = recip_rank(capsys, "--layout", "docid-spaces", qrels, run)
    assert value == "0.7500" and "read 4 doc id(s) containing whitespace" in err      # (1 + 1/2) / 2
    # auto, the ambiguous lines skipped: query 8's relevant doc is American Psycho (film), not retrieved; query 9
    # has none left
    value, err = recip_rank(capsys, "--skip-malformed", qrels, run)
    assert value == "0.0000" and "skipped 3 malformed qrels line(s)" in err
    out = tmp_path / "c.json"
    code, _, err = run_cli(["compare", qrels, run, run, "-m", "recip_rank", "--layout", "docid-spaces", "--name", "a",
                            "--name", "b", "--test", "t-test", "--out", out], capsys)
    assert code == 0, err
    assert json.loads(out.read_text())["systems"]["a"]["metrics"]["macro"]["recip_rank"] == 0.75
