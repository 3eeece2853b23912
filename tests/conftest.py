from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the reference data (trec_eval's conformance suite, QUEST and BEIR samples): TRECKIT_REFERENCE_DATA, else ../shared/data
SHARED = Path(os.environ.get("TRECKIT_REFERENCE_DATA") or ROOT.parent / "shared" / "data")


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():
        if os.environ.get("TRECKIT_REFERENCE_DATA"):       # asked for and not there: an error, not a silent skip
            pytest.fail(f"TRECKIT_REFERENCE_DATA={SHARED} is not a directory")
        pytest.skip(f"reference data not found at {SHARED} (a user's clone has no ../shared; "
                    "set TRECKIT_REFERENCE_DATA to the data directory)")
    return SHARED


@pytest.fixture(scope="session")
def trec_eval() -> Path:
    """The trec_eval 10.0 binary the differential tests compare with."""
    from fuzz_cases import trec_eval_path
    path = trec_eval_path()
    if path is None:
        if os.environ.get("TRECKIT_TREC_EVAL"):
            pytest.fail(f"TRECKIT_TREC_EVAL={os.environ['TRECKIT_TREC_EVAL']} is not an executable file")
        pytest.skip("trec_eval 10.0 not found at ../shared/tools/trec_eval (set TRECKIT_TREC_EVAL to its path)")
    return path


def run_cli(argv, capsys):
    """Run the treckit CLI in-process; returns (exit code, stdout, stderr)."""
    from treckit.cli.main import main
    code = main(list(map(str, argv)))
    out = capsys.readouterr()
    return code, out.out, out.err
