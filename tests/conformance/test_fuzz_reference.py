"""The differential fuzz of tests/fuzz_reference.py, a fixed few seeds per reference tool (``make fuzz-reference``
runs thousands): gdeval.pl (skipped without perl or the script), pyndeval with ir_measures' names (and those names
in treckit eval's path), cwl-eval, an
ndeval binary (skipped without $TRECKIT_NDEVAL).  A seed that differs would go into KNOWN with the named test that pins
its cause, as a strict xfail; inputs treckit refuses on purpose (fuzz_reference.KNOWN_REFUSALS, each pinned by a
test_kept_difference_* test) are recognised by the comparison and pass."""
from __future__ import annotations

import os

import pytest

import fuzz_reference as fr

CASES = int(os.environ.get("TRECKIT_FUZZ_REFERENCE_CASES", "60"))
KNOWN: dict[tuple[str, int], str] = {}


def _seeds(tool: str):
    for seed in range(CASES):
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[(tool, seed)])] if (tool, seed) in KNOWN else []
        yield pytest.param(seed, marks=marks, id=f"seed{seed}")


def _fail(diff: dict) -> None:
    pytest.fail(f"differs from the reference:\n--- reference\n{diff['reference'][:2000]!r}\n--- treckit\n"
                f"{diff['treckit'][:2000]!r}", pytrace=False)


@pytest.mark.parametrize("seed", list(_seeds("gdeval")))
def test_gdeval_same_bytes(gdeval_pl, tmp_path, seed):
    diff = fr.gdeval_compare(fr.gdeval_case(seed), tmp_path, gdeval_pl)
    if diff is not None and diff["known"] is None:
        _fail(diff)


@pytest.mark.parametrize("seed", list(_seeds("gdeval-names"))[:15])
def test_gdeval_by_name_same_values(gdeval_pl, tmp_path, seed):
    """treckit eval -m gdeval.nDCG@k -m ERR@k on files both readings read alike: gdeval.pl's values."""
    diff = fr.gdeval_names_compare(fr.gdeval_names_case(seed), tmp_path, gdeval_pl)
    if diff is not None:
        _fail(diff)


@pytest.mark.parametrize("seed", list(_seeds("pyndeval")))
def test_pyndeval_same_doubles(seed):
    pytest.importorskip("pyndeval", reason="pyndeval (the test extra) is not installed")
    diff = fr.pyndeval_compare(fr.diversity_case(seed), with_ir_measures=seed % 5 == 0)
    if diff is not None:
        _fail(diff)


@pytest.mark.parametrize("seed", list(_seeds("pyndeval-names"))[:15])
def test_diversity_names_same_doubles(seed):
    """treckit.evaluate with ir_measures' diversity names over subtopic qrels: pyndeval's doubles (ir_measures' own
    every fifth seed)."""
    pytest.importorskip("pyndeval", reason="pyndeval (the test extra) is not installed")
    diff = fr.diversity_names_compare(fr.diversity_names_case(seed), with_ir_measures=seed % 5 == 0)
    if diff is not None:
        _fail(diff)


@pytest.mark.parametrize("seed", list(_seeds("compat"))[:15])
def test_compat_same_doubles(seed):
    """treckit.evaluate with Compat: ir_measures' compat provider's doubles."""
    diff = fr.compat_compare(fr.compat_case(seed))
    if diff is not None:
        _fail(diff)


@pytest.mark.parametrize("seed", list(_seeds("cwl"))[:30])
def test_cwl_same_doubles(seed):
    pytest.importorskip("cwl", reason="cwl-eval (the test extra) is not installed")
    diff = fr.cwl_compare(fr.cwl_case(seed))
    if diff is not None:
        _fail(diff)


@pytest.mark.parametrize("seed", list(_seeds("ndeval"))[:20])
def test_ndeval_same_bytes(ndeval_binary, tmp_path, seed):
    diff = fr.ndeval_compare(fr.ndeval_case(seed), tmp_path, ndeval_binary)
    if diff is not None:
        _fail(diff)


def test_the_cases_reach_the_measures():
    """The generated cases are mostly inputs the tools read, with topics evaluated: a fuzz of refusals would
    prove little."""
    import tempfile
    from pathlib import Path

    from treckit.console.errors import InputError
    from treckit.output.gdeval import gdeval_csv
    printed = refused = 0
    with tempfile.TemporaryDirectory() as tmp:
        q, r = Path(tmp) / "q", Path(tmp) / "r"
        for seed in range(60):
            c = fr.gdeval_case(seed)
            q.write_bytes(c.qrels)
            r.write_bytes(c.run)
            try:
                printed += gdeval_csv(str(q), str(r), c.k, warn=None).count(b"\n") - 1
            except InputError:
                refused += 1
    assert refused < 20 and printed > 40
    assert sum(len(fr.diversity_case(s).qrels) > 0 for s in range(60)) > 50


def test_gdeval_empty_qrels_is_a_kept_difference(gdeval_pl, tmp_path):
    """Seed 50092 (and 23 more of seeds 50000-52999) draws an empty qrels file: gdeval.pl prints its header alone,
    treckit refuses the file (tests/measures/test_gdeval.py::test_kept_difference_empty_qrels_is_refused); the
    comparison counts it as known, not as a difference."""
    c = fr.gdeval_case(50092)
    assert c.qrels == b""
    diff = fr.gdeval_compare(c, tmp_path, gdeval_pl)
    assert diff is not None and diff["reference"] == f"runid,topic,ndcg@{c.k},err@{c.k}\n".encode()
    assert diff["known"] == fr.KNOWN_REFUSALS["qrels file is empty"]
