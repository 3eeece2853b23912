"""The longer randomized pass of every hostile-input class (tests/hostile/fuzz_hostile_*.py): ``make fuzz-hostile``.

    python tests/fuzz_hostile.py [--cases N] [--seed S] [--class NAME ...] [--out DIR]

Each class module's ``fuzz(cases, seed, out)`` runs ``cases`` seeded attacks and returns its findings, one line each;
this driver runs them in turn, writes every finding to ``OUT/SUMMARY.txt`` and exits 1 when there is any."""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLASSES = HERE / "hostile"


def class_modules() -> dict[str, Path]:
    """Every class's longer pass, by the class's name (the file name after ``fuzz_hostile_``)."""
    return {p.stem.removeprefix("fuzz_hostile_"): p for p in sorted(CLASSES.glob("fuzz_hostile_*.py"))}


def load(path: Path):
    sys.path[:0] = [str(HERE), str(CLASSES)]
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    modules = class_modules()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=200, help="attacks per class (default 200)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--class", dest="classes", action="append", choices=sorted(modules), help="only this class")
    ap.add_argument("--out", type=Path, default=HERE.parent / "outputs" / "fuzz_hostile")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    findings: list[str] = []
    for name in args.classes or sorted(modules):
        start = time.monotonic()
        found = load(modules[name]).fuzz(args.cases, args.seed, args.out / name)
        findings += [f"{name}: {line}" for line in found]
        print(f"{name}: {args.cases} cases, {len(found)} findings, {time.monotonic() - start:.0f} s", file=sys.stderr)
    (args.out / "SUMMARY.txt").write_text("".join(f"{line}\n" for line in findings))
    print(f"{len(findings)} findings ({args.out / 'SUMMARY.txt'})", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
