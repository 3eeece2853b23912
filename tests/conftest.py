from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"reference data not found at {SHARED} (a user's clone has no ../shared)")
    return SHARED


def run_cli(argv, capsys):
    """Run the treckit CLI in-process; returns (exit code, stdout, stderr)."""
    from treckit.cli.main import main
    code = main(list(map(str, argv)))
    out = capsys.readouterr()
    return code, out.out, out.err
