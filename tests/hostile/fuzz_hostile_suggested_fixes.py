"""The longer randomized pass of suggested fixes (``make fuzz-hostile``; the suite's cases are
test_hostile_suggested_fixes.py).

Each case writes a random measure name -- an ir_measures name with random parameters and ``@`` values (negative,
fractional, huge, text, unknown keys), or a trec_eval name with random parameters (``P.-1``, ``rbp.p=1.5``,
``recall.1e30``) -- and asks ``treckit eval`` for it on a small qrels and run.  Where the error offers a measure
("e.g. X", "-m X"), ``treckit eval -m X`` on the same files must succeed: a fix that does not work where it is
printed is a finding, and so is anything but exit 0 or 2, or a traceback.

``fuzz(cases, seed, out)`` returns one line per finding."""
from __future__ import annotations

import contextlib
import io
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from test_hostile_suggested_fixes import QRELS, RUN  # noqa: E402

VALUES = ["-1", "0", "1", "2", "10", "-0.5", "0.5", "1.5", "2.0", "1e999", "-1e999", "1e23", str(2 ** 63), str(2 ** 64),
          "'x'", "'log2'", "'exp-log2'", "True", "None", "{0: 1}", "{'a': 1}", "{1: -3}", "[1]", "-(1)", "+3"]
TREC_PARAMS = ["-1", "0", "1", "5,5", "1e30", "9223372036854775808", "x", "", "p=1.5", "p=-1", "1=3,2=9", "1=x",
               "0.5", ".5,1.5", "1,-1,0,0", "1,2"]


def _expression(r: random.Random) -> str:
    from treckit.measures.registry import IRM_NAMES, TREC_NAMES
    if r.random() < 0.3:
        name = r.choice(sorted(TREC_NAMES))
        return name if r.random() < 0.1 else f"{name}.{r.choice(TREC_PARAMS)}"
    name = r.choice(sorted(IRM_NAMES))
    spec = IRM_NAMES[name][1]
    keys = list(spec.params) + ["rel", "p", "cutoff", "no_such"]
    params = {k: r.choice(VALUES) for k in r.sample(keys, r.randint(0, 3))}
    inside = f"({', '.join(f'{k}={v}' for k, v in params.items())})" if params else ""
    at = f"@{r.choice(VALUES)}" if r.random() < 0.6 else ""
    return name + inside + at


def _eval(argv) -> tuple[int, str, str]:
    from treckit.cli.main import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(map(str, argv)))
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def offered(err: str) -> list[str]:
    """The measures the fix offers, as printed ("e.g. X or Y", "-m X", "write X"), if it offers any."""
    if "\n  fix: " not in err:
        return []
    fix = err.split("\n  fix: ", 1)[1].splitlines()[0]
    if "e.g. " in fix:
        text = fix.rsplit("e.g. ", 1)[1]
    else:
        m = re.search(r"(?:use -m |write |\(-m )(\S.*)", fix)
        if m is None:
            return []
        text = m.group(1)
    text = re.split(r"; | \(|, or |\? |, e\.g\.", text)[0]
    out = []
    for alternative in text.split(" or "):
        alternative = alternative.strip().rstrip(",.").removeprefix("-m ")
        while alternative.count(")") > alternative.count("("):        # the close of the sentence's own parenthesis
            alternative = alternative[:alternative.rindex(")")] + alternative[alternative.rindex(")") + 1:]
        if alternative and alternative != "none" and not any(ch in alternative for ch in "…<>") and "..." not in alternative \
                and not re.search(r"@[kKrX]\b|\.k\b", alternative):
            out.append(alternative)
    return out


def fuzz(cases: int, seed: int, out: Path) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").write_text(QRELS)
    (out / "run").write_text(RUN)
    r = random.Random(seed)
    findings: list[str] = []
    for case in range(cases):
        asked = _expression(r)
        code, _, err = _eval(["eval", "-m", asked, out / "qrels", out / "run"])
        if code not in (0, 2) or "Traceback" in err or "internal error" in err:
            findings.append(f"case {case}: eval -m {asked!r}: exit {code}: {err.strip()[-300:]}")
            continue
        for fix in offered(err) if code == 2 else ():       # a pattern (P.k, {name}@k) is no command to run
            code, _, said = _eval(["eval", "-m", fix, out / "qrels", out / "run"])
            if code != 0:
                findings.append(f"case {case}: eval -m {asked!r} offers {fix!r}, which fails: {said.strip()[:300]}")
    return findings


if __name__ == "__main__":
    found = fuzz(int(sys.argv[1]) if len(sys.argv) > 1 else 200, 0, Path("outputs/fuzz_hostile/suggested_fixes"))
    print("\n".join(found) or "no findings")
