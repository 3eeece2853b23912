"""A/B timing of checkouts of treckit's code in one run (for "no slower than before" claims on a
noisy, shared machine: the checkouts take turns, command after command, round after round, in an
order that rotates every round).

    git worktree add ../speed-old <commit>
    .venv/bin/python -m bench.ab_bench --side old=../speed-old/code --side new=code --rounds 7

Each row runs ``python -m treckit eval ...`` with PYTHONPATH set to each checkout's ``code/`` (the same
interpreter and packages); wall time, CPU time and peak RSS come from run_bench.py's forking reader.
Reported per side: the best and the median wall time, the median CPU time (user + system: less
sensitive than wall time to other work on the machine), the median user CPU time (system time, mostly
page faults, swings most of all on a virtual machine whose host is busy) and the median peak RSS, and whether every
side printed the same bytes.  The data comes from bench/generate.py (run run_bench.py once, and once
with ``--shape short-ids``).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
from .run_bench import PY, REST_SECONDS, measured_in_detail

MEASURES = ["-m", "ndcg_cut.10", "-m", "recall.100", "-m", "recip_rank", "-m", "map"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side", action="append", required=True, metavar="NAME=CODE_DIR",
                    help="a checkout's code/ folder, named (give two or more)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--data", type=Path, default=ROOT / "outputs" / "bench")
    ap.add_argument("--rows", default="sorted,shuffled,all_trec,short-ids,short-ids-shuffled")
    ap.add_argument("--pause", type=float, default=REST_SECONDS,
                    help="seconds of rest before each command (the memory the one before freed settles)")
    a = ap.parse_args()
    sides = {name: Path(folder).resolve() for name, folder in (s.split("=", 1) for s in a.side)}
    d = a.data
    q, q_short = d / "qrels.7000x1000.trec", d / "qrels.short-ids.7000x1000.trec"
    rows = {
        "sorted": [*MEASURES, q, d / "run.7000x1000.trec"],
        "shuffled": [*MEASURES, q, d / "run.7000x1000.shuffled.trec"],
        "all_trec": ["-q", "-m", "all_trec", q, d / "run.7000x1000.trec"],
        "short-ids": [*MEASURES, q_short, d / "run.short-ids.7000x1000.trec"],
        "short-ids-shuffled": [*MEASURES, q_short, d / "run.short-ids.7000x1000.shuffled.trec"],
    }
    chosen = a.rows.split(",")
    names = list(sides)
    for folder in sides.values():
        # every side's modules compiled once, as an installed package's are (else a side whose files
        # changed since their last run would compile them on every run it is timed)
        subprocess.run([PY, "-m", "compileall", "-q", str(folder)], check=True, stdout=subprocess.DEVNULL)
    got: dict[tuple[str, str], list[tuple[float, float, bytes, float]]] = {}
    for r in range(a.rounds):
        for i, row in enumerate(chosen):
            # the order rotates with the round and the row, so that no side always follows the same one
            # (a process after one that freed more memory pays more page faults on a virtual machine)
            shift = (r + i) % len(names)
            for side in names[shift:] + names[:shift]:
                argv = ["env", "-u", "PYTHONDONTWRITEBYTECODE", f"PYTHONPATH={sides[side]}", PY, "-m", "treckit", "eval",
                        *map(str, rows[row])]
                time.sleep(a.pause)
                wall, rss, out, cpu, user = measured_in_detail(argv)
                got.setdefault((row, side), []).append((wall, rss, out, cpu, user))
                print(f"round {r + 1} {row:20s} {side}: {wall:.2f} s (CPU {cpu:.2f} s, user {user:.2f} s) {rss:.0f} MiB",
                      file=sys.stderr)
    print("| row | side | wall best / median (s) | wall / first side's in the same round: median (middle half) "
          "| CPU median (s) | user CPU median (s) | peak RSS median (MiB) | same output as the first side |")
    print("|---|---|---|---|---|---|---|---|")
    for row in chosen:
        base = got[(row, names[0])]
        first = base[0][2]
        for side in names:
            xs = got[(row, side)]
            # paired: each round's two commands ran back to back, so a slow spell of the machine falls on both
            ratios = sorted(x[0] / b[0] for x, b in zip(xs, base))
            quarter = len(ratios) // 4
            paired = (f"{statistics.median(ratios):.3f} ({ratios[quarter]:.3f}-{ratios[-1 - quarter]:.3f})"
                      if side != names[0] else "-")
            print(f"| {row} | {side} | {min(x[0] for x in xs):.2f} / {statistics.median(x[0] for x in xs):.2f} "
                  f"| {paired} | {statistics.median(x[3] for x in xs):.2f} | {statistics.median(x[4] for x in xs):.2f} "
                  f"| {statistics.median(x[1] for x in xs):.0f} "
                  f"| {'yes' if all(x[2] == first for x in xs) else 'NO'} |")

if __name__ == "__main__":
    main()
