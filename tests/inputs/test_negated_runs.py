"""TREC runs whose rank column rises as the score rises (negated scores) never pass silently.

The rule (treckit.inputs.formats.rising_ranks): a query with two distinct scores at least is flagged when for every two
of its lines with score_i < score_j, rank_i < rank_j.  Such a run is still ranked as trec_eval ranks it (highest
score first); every reader says so once, naming the count and the fix, and the fix (--order asc / given) gives
trec_eval's numbers on the run written the agreed way (scores negated back).
"""
from __future__ import annotations

import importlib.util
import json
import random
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from helpers import ROOT, run_cli
from treckit import thresholds
from treckit.inputs.formats import trec
from treckit.inputs.formats.rising_ranks import NOTE, RisingRanks
from treckit.inputs.formats.trec import read_trec_run
from treckit.console.messages import InputWarning
from treckit.inputs.reading import rising_ranks_warning
from treckit.console.spelling import PYTHON

SAID = "rises as the score rises"


# ---------------------------------------------------------------- the rule, against its pairwise definition
def pairwise(lines: list[tuple[str, float, int]]) -> int:
    """Flagged queries by the definition, pair by pair."""
    flagged = 0
    for q in dict.fromkeys(q for q, _, _ in lines):
        mine = [(s, r) for x, s, r in lines if x == q]
        if len({s for s, _ in mine}) >= 2 and all(ri < rj for si, ri in mine for sj, rj in mine if si < sj):
            flagged += 1
    return flagged


def digits(ranks: list[int]) -> pa.Array:
    """A rank column as the fast reader has it when it only checks it: ASCII digits."""
    return pa.array([str(r).encode() for r in ranks], pa.binary())


query_lines = st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3", "10"]),
                                 st.sampled_from([-13.8, -9.0, -1.0, -0.0, 0.0, 2.5, 7.0]),
                                 st.integers(0, 6)), min_size=1, max_size=24)


@settings(max_examples=300, deadline=None)
@given(lines=query_lines, data=st.data())
def test_rule_equals_the_pairwise_definition_across_blocks(lines, data):
    """Lines in any order cut into blocks anywhere (a query's lines in several blocks, or scattered), the rank
    column as integers or as digits: the settled count is the pairwise definition's."""
    grouped = data.draw(st.booleans())
    if grouped:
        lines = sorted(lines, key=lambda x: x[0])
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(lines) - 1)), max_size=4)))) if len(lines) > 1 else []
    evidence = RisingRanks()
    for a, b in zip([0] + cuts, cuts + [len(lines)]):
        q, s, r = zip(*lines[a:b])
        rank = digits(list(r)) if data.draw(st.booleans()) else pa.array(r, pa.int64())
        evidence.add(RisingRanks.of_lines(pa.array(q, pa.string()), pa.array(s, pa.float64()), rank))
    assert evidence.settle() == pairwise(lines)
    assert evidence.queries == len({q for q, _, _ in lines})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=query_lines, block=st.integers(16, 200), fast=st.booleans())
def test_reader_counts_as_the_definition_on_both_paths(tmp_path, lines, block, fast):
    """The reader's own evidence (the line parser, or the Arrow reader in blocks of a few lines) settles to the
    pairwise count; negative ranks go through Arrow's own integer check."""
    path = tmp_path / "run"
    path.write_text("".join(f"{q} Q0 d{i} {r - 2} {s} t\n" for i, (q, s, r) in enumerate(lines)))
    old = thresholds.TREC_RUN_FAST_MIN_BYTES, thresholds.ARROW_PARALLEL_BLOCK_BYTES, trec.read_run_fast
    thresholds.TREC_RUN_FAST_MIN_BYTES, thresholds.ARROW_PARALLEL_BLOCK_BYTES = (0 if fast else 1 << 40), block
    read_fast = []
    trec.read_run_fast = lambda *a: read_fast.append(old[2](*a)) or read_fast[-1]
    try:
        for lean in (True, False):
            run = read_trec_run(path, lean=lean, rising_ranks=True)
            evidence = run.notes[NOTE]
            assert evidence.settle() == pairwise([(q, s, r - 2) for q, s, r in lines])
            assert evidence.queries == len({q for q, _, _ in lines})
    finally:
        thresholds.TREC_RUN_FAST_MIN_BYTES, thresholds.ARROW_PARALLEL_BLOCK_BYTES, trec.read_run_fast = old
    assert len(read_fast) == (2 if fast else 0) and all(r is not None for r in read_fast)     # the Arrow reader read it


def test_a_run_whose_ranks_agree_keeps_no_line_for_the_exact_check():
    """The cheap test clears every query of a usual run (rank 1 on the highest score, ties included) from its
    extreme lines: no line is kept, whatever the sign of the scores."""
    rng = np.random.default_rng(3)
    qid = np.repeat([f"q{i}" for i in range(300)], 50)
    score = np.concatenate([-np.sort(-np.round(rng.random(50) * 5, 1)) for _ in range(300)]) - 3.0
    rank = np.tile(np.arange(1, 51), 300)
    evidence = RisingRanks.of_lines(pa.array(qid), pa.array(score), digits(rank.tolist()))
    assert evidence.pending_lines == 0 and evidence.settle() == 0
    negated = RisingRanks.of_lines(pa.array(qid), pa.array(-score), digits(rank.tolist()))
    assert negated.pending_lines == qid.size and negated.settle() == 300


# ---------------------------------------------------------------- the commands
QUERIES = 6
FLAGGED = 4          # in a mixed run: q1..q4 negated, q5 agrees with trec_eval (negative scores), q6 has constant ranks


def write_runs(d: Path, mixed: bool = False, interleave: bool = False, ties: bool = False) -> dict[str, str]:
    """A run with negated queries (`neg`: all of them, or FLAGGED of them when ``mixed``), the same run written the
    agreed way (`agreed`: the scores negated back, the same ranks; trec_eval ranks it as meant), and its qrels."""
    rng = random.Random(7)
    neg, agreed, qrels = [], [], []
    for qn in range(1, QUERIES + 1):
        docs = rng.sample(range(500), 40)
        values = sorted((round(rng.uniform(1, 30), 1 if ties else 6) for _ in docs), reverse=True)
        for rank, (doc, v) in enumerate(zip(docs, values), 1):
            if qn <= FLAGGED or not mixed:          # rank 1 on the most negative score
                neg.append(f"q{qn} Q0 d{doc} {rank} {-v} sys\n")
                agreed.append(f"q{qn} Q0 d{doc} {rank} {v} sys\n")
            else:                                   # negative scores, rank 1 on the highest; or constant ranks
                line = f"q{qn} Q0 d{doc} {rank if qn == 5 else 0} {v - 40} sys\n"
                neg.append(line)
                agreed.append(line)
        qrels += [f"q{qn} 0 d{doc} {rng.choice([0, 1, 1, 2])}\n" for doc in rng.sample(docs, 12)]
    if interleave:
        order = list(range(len(neg)))
        random.Random(1).shuffle(order)
        neg, agreed = [neg[i] for i in order], [agreed[i] for i in order]
    d.mkdir(exist_ok=True)
    (d / "neg").write_text("".join(neg))
    (d / "agreed").write_text("".join(agreed))
    (d / "qrels").write_text("".join(qrels))
    return {k: str(d / k) for k in ("neg", "agreed", "qrels")}


def trec_eval_out(trec_eval, *args) -> str:
    return subprocess.run([str(trec_eval), *map(str, args)], capture_output=True, text=True, check=True).stdout


def said_once(err: str, source, count: int = QUERIES, queries: int = QUERIES, fix: str = "--order asc") -> None:
    assert err.count(SAID) == 1, err
    assert f"{source}: in {count} of its {queries} queries the rank column {SAID}" in err and fix in err, err


@pytest.fixture
def small_blocks(monkeypatch):
    """The Arrow reader in blocks of a few lines (queries across blocks), streamed blocks of a line or two."""
    monkeypatch.setattr(thresholds, "TREC_RUN_FAST_MIN_BYTES", 0)
    monkeypatch.setattr(thresholds, "ARROW_PARALLEL_BLOCK_BYTES", 300)
    monkeypatch.setattr(thresholds, "STREAM_BLOCK_MIN_BYTES", 48)
    monkeypatch.setattr(thresholds, "SHARDS_MAX", 5)


def test_the_example_is_evaluated_reversed_as_trec_eval_does_and_said(tmp_path, capsys, trec_eval):
    """-13.8 / -9 / -1 with ranks 1, 2, 3: trec_eval puts -1 first (the relevant doc at rank 1 comes last)."""
    (tmp_path / "run").write_text("1 Q0 a 1 -13.8 t\n1 Q0 b 2 -9 t\n1 Q0 c 3 -1 t\n")
    (tmp_path / "qrels").write_text("1 0 a 1\n")
    (tmp_path / "agreed").write_text("1 Q0 a 1 13.8 t\n1 Q0 b 2 9 t\n1 Q0 c 3 1 t\n")
    argv = ["-m", "recip_rank", tmp_path / "qrels"]
    code, out, err = run_cli(["eval", *argv, tmp_path / "run"], capsys)
    assert code == 0 and out == trec_eval_out(trec_eval, *argv, tmp_path / "run")
    assert "0.3333" in out
    assert err.count(SAID) == 1 and f"{tmp_path / 'run'}: in 1 of its 1 query the rank column {SAID}" in err
    for order in ("asc", "given"):
        code, out, err = run_cli(["eval", "--order", order, *argv, tmp_path / "run"], capsys)
        assert code == 0 and out == trec_eval_out(trec_eval, *argv, tmp_path / "agreed") and err == ""
        assert "1.0000" in out
    code, out, err = run_cli(["eval", "--order", "desc", *argv, tmp_path / "run"], capsys)    # trec_eval's, as meant
    assert code == 0 and "0.3333" in out and err == ""


@pytest.mark.parametrize("lines, flagged", [
    (["q Q0 a 1 -13.8 t", "q Q0 b 1 -9 t", "q Q0 c 1 -1 t"], 0),          # constant ranks
    (["q Q0 a 0 -13.8 t", "q Q0 b 0 -9 t"], 0),
    (["q Q0 a 1 2.0 t", "q Q0 b 2 5.0 t", "q Q0 c 3 9.5 t"], 1),            # positive scores, ranks rising with them
    (["q Q0 a 3 -13.8 t", "q Q0 b 2 -9 t", "q Q0 c 1 -1 t"], 0),            # negative scores, ranks as trec_eval's
    (["q Q0 a 1 -5 t", "q Q0 b 2 -5 t"], 0),                                # one distinct score
    (["q Q0 a 1 -5 t", "q Q0 b 2 -5 t", "q Q0 c 3 -1 t"], 1),               # ties below a higher score
    (["q Q0 a 1 -5 t", "q Q0 b 3 -5 t", "q Q0 c 2 -1 t"], 0),               # a tie's rank above the higher score's
])
def test_which_runs_are_said(tmp_path, capsys, lines, flagged):
    (tmp_path / "run").write_text("\n".join(lines) + "\n")
    (tmp_path / "qrels").write_text("q 0 a 1\n")
    code, _, err = run_cli(["eval", "-m", "map", tmp_path / "qrels", tmp_path / "run"], capsys)
    assert code == 0 and err.count(SAID) == flagged


@pytest.mark.parametrize("path", ["lines", "arrow blocks", "streamed", "streamed, interleaved"])
def test_treckit_eval_says_it_once_on_every_path(tmp_path, capsys, trec_eval, small_blocks, monkeypatch, path):
    """The line parser, the Arrow reader (queries across its blocks), the streaming engine (carried-over queries)
    and its shards (interleaved queries): one warning with the whole file's counts, trec_eval's numbers; the fix
    suggested gives trec_eval's numbers on the agreed run."""
    interleave = path.endswith("interleaved")
    mixed = write_runs(tmp_path / "mixed", mixed=True, interleave=interleave)
    r = write_runs(tmp_path / "all", interleave=interleave)
    if path == "lines":
        monkeypatch.setattr(thresholds, "TREC_RUN_FAST_MIN_BYTES", 1 << 40)
    seen = []
    from treckit.engines import stream
    real = stream.StreamEvaluation.run
    monkeypatch.setattr(stream.StreamEvaluation, "run", lambda self: seen.append(self) or real(self))
    limit = ["--memory-limit", "1K" if path.startswith("streamed") else "0"]
    argv = ["-q", "-m", "map", "-m", "P.5", "-m", "recip_rank"]
    for run, flagged in ((mixed, FLAGGED), (r, QUERIES)):
        code, out, err = run_cli(["eval", *limit, *argv, run["qrels"], run["neg"]], capsys)
        assert code == 0 and out == trec_eval_out(trec_eval, *argv, run["qrels"], run["neg"])
        said_once(err, run["neg"], flagged)
    assert len(seen) == (2 if path.startswith("streamed") else 0)
    assert all((s.shard_dir is not None) == interleave for s in seen)
    for order in ("asc", "given"):
        code, out, err = run_cli(["eval", *limit, "--order", order, *argv, r["qrels"], r["neg"]], capsys)
        assert code == 0 and out == trec_eval_out(trec_eval, *argv, r["qrels"], r["agreed"]) and SAID not in err
    code, out, err = run_cli(["eval", *limit, *argv, r["qrels"], r["agreed"]], capsys)
    assert code == 0 and SAID not in err


def test_order_asc_with_ties_is_trec_eval_on_the_agreed_run(tmp_path, capsys, trec_eval):
    r = write_runs(tmp_path, ties=True)
    argv = ["-q", "-m", "all_trec", r["qrels"]]
    code, out, err = run_cli(["eval", "--order", "asc", *argv, r["neg"]], capsys)
    assert code == 0 and out == trec_eval_out(trec_eval, *argv, r["agreed"])


@pytest.mark.parametrize("blocks", [False, True])
def test_treckit_run_says_it_once_and_order_asc_writes_the_agreed_ranking(tmp_path, capsys, trec_eval, small_blocks,
                                                                        monkeypatch, blocks):
    r = write_runs(tmp_path)
    if not blocks:
        monkeypatch.setattr(thresholds, "TREC_RUN_FAST_MIN_BYTES", 1 << 40)
    code, _, err = run_cli(["run", r["neg"], "-o", tmp_path / "as_read"], capsys)
    assert code == 0
    said_once(err, r["neg"])
    argv = ["-q", "-m", "map", "-m", "recip_rank", r["qrels"]]
    for order in ("asc", "given"):
        code, _, err = run_cli(["run", r["neg"], "--order", order, "-o", tmp_path / order], capsys)
        assert code == 0 and SAID not in err
        assert trec_eval_out(trec_eval, *argv, tmp_path / order) == trec_eval_out(trec_eval, *argv, r["agreed"])
    assert trec_eval_out(trec_eval, *argv, tmp_path / "as_read") == trec_eval_out(trec_eval, *argv, r["neg"])


@pytest.mark.parametrize("limit", ["0", "1K"])
def test_treckit_compare_says_it_once_per_run(tmp_path, capsys, small_blocks, limit):
    """Two negated runs, read whole or streamed: one warning each; --order asc gives the numbers of the agreed
    runs."""
    r = write_runs(tmp_path)
    (tmp_path / "neg2").write_text(Path(r["neg"]).read_text())
    (tmp_path / "agreed2").write_text(Path(r["agreed"]).read_text())

    def compare(*runs_and_flags):
        code, out, err = run_cli(["compare", r["qrels"], *runs_and_flags, "--name", "one", "--name", "two",
                                  "-m", "map", "-m", "recip_rank", "--memory-limit", limit, "--permutations", "100",
                                  "--resamples", "100", "--out", "-"], capsys)
        assert code == 0, err
        return [s["metrics"] for s in json.loads(out)["systems"].values()], err

    as_read, err = compare(r["neg"], str(tmp_path / "neg2"))
    assert err.count(SAID) == 2
    for path in (r["neg"], tmp_path / "neg2"):
        assert err.count(f"{path}: in {QUERIES} of its {QUERIES} queries the rank column {SAID}") == 1
    fixed, err = compare(r["neg"], str(tmp_path / "neg2"), "--order", "asc")
    assert SAID not in err
    agreed, err = compare(r["agreed"], str(tmp_path / "agreed2"))
    assert SAID not in err
    assert fixed == agreed != as_read


def staged(name: str):
    spec = importlib.util.spec_from_file_location(f"staged_{name}", ROOT / "code" / "evaluation" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


@pytest.mark.parametrize("limit", ["0", "1K"])
def test_staged_scripts_say_it_once_and_take_the_fix(tmp_path, capsys, small_blocks, limit):
    r = write_runs(tmp_path)
    evaluate = staged("evaluate")
    base = ["--qrels", r["qrels"], "--cutoffs", "1", "5", "--memory-limit", limit]
    assert evaluate(["--run", r["neg"], *base, "--output", str(tmp_path / "as_read.json")]) == 0
    said_once(capsys.readouterr().err, r["neg"])
    assert evaluate(["--run", r["neg"], *base, "--order", "asc", "--output", str(tmp_path / "fixed.json")]) == 0
    assert SAID not in capsys.readouterr().err
    assert evaluate(["--run", r["agreed"], *base, "--output", str(tmp_path / "agreed.json")]) == 0
    fixed, agreed, as_read = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("fixed", "agreed", "as_read"))
    assert fixed == agreed != as_read

    preprocess = staged("preprocess_run")
    assert preprocess(["--input", r["neg"], "--run_name", "x", "--output", str(tmp_path / "conv")]) == 0
    said_once(capsys.readouterr().err, r["neg"])
    assert preprocess(["--input", r["neg"], "--run_name", "x", "--output", str(tmp_path / "conv_asc"),
                       "--order", "asc"]) == 0
    assert SAID not in capsys.readouterr().err
    assert evaluate(["--run", str(tmp_path / "conv_asc"), *base, "--output", str(tmp_path / "conv.json")]) == 0
    assert json.loads((tmp_path / "conv.json").read_text()) == agreed


@pytest.mark.parametrize("limit", [0, "1K"])
def test_python_api_warns_once_with_an_input_warning(tmp_path, small_blocks, limit):
    import treckit
    r = write_runs(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        as_read = treckit.evaluate(r["qrels"], r["neg"], ["map", "recip_rank"], memory_limit=limit)
        run = treckit.read_run(r["neg"])
    said = [w for w in caught if SAID in str(w.message)]
    assert len(said) == 2 and all(w.category is InputWarning for w in said)
    assert "order='asc'" in str(said[0].message) and "--order" not in str(said[0].message)
    assert said[0].filename == __file__                     # attributed to the caller's line
    assert len(run) == QUERIES * 40
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fixed = treckit.evaluate(r["qrels"], r["neg"], ["map", "recip_rank"], order="asc", memory_limit=limit)
        treckit.read_run(r["neg"], order="given")
    assert not [w for w in caught if SAID in str(w.message)]
    agreed = treckit.evaluate(r["qrels"], r["agreed"], ["map", "recip_rank"])
    assert fixed.equals(agreed) and not as_read.equals(agreed)


def test_a_rank_that_is_not_an_integer_is_still_an_error(tmp_path, capsys, small_blocks):
    r = write_runs(tmp_path)
    lines = Path(r["neg"]).read_text().splitlines(keepends=True)
    lines[100] = lines[100].replace(" 21 ", " 2x1 ", 1)
    (tmp_path / "bad").write_text("".join(lines))
    code, out, err = run_cli(["eval", "-m", "map", r["qrels"], tmp_path / "bad"], capsys)
    assert code == 2 and out == "" and f"{tmp_path / 'bad'}:101:" in err and "rank '2x1' is not an integer" in err


def test_commands_without_reading_options_offer_a_conversion_that_works(tmp_path, capsys):
    """`treckit fuse` takes no --order: its warning's fix is converting the run first, which then reads clean."""
    r = write_runs(tmp_path)
    code, _, err = run_cli(["fuse", "--method", "rrf", "-o", tmp_path / "fused", r["neg"]], capsys)
    assert code == 0 and err.count(SAID) == 1
    assert f"`treckit run {r['neg']} --order asc -o FIXED`" in err and "pass --order" not in err
    code, _, _ = run_cli(["run", r["neg"], "--order", "asc", "-o", tmp_path / "FIXED"], capsys)
    code, _, err = run_cli(["fuse", "--method", "rrf", "-o", tmp_path / "fused2", tmp_path / "FIXED"], capsys)
    assert code == 0 and SAID not in err


def test_message_spellings():
    """The Python API's spelling of the fix (order='asc'); a shell command in backticks stays a shell command."""
    text = rising_ranks_warning("r", 2, 5)
    assert "r: in 2 of its 5 queries" in text and "they are ranked" in text
    assert PYTHON.spell(text).count("order='asc'") == 1 and "--" not in PYTHON.spell(text)
    shell = rising_ranks_warning("r", 1, 1, order_option=False)
    assert PYTHON.spell(shell) == shell and "in 1 of its 1 query" in shell and "it is ranked" in shell
