"""What tests share besides fixtures: the repository's root, the reference data, the one CLI runner, waits that
grow with the machine's load, and the staged scripts run in this process.  Tests import it by name
(``from helpers import ROOT, run_cli``); pytest puts ``tests/`` on the import path through ``conftest.py``."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from cli_runner import run_cli  # noqa: F401 -- the tests' one CLI runner, re-exported here

ROOT = Path(__file__).resolve().parents[1]
# the reference data (trec_eval's conformance suite, QUEST and BEIR samples): TRECKIT_REFERENCE_DATA, else ../shared/data
SHARED = Path(os.environ.get("TRECKIT_REFERENCE_DATA") or ROOT.parent / "shared" / "data")


def shared_data() -> Path:
    if not SHARED.is_dir():
        if os.environ.get("TRECKIT_REFERENCE_DATA"):       # asked for and not there: an error, not a silent skip
            pytest.fail(f"TRECKIT_REFERENCE_DATA={SHARED} is not a directory")
        pytest.skip(f"reference data not found at {SHARED} (a user's clone has no ../shared; "
                    "set TRECKIT_REFERENCE_DATA to the data directory)")
    return SHARED


def patience(seconds: float) -> float:
    """How long to wait for something that is sure to come (a process started, a worker back, a server up):
    ``seconds`` on an idle machine, more as the machine's load rises above its cores (one minute's load average,
    read now), so that a busy machine is a slow pass, never a failure.  A limit, never a measurement."""
    return seconds * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def default_sigint() -> None:
    """preexec_fn for a child process that a test interrupts: SIGINT at its default, and not blocked, whatever the
    test runner set up -- an ignored SIGINT would be ignored by the child too (Python then installs no
    KeyboardInterrupt handler), and a blocked one never delivered."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def staged(name, *args, capsys):
    """A staged script's main() run in this process (as `treckit` commands are in run_cli): (exit code, stdout,
    stderr)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"staged_{name[:-3]}", ROOT / "code" / "evaluation" / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    code = module.main(list(map(str, args)))
    out = capsys.readouterr()
    return code, out.out, out.err


FAKE_CLOCK = '''
"""A clock that only moves when a search works: searches cost a known time, a first call a second more."""
calls = []          # "tick" for each reading of the clock, (who, query text) for each call
now = 0.0
seen = set()


def clock():
    calls.append("tick")
    return now


def work(who, text, seconds):
    global now
    calls.append((who, text))
    if who not in seen:             # a first call's cost: an import, a model loaded, a JIT
        seen.add(who)
        now += 1.0
    now += seconds


def search_a(text):
    work("A", text, 0.25)
    return ["Toy Story 3", "Rio 2"]


def search_b(text):
    work("B", text, 0.5)
    return ["Rio 2", "Toy Story 3"]


def rerank(text, cands):
    work("rerank", text, 0.125)
    return [d for d, _ in reversed(cands)]


def costly_first_full_fusion(real, warmup):
    """fuse() whose first call on more than the warm-up's queries costs a second (memory first mapped)."""
    def fuse(runs, *args, **kwargs):
        global now
        if len(set(runs[0].table.column("qid").to_pylist())) > warmup and "fuse" not in seen:
            seen.add("fuse")
            now += 1.0
        return real(runs, *args, **kwargs)
    return fuse
'''


def significance_row(out: str, measure: str) -> str:
    """compare's row of significance tests for ``measure`` as one line, in either of its layouts: a table row
    (``│ ndcg_cut_10 │ dense │ t-test │ ... │ no │``), or, where the table is wider than the console, the row's two
    lines (``ndcg_cut_10 / dense / t-test; ...`` then ``effect size d 0.864; significant no``)."""
    lines = out.splitlines()
    i = next(i for i, x in enumerate(lines) if measure in x and "t-test" in x)
    row = lines[i].rstrip(" │")
    if not row.endswith(("yes", "no")) and i + 1 < len(lines):
        row += " " + lines[i + 1].rstrip(" │")
    return row
