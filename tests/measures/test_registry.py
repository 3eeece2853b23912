"""One measure registry, one evaluation path: trec_eval 10.0's bytes for repeated names, -Z, -q, -c, -J and
odd options (run against the real binary when it is there, else the bytes it printed, pinned), and
ir_measures' names meaning what ir_measures means (its own numbers and its own parameter schema)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from helpers import ROOT, run_cli
from treckit.measures import registry
from treckit.measures.registry import IRM_NAMES, MEASURES, resolve


def _first_dir(*cands) -> Path | None:
    for c in cands:
        if c and Path(c).is_dir():
            return Path(c)
    return None


DATA = _first_dir(os.environ.get("TRECKIT_REFERENCE_DATA"), ROOT.parent / "shared" / "data", "/work/shared/data")
TE_BIN = next((Path(c) for c in (os.environ.get("TRECKIT_TREC_EVAL"), ROOT.parent / "shared" / "tools" / "trec_eval",
                                 "/work/shared/tools/trec_eval") if c and Path(c).is_file()), None)


@pytest.fixture
def conf() -> Path:
    if DATA is None:
        pytest.skip("trec_eval's conformance files not found (set TRECKIT_REFERENCE_DATA to the shared data folder)")
    return DATA / "trec_eval"


@pytest.fixture
def te():
    if TE_BIN is None:
        pytest.skip("trec_eval 10.0 binary not found (set TRECKIT_TREC_EVAL): compared with pinned bytes only")
    return TE_BIN


def ours(args, capsys, cwd):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        code, out, err = run_cli(["eval", "--format", "trec_eval", *args], capsys)
    finally:
        os.chdir(old)
    return code, out, err


def theirs(binary, args, cwd) -> str:
    return subprocess.run([str(binary), *args], cwd=cwd, capture_output=True, text=True).stdout


# ------------------------------------------------------------------ trec_eval's bytes
REPEATS = [
    "-m Rprec -m P.5",
    "-Z zscores_file -m Rprec",
    "-m official -m Rprec",
    "-q -m map -m Rprec",
    "-Z zscores_file -m rbp_resid -m rbp -m rbp_resid",
    "-Z zscores_file -m set_F -m set_F",
    "-q -Z zscores_file -m all_trec -m Rprec",
    "-q -Z zscores_file -m gm_map -m num_q -m num_rel",
    "-m P.5 -m P.10",
    "-q -m set_F.0.5 -m set_F.2",
]


@pytest.mark.parametrize("args", REPEATS)
def test_repeated_names_and_zscores_equal_trec_eval(conf, te, capsys, args):
    code, out, _ = ours(args.split() + ["qrels.test", "results.test"], capsys, conf)
    assert code == 0
    assert out == theirs(te, args.split() + ["qrels.test", "results.test"], conf)


COMPLETE = ["-c -q -m all_trec", "-c -q -J -m all_trec", "-c -q -m utility.2,-1,0,0 -m rbp_resid.p=0.5 -m relstring.3",
            "-c -q -M 0 -m all_trec", "-c -q -Z zscores_file -m all_trec"]


@pytest.mark.parametrize("args", COMPLETE)
def test_complete_placeholder_equals_trec_eval(conf, te, capsys, args):
    code, out, _ = ours(args.split() + ["qrels.test", "results.trunc"], capsys, conf)
    assert code == 0
    assert out == theirs(te, args.split() + ["qrels.test", "results.trunc"], conf)


def test_pinned_bytes_of_trec_eval(conf, capsys):
    """What trec_eval 10.0 printed for these cases (kept so a clone without the binary still checks)."""
    assert ours(["-Z", "zscores_file", "-m", "Rprec", "qrels.test", "results.test"], capsys, conf)[1] == \
        "Z" + f"{'Rprec':<22}\tall\t-0.2241\n"
    assert ours(["-m", "Rprec", "-m", "P.5", "qrels.test", "results.test"], capsys, conf)[1] == \
        "Rprec                 \tall\t0.2174\nP_5                   \tall\t0.2667\n"
    # utility with parameters is not among trec_eval's -c resets: the placeholder's one non-relevant doc costs -1
    assert ours(["-c", "-q", "-m", "utility.2,-1,0,0", "qrels.test", "results.trunc"], capsys, conf)[1] == (
        "utility_2,-1,0,0      \t301\t-287.0000\nutility_2,-1,0,0      \t302\t-1.0000\n"
        "utility_2,-1,0,0      \t303\t-66.0000\nutility_2,-1,0,0      \tall\t-118.0000\n")
    out = ours(["-q", "-m", "official", "-m", "Rprec", "qrels.test", "results.test"], capsys, conf)[1]
    assert out.count("Rprec") == 4 and out.index("Rprec                 \t301") < out.index("bpref                 \t301")


@pytest.fixture
def small(tmp_path) -> Path:
    """Query 2 retrieves only a doc outside the qrels; query 3 is judged but absent from the run."""
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n3 0 e 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 2.0 t\n1 Q0 x 2 1.0 t\n2 Q0 y 1 1.0 t\n")
    return tmp_path


NAN_EXPECTED = """iprec_at_recall_0.00  \t1\t1.0000
iprec_at_recall_0.50  \t1\t1.0000
11pt_avg              \t1\t1.0000
iprec_at_recall_0.00  \t2\t  -nan
iprec_at_recall_0.50  \t2\t0.0000
11pt_avg              \t2\t  -nan
iprec_at_recall_0.00  \t3\t  -nan
iprec_at_recall_0.50  \t3\t0.0000
11pt_avg              \t3\t  -nan
iprec_at_recall_0.00  \tall\t  -nan
iprec_at_recall_0.50  \tall\t0.3333
11pt_avg              \tall\t  -nan
"""


def test_judged_only_with_nothing_judged_prints_nan(small, capsys):
    args = ["-J", "-c", "-q", "-m", "iprec_at_recall.0,.5", "-m", "11pt_avg", "q", "r"]
    assert ours(args, capsys, small)[1] == NAN_EXPECTED       # bytes trec_eval 10.0 printed
    if TE_BIN is not None:
        assert theirs(TE_BIN, args, small) == NAN_EXPECTED


@pytest.mark.parametrize("flags", ["-J -c", "-M 0 -c", "-M 1 -c", "-c -l 0", "-c -l 2", "-J -c -N 20 -m utility.1,2,3,4",
                                   "-c -m utility -m rbp_resid -m relstring -m unj.2"])
def test_small_cases_equal_trec_eval(small, te, capsys, flags):
    args = flags.split() + ["-q", "-m", "all_trec", "q", "r"]
    assert ours(args, capsys, small)[1] == theirs(te, args, small)


def test_zscore_lookup_reads_one_past_the_query_as_trec_eval(small, capsys):
    """trec_eval's binary search over a query's z-score lines runs one past its end, into the next query's
    first line: query 1 has no set_P line, yet borrows query 2's (0.5, 0.25), so its Zset_P is 0."""
    (small / "zs").write_text("1 map 0.1 0.2\n2 set_P 0.5 0.25\n2 zzz 1 1\n")
    (small / "q2").write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    args = ["-q", "-Z", "zs", "-m", "num_ret", "-m", "set_P", "-m", "map", "q2", "r"]
    out = ours(args, capsys, small)[1]
    assert f"Z{'set_P':<22}\t1\t0.0000\n" in out and f"Z{'num_ret':<22}\tall\t-2000000.0000\n" in out
    if TE_BIN is not None:
        assert out == theirs(TE_BIN, args, small)


def test_grades_counted_per_distinct_grade(tmp_path, capsys):
    """A grade of 10**7 costs trec_eval a 80 MB table; here one column per distinct grade. 999999999999 too."""
    from treckit.api import read_qrels, read_run
    from treckit.engines.memory import EvalOptions
    from treckit.ranking.judged import build_view
    (tmp_path / "q").write_text("1 0 a 10000000\n1 0 b 1\n1 0 c 0\n2 0 d 999999999999\n2 0 e 3\n")
    (tmp_path / "r").write_text("1 Q0 b 1 3 t\n1 Q0 a 2 2 t\n1 Q0 z 3 1 t\n2 Q0 e 1 2 t\n2 Q0 d 2 1 t\n")
    v = build_view(read_qrels(tmp_path / "q"), read_run(tmp_path / "r"), EvalOptions())
    assert v.grades.tolist() == [0, 1, 3, 10000000, 999999999999] and v.rel_levels.shape == (2, 5)
    code, out, _ = ours(["-q", "-m", "ndcg", "-m", "map", "-m", "relstring", "-m", "ndcg_cut.1", "q", "r"], capsys, tmp_path)
    assert code == 0
    # hand: q1 ideal 1e7, 1; run b(1) a(1e7): dcg = 1 + 1e7/log2(3); q2 ideal 999999999999, 3; run e(3) d(...)
    i1, i2 = 1e7 + 1 / np.log2(3), 999999999999 + 3 / np.log2(3)
    assert f"ndcg                  \t1\t{(1 + 1e7 / np.log2(3)) / i1:6.4f}\n" in out
    assert f"ndcg                  \t2\t{(3 + 999999999999 / np.log2(3)) / i2:6.4f}\n" in out
    assert "relstring             \t1\t'1>-'\n" in out
    # (trec_eval itself needs minutes here: its gain loops run over every grade up to 10**7)


@pytest.mark.parametrize("flag,value", [("-M", "-1"), ("-M", "abc"), ("-l", "abc"), ("-l", "-1"), ("-N", "1x"),
                                        ("-M", "")])
def test_numeric_options_are_checked(small, capsys, flag, value):
    code, out, err = ours([flag, value, "-m", "map", "q", "r"], capsys, small)
    assert code == 2 and out == "" and flag in err and "fix:" in err and "Traceback" not in err


def test_huge_max_docs_saturates_like_strtol(small, te, capsys):
    args = ["-c", "-M", "99999999999999999999", "-m", "all_trec", "q", "r"]
    assert ours(args, capsys, small)[1] == theirs(te, args, small)


# ------------------------------------------------------------------ first parameters win (CLI) / all (API)
def test_cli_first_parameters_win_and_says_so(conf, capsys):
    code, out, err = ours(["-m", "P.5", "-m", "P.10", "qrels.test", "results.test"], capsys, conf)
    assert out == "P_5                   \tall\t0.2667\n"
    assert "P.10 ignored" in err and "first parameters" in err
    code, out, err = ours(["-m", "P.5", "-m", "P.5", "qrels.test", "results.test"], capsys, conf)
    assert "ignored" not in err


def test_python_api_returns_every_requested_measure_as_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    import treckit
    q = {"1": {"a": 1, "b": 0, "c": 2}, "2": {"d": 1}}
    r = {"1": {"a": 1.0, "b": 2.0, "x": 3.0}, "2": {"d": 0.5, "e": 0.7}}
    df = treckit.evaluate(q, r, ["P.5", "P.10", "recall.5", "recall.2"])
    ref = pytrec_eval.RelevanceEvaluator(q, {"P.5", "P.10", "recall.5", "recall.2"}).evaluate(r)
    assert list(df.columns) == ["qid", "P_5", "P_10", "recall_2", "recall_5"]
    for row in df[df.qid != "all"].to_dict("records"):
        for m in ("P_5", "P_10", "recall_2", "recall_5"):
            assert row[m] == pytest.approx(ref[row["qid"]][m], abs=1e-12)
    both = treckit.evaluate(q, r, ["utility", "utility.2,-1,0,0"])
    assert {"utility", "utility_2,-1,0,0"} <= set(both.columns)


# ------------------------------------------------------------------ ir_measures' meaning
IRM_CASES = ["NumRel", "NumRet", "NumRelRet", "NumQ", "NumRet(rel=2)", "P@5", "P(rel=2)@5",
             "P(judged_only=True)@10", "R@10", "R(rel=2)@100", "AP", "AP@10", "AP(rel=2)", "MAP", "RR", "MRR",
             "RR(rel=2)", "nDCG", "nDCG@10", "nDCG(judged_only=True)@10", "nDCG(gains={0:0,1:1,2:5,3:9})",
             "nDCG(gains={0:0,1:1,2:5,3:9,4:20})@10", "Rprec", "Rprec(rel=2)", "RPrec", "Bpref", "Bpref(rel=2)",
             "infAP", "Success@10", "Success(rel=3)@5", "SetP", "SetP(relative=True)", "SetRelP", "SetR", "SetAP",
             "SetF", "SetF(beta=0.5)", "IPrec@0.5", "IPrec(rel=2)@0.2", "Judged@10", "Judged"]


def test_ir_measures_names_mean_what_ir_measures_means(conf):
    """Per query and aggregated, against ir_measures itself on graded qrels (qrels.rel_level, grades -1..4)."""
    import ir_measures
    import treckit
    from treckit.api import read_qrels, read_run
    q = read_qrels(conf / "qrels.rel_level").to_dict()
    r = read_run(conf / "results.test").to_dict()
    got = treckit.evaluate(q, r, IRM_CASES)
    parsed = [ir_measures.parse_measure(m) for m in IRM_CASES]
    # one measure per call (ir_measures shares pytrec_eval invocations between measures: see test_measures)
    per = {(x.query_id, str(x.measure)): x.value for m in parsed for x in ir_measures.iter_calc([m], q, r)}
    agg = {m: ir_measures.calc_aggregate([m], q, r)[m] for m in parsed}
    rows = {row["qid"]: row for row in got.to_dict("records")}
    for text, m in zip(IRM_CASES, parsed):
        for qid in ("301", "302", "303"):
            assert rows[qid][text] == pytest.approx(per[(qid, str(m))], abs=1e-9), (text, qid)
        assert rows["all"][text] == pytest.approx(agg[m], abs=1e-9), text


def test_num_measures_are_sums_as_in_ir_measures(conf, capsys):
    code, out, _ = ours(["-m", "NumRel", "-m", "NumRet", "-m", "NumRelRet", "qrels.test", "results.test"], capsys, conf)
    assert out == "NumRel                \tall\t561\nNumRet                \tall\t1500\nNumRelRet             \tall\t131\n"


def test_schema_is_ir_measures_own():
    """Every ir_measures name treckit accepts declares the parameters ir_measures declares for it (types,
    required, allowed values, defaults), its preset parameters and its aggregation."""
    import ir_measures
    from ir_measures.measures.base import _NOT_PROVIDED, SumAgg
    for name, (_, spec) in IRM_NAMES.items():
        if "." in name:                          # a reference tool's own name (gdeval.nDCG): not ir_measures'
            continue
        theirs_ = ir_measures.measures.registry[name]
        assert set(spec.params) == set(theirs_.SUPPORTED_PARAMS), name
        for p, info in theirs_.SUPPORTED_PARAMS.items():
            mine = spec.params[p]
            assert mine.dtype is info.dtype and mine.required == info.required, (name, p)
            assert (mine.choices is None) == (info.choices is _NOT_PROVIDED), (name, p)
            if mine.choices is not None:
                assert list(mine.choices) == list(info.choices), (name, p)
            assert mine.default == (None if info.default is _NOT_PROVIDED else info.default), (name, p)
        assert dict(spec.preset) == theirs_.params, name
        assert spec.at == theirs_.AT_PARAM, name
        assert (spec.aggregate == "sum") == isinstance(theirs_.aggregator(), SumAgg), name


BAD = {
    "nDCG(dcg='exp')@10": "one of 'log2', 'exp-log2'",
    "nDCG(dcg='bogus')@3": "one of 'log2', 'exp-log2'",
    "P(rel=abc)@5": "literal",
    "P@5.0": "must be a int",
    "IPrec@1": "must be a float",
    "SetF(beta=1)": "must be a float",
    "P": None,                                   # trec_eval's P: fine
    "P(judged_only=1)@5": "must be a bool",
    "R": None,                                   # ambiguous? no: R is not a trec_eval name -> needs a cutoff
    "nDCG(foo=1)@3": "no parameter foo",
    "NDCG@10": "could mean nDCG@10 with either gain",   # ir_measures' alias: test sets once read it as exp gain
    "NDCG": "write nDCG (linear gain",
    "MRR@10": None,
    "ndcg_cut_10": "ndcg_cut.10",
    "ndcg_cut@10": "did you mean ndcg_cut.10 or",      # not "ndcg.cut@10": the trec_eval form of a printed name
    "P_10": "P.10",
    "ERR@10": None,                              # gdeval.pl's ERR@10, as ir_measures' gdeval provider
    "gdeval.nDCG@10": None,
    "ERR": "ERR without a cutoff",               # ir_measures accepts it, but its only provider needs a cutoff
    "gdeval.nDCG": "gdeval.nDCG needs cutoff",
    "gdeval.nDCG@0": "at least 1",
    "gdeval.map@10": "unknown measure",
    "alpha_nDCG@10": None,                       # pyndeval's, over the iteration field (one subtopic here)
    "alpha_nDCG": "alpha_nDCG without a cutoff",
    "Accuracy@10": "the closest it computes is bpref",
    "Compat(p=0.9)": None,
    "ndcg@10": "write nDCG@10 (ir_measures: linear gain) or nDCG(dcg='exp-log2')@10 (exp gain; ndcg_at_10 in test sets",
    "Ndcg@10": "could mean nDCG@10 with either gain",
    "ndcg_at_10": "the test sets' name of nDCG@10 with exp gain",
    "P@0": "at least 1",
    "map.5": "no parameters",
    "official.5": "takes no parameters",
    "utility.1,2": "4 coefficients",
    "P.": "empty parameters",
    "ndcg.1": "malformed pair",
}


@pytest.mark.parametrize("name", list(BAD))
def test_names_are_validated_with_suggestions(conf, capsys, name):
    code, out, err = ours(["-m", name, "qrels.test", "results.test"], capsys, conf)
    want = BAD[name]
    if name == "R":
        want = "needs cutoff"
    if want is None:
        assert code == 0 and out, err
    else:
        assert code == 2 and out == "" and want in err and "Traceback" not in err and "internal" not in err, err


def test_one_registry_path():
    """Both syntaxes resolve to the same Request type, trec_eval's names in trec_eval's order first."""
    reqs = resolve(["nDCG@10", "P.5", "Rprec", "map", "nDCG@10", "AP"])
    assert [r.columns for r in reqs] == [("map",), ("Rprec",), ("P_5",), ("nDCG@10",), ("AP",)]
    assert {type(r) for r in reqs} == {registry.Request}
    # every measure has its kernel, but the run id and those computed from the qrels and the run themselves (the
    # diversity names read subtopic qrels; Compat reads the qrels' line order): evaluate_part computes those
    from treckit.measures import compat, subtopics
    from_inputs = {m.name for m in MEASURES if m.reference in (subtopics.NDEVAL, compat.REFERENCE)}
    assert all(m.kernel is not None or m.name == "runid" or m.name in from_inputs for m in MEASURES)
    assert len(from_inputs) == 10 and all(m.kernel is None for m in MEASURES if m.name in from_inputs)


# ------------------------------------------------------------------ outputs name the run
def test_outputs_name_run_and_path(conf, capsys, tmp_path):
    import json
    other = tmp_path / "copy.run"
    shutil.copy(conf / "results.test", other)
    base = ["eval", "-q", "-m", "map", "-m", "P.5", str(conf / "qrels.test"), str(conf / "results.test"), str(other)]
    code, out, _ = run_cli(base[:1] + ["--format", "jsonl"] + base[1:], capsys)
    lines = [json.loads(x) for x in out.splitlines()]
    assert {x["path"] for x in lines} == {str(conf / "results.test"), str(other)} and all(x["run"] == "STANDARD" for x in lines)
    code, out, _ = run_cli(base[:1] + ["--format", "json"] + base[1:], capsys)
    assert [rec["path"] for rec in json.loads(out)] == [str(conf / "results.test"), str(other)]
    code, out, _ = run_cli(base[:1] + ["--format", "csv"] + base[1:], capsys)
    assert all(row.endswith((str(conf / "results.test"), str(other))) for row in out.splitlines()[1:])
    code, out, _ = run_cli(base[:1] + ["--format", "table"] + base[1:], capsys)
    assert str(other) in out and "302" in out and out.count("P_5") == 2     # one per-query table per run
    assert "0.1785" in out                                                   # the 'all' row of map


@pytest.mark.parametrize("qrels,run", [("1 0 a 99999999999999999999\n", "1 Q0 a 1 1.0 t\n"),
                                       ("1 0 a 1\n", "1 Q0 a 99999999999999999999 1.0 t\n")])
def test_numbers_beyond_64_bits_are_clean_errors(tmp_path, capsys, qrels, run):
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    code, out, err = ours(["-m", "map", "q", "r"], capsys, tmp_path)
    assert code == 2 and out == "" and "99999999999999999999" in err and "internal" not in err


def test_one_registry_names_each_measures_reference_tool(capsys):
    """trec_eval's measures, gdeval.pl's, the C/W/L family and ir_measures' own are declared in the one registry,
    each with its reference tool, which `treckit measures` prints beside its names."""
    tools = {m.name: m.reference for m in MEASURES}
    assert tools["map"] == tools["ndcg_cut"] == "trec_eval 10.0"
    assert tools["gdeval.nDCG"] == tools["gdeval.ERR"] == registry.GDEVAL
    assert {tools[f"cwl.{n}"] for n in ("INST", "INSQ", "RBP", "BPM", "SDCG", "NERR8", "NERR9", "NERR10", "NERR11")} \
        == {registry.CWL}
    assert IRM_NAMES["ERR"][0].name == "gdeval.ERR" and IRM_NAMES["INST"][0].ties == "listed"
    code, out, _ = run_cli(["measures"], capsys)
    rows = {ln.split()[1]: ln for ln in out.splitlines() if ln.startswith("-  ")}
    assert code == 0 and out.splitlines()[0].split()[4] == "reference"
    assert registry.GDEVAL in rows["gdeval.ERR@k,"] and registry.CWL in rows["SDCG@k"] and "judged provider" in rows["Judged[@k]"]


def test_measures_lists_each_ir_measures_name_on_the_row_of_what_it_computes(capsys):
    """`treckit measures`: NumRelRet (NumRet(rel=1), trec_eval's num_rel_ret) on the num_rel_ret row, not num_ret's;
    every name whose parameters are fixed sits on the row of the measure it resolves to."""
    from helpers import run_cli
    from treckit.measures.registry import MEASURES, resolve

    code, out, err = run_cli(["measures"], capsys)
    assert code == 0, err
    rows = {line.split()[0]: line.split()[1].rstrip(",") for line in out.splitlines()[1:] if line.strip()}
    assert rows["num_ret"] == "NumRet" and rows["num_rel_ret"] == "NumRelRet"
    for m in MEASURES:
        for spec in m.irm:
            if spec.preset:
                for name in spec.names:
                    assert resolve([name])[0].measure.name == m.name, (name, m.name)
