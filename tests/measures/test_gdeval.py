"""gdeval.pl's nDCG@k and ERR@k: treckit's CSV against the Perl script's own output (run here; skipped with the
reason when perl or the script is absent), hand-computed values, its reading rules, and the inputs treckit
refuses on purpose where gdeval.pl prints something (each a named test with its reason)."""
from __future__ import annotations

import math
import random
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import run_cli
from treckit.console.errors import InputError
from treckit.inputs.formats import gdeval as reading
from treckit.measures import gdeval as measures
from treckit.output.gdeval import gdeval_csv


def perl_csv(script, qrels, run, k) -> subprocess.CompletedProcess:
    return subprocess.run(["perl", str(script), str(qrels), str(run), str(k)], capture_output=True, timeout=60)


def files(tmp_path, qrels: str, run: str):
    q, r = tmp_path / "qrels", tmp_path / "run"
    q.write_text(qrels)
    r.write_text(run)
    return q, r


# ------------------------------------------------------------------ against gdeval.pl itself
@pytest.mark.parametrize("k", [1, 5, 20, 1000])
def test_trec_eval_sample_byte_for_byte(gdeval_pl, shared, k):
    """trec_eval's graded sample (qrels.rel_level: judgments -1..4; results.test: tabs, padded scores, ties)."""
    qrels, run = shared / "trec_eval" / "qrels.rel_level", shared / "trec_eval" / "results.test"
    ref = perl_csv(gdeval_pl, qrels, run, k)
    assert ref.returncode == 0
    assert gdeval_csv(str(qrels), str(run), k) == ref.stdout
    assert ref.stdout.count(b"\n") == 4            # the header and topics 301-303


def test_perl_rules_byte_for_byte(gdeval_pl, tmp_path):
    """Prefixed and zero-led topics, CRLF, a CR inside a line, tabs and VT, extra fields, Q0 in the qrels, words and
    big integers as scores, duplicates: every rule at once, against the script."""
    qrels = ("wt10-1 0 a 3\r\n1 Q0 b 2\n01 0 c 1\n1 0 d 1 extra\n2 0.0 a 1\n2 0 a 2\n2 0 e -1\n"
             "10 0 x 4\n9 -0 y 1\n1 0 e\r1 2\n")
    run = ("1 Q0 a 1 2 r\n1\tQ0\tb\t2\t2\tr\n1 Q0 c 3 9007199254740993 r\n1 Q0 d 4 9007199254740993.0 r x\n"
           "01 Q0 c 5 1.5abc r\n2 Q0 a 0 inf r\n2\x0bQ0 e 1 -1 r\n2 Q0 a 2 3 r\n10 Q0 x 1 1e0 r\n9 Q0 y 1 0 last\n"
           "1 Q0 e1 9 0 r\n")
    q, r = files(tmp_path, qrels, run)
    for k in (1, 2, 3, 10):
        ref = perl_csv(gdeval_pl, q, r, k)
        assert ref.returncode == 0, ref.stderr
        assert gdeval_csv(str(q), str(r), k, warn=None) == ref.stdout


def test_numbers_compare_as_perl_compares_them(gdeval_pl):
    """Scores are compared by Perl's rules: exact integers, doubles for a point or trailing text, saturation
    at 2^63 and 2^64; 5000 random pairs, each compared by perl itself."""
    r = random.Random(5)
    base = [2 ** 53, 2 ** 53 + 1, 2 ** 60 + 1, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, 2 ** 64, -(2 ** 63), 5, 0]
    forms = ["{}", "{}.0", "{}.5", "{}e0", "{}abc", "{}.", "{}E+0", "+{}", "{}.0x"]
    pairs = [tuple(r.choice(forms).format(r.choice(base) + r.randint(-2, 2)) for _ in range(2)) for _ in range(5000)]
    out = subprocess.run(["perl", "-ne", 'my ($a,$b)=split; no warnings; print(($a < $b ? -1 : $a > $b ? 1 : 0), "\\n")'],
                         input="".join(f"{a} {b}\n" for a, b in pairs).encode(), capture_output=True, timeout=60)
    theirs = [int(x) for x in out.stdout.split()]
    ours = [reading.perl_compare(reading.perl_number(a.encode())[0], reading.perl_number(b.encode())[0])
            for a, b in pairs]
    assert ours == theirs


def test_refusals_match(gdeval_pl, tmp_path):
    """Each line gdeval.pl stops on is refused, naming the file and the line."""
    good_q, good_r = "1 0 a 1\n", "1 Q0 a 1 1 r\n"
    bad = [("1 1 a 1\n", good_r), ("1 0 a 5\n", good_r), ("1 0 a x\n", good_r), ("\n", good_r), ("x 0 a 1\n", good_r),
           (good_q, "1 Q1 a 1 1 r\n"), (good_q, "1 Q0 a x 1 r\n"), (good_q, "1 Q0 a 1 1 0\n"), (good_q, "1 Q0 a 1 1\n"),
           (good_q, "\n"), ("01 0 b 2\n1 0 a 1\n", "1 Q0 a 1 1 r\n")]
    for qrels, run in bad:
        q, r = files(tmp_path, qrels, run)
        assert perl_csv(gdeval_pl, q, r, 5).returncode != 0, (qrels, run)
        with pytest.raises(InputError) as e:
            gdeval_csv(str(q), str(r), 5, warn=None)
        assert str(q) in str(e.value) or str(r) in str(e.value)


# ------------------------------------------------------------------ kept differences: refused on purpose
def test_kept_difference_nan_score_is_refused(gdeval_pl, tmp_path):
    """gdeval.pl sorts a NaN score with a comparator that is then not an order, so where it lands depends on
    Perl's merge sort: treckit refuses the score instead of guessing."""
    q, r = files(tmp_path, "1 0 a 1\n1 0 b 2\n", "1 Q0 a 1 nan r\n1 Q0 b 2 1 r\n1 Q0 c 3 2 r\n")
    assert perl_csv(gdeval_pl, q, r, 5).returncode == 0
    with pytest.raises(InputError, match="is NaN"):
        gdeval_csv(str(q), str(r), 5, warn=None)


def test_kept_difference_percent_in_run_id_is_refused(gdeval_pl, tmp_path):
    """gdeval.pl interpolates the run id into printf's format: '%s' swallows the nDCG value, the ERR is printed
    as the nDCG and a missing argument as the ERR; treckit refuses such a run id."""
    q, r = files(tmp_path, "1 0 a 1\n", "1 Q0 a 1 1 run%s\n")
    ref = perl_csv(gdeval_pl, q, r, 5)
    assert ref.returncode == 0 and ref.stdout.splitlines()[1] == b"run1,1,0.06250,0.00000"   # nDCG 1, ERR 0.0625
    with pytest.raises(InputError, match="holds '%'"):
        gdeval_csv(str(q), str(r), 5, warn=None)


def test_kept_difference_circular_scores_are_refused(gdeval_pl, tmp_path):
    """2^53 and 2^53 + 1 are integers Perl tells apart, and 9007199254740993.0 is a double equal to both: Perl's
    comparison goes in a circle (a < b, b = x, x = a, ties to the docno) and gdeval.pl prints whatever its merge
    sort's steps give.  treckit refuses such scores (found by the fuzz, seed 6829)."""
    q, r = files(tmp_path, "1 0 d7 1\n1 0 d21 2\n", "1 Q0 d7 1 9007199254740992 r\n1 Q0 d39 2 9007199254740993.0 r\n"
                                                     "1 Q0 d21 3 9007199254740993 r\n")
    assert perl_csv(gdeval_pl, q, r, 1).returncode == 0
    with pytest.raises(InputError, match="comparison is then circular"):
        gdeval_csv(str(q), str(r), 1, warn=None)


def test_big_integers_of_one_topic_and_a_double_of_another(gdeval_pl, tmp_path):
    """Perl compares scores only within a topic: 2^53 + 1 above 2^53 in topic 1 stays so although topic 2 holds a
    double equal to both (found by the fuzz, seed 1382: a sort of the score column as a whole ordered topic 1
    through topic 2's double)."""
    q, r = files(tmp_path, "1 0 b 2\n2 0 x 1\n", "1 Q0 a 1 9007199254740993 r\n1 Q0 b 2 9007199254740992 r\n"
                                                "2 Q0 x 1 9007199254740992.0 r\n2 Q0 y 1 9007199254740993 r\n")
    ref = perl_csv(gdeval_pl, q, r, 1)
    assert ref.returncode == 0 and ref.stdout.splitlines()[1] == b"r,1,0.00000,0.00000"
    assert gdeval_csv(str(q), str(r), 1, warn=None) == ref.stdout


def test_kept_difference_depth_zero_is_refused(gdeval_pl, tmp_path):
    """At K=0 gdeval.pl divides by a zero ideal DCG and stops, unless no topic is evaluated (then it prints the
    header): treckit refuses K=0 either way, before reading anything."""
    q, r = files(tmp_path, "1 0 a 1\n", "2 Q0 a 1 1 r\n")
    assert perl_csv(gdeval_pl, q, r, 0).stdout == b"runid,topic,ndcg@0,err@0\n"
    with pytest.raises(InputError, match="at least 1"):
        gdeval_csv(str(q), str(r), 0)


def test_kept_difference_empty_qrels_is_refused(gdeval_pl, tmp_path):
    """An empty qrels file: gdeval.pl prints its header line alone and exits 0 (every topic of the run is
    skipped); treckit refuses it, as treckit eval and ndeval do, naming the file and the fix (found by the
    reference fuzz, seeds 50092 and 50377 of ``--tool gdeval``, with an empty and a non-empty run)."""
    for run in ("", "1 Q0 a 1 1 r\n"):
        q, r = files(tmp_path, "", run)
        ref = perl_csv(gdeval_pl, q, r, 20)
        assert ref.returncode == 0 and ref.stdout == b"runid,topic,ndcg@20,err@20\n"
        with pytest.raises(InputError, match="the qrels file is empty"):
            gdeval_csv(str(q), str(r), 20, warn=None)


# ------------------------------------------------------------------ hand computation
def test_hand_computed_values(tmp_path):
    """Topic 1 judged a=2, b=1, c=0, d=4 (the last unretrieved); run b, a, x: gain 2^g - 1 over ln(rank + 1)."""
    q, r = files(tmp_path, "1 0 a 2\n1 0 b 1\n1 0 c 0\n1 0 d 4\n", "1 Q0 b 1 3 r\n1 Q0 a 2 2 r\n1 Q0 x 3 1 r\n")
    dcg = 1 / math.log(2) + 3 / math.log(3)
    ideal = 15 / math.log(2) + 3 / math.log(3) + 1 / math.log(4)
    err = 1 / 16 + (3 / 16) * (15 / 16) / 2
    assert gdeval_csv(str(q), str(r), 3) == b"runid,topic,ndcg@3,err@3\nr,1,%.5f,%.5f\n" % (dcg / ideal, err)
    dcg1, ideal1 = 1 / math.log(2), 15 / math.log(2)
    assert gdeval_csv(str(q), str(r), 1) == b"runid,topic,ndcg@1,err@1\nr,1,%.5f,%.5f\n" % (dcg1 / ideal1, 1 / 16)


def test_tie_order_score_then_docno_descending(tmp_path):
    """Equal scores: docno descending, as bytes (b > a > B); topic 10 after topic 9 (numeric)."""
    q, r = files(tmp_path, "9 0 B 4\n10 0 z 1\n", "10 Q0 z 1 1 r\n9 Q0 a 1 1 r\n9 Q0 B 2 1 r\n9 Q0 b 3 1 r\n")
    run = reading.read_run(str(r), reading.read_qrels(str(q)))
    assert run.topics == [b"9", b"10"] and run.gains[0] == [0, 0, 4]
    assert gdeval_csv(str(q), str(r), 2).splitlines()[1:] == [b"r,9,0.00000,0.00000", b"r,10,1.00000,0.06250"]


def test_amean_line_as_the_2010_2012_versions(tmp_path):
    """--amean: the means of the printed values, summed in the order printed; with no topic printed the line of
    zeros those versions print (the second value with four decimals)."""
    q, r = files(tmp_path, "1 0 a 2\n2 0 a 1\n2 0 b 3\n", "1 Q0 a 1 1 r\n2 Q0 b 1 2 r\n2 Q0 a 2 1 r\n3 Q0 a 1 1 r\n")
    res = measures.evaluate(reading.read_qrels(str(q)), reading.read_run(str(r), reading.read_qrels(str(q))), 5)
    n, e = res.ndcg.tolist(), res.err.tolist()
    lines = gdeval_csv(str(q), str(r), 5, amean=True).splitlines()
    assert lines[-1] == b"r,amean,%.5f,%.5f" % ((n[0] + n[1]) / 2, (e[0] + e[1]) / 2)
    assert len(lines) == 4
    assert gdeval_csv(str(q), str(r), 5, topics=False, amean=True).splitlines() == [lines[0], lines[-1]]
    q2, r2 = files(tmp_path, "5 0 a 1\n", "1 Q0 a 1 1 r\n")
    assert gdeval_csv(str(q2), str(r2), 5, amean=True).splitlines()[-1] == b"r,amean,0.00000,0.0000"


def test_the_fast_reading_is_the_exact_one(shared, monkeypatch):
    """A plain run is read by the regex engine and numpy; it gives what Perl's rules line by line give, and hands
    over to them whatever is not plain (here: a score written as a word, an integer of 2^53)."""
    qrels = reading.read_qrels(str(shared / "trec_eval" / "qrels.rel_level"))
    data = (shared / "trec_eval" / "results.test").read_bytes()
    fast = reading.read_run_fast(data, qrels, "r")
    assert fast is not None and len(fast.topics) == 3
    assert reading.read_run_fast(data + b"301 Q0 x 1 abc STANDARD\n", qrels, "r") is None
    assert reading.read_run_fast(data + b"301 Q0 x 1 9007199254740992 STANDARD\n", qrels, "r") is None
    monkeypatch.setattr(reading, "read_run_fast", lambda *a: None)
    exact = reading.read_run("r", qrels, data=data)
    assert (fast.topics, fast.gains, fast.runid) == (exact.topics, exact.gains, exact.runid)


def test_word_scores_warn_once(tmp_path):
    """A score Perl reads as a number with a warning ('abc' -> 0, '2x' -> 2) is read so, said once with a count."""
    q, r = files(tmp_path, "1 0 a 1\n1 0 b 1\n", "1 Q0 a 1 abc r\n1 Q0 b 2 2x r\n1 Q0 c 3 1 r\n")
    said = []
    run = reading.read_run(str(r), reading.read_qrels(str(q)), warn=said.append)
    assert run.gains == [[1, 0, 1]]                       # b (2), c (1), a (0)
    assert len(said) == 1 and "'abc'" in said[0] and "2 lines like it" in said[0]


def test_the_command(tmp_path, capsys):
    q, r = files(tmp_path, "1 0 a 1\n", "1 Q0 a 1 1 r\n")
    code, out, err = run_cli(["gdeval", q, r, "20"], capsys)
    assert code == 0 and out == "runid,topic,ndcg@20,err@20\nr,1,1.00000,0.06250\n"
    code, out, _ = run_cli(["gdeval", q, r, "20", "--amean-only"], capsys)
    assert out == "runid,topic,ndcg@20,err@20\nr,amean,1.00000,0.06250\n"
    code, out, err = run_cli(["gdeval", q, r, "x"], capsys)
    assert code == 2 and "K 'x'" in err and out == ""


# ------------------------------------------------------------------ the parsers
@given(st.binary(max_size=200), st.binary(max_size=200))
@settings(max_examples=200, deadline=None)
def test_any_bytes_are_read_or_refused(qrels, run):
    """Whatever the bytes, the reading gives values or an InputError, never another exception."""
    try:
        q = reading.read_qrels("q", data=qrels, warn=None)
        r = reading.read_run("r", q, data=run, warn=None)
        measures.evaluate(q, r, 3)
    except InputError:
        pass


@given(st.from_regex(rb"\A[+-]?(?:[0-9]{1,30}(?:\.[0-9]{0,20})?|\.[0-9]{1,20})(?:[eE][+-]?[0-9]{1,3})?\Z"))
def test_whole_decimals_read_as_their_double(text):
    value, whole = reading.perl_number(text)
    assert whole and float(value) == (float(text) or 0.0)


# ------------------------------------------------------------------ by name: treckit eval and the API
def _by_name(qrels, run, k):
    import treckit
    df = treckit.evaluate(str(qrels), str(run), [f"gdeval.nDCG@{k}", f"gdeval.ERR@{k}", f"ERR@{k}"])
    return {q: (n, e, e2) for q, n, e, e2 in df.itertuples(index=False)}


@pytest.mark.parametrize("k", [1, 5, 20, 1000])
def test_by_name_on_the_trec_eval_sample(gdeval_pl, shared, k):
    """gdeval.nDCG@k, gdeval.ERR@k and ir_measures' ERR@k in the API: gdeval.pl's doubles (those treckit gdeval
    prints, byte for byte) on trec_eval's graded sample, the mean over the topics as gdeval's amean line."""
    qrels, run = shared / "trec_eval" / "qrels.rel_level", shared / "trec_eval" / "results.test"
    ref = perl_csv(gdeval_pl, qrels, run, k).stdout.decode().splitlines()[1:]
    got = _by_name(qrels, run, k)
    q = reading.read_qrels(str(qrels), warn=None)
    exact = measures.evaluate(q, reading.read_run(str(run), q, warn=None), k)
    assert [t.decode() for t in exact.topics] == ["301", "302", "303"] == [ln.split(",")[1] for ln in ref]
    for topic, n, e, line in zip(exact.topics, exact.ndcg, exact.err, ref):
        assert got[topic.decode()] == (n, e, e)
        assert f"{n:.5f},{e:.5f}" == line.split(",", 2)[2]
    assert got["all"][:2] == pytest.approx((sum(exact.ndcg) / 3, sum(exact.err) / 3), abs=1e-15)


def test_by_name_in_treckit_eval(shared, capsys):
    """The command prints them as trec_eval prints any measure, beside trec_eval's own, which stay unchanged."""
    qrels, run = str(shared / "trec_eval" / "qrels.rel_level"), str(shared / "trec_eval" / "results.test")
    code, out, err = run_cli(["eval", "-m", "gdeval.nDCG@20", "-m", "ERR@20", "-m", "ndcg_cut.10", qrels, run], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert [ln.split()[0] for ln in lines] == ["ndcg_cut_10", "gdeval.nDCG@20", "ERR@20"]
    assert lines[0] == run_cli(["eval", "-m", "ndcg_cut.10", qrels, run], capsys)[1].strip()
    assert lines[1] == "gdeval.nDCG@20        \tall\t0.2971" and lines[2] == "ERR@20                \tall\t0.2205"


def test_by_name_hand_computed(tmp_path):
    """Topic 1: judgments 2 (a) and 1 (c), ideal 2, 1; topic 2 judged 0 only: 0, as ir_measures
    gives a topic gdeval.pl does not print.  A tie (score 1) goes to the greater docno first, as in gdeval.pl."""
    q, r = files(tmp_path, "1 0 a 2\n1 0 c 1\n2 0 x 0\n",
                 "1 Q0 a 1 3 r\n1 Q0 b 2 1 r\n1 Q0 c 3 1 r\n2 Q0 x 1 1 r\n")
    got = _by_name(q, r, 3)
    assert got["1"][0] == 1.0                    # a, then c above b: the ideal order (b first would give 0.964)
    err = 3 / 16 + (1 - 3 / 16) * (1 / 16) / 2
    assert got["1"][1] == pytest.approx(err, rel=1e-15)
    assert _by_name(q, r, 2)["1"][0] == 1.0
    flipped = _by_name(*files(tmp_path, "1 0 a 2\n1 0 b 1\n", "1 Q0 a 1 3 r\n1 Q0 b 2 1 r\n1 Q0 c 3 1 r\n"), 3)
    ideal = 3 / math.log(2) + 1 / math.log(3)
    assert flipped["1"][0] == pytest.approx((3 / math.log(2) + 1 / math.log(4)) / ideal, rel=1e-15)
    assert got["2"] == (0.0, 0.0, 0.0)
    assert _by_name(q, r, 1)["1"][:2] == (1.0, 3 / 16)


def test_by_name_judgment_above_four_is_refused(tmp_path, capsys):
    """gdeval.pl stops on a judgment above MAX_JUDGMENT (4); by name, treckit eval refuses it the same way."""
    q, r = files(tmp_path, "1 0 a 5\n", "1 Q0 a 1 3 r\n")
    code, out, err = run_cli(["eval", "-m", "gdeval.nDCG@5", str(q), str(r)], capsys)
    assert code == 2 and out == "" and "query '1' has a judgment of 5" in err and "nDCG(dcg='exp-log2')@k" in err
    code, out, _ = run_cli(["eval", "-m", "ndcg_cut.5", str(q), str(r)], capsys)       # trec_eval's measure reads it
    assert code == 0 and out


def test_err_follows_ir_measures_gdeval_provider(gdeval_pl, shared):
    """ir_measures computes ERR@k with gdeval.pl and reads its 5 printed decimals back: treckit's ERR@k is the
    double those decimals round, and 0 where ir_measures fills in its default."""
    ir_measures = pytest.importorskip("ir_measures")
    from treckit.api import read_qrels, read_run
    qrels, run = shared / "trec_eval" / "qrels.rel_level", shared / "trec_eval" / "results.test"
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure("ERR@10")],
                                                                   read_qrels(qrels).to_dict(), read_run(run).to_dict())}
    got = _by_name(qrels, run, 10)
    assert set(theirs) <= set(got) and theirs
    for qid, value in theirs.items():
        assert abs(got[qid][2] - value) <= 5e-6
