"""Preference judgments (-R prefs, -R qrels_prefs, -R qrels_jg): trec_eval 10.0's quicktest lines byte for
byte, differential cases against the real trec_eval on variations and seeded random files, hand-computed
counts from trec_eval's own documentation, and the errors."""
from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from helpers import ROOT, run_cli
from treckit import thresholds

DATA = Path(os.environ.get("TRECKIT_REFERENCE_DATA", ROOT.parent / "shared" / "data"))
TREC_EVAL = Path(os.environ.get("TRECKIT_TREC_EVAL", ROOT.parent / "shared" / "tools" / "trec_eval"))


@pytest.fixture
def data() -> Path:
    if not (DATA / "trec_eval").is_dir():
        pytest.skip(f"reference data not found at {DATA} (a user's clone has no ../shared; set TRECKIT_REFERENCE_DATA)")
    return DATA / "trec_eval"


@pytest.fixture
def trec_eval() -> Path:
    if not os.access(TREC_EVAL, os.X_OK):
        pytest.skip(f"trec_eval 10.0 not found at {TREC_EVAL} (set TRECKIT_TREC_EVAL)")
    return TREC_EVAL


def treckit(args, capsys):
    return run_cli(["eval", "--format", "trec_eval", *args], capsys)


# ------------------------------------------------------------------ trec_eval's quicktest
QUICKTEST = [
    ("out.test.prefs", "-m all_prefs -q -R prefs prefs.test prefs.results.test"),
    ("out.test.prefs", "-m all_prefs -q -R prefs prefs.comment.test prefs.results.test"),
    ("out.test.qrels_prefs", "-m all_prefs -q -R qrels_prefs qrels.test results.test"),
    ("out.test.qrels_jg", "-m qrels_jg -q -R qrels_jg qrels.123 results.test"),
    ("out.test.qrels_jg", "-m qrels_jg -q -R qrels_jg qrels.comments.123 results.test"),
]


@pytest.mark.parametrize("expected,args", QUICKTEST, ids=[a.split()[-2] for _, a in QUICKTEST])
def test_quicktest_byte_identical(data, capsys, monkeypatch, expected, args):
    monkeypatch.chdir(data)
    code, out, err = treckit(args.split(), capsys)
    assert code == 0, err
    assert out == (data / expected).read_text()


# ------------------------------------------------------------------ differential: the real trec_eval
def _same_as_trec_eval(trec_eval, capsys, args, cwd):
    ref = subprocess.run([str(trec_eval), *args], capture_output=True, text=True, cwd=cwd)
    assert ref.returncode == 0, ref.stderr
    old = os.getcwd()
    os.chdir(cwd)
    try:
        code, out, err = treckit(args, capsys)
    finally:
        os.chdir(old)
    assert code == 0, err
    assert out == ref.stdout
    return out


VARIATIONS = [
    "-q -m all_prefs -R qrels_prefs qrels.123 results.test",            # several jgs, grade -1
    "-q -m all_prefs -R qrels_prefs qrels.rel_level results.test",
    "-q -m all_prefs -R qrels_prefs qrels.comment.test results.comment.test",   # ids with '#'
    "-q -c -m all_prefs -R qrels_prefs qrels.test results.trunc",       # -c: 302 scored on the placeholder
    "-q -M 50 -m all_prefs -R qrels_prefs qrels.test results.test",
    "-q -m all_prefs -Z zscores_file -R qrels_prefs qrels.test results.test",
    "-q -M 3 -m all_prefs -R prefs prefs.test prefs.results.test",
    "-m prefs -R prefs prefs.test prefs.results.test",                  # trec_eval's 'prefs' nickname, no -q
    "-q -m prefs_pair -m prefs_avgjg_Rnonrel_ret -m num_q -R prefs prefs.test prefs.results.test",
    "-q -n -m prefs_simp_imp -R prefs prefs.test prefs.results.test",
    "-q -J -l 3 -N 100 -m all_prefs -R prefs prefs.test prefs.results.test",   # -J -l -N do not apply to prefs
    "-q -m qrels_jg -R qrels_jg qrels.test results.test",
    "-q -J -l 2 -m qrels_jg -R qrels_jg qrels.123 results.test",
    "-q -c -M 20 -m qrels_jg -R qrels_jg qrels.123 results.trunc",
    "-q -m P_avgjg.1,7,3000 -m Rprec_mult_avgjg.0.1,0.35,2.5 -m map_avgjg -R qrels_jg qrels.123 results.test",
    "-q -l 0 -m qrels_jg -R qrels_jg qrels.123 results.test",
    "-q -m qrels_jg -R qrels_jg qrels.comment.test results.comment.test",
]


@pytest.mark.parametrize("args", VARIATIONS)
def test_variations_match_trec_eval(data, trec_eval, capsys, args):
    _same_as_trec_eval(trec_eval, capsys, args.split(), data)


def test_zscores_match_trec_eval(data, trec_eval, capsys, tmp_path):
    """-Z with prefs and avgjg names (every query listed: trec_eval 10.0 reads past its table otherwise)."""
    rows = []
    for i, q in enumerate(sorted({line.split()[0] for line in (data / "prefs.test").read_text().splitlines()}), 1):
        rows += [f"{q} prefs_simp 0.{i % 10} 0.25", f"{q} prefs_num_prefs_poss {i % 4} 0.5",
                 f"{q} prefs_pair 0.3 {0 if i % 3 == 0 else 0.1}"]
    for q in ("301", "302", "303"):
        rows += [f"{q} map_avgjg 0.1 0.05", f"{q} P_avgjg_5 0.2 0", f"{q} P_avgjg_10 0.3 0.1"]
    (tmp_path / "z").write_text("\n".join(rows) + "\n")
    z = str(tmp_path / "z")
    _same_as_trec_eval(trec_eval, capsys, ["-q", "-Z", z, "-m", "prefs_simp", "-m", "prefs_num_prefs_poss", "-m",
                                           "prefs_pair", "-R", "prefs", "prefs.test", "prefs.results.test"], data)
    _same_as_trec_eval(trec_eval, capsys, ["-q", "-Z", z, "-m", "map_avgjg", "-m", "P_avgjg.5,10", "-R", "qrels_jg",
                                           "qrels.123", "results.test"], data)


def _random_prefs(rng: random.Random, docs: list[str]) -> list[str]:
    """Queries of 1-3 judgment groups of 1-3 sub-groups over a few docs: consistent within a group (each
    doc has one latent level per group, each sub-group a monotone image of it), ties, duplicate lines."""
    lines = []
    for q in range(rng.randint(1, 4)):
        for g in range(rng.randint(1, 3)):
            jg = rng.choice(["u1", "u2", "A", "b", "0", "10", "9"]) + str(g)
            nsub = rng.choice([1, 1, 2, 3])
            pool = rng.sample(docs, rng.randint(2, min(len(docs), 9)))
            latent = {d: rng.choice([0, 0, 1, 2, 3, 5]) for d in pool}
            for s in range(nsub):
                sub = rng.sample(pool, rng.randint(1, len(pool))) if nsub > 1 else pool
                scale = rng.choice([1, 2, 0.5])
                for d in sub:
                    lv = latent[d] * scale if nsub > 1 else latent[d]
                    lines.append(f"{q + 1} {jg} s{s} {d} {lv:g}")
                    if nsub == 1 and rng.random() < 0.1:
                        lines.append(f"{q + 1} {jg} s{s} {d} {lv:g}")
    rng.shuffle(lines)
    return lines


def _random_qrels_jg(rng: random.Random, docs: list[str]) -> list[str]:
    lines = []
    for q in range(rng.randint(1, 4)):
        for g in range(rng.randint(1, 3)):
            for d in rng.sample(docs, rng.randint(1, len(docs))):
                lines.append(f"{q + 1} {g} {d} {rng.choice([-1, 0, 0, 1, 2, 3])}")
    rng.shuffle(lines)
    return lines


def _random_run(rng: random.Random, qids: list[str], docs: list[str], drop: bool) -> list[str]:
    """Tied scores, docs the judgments do not know, queries left out (when -c is on)."""
    lines = [f"{q} Q0 {d} 0 {rng.choice([1, 2, 2, 3, 0.5, -1, 7])} run{rng.randint(0, 2)}"
             for q in qids if not (drop and q != qids[0] and rng.random() < 0.3)
             for d in rng.sample(docs, rng.randint(1, len(docs)))]
    rng.shuffle(lines)
    return lines


def _random_case(seed: int, rel_format: str, tmp_path: Path) -> list[str]:
    rng = random.Random(seed)
    docs = [f"D{i}" for i in range(rng.randint(3, 14))] + ["d-a", "Da", "d_b"]
    flags = ["-q"] if rng.random() < 0.6 else []
    complete = rng.random() < 0.3
    flags += ["-c"] if complete else []
    flags += ["-M", str(rng.randint(0, 8))] if rng.random() < 0.3 else []
    if rel_format == "qrels_jg":
        flags += ["-J"] if rng.random() < 0.3 else []
        flags += ["-l", str(rng.choice([0, 2, 3]))] if rng.random() < 0.3 else []
        rel = _random_qrels_jg(rng, docs)
        measures = rng.choice([["qrels_jg"], ["map_avgjg"], ["P_avgjg.1,3,7"], ["Rprec_mult_avgjg.0.1,0.5,1.3,3"],
                               ["num_q", "P_avgjg", "map_avgjg"]])
    else:
        rel = _random_prefs(rng, docs)
        if rel_format == "qrels_prefs":
            seen: dict = {}
            rel = [f"{f[0]} {f[1]} {f[3]} {int(float(f[4]))}" for f in (x.split() for x in rel)]
            rel = [x for x in rel if seen.setdefault(tuple(x.split()[:3]), x) == x]
        measures = rng.choice([["all_prefs"], ["prefs"], ["prefs_pair", "prefs_avgjg_Rnonrel"],
                               ["prefs_avgjg_Rnonrel_ret", "prefs_pair_imp", "prefs_pair_ret"]])
    run = _random_run(rng, sorted({x.split()[0] for x in rel}), docs, complete)
    (tmp_path / "rel").write_text("\n".join(rel) + "\n")
    (tmp_path / "run").write_text("\n".join(run) + "\n")
    return flags + [a for m in measures for a in ("-m", m)] + ["-R", rel_format, "rel", "run"]


@pytest.mark.parametrize("rel_format", ["prefs", "qrels_prefs", "qrels_jg"])
@pytest.mark.parametrize("seed", range(12))
def test_random_files_match_trec_eval(trec_eval, capsys, tmp_path, rel_format, seed):
    args = _random_case(seed, rel_format, tmp_path)
    _same_as_trec_eval(trec_eval, capsys, args, tmp_path)


def test_pairs_over_several_groups_match_trec_eval(trec_eval, capsys, tmp_path):
    """prefs_pair with jgs that agree, conflict and repeat lines: count(i>j) / (count(i>j) + count(j>i))."""
    (tmp_path / "p").write_text("q A s a 2\nq A s a 2\nq A s b 1\nq A s c 0\n"
                                "q B s b 3\nq B s a 1\nq B t c 0\nq B t a 5\n"
                                "q C s a 1\nq C s d 0\n")
    (tmp_path / "r").write_text("q Q0 b 1 3 t\nq Q0 a 2 2 t\nq Q0 x 3 2 t\n")
    out = _same_as_trec_eval(trec_eval, capsys, "-q -m all_prefs -R prefs p r".split(), tmp_path)
    # by hand, run order b, a (c, d not retrieved): (b,a): A says a>b twice (a duplicated line), B says b>a
    # once -> 1/3; (b,c): A b>c, B b>c through a -> 2/2; (a,c): A twice, B once -> 3/3; (a,d): C -> 1/1
    assert f"prefs_pair            \tq\t{(1 / 3 + 3) / 4:6.4f}\n" in out


def test_levels_below_zero_differ_only_where_trec_eval_reads_past_its_array(trec_eval, capsys, tmp_path, monkeypatch):
    """Levels 2, 0 and -1: the non-relevant docs sit in two ECs and the last (-1) holds fewer docs than the
    relevant ones prefs_avgjg_Rnonrel pairs with it; trec_eval reads past its array (undefined), treckit
    uses the one doc there is and says so.  Every other line is trec_eval's."""
    (tmp_path / "p").write_text("q A s d1 2\nq A s d2 2\nq A s d3 0\nq A s d4 0\nq A s d5 0\nq A s d6 -1\n")
    (tmp_path / "r").write_text("q Q0 d6 1 9 r\nq Q0 d3 1 8 r\nq Q0 d1 1 7 r\nq Q0 d5 1 6 r\n")
    args = "-q -m all_prefs -R prefs p r".split()
    ref = subprocess.run([str(trec_eval), *args], capture_output=True, text=True, cwd=tmp_path).stdout
    monkeypatch.chdir(tmp_path)
    code, out, err = treckit(args, capsys)
    assert code == 0 and "reads past its array" in err
    ours, theirs = out.splitlines(), ref.splitlines()
    assert len(ours) == len(theirs)
    differ = [a.split("\t")[0].strip() for a, b in zip(ours, theirs) if a != b]
    assert set(differ) == {"prefs_avgjg_Rnonrel"}
    # by hand: internal ranks d6 0, d3 1, d1 2, d5 3 (retrieved), d2 4, d4 5; R = 2 < N = 4, so recount:
    # level 2 {2, 4} x level 0 {1, 3, 5}: fulfilled when the first is retrieved and above: (2,3), (2,5) -> 2 of 6;
    # every line {2, 4, 1, 3, 5, 0} x the first R lines of the last EC, which has only {0}: 0 of 6 -> 2 / 12
    assert f"prefs_avgjg_Rnonrel   \tq\t{2 / 12:6.4f}" in out


# ------------------------------------------------------------------ hand computed (trec_eval's documentation)
def _eval(tmp_path, capsys, prefs: str, run: str, measures=("all_prefs",), extra=()):
    (tmp_path / "p").write_text(prefs)
    (tmp_path / "r").write_text(run)
    return treckit([*extra, *(a for m in measures for a in ("-m", m)), "-q", "-R", "prefs",
                    str(tmp_path / "p"), str(tmp_path / "r")], capsys)


def _value(out: str, name: str, qid: str = "q") -> str:
    return next(line.split("\t")[2] for line in out.splitlines() if line.split("\t")[:2] == [f"{name:<22}", qid])


def test_complete_ranking_gives_thirteen_preferences(tmp_path, capsys):
    """get_prefs.c: levels 3, 2, 0, 6, 0, 2 in one sub-group 'establish a total of 13 preferences'.
    The run ranks docno4 > docno1 > docno3: fulfilled with both retrieved: 4>1, 4>3, 1>3 = 3 of 3;
    implied (one retrieved): 4 and 1 above 2, 6, 5 (5 of 5: 4>2,4>6,4>5,1>2... 1>5) and 3 above none."""
    prefs = "".join(f"q u s docno{i} {lv}\n" for i, lv in zip(range(1, 7), (3, 2, 0, 6, 0, 2)))
    code, out, err = _eval(tmp_path, capsys, prefs, "q Q0 docno4 1 3 t\nq Q0 docno1 2 2 t\nq Q0 docno3 3 1 t\n")
    assert code == 0, err
    assert _value(out, "prefs_num_prefs_poss") == "13"
    assert _value(out, "prefs_num_prefs_ful_ret") == "3"
    # implied: docno4 > {2, 6, 5}: 3; docno1 > {2, 6, 5}: 3; docno3 (level 0) is above nothing -> 6 fulfilled;
    # docno2, docno6 (level 2) above docno3 (retrieved, level 0): 2 failed; docno2/6 > docno5: neither retrieved
    assert _value(out, "prefs_num_prefs_ful") == str(3 + 6)
    assert _value(out, "prefs_simp") == f"{9 / 13:6.4f}"
    assert _value(out, "prefs_simp_imp") == f"{9 / 11:6.4f}"


def test_transitive_preferences(tmp_path, capsys):
    """get_prefs.c: sub-groups 1>2>3 and 2>4 'express 5 preferences (1>2, 1>3, 2>3, 2>4, 1>4)'."""
    prefs = "q u s1 d1 3\nq u s1 d2 2\nq u s1 d3 1\nq u s2 d2 5\nq u s2 d4 4\n"
    code, out, err = _eval(tmp_path, capsys, prefs, "q Q0 d4 1 9 t\nq Q0 d3 2 8 t\nq Q0 d2 3 7 t\nq Q0 d1 4 6 t\n")
    assert code == 0, err
    assert _value(out, "prefs_num_prefs_poss") == "5"
    assert _value(out, "prefs_num_prefs_ful") == "0"       # the run reverses every one of them


def test_several_users(tmp_path, capsys):
    """get_prefs.c: two judgment groups expressing '5 preferences (1>2, 3>1, 4>1, 3>4, 2>1)'; prefs_avgjg
    averages the groups: u1 1 of 1, u2 (run d1 d2 d3 d4) 1>2 is u1's; u2: 3>1 no, 4>1 no, 3>4 yes, 2>1 no."""
    prefs = ("q u1 s1 d1 3.0\nq u1 s1 d2 2.0\nq u2 s1 d1 0.0\nq u2 s1 d3 6.0\nq u2 s1 d4 2.0\n"
             "q u2 s2 d1 0.0\nq u2 s2 d2 8.0\n")
    code, out, err = _eval(tmp_path, capsys, prefs, "q Q0 d1 1 9 t\nq Q0 d2 2 8 t\nq Q0 d3 3 7 t\nq Q0 d4 4 6 t\n")
    assert code == 0, err
    assert _value(out, "prefs_num_prefs_poss") == "5"
    assert _value(out, "prefs_num_prefs_ful") == "2"
    assert _value(out, "prefs_avgjg") == f"{(1 / 1 + 1 / 4) / 2:6.4f}"
    # pairs: (1,2) u1 yes, u2 no -> 1/2; (1,3) 0; (1,4) 0; (3,4) 1 -> 1.5 / 4
    assert _value(out, "prefs_pair") == f"{1.5 / 4:6.4f}"


def test_ties_in_score_go_by_doc_id_ascending(tmp_path, capsys):
    """The prefs code breaks score ties by doc id ascending (the qrels measures descending)."""
    code, out, err = _eval(tmp_path, capsys, "q u s a 1\nq u s b 0\n", "q Q0 b 1 1.0 t\nq Q0 a 2 1.0 t\n",
                           ("prefs_simp",))
    assert code == 0, err
    assert _value(out, "prefs_simp") == "1.0000"


# ------------------------------------------------------------------ errors and limits
@pytest.mark.parametrize("prefs,message", [
    ("q u s1 a 2\nq u s1 b 1\nq u s2 b 2\nq u s2 a 1\n", "contradict each other"),
    ("q u s1 a 2\nq u s1 b 0\nq u s2 b 3\nq u s2 c 1\n", "both level 0"),
    ("q u s a 2\nq u s a 1\n", "two different levels"),
    ("q u s a\n", "needs 5 fields"),
    ("q u s a high\n", "is not a number"),
    ("q u s a nan\n", "is not a number"),
    ("# only a comment\n", "no preference judgments"),
])
def test_bad_prefs_are_clear_errors(tmp_path, capsys, prefs, message):
    code, out, err = _eval(tmp_path, capsys, prefs, "q Q0 a 1 1 t\nq Q0 b 2 0.5 t\n")
    assert code == 2 and message in err and "fix:" in err and out == ""


def test_measures_and_formats_are_checked(data, capsys, monkeypatch):
    monkeypatch.chdir(data)
    code, _, err = treckit("-m map -R prefs prefs.test prefs.results.test".split(), capsys)
    assert code == 2 and "needs -R qrels" in err
    code, _, err = treckit("-m prefs_simp qrels.test results.test".split(), capsys)
    assert code == 2 and "needs -R prefs" in err
    code, _, err = treckit("-m map_avgjg -R qrels_prefs qrels.test results.test".split(), capsys)
    assert code == 2 and "needs -R qrels_jg" in err
    code, _, err = treckit("-R bogus qrels.test results.test".split(), capsys)
    assert code == 2 and "unknown rel_info format" in err
    code, _, err = treckit("-M -1 -R prefs prefs.test prefs.results.test".split(), capsys)
    assert code == 2 and "-M -1" in err
    code, _, err = treckit("-c -R prefs prefs.rank20 prefs.results.test".split(), capsys)
    assert code == 2 and "'STANDARD' is not a number" in err        # trec_eval reads it as level 0.0


def test_default_measures_are_trec_evals_prefs_nickname(data, capsys, monkeypatch):
    """trec_eval without -m tries 'official' (map ...) and fails on prefs; treckit uses its 'prefs' set."""
    monkeypatch.chdir(data)
    code, out, err = treckit("-R prefs prefs.test prefs.results.test".split(), capsys)
    assert code == 0, err
    assert [line.split("\t")[0].strip() for line in out.splitlines()] == [
        "runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
        "prefs_simp", "prefs_pair", "prefs_avgjg"]


def test_missing_query_policies(tmp_path, capsys):
    prefs = "q1 u s a 1\nq1 u s b 0\nq2 u s a 1\nq2 u s b 0\n"
    (tmp_path / "p").write_text(prefs)
    (tmp_path / "r").write_text("q1 Q0 a 1 1 t\n")
    args = ["-m", "num_q", "-m", "prefs_simp", "-R", "prefs", str(tmp_path / "p"), str(tmp_path / "r")]
    code, out, err = treckit(args, capsys)
    assert code == 0 and "num_q                 \tall\t1\n" in out and "q2" in err
    code, out, err = treckit(["-c", *args], capsys)
    assert "num_q                 \tall\t2\n" in out and "prefs_simp            \tall\t0.5000\n" in out
    code, out, err = treckit(["--missing", "error", *args], capsys)
    assert code == 2 and "q2" in err


def test_closure_limit_refuses_clearly(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(thresholds, "PA_MAX_DOCS", 2)
    code, _, err = _eval(tmp_path, capsys, "q u s1 a 2\nq u s1 b 1\nq u s2 c 2\n", "q Q0 a 1 1 t\n")
    assert code == 2 and "2x2 matrix" in err
    code, out, err = _eval(tmp_path, capsys, "q u s1 a 2\nq u s1 b 1\nq u s2 b 2\n", "q Q0 a 1 1 t\n")
    assert code == 0 and _value(out, "prefs_num_prefs_poss") == "1"


def test_pair_blocks_give_the_same_numbers(data, capsys, monkeypatch):
    """prefs_pair* over several jgs, counted in blocks of 7 cells and in one block, unretrieved pairs by class
    and by blocks (both sides of each threshold)."""
    monkeypatch.chdir(data)
    args = "-q -m prefs_pair -m prefs_pair_imp -m prefs_pair_ret -R qrels_prefs qrels.123 results.test".split()
    code, whole, err = treckit(args, capsys)
    assert code == 0 and "prefs_pair" in whole, err
    monkeypatch.setattr(thresholds, "PAIR_BLOCK_CELLS", 7)
    monkeypatch.setattr(thresholds, "CLASS_LIMIT", 0)            # unretrieved pairs in blocks, not by class
    assert treckit(args, capsys)[1] == whole
    monkeypatch.setattr(thresholds, "PAIR_BLOCK_CELLS", 1 << 40)
    assert treckit(args, capsys)[1] == whole


def test_output_formats_and_several_runs(data, capsys, monkeypatch):
    import json
    monkeypatch.chdir(data)
    code, out, err = run_cli(["eval", "--format", "json", "-m", "prefs_simp", "-R", "prefs", "prefs.test",
                              "prefs.results.test", "prefs.results.test"], capsys)
    assert code == 0, err
    rec = json.loads(out)
    assert len(rec) == 2 and round(rec[0]["summary"]["prefs_simp"], 4) == 0.3881


def test_measures_lists_prefs(capsys):
    code, out, _ = run_cli(["measures"], capsys)
    assert code == 0 and "prefs_avgjg_Rnonrel_ret" in out and "Rprec_mult_avgjg" in out and "all_prefs" in out
