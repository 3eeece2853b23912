"""Hostile inputs an attacker's pass found past the second half's hardening: each exits 2 with the file, the
line and the fix (never an internal error), or is never answered from a stale cache."""
from __future__ import annotations

import pytest

from conftest import ROOT, run_cli

SAMPLE = ROOT / "data" / "test_sets" / "clinical_v1.yaml"


def _clean_failure(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    assert err.startswith("treckit: error: ") and "\n  fix: " in err, err
    assert "internal error" not in err and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)


@pytest.mark.parametrize("text, line", [(b"a: 1\x00\n", 1),
                                        (SAMPLE.read_bytes() + b"x\x00y\n", SAMPLE.read_bytes().count(b"\n") + 1)],
                         ids=["small", "after-the-queries"])
def test_a_test_set_holding_a_nul_byte_is_refused_with_its_line(tmp_path, capsys, text, line):
    """A NUL byte is refused by the YAML reader before any query is read: the query checker, never started,
    still reports nothing of its own."""
    bad = tmp_path / "nul.yaml"
    bad.write_bytes(text)
    code, _, err = run_cli(["testset", "validate", bad], capsys)
    _clean_failure(code, err, "nul.yaml", f"line {line}: not valid YAML", "U+0000")
