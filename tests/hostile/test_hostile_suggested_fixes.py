"""Every fix a message suggests is run exactly as printed, in the command that printed it, and must work there.

The attacker's finds: ``RBP(rel=1,p=1)`` suggested ``RBP@10`` (refused too), ``alpha_nDCG(alpha=-0.5)`` and ``P@-1``
said "values must be literal numbers", ``evaluate.py --cutoffs 1e23``-sized cutoffs suggested ``-m recall.1000``
(an option the script does not take), ``rq --k`` and ``rq_eval.py --k`` beyond a cutoff's range talked about
``RR@...`` and ``R@...``.  Here each such message is triggered, its fix is taken from the message as printed,
put in place of the offending text, and run; the numbers it then gives are checked (by hand, or trec_eval's).
The sweep over every ir_measures name and its parameters is test_every_measure_example_works_where_printed;
tests/cli/test_suggested_fixes.py keeps the table of every other suggestion.  The longer randomized pass is
fuzz_hostile_suggested_fixes.py."""
from __future__ import annotations

import math
import re
import subprocess
import sys

import pytest

from helpers import ROOT, run_cli, staged

QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n2 0 d4 1\n2 0 d5 1\n"
RUN = "1 Q0 d2 1 3.0 t\n1 Q0 d1 2 2.0 t\n1 Q0 d3 3 1.0 t\n2 Q0 d5 1 4.0 t\n2 Q0 d9 2 3.5 t\n2 Q0 d4 3 3.0 t\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path / "qrels", tmp_path / "run"


def example(err: str) -> str:
    """The measure a fix names, as printed: the text after its last "e.g. " (up to a '; ' or a ' (')."""
    fix = err.split("\n  fix: ", 1)[1].splitlines()[0]
    return re.split(r"; | \(", fix.rsplit("e.g. ", 1)[1])[0]


def summary(out: str) -> dict[str, str]:
    """{measure: value} of trec_eval's summary lines (a measure's name may hold spaces: RBP(rel=1, p=0.8))."""
    return {m.strip(): v for m, q, v in (ln.rsplit(None, 2) for ln in out.splitlines()) if q == "all"}


# by hand.  RBP(rel=1, p=0.8) = (1 - p) sum over ranks i of p^(i-1) [doc i relevant]: query 1 d1 at rank 2, d3 at 3;
# query 2 d5 at 1, d4 at 3.  alpha-nDCG@10 with one subtopic (the qrels' 0) is nDCG with gain (1 - alpha)^(k-1) for
# the k-th relevant doc met; P@10: 2 of 10 each; AP(rel=1) is trec_eval's map.
RBP_1 = 0.2 * (0.8 + 0.8 ** 2)
RBP_2 = 0.2 * (1 + 0.8 ** 2)
DCG_1 = 1 / math.log2(3) + 0.5 / math.log2(4)
DCG_2 = 1 + 0.5 / math.log2(4)
IDEAL_2 = 1 + 0.5 / math.log2(3)
CASES = [
    # (the measure as asked for, what the error says, the fix as printed, the mean the fix gives)
    ("RBP(rel=1,p=1)", "p=1 is not valid for RBP: it must be a float", "RBP(rel=1, p=0.8)", (RBP_1 + RBP_2) / 2),
    ("P@-1", "the cutoff must be at least 1", "P@10", 0.2),
    ("P@0", "the cutoff must be at least 1", "P@10", 0.2),
    ("alpha_nDCG(alpha=-0.5)@10", "alpha=-0.5 must be from 0 to 1", "alpha_nDCG(alpha=0.5)@10",
     (DCG_1 / IDEAL_2 + DCG_2 / IDEAL_2) / 2),
    ("AP(rel=1.5)", "rel=1.5 is not valid for AP", "AP(rel=1)", ((1 / 2 + 2 / 3) / 2 + (1 + 2 / 3) / 2) / 2),
    ("SDCG@10", "SDCG needs max_rel", "SDCG(max_rel=3)@10", None),
]


@pytest.mark.parametrize("asked, message, fix, value", CASES, ids=[c[0] for c in CASES])
def test_a_measure_fix_works_as_printed(files, capsys, asked, message, fix, value):
    qrels, run = files
    code, out, err = run_cli(["eval", "-m", asked, qrels, run], capsys)
    assert code == 2 and message in err and "values must be literal numbers" not in err, err
    printed = example(err)
    if fix is not None:
        assert printed == fix, err
    code, out, err = run_cli(["eval", "-m", printed, qrels, run], capsys)
    assert code == 0, err
    if value is not None:
        assert summary(out)[printed] == f"{value:.4f}", out


def _bad_values(pname: str, param) -> list[str]:
    """Parameter values a measure must refuse, as ir_measures' syntax writes them."""
    if param.dtype is int:
        return ["1.5", "-1", "0", str(10 ** 30), "'x'"]
    if param.dtype is float:
        return ["1", "-0.5", "2.0", "1e999", "'x'"]
    if param.dtype is bool:
        return ["2", "'yes'"]
    if param.dtype is dict:
        return ["1", "{'a': 1}"]
    return ["1", "'no-such-choice'"]


def _sweep() -> list[str]:
    from treckit.measures.registry import IRM_NAMES
    asked = []
    for name, (_, spec) in sorted(IRM_NAMES.items()):
        asked += [f"{name}@-1", f"{name}@0", f"{name}@2.5", f"{name}(no_such=1)", name]
        for pname, param in spec.params.items():
            for bad in _bad_values(pname, param):
                asked.append(f"{name}@{bad}" if pname == spec.at else f"{name}({pname}={bad})")
    return asked


def test_every_measure_example_works_where_printed(files, capsys):
    """Every ir_measures name with every kind of bad parameter (and without its required ones): where the error
    offers an example ("e.g. X"), treckit eval -m X succeeds on the same files."""
    from treckit.console.errors import InputError
    from treckit.measures.registry import resolve
    qrels, run = files
    offered, broken = {}, []
    for asked in _sweep():
        try:
            resolve([asked])
            continue
        except InputError as exc:
            if "e.g. " not in (exc.fix or ""):
                continue
            offered.setdefault(example(str(exc)), asked)
    assert len(offered) > 40                  # the sweep reaches most names
    for fix, asked in offered.items():
        code, out, err = run_cli(["eval", "-m", fix, qrels, run], capsys)
        if code != 0 or fix not in summary(out):
            broken.append(f"{asked} -> {fix}: {err.strip()[:200]}")
    assert broken == []


def test_evaluate_py_cutoff_beyond_a_long(files, capsys, trec_eval):
    """The staged script's own option is named, with a cutoff it takes; that cutoff gives trec_eval's recall."""
    qrels, run = files
    with pytest.raises(SystemExit) as usage:          # argparse's own exit, as the script's user sees it
        staged("evaluate.py", "--run", run, "--qrels", qrels, "--cutoffs", str(10 ** 23), capsys=capsys)
    code, err = usage.value.code, capsys.readouterr().err
    assert code == 2 and "argument --cutoffs:" in err and "recall.1000" not in err and "-m " not in err, err
    fix = re.search(r"e\.g\. (\d+)", err).group(1)
    code, out, err = staged("evaluate.py", "--run", run, "--qrels", qrels, "--cutoffs", fix, capsys=capsys)
    assert code == 0, err
    te = summary(subprocess.run([str(trec_eval), "-m", f"recall.{fix}", "-m", f"ndcg_cut.{fix}", qrels, run],
                                capture_output=True, text=True).stdout)
    assert re.search(rf"^\s*{fix}\s+{te[f'recall_{fix}']}\s+{te[f'ndcg_cut_{fix}']}$", out, re.M), (out, te)


def test_rq_k_beyond_a_cutoff_names_the_option(files, capsys, tmp_path):
    qrels, run = files
    from treckit.api import read_qrels
    from treckit.testsets.load import test_set_from_judgments
    ts = tmp_path / "ts.yaml"
    ts.write_text(test_set_from_judgments(read_qrels(qrels).to_dict(), {"1": "a", "2": "b"}, name="ts").to_yaml())
    code, _, err = run_cli(["rq", "--test-set", ts, "--run", run, "--k", str(10 ** 20)], capsys)
    assert code == 2 and "--k" in err and "RR@" not in err and "R@" not in err, err
    fix = re.search(r"e\.g\. (--k \d+)", err).group(1).split()
    code, out, _ = run_cli(["rq", "--test-set", ts, "--run", run, *fix, "--report-only"], capsys)
    assert code == 0 and "RQ (MRR@5) = 0.7500 over 2 labelled queries" in out, out       # (1/2 + 1) / 2


def test_rq_eval_k_beyond_a_cutoff_names_the_option(tmp_path):
    (tmp_path / "q.tsv").write_text("1\tfirst\n2\tsecond\n")
    (tmp_path / "truth.tsv").write_text("1\td1\t1\n1\td3\t1\n2\td4\t1\n2\td5\t1\n")
    (tmp_path / "run").write_text(RUN)
    for name in "AB":
        (tmp_path / f"{name}.yaml").write_text("run: run\n")

    def rq_eval(k: str):
        return subprocess.run([sys.executable, str(ROOT / "code" / "evaluation" / "rq_eval.py"), "--queries",
                               tmp_path / "q.tsv", "--truth", tmp_path / "truth.tsv", "--configA", tmp_path / "A.yaml",
                               "--configB", tmp_path / "B.yaml", "--k", k, "--out", tmp_path / "o.json"],
                              capture_output=True, text=True)
    got = rq_eval(str(10 ** 20))
    assert got.returncode == 2 and "argument --k:" in got.stderr and "R@" not in got.stderr, got.stderr
    got = rq_eval(re.search(r"e\.g\. (\d+)", got.stderr).group(1))
    assert got.returncode == 0, got.stderr
    import json
    macro = json.loads((tmp_path / "o.json").read_text())["systems"]["A"]["metrics"]["macro"]
    assert macro["recall"] == 1.0 and macro["mrr"] == 0.75                # every relevant doc within k; (1/2 + 1) / 2
