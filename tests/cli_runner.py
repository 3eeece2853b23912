"""The one way a test runs a ``treckit`` command in this process (about 0.02 s against about 0.8 s of a
subprocess's start-up): tests import it from helpers, the fuzz drivers from here (they run without pytest)."""
from __future__ import annotations

import contextlib
import io
import warnings


def run_cli(argv, capsys=None) -> tuple[int, str, str]:
    """``treckit ARGV`` run in-process: (exit code, stdout, stderr); the arguments may be paths or numbers.

    With pytest's ``capsys`` the output is what capsys captured, which also takes the bytes the reference-tool
    commands write to ``sys.stdout.buffer``.  Without it (the fuzz drivers, hypothesis tests, a test that calls
    the CLI several times) stdout and stderr are redirected to strings for the call, and Python warnings are
    left out: the CLI prints its own warnings to stderr, and a warning's default print would mix into stderr."""
    from treckit.cli.main import main
    argv = list(map(str, argv))
    if capsys is not None:
        code = main(argv)
        out = capsys.readouterr()
        return code, out.out, out.err
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(argv)
    return code, out.getvalue(), err.getvalue()
