"""Differential fuzz: ``treckit eval`` against trec_eval 10.0 on seeded random cases (tests/fuzz_cases.py).

CI runs the first TRECKIT_FUZZ_CASES seeds (400 by default, a few seconds); ``make fuzz CASES=N`` runs many more
and writes a reproducer for each difference to outputs/fuzz/.  Skipped, with the reason shown, when the
trec_eval binary is absent (a user's clone has no ../shared; set TRECKIT_TREC_EVAL to its path).

A seed that differs goes into KNOWN with the regression test that pins the cause
(tests/conformance/test_trec_eval_regressions.py), as a strict xfail, so a fix makes it fail until the entry goes;
differences kept on purpose (docs/trec-eval-differences.md) are recognised by fuzz_cases.compare and counted as known.
"""
from __future__ import annotations

import os

import pytest

import fuzz_cases
from fuzz_cases import NICKNAMES, TREC_EVAL_MEASURES, case, compare

CASES = int(os.environ.get("TRECKIT_FUZZ_CASES", "400"))

# Seeds that differ on today's code, each with the regression test that pins the cause: none.  The
# documented differences (docs/trec-eval-differences.md) are recognised by fuzz_cases.compare.
KNOWN: dict[int, str] = {}


def _params():
    for seed in range(CASES):
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[seed])] if seed in KNOWN else []
        yield pytest.param(seed, marks=marks, id=f"seed{seed}")


@pytest.mark.parametrize("seed", list(_params()))
def test_same_bytes_as_trec_eval(trec_eval, tmp_path, seed):
    diff = compare(case(seed), tmp_path / "case", trec_eval)
    if diff is not None and diff.known is None:
        pytest.fail("treckit eval differs from trec_eval 10.0:\n" + diff.report(tmp_path / "case"), pytrace=False)


VARIANT_CASES = int(os.environ.get("TRECKIT_FUZZ_VARIANT_CASES", "100"))


@pytest.mark.parametrize("variant", ["streamed", "tiny"])
def test_same_bytes_as_trec_eval_streamed_and_on_the_fast_paths(trec_eval, tmp_path, monkeypatch, variant):
    """The same seeds evaluated a few lines at a time in a 1 KiB budget, and with every fast path taken on
    small data (fuzz_main --variant): still trec_eval's bytes."""
    import fuzz_main
    fuzz_main.apply_variant(variant, monkeypatch.setattr)
    differ = []
    for seed in range(VARIANT_CASES):
        diff = fuzz_cases.compare(case(seed), tmp_path / str(seed), trec_eval)
        if diff is not None and diff.known is None:
            differ.append(diff.report(tmp_path / str(seed)))
    assert not differ, f"{len(differ)} of {VARIANT_CASES} {variant} cases differ from trec_eval 10.0:\n" + differ[0]


# ------------------------------------------------------------------ the harness itself
def test_cases_are_seeded():
    assert case(5) == case(5)
    assert case(5) != case(6)


# measures of preference judgments (-R prefs / qrels_prefs / qrels_jg): they need other inputs than this fuzz makes
NOT_FUZZED = {"prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
              "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
              "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp", "map_avgjg",
              "Rprec_mult_avgjg", "P_avgjg", "yaap", "all_prefs", "qrels_jg"}


def test_measure_list_is_treckits_registry():
    """The fuzz draws from trec_eval's own list; a measure added to the registry must be added there too."""
    from treckit.measures.registry import MEASURES
    from treckit.measures.registry import NICKNAMES as REGISTRY_NICKNAMES
    names = [m.name for m in MEASURES if m.trec]        # ir_measures-only measures (Judged) have no trec_eval name
    assert [n for n in names if n in TREC_EVAL_MEASURES] == list(TREC_EVAL_MEASURES)     # all there, same order
    assert [n for n in names if n not in TREC_EVAL_MEASURES and n not in NOT_FUZZED] == [], \
        "add the new measure to fuzz_cases.TREC_EVAL_MEASURES (or to NOT_FUZZED, saying why)"
    assert set(NICKNAMES) <= set(REGISTRY_NICKNAMES)
    for m in MEASURES:
        if m.name in TREC_EVAL_MEASURES:
            assert TREC_EVAL_MEASURES[m.name][0] == m.params, m.name


def test_ci_cases_cover_every_flag_measure_and_input_feature():
    cases = [case(s) for s in range(min(CASES, 400))]
    flags = " ".join(" ".join(c.flags) for c in cases)
    for flag in ("-q", "-c", "-n", "-J", "-M", "-l", "-N", "-Z"):
        assert flag in flags, flag
    alone = {c.flags[i + 1] for c in cases for i, f in enumerate(c.flags) if f == "-m"}
    assert set(fuzz_cases.measure_names()) <= {a.split(".")[0] for a in alone}
    assert {"P", "ndcg", "utility", "iprec_at_recall", "rbp"} <= {a.split(".")[0] for a in alone if "." in a}
    runs, qrels = "".join(c.run for c in cases), "".join(c.qrels for c in cases)
    for text in ("#", "%20", "\t", "e+00", "E-3", "+", "-0", " 0.0000000000000000000000000"):
        assert text in runs, text
    assert " -1\n" in qrels and " 4\n" in qrels
    assert any(fuzz_cases.all_negative_queries(c) for c in cases)
    assert any(c.zscores for c in cases)
    assert set(fuzz_cases.ODDITIES) <= {n for c in cases for n in c.notes}


def test_compare_reports_a_changed_byte(trec_eval, tmp_path, monkeypatch):
    """The harness can fail: one byte changed in treckit's output is a difference, with a reproducer."""
    real = fuzz_cases.run_treckit
    seed = next(s for s in range(50) if s not in KNOWN and compare(case(s), tmp_path / "a", trec_eval) is None
                and b"0" in real(case(s).write(tmp_path / "b")).stdout)

    def off_by_one(argv):
        out = real(argv)
        return fuzz_cases.Outcome(out.status, out.stdout.replace(b"0", b"1", 1), out.stderr)
    monkeypatch.setattr(fuzz_cases, "run_treckit", off_by_one)
    diff = compare(case(seed), tmp_path / "c", trec_eval)
    assert diff is not None and diff.known is None
    text = diff.report(tmp_path / "c")
    assert "--- trec_eval stdout" in text and (tmp_path / "c" / "REPRODUCE.txt").exists()


def test_minimise_keeps_the_difference_on_fewer_lines(trec_eval, tmp_path, monkeypatch):
    real = fuzz_cases.run_treckit
    seed = next(s for s in range(200) if s not in KNOWN and not case(s).notes and not any("-m" in f for f in case(s).flags)
                and len(case(s).run.splitlines()) > 5 and compare(case(s), tmp_path / "a", trec_eval) is None
                and b"\nmap " in real(case(s).write(tmp_path / "a")).stdout)

    def map_off(argv):                      # a made-up bug: treckit's map lines changed
        out = real(argv)
        return fuzz_cases.Outcome(out.status, out.stdout.replace(b"\nmap ", b"\nmap_"), out.stderr)
    monkeypatch.setattr(fuzz_cases, "run_treckit", map_off)
    diff = compare(case(seed), tmp_path / "b", trec_eval)
    small = fuzz_cases.minimise(diff, tmp_path / "c", trec_eval)
    assert small.known is None and small.ours.stdout != small.ref.stdout
    assert len(small.case.run.splitlines()) == 1 and len(small.case.qrels.splitlines()) == 1
    assert len(small.case.flags) <= len(diff.case.flags)
