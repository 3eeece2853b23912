"""``make fuzz CASES=N``: many differential cases against trec_eval 10.0; each difference is written with a
reproducer (the files, the two commands, both outputs) to outputs/fuzz/<seed>/, and a summary to
outputs/fuzz/SUMMARY.txt.

    python tests/fuzz_main.py [--cases N] [--start S] [--out DIR] [--minimise] [--variant plain|streamed|tiny]

``--variant streamed`` evaluates every case with a budget of 1 KiB (``--memory-limit 1K``) and blocks of 64 bytes:
each run is read and evaluated a few lines at a time and the parts merged.  ``--variant tiny`` sets every size
of thresholds.py that switches to a fast path to the side that takes it on small data (the low values of
tests/engines/test_thresholds.py).  Both must print trec_eval's bytes, as the plain cases do.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fuzz_cases  # noqa: E402
from fuzz_cases import ROOT, case, compare, minimise, trec_eval_path  # noqa: E402

VARIANTS = ("plain", "streamed", "tiny")
STREAMED_ARGV = ["--memory-limit", "1K"]
STREAMED_SIZES = {"STREAM_BLOCK_MIN_BYTES": 64}


def variant_settings(variant: str) -> tuple[list[str], dict[str, int]]:
    """(the flags put before every treckit command, the thresholds.py sizes set) of a variant."""
    if variant == "streamed":
        return STREAMED_ARGV, STREAMED_SIZES
    if variant == "tiny":
        sys.path.insert(0, str(Path(__file__).resolve().parent / "engines"))
        from test_thresholds import THRESHOLDS
        return [], {name: low for name, low, _high in THRESHOLDS}
    return [], {}


def apply_variant(variant: str, setattr=setattr) -> None:
    """Set the variant up for the rest of the process (the cases run in-process); a test passes
    ``monkeypatch.setattr`` to have it undone."""
    from treckit import thresholds
    argv, sizes = variant_settings(variant)
    if argv:
        plain_run = fuzz_cases.run_treckit
        setattr(fuzz_cases, "run_treckit", lambda args: plain_run([*argv, *args]))
    for name, value in sizes.items():
        assert hasattr(thresholds, name), name
        setattr(thresholds, name, value)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "fuzz")
    ap.add_argument("--minimise", action="store_true", help="also shrink each difference (DIR/<seed>/min/)")
    ap.add_argument("--variant", choices=VARIANTS, default="plain",
                    help="streamed: in a 1 KiB budget, 64-byte blocks; tiny: every fast path taken on small data")
    a = ap.parse_args(argv)
    apply_variant(a.variant)
    binary = trec_eval_path()
    if binary is None:
        print("fuzz: trec_eval 10.0 not found at ../shared/tools/trec_eval; set TRECKIT_TREC_EVAL", file=sys.stderr)
        return 2
    if a.out.exists():
        shutil.rmtree(a.out)
    a.out.mkdir(parents=True)
    failures, known, t0 = [], [], time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for i, seed in enumerate(range(a.start, a.start + a.cases)):
            diff = compare(case(seed), Path(tmp), binary)
            if diff is not None:
                (known if diff.known else failures).append(seed)
                diff.report(a.out / f"{seed:07d}")
                if a.minimise and not diff.known:
                    minimise(diff, Path(tmp) / "shrink", binary).report(a.out / f"{seed:07d}" / "min")
            if (i + 1) % 500 == 0:
                print(f"fuzz: {i + 1}/{a.cases} cases, {len(failures)} differences, {len(known)} known "
                      f"({time.monotonic() - t0:.0f} s)", file=sys.stderr)
    summary = [f"{a.cases} {a.variant} cases from seed {a.start}: {len(failures)} differences, {len(known)} known (documented: "
               "trec_eval crashes or refuses, treckit refuses on purpose)",
               "differences: " + " ".join(map(str, failures)),
               "known: " + " ".join(map(str, known))]
    (a.out / "SUMMARY.txt").write_text("\n".join(summary) + "\n")
    print("\n".join(summary[:1]) + f"; reproducers in {a.out}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
