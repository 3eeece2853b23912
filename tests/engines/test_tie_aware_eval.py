"""``treckit eval --tie-aware`` and ``treckit.evaluate(tie_aware=)`` (treckit/tie_aware.py): the values the
command prints are the enumeration's (every order of the tied docs scored by the engine), in trec_eval's
layout with every flag; streamed runs give the same bytes; what is not covered is refused (exit 2)."""
from __future__ import annotations

import itertools
import json

import pytest

from helpers import run_cli
from ties_enumeration import Case, enumerated, exact_mean, qrels_and_run

MEASURES = ["map", "P.1,3", "ndcg_cut.2,4", "num_rel_ret", "recip_rank", "bpref", "Rprec"]
CASE = Case([([[1, "n"], [0, 2, "n", 1], [1]], [1]), ([[2], ["n", 0, 1]], [])], missing=[1],
            options=dict(max_docs=5, level=1))


def treckit(argv):
    return run_cli(["eval", *argv])


def write_case(case: Case, tmp_path):
    """The case as a TREC qrels file and a TREC run file."""
    qrels, run = qrels_and_run(case)
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qt, rt = qrels.table.to_pydict(), run.table.to_pydict()
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in zip(qt["qid"], qt["docid"], qt["grade"])))
    rp.write_text("".join(f"{q} Q0 {d} {i} {s} ties\n"
                          for i, (q, d, s) in enumerate(zip(rt["qid"], rt["docid"], rt["score"]))))
    return qp, rp


def _lines(text: str) -> dict[tuple[str, str], str]:
    return {(f[0].strip(), f[1]): f[2] for f in (ln.split("\t") for ln in text.splitlines())}


def test_expected_best_worst_print_the_enumerations_values(tmp_path):
    """-q -c -M 5: each printed value is the enumeration's mean (to the 4 decimals printed), max and min."""
    qp, rp = write_case(CASE, tmp_path)
    ref = enumerated(CASE, MEASURES)
    flags = ["-q", "-c", "-M", "5", *[f"-m{m}" for m in MEASURES]]
    for mode, pick in (("expected", lambda v: float(exact_mean(v))), ("best", max), ("worst", min)):
        code, out, err = treckit(["--tie-aware", mode, *flags, qp, rp])
        assert code == 0, err
        got = _lines(out)
        for q, cols in ref.items():
            for col, values in cols.items():
                want = pick(values)
                text = got[col, q]
                if col == "num_rel_ret" and "." not in text:
                    assert int(text) == want
                else:
                    assert text == f"{want:6.4f}", (mode, q, col)
        assert ("map", "all") in got and ("map", "zmissing") in got         # -c: the missing query, its placeholder


def test_a_fractional_count_prints_with_four_decimals_and_whole_ones_as_trec_eval(tmp_path):
    """num_rel_ret under -M 2, the cut inside a group of 4 holding 2 relevant docs: 1 + 2 x 2/4 = 2 expected
    ... no: the top doc is relevant, then 1 of the 4 slots: 1 + 1 x 2/4 = 1.5."""
    case = Case([([[1], [1, 0, 1, "n"]], [])])
    qp, rp = write_case(case, tmp_path)
    code, out, _ = treckit(["--tie-aware", "expected", "-q", "-M", "2", "-m", "num_rel_ret", "-m", "num_ret", qp, rp])
    assert code == 0
    assert "num_rel_ret           \tq0\t1.5000\n" in out and "num_rel_ret           \tall\t1.5000\n" in out
    assert "num_ret               \tall\t2\n" in out                  # whole counts keep trec_eval's %ld
    code, out, _ = treckit(["--tie-aware", "best", "-M", "2", "-m", "num_rel_ret", qp, rp])
    assert out == "num_rel_ret           \tall\t2\n"


def test_a_run_without_ties_prints_trec_evals_bytes_in_every_mode(tmp_path):
    """Every doc its own score: expected, best and worst are the plain output, byte for byte, with -q -c -n -l -M -J."""
    case = Case([([[1], [0], ["n"], [2], [1]], [3]), ([[0], [2], [1]], [])], missing=[2])
    qp, rp = write_case(case, tmp_path)
    for flags in (["-q"], ["-q", "-c", "-M", "3", "-l", "2"], ["-q", "-n", "-J", "-m", "all_trec"], ["-m", "ndcg_cut.2"]):
        if "all_trec" in flags:
            flags = ["-q", "-n", "-J", *[f"-m{m}" for m in MEASURES], "-m", "infAP", "-m", "G"]
        plain = treckit([*flags, qp, rp])
        assert plain[0] == 0
        for mode in ("expected", "best", "worst"):
            want = plain[1]
            if mode == "expected" and not any(f.startswith("-m") for f in flags):   # the default set: gm_map left out
                want = "".join(ln for ln in want.splitlines(True) if not ln.startswith("gm_map "))
                assert want != plain[1]
            assert treckit(["--tie-aware", mode, *flags, qp, rp])[1] == want, (mode, flags)


def test_streamed_runs_give_the_same_bytes(tmp_path, monkeypatch):
    from treckit import thresholds
    from treckit.engines import stream

    monkeypatch.setattr(thresholds, "STREAM_BLOCK_MIN_BYTES", 48)
    monkeypatch.setattr(thresholds, "IN_MEMORY_BYTES_PER_FILE_BYTE", 100)     # a run of a few hundred bytes streams
    parts = []
    real = stream.StreamEvaluation.run

    def spy(self):
        try:
            return real(self)
        finally:
            parts.append(len(self.parts))
    monkeypatch.setattr(stream.StreamEvaluation, "run", spy)
    qp, rp = write_case(CASE, tmp_path)
    for mode in ("expected", "range"):
        argv = ["--tie-aware", mode, "-q", "-c", "-M", "5", *[f"-m{m}" for m in MEASURES], qp, rp]
        whole = treckit(["--memory-limit", "0", *argv])
        streamed = treckit(["--memory-limit", "1K", *argv])
        assert whole[0] == streamed[0] == 0 and whole[1] == streamed[1]
    assert parts and all(n > 1 for n in parts)


def test_an_interleaved_run_streamed_through_shards_gives_the_same_bytes(tmp_path, monkeypatch):
    """Queries interleaved (the streaming engine partitions the run into shards), and an unjudged query whose
    shard holds no judged one."""
    from treckit import thresholds

    monkeypatch.setattr(thresholds, "STREAM_BLOCK_MIN_BYTES", 48)
    monkeypatch.setattr(thresholds, "IN_MEMORY_BYTES_PER_FILE_BYTE", 100)
    monkeypatch.setattr(thresholds, "SHARDS_MAX", 5)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    qp, rp = write_case(CASE, tmp_path)
    lines = rp.read_text().splitlines(True) + [f"unjudged{k % 3} Q0 u{k} 0 1.0 ties\n" for k in range(6)]
    by_query: dict[str, list[str]] = {}
    for ln in lines:
        by_query.setdefault(ln.split()[0], []).append(ln)
    mixed = [ln for row in itertools.zip_longest(*by_query.values()) for ln in row if ln]
    rp.write_text("".join(mixed))
    for mode in ("expected", "report"):
        argv = ["--tie-aware", mode, "-q", "-c", "-M", "5", *[f"-m{m}" for m in MEASURES], qp, rp]
        whole = treckit(["--memory-limit", "0", *argv])
        streamed = treckit(["--memory-limit", "1K", *argv])
        assert whole[0] == streamed[0] == 0, streamed[2]
        assert whole[1] == streamed[1]


def test_range_columns_hold_trec_evals_value_and_the_three_others(tmp_path):
    qp, rp = write_case(CASE, tmp_path)
    plain = _lines(treckit(["-q", "-m", "map", "-m", "P.3", qp, rp])[1])
    code, out, _ = treckit(["--tie-aware", "range", "--format", "trec_eval", "-q", "-m", "map", "-m", "P.3", qp, rp])
    assert code == 0 and out.startswith("# measure")
    rows = [ln.split("\t") for ln in out.splitlines()[1:]]
    assert len(rows) == len(plain)
    for m, q, te, ex, worst, best in rows:
        assert te == plain[m.strip(), q]
        assert float(worst) <= float(ex) <= float(best) and float(worst) <= float(te) <= float(best)
    code, out, _ = treckit(["--tie-aware", "range", "--format", "json", "-m", "map", qp, rp])
    rec = json.loads(out)[0]
    row = rec["rows"][0]
    assert rec["tie_aware"] == "range" and set(row) == {"qid", "measure", "trec_eval", "expected", "best", "worst"}
    assert f"{row['trec_eval']:.4f}" == plain["map", "all"]


def test_a_reading_that_orders_the_ties_leaves_none(tmp_path):
    """--ties break and docid-asc choose one order when the run is read: the four values of range coincide,
    and are that reading's plain values."""
    qp, rp = write_case(CASE, tmp_path)
    for ties in ("break", "docid-asc"):
        plain = _lines(treckit(["--ties", ties, "-m", "map", "-m", "P.3", qp, rp])[1])
        code, out, _ = treckit(["--ties", ties, "--tie-aware", "range", "--format", "trec_eval", "-m", "map", "-m",
                                "P.3", qp, rp])
        assert code == 0
        for m, q, *values in (ln.split("\t") for ln in out.splitlines()[1:]):
            assert set(values) == {plain[m.strip(), q]}, (ties, m)
    keep = treckit(["--tie-aware", "range", "--format", "trec_eval", "-m", "P.3", qp, rp])[1]
    assert len(set(keep.splitlines()[1].split("\t")[2:])) > 1          # read as written, the ties move P@3


def test_report_counts_the_ties_and_names_the_queries_that_move(tmp_path):
    """q0: groups [1, n] and [0, 2, n, 1] hold judged docs, [1] is single; q1: [n, 0, 1] does.  Three tied
    groups with a judged doc over two queries; scores are whole numbers: rounding."""
    qp, rp = write_case(CASE, tmp_path)
    code, out, _ = treckit(["--tie-aware", "report", "-m", "map", "-m", "P.1", qp, rp])
    assert code == 0
    assert "tie groups holding a judged doc: 3 over 2 of 2 evaluated queries" in out
    assert "tie in 3 groups over 2 queries" in out and "rounding is the likely cause" in out
    assert "queries that move most" in out and "P_1" in out
    code, out, _ = treckit(["--tie-aware", "report", "--format", "json", "-m", "map", qp, rp])
    rec = json.loads(out)[0]
    assert rec["tied_groups"] == 3 and rec["tied_groups_with_judged_doc"] == 3 and rec["source"] == "rounded"
    assert rec["moves_most"][0]["range"] > 0


def test_what_is_not_covered_is_refused_with_exit_2(tmp_path):
    qp, rp = write_case(CASE, tmp_path)
    code, out, err = treckit(["--tie-aware", "expected", "-m", "relstring", qp, rp])
    assert code == 2 and out == "" and "relstring" in err and "ndcg_cut" in err
    code, _, err = treckit(["--tie-aware", "expected", "-m", "gm_map", qp, rp])
    assert code == 2 and "geometric mean" in err
    assert treckit(["--tie-aware", "best", "-m", "gm_map", qp, rp])[0] == 0
    code, out, err = treckit(["--tie-aware", "expected", qp, rp])         # the default set: gm_map left out, said
    assert code == 0 and "gm_map left out" in err and "gm_map" not in out and "map " in out
    # a nickname: what it brings that is not covered is left out, said; the rest printed
    code, out, err = treckit(["--tie-aware", "worst", "-m", "all_trec", qp, rp])
    assert code == 0 and "relstring left out of the tie-aware worst values" in err and "relstring" not in out
    assert "gm_map " in out and "ndcg_cut_10 " in out
    code, out, err = treckit(["--tie-aware", "range", "-m", "official", qp, rp])
    assert code == 0 and "gm_map left out of the tie-aware expected values" in err and "\ngm_map " not in out
    code, _, err = treckit(["--tie-aware", "expected", "--engine", "dask", qp, rp])
    assert code == 2 and "--engine local" in err
    code, _, err = treckit(["--tie-aware", "mean", qp, rp])
    assert code == 2 and "expected, best, worst, range, report" in err
    code, _, err = treckit(["--tie-aware", "expected", "-Z", qp, qp, rp])
    assert code == 2 and "-Z" in err


def test_without_tie_aware_the_output_is_unchanged(tmp_path, shared):
    """trec_eval's own test: the same bytes as out.test, and the tie-aware expected value differs from them
    only where results.test has ties."""
    d = shared / "trec_eval"
    code, out, _ = treckit([d / "qrels.test", d / "results.test"])
    assert code == 0 and out == (d / "out.test").read_text()


def test_the_python_api(tmp_path):
    import treckit

    qp, rp = write_case(CASE, tmp_path)
    ref = enumerated(CASE, ["map"])
    df = treckit.evaluate(str(qp), str(rp), ["map"], tie_aware="expected", max_docs=5, warn=lambda m: None)
    for q, cols in ref.items():
        assert float(df.loc[df.qid == q, "map"].iloc[0]) == pytest.approx(float(exact_mean(cols["map"])), abs=1e-12)
    rng = treckit.evaluate(str(qp), str(rp), ["map"], tie_aware="range", per_query=False, warn=lambda m: None)
    assert list(rng.columns) == ["qid", "measure", "trec_eval", "expected", "worst", "best"]
    rep = treckit.evaluate(str(qp), str(rp), ["map"], tie_aware="report", warn=lambda m: None)
    assert rep["tied_groups_with_judged_doc"] == 3
    from treckit.console.errors import InputError
    with pytest.raises(InputError, match="relstring"):
        treckit.evaluate(str(qp), str(rp), ["relstring"], tie_aware="worst")


def test_detect_says_where_the_ties_come_from(capsys, monkeypatch):
    from helpers import ROOT

    monkeypatch.chdir(ROOT / "data" / "ties")
    code, out, _ = run_cli(["detect", "--ties", "rounded.run"], capsys)
    assert code == 0 and out.splitlines()[1] == ("ties\t286 of 300 lines (95.3%) tie in 44 groups over 3 queries; the "
                                                 "scores carry at most 1 decimal place: rounding is the likely cause")
    code, out, _ = run_cli(["detect", "rounded.run"], capsys)
    assert code == 0 and len(out.splitlines()) == 1                  # without --ties: as before
    code, _, err = run_cli(["detect", "--ties", "--role", "qrels", "qrels.test"], capsys)
    assert code == 2 and "--ties" in err


def test_range_rows_are_the_same_numbers_in_every_format(tmp_path):
    """--format json, jsonl, csv and the table print one row per (measure, query) with the same four values."""
    qp, rp = write_case(CASE, tmp_path)
    argv = ["--tie-aware", "range", "-q", "-m", "map", "-m", "P.3", qp, rp]
    code, out, _ = treckit([*argv[:2], "--format", "json", *argv[2:]])
    assert code == 0
    rows = json.loads(out)[0]["rows"]
    keys = ("trec_eval", "expected", "worst", "best")
    expected = {(r["measure"], r["qid"]): tuple(r[k] for k in keys) for r in rows}
    assert all(tuple(r)[2:] == keys for r in rows)                 # worst before best, as report and compare
    assert len(expected) == len(rows) >= 6                           # 2 measures x (2 queries + all)

    code, out, _ = treckit([*argv[:2], "--format", "jsonl", *argv[2:]])
    lines = [json.loads(ln) for ln in out.splitlines()]
    assert code == 0 and {(r["measure"], r["qid"]): tuple(r[k] for k in keys) for r in lines} == expected
    assert {r["run"] for r in lines} == {"ties"} and {r["path"] for r in lines} == {str(rp)}

    code, out, _ = treckit([*argv[:2], "--format", "csv", *argv[2:]])
    header, *body = [ln.split(",") for ln in out.splitlines()]
    assert code == 0 and header == ["run", "qid", "measure", *keys, "path"]
    assert {(r[2], r[1]): tuple(float(v) for v in r[3:7]) for r in body} == expected

    code, out, _ = treckit([*argv[:2], "--format", "table", *argv[2:]])
    assert code == 0 and out.startswith(f"run ties: {rp}\n") and "tie-aware range" in out
    for (measure, qid), values in expected.items():
        assert any(ln.split()[:6] == [qid, measure, *(f"{v:6.4f}".strip() for v in values)]
                   for ln in out.replace("│", " ").splitlines()), (measure, qid)


def test_range_and_report_give_a_range_worst_first(capsys):
    """One order for a range everywhere: --tie-aware range prints worst before best, as report does."""
    from helpers import ROOT, run_cli
    ties = ROOT / "data" / "ties"
    code, out, err = run_cli(["eval", "--tie-aware", "range", "-m", "map", ties / "qrels.test", ties / "rounded.run"], capsys)
    assert code == 0, err
    assert out.splitlines() == ["# measure             \tqid\ttrec_eval\texpected\tworst\tbest",
                                "map                   \tall\t0.1616\t0.1623\t0.1558\t0.1693"]
    code, out, err = run_cli(["eval", "--tie-aware", "report", "-m", "map", ties / "qrels.test", ties / "rounded.run"],
                             capsys)
    assert code == 0, err
    assert any(line.split() == ["measure", "trec_eval", "expected", "worst", "best", "largest", "query", "range"]
               for line in out.splitlines())
    assert any(line.split()[:5] == ["map", "0.1616", "0.1623", "0.1558", "0.1693"] for line in out.splitlines())


def test_report_of_a_run_without_ties_and_with_long_decimals(tmp_path):
    """No tie touches a judged doc: no query moves, said; scores with more decimals than a double carries
    (more than 17) are named so."""
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qp.write_text("q1 0 a 1\nq1 0 b 0\n")
    rp.write_text("q1 Q0 a 1 0.123456789012345678901 t\nq1 Q0 b 2 0.1 t\n")
    code, out, _ = treckit(["--tie-aware", "report", "-m", "map", qp, rp])
    assert code == 0
    assert "tie groups holding a judged doc: 0 over 0 of 1 evaluated queries" in out
    assert "more than 17 decimal places" in out
    assert "no query's value depends on the order of its tied documents" in out
    code, out, _ = treckit(["--tie-aware", "report", "--format", "jsonl", "-m", "map", qp, rp])
    rec = json.loads(out)
    assert code == 0 and rec["tie_aware"] == "report" and rec["moves_most"] == [] and rec["score_decimals"] is None
