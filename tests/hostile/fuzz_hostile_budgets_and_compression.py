"""The longer pass of the budgets-and-compression class (test_hostile_budgets_and_compression.py): seeded random
.gz attacks (bombs of newlines, blanks, comments or one endless line, several members, trailing garbage, data cut
at a random byte, a valid head over a bomb) through a random reader, and random commands under random budgets over
inputs of random size, each in a child process whose peak memory is measured.

What must hold: exit 0 or 2 (never an internal error), a truncated or corrupt .gz named as such, a refusal naming the
budget, and the peak within the budget (at least the smallest one) plus the command's peak on a two-line input,
plus the tolerance.

    python tests/fuzz_hostile.py --class budgets_and_compression --cases 200
"""
from __future__ import annotations

import gzip
import json
import random
import shutil
from pathlib import Path

from treckit.thresholds import MEMORY_LIMIT_DEFAULT
from test_hostile_budgets_and_compression import (BUDGET, COMMANDS, MIB, READERS, SIZES, TOLERANCE, bomb, paired,
                                                  run_lines, small_input, with_budget, write_inputs)


def _gz_attack(r: random.Random) -> tuple[bytes, str]:
    """(a hostile .gz, what it is)."""
    kind = r.choice(["newlines", "blanks", "comments", "endless", "members", "garbage", "cut", "head-over-bomb"])
    mib = r.randint(4, 48)
    if kind == "newlines":
        return bomb(b"\n" * MIB, mib), kind
    if kind == "blanks":
        return bomb(b" \t\r\n" * (MIB // 4), mib), kind
    if kind == "comments":
        return bomb(b"# a comment line\n" * (MIB // 17), mib), kind
    if kind == "endless":
        pattern = r.choice([b"x", b"1 Q0 d 1 1.0 t ", b'{"a": '])
        return bomb(pattern * (MIB // len(pattern)), mib), kind
    body = "".join(run_lines(r.randint(1, 20), r.randint(1, 40), r.randrange(1 << 30))).encode()
    if kind == "members":
        cut = r.randrange(len(body))
        return gzip.compress(body[:cut]) + b"\0" * r.randint(0, 3) + gzip.compress(body[cut:]), kind
    if kind == "garbage":
        return gzip.compress(body) + r.choice([b"garbage", b"\x1f", b"\x1f\x8bxx", bytes(r.randrange(256) for _ in range(9))]), kind
    if kind == "cut":
        whole = gzip.compress(body)
        return whole[: r.randrange(10, len(whole) - 8)], kind
    return bomb(body + b"\n" * MIB, mib), kind


def _budget_case(r: random.Random, d: Path) -> tuple[list[str], int]:
    """(a command over large inputs of random size under a random budget, the budget)."""
    queries, docs = r.randint(20, 200), r.choice([100, 500, 1000])
    write_inputs(d, "large", queries, docs, r.choice([10, 40, 200]))
    budget = r.choice([1, 2, 4, 8, 16]) * MIB
    return with_budget(r.choice(list(COMMANDS)), "large", budget), budget


def fuzz(cases: int, seed: int, out: Path) -> list[str]:
    """``cases`` seeded attacks; one finding per line (empty when every bound held); reproducers under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    write_inputs(work, "small", 2, 1, 1)
    base: dict[str, int] = {}
    findings: list[str] = []
    for case in range(seed, seed + cases):
        r = random.Random(case)
        if case % 2:
            data, kind = _gz_attack(r)
            name = r.choice(list(READERS))
            (work / "attack.gz").write_bytes(data)
            argv = ["attack.gz" if a == "B" else a for a in READERS[name]]
            small = [small_input(name) if a == "B" else a for a in READERS[name]]
            # without --memory-limit a reader may hold a bomb's content up to the default budget (it streams past it)
            limit = max(SIZES["MEMORY_LIMIT_MIN"], BUDGET) if "--memory-limit" in argv else MEMORY_LIMIT_DEFAULT
        else:
            argv, budget = _budget_case(r, work)
            name, kind, limit = " ".join(argv[:2]), "budget", max(budget, SIZES["MEMORY_LIMIT_MIN"])
            small = [a.replace(".large", ".small") for a in argv]
        b, got = paired([(small, argv)], work)[0]
        base[" ".join(small)] = b.peak
        key = " ".join(small)
        problems = []
        verdicts = (0, 1, 2) if argv[0] in ("rq", "qrels-verify") else (0, 2)     # exit 1: FAIL, or topics missing
        if got.code not in verdicts or "internal error" in got.err:
            problems.append(f"exit {got.code}")
        if kind in ("cut",) and got.code == 2 and "cut short" not in got.err and "attack.gz" in got.err and \
                "line longer" not in got.err:
            problems.append("a truncated .gz not named as such")
        if got.code == 2 and kind == "budget" and "--memory-limit" not in got.err and "budget" in got.err:
            problems.append("a refusal that does not name the budget")
        if got.peak > base[key] + limit + TOLERANCE + (2 * MIB if kind != "budget" else 0):
            problems.append(f"peak {got.peak / MIB:.1f} MiB over {base[key] / MIB:.1f} + {limit / MIB:.0f} MiB")
        if problems:
            where = out / f"{case:07d}"
            shutil.copytree(work, where, dirs_exist_ok=True)
            (where / "case.json").write_text(json.dumps({"argv": argv, "kind": kind, "code": got.code,
                                                         "peak": got.peak, "stderr": got.err[-2000:]}, indent=2))
            findings.append(f"seed {case} ({name}, {kind}): {'; '.join(problems)} -> {where}")
    shutil.rmtree(work, ignore_errors=True)
    return findings
