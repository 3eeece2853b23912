"""The longer pass of the hostile class "ties and bounds" (``make fuzz-hostile``): seeded attacks, two of three a
random run with ties (1-30 queries of up to 2,000 docs, 1-10 distinct scores, listed, unsorted or interleaved,
ids with shared prefixes, non-ASCII, '%' escapes or nested prefixes; random trec_eval measures and -q, -M, -J,
-l, -c; streamed now and then) whose ``treckit eval`` must give trec_eval's bytes within 300 MB, and whose
``--ties break --tie-aware range`` must have no range; one of three twelve measure names drawn from the whole
registry with parameters up to 2^63, each of which must exit 0 or 2, the process within 300 MB.  Reproducers of
the findings are kept under ``out``."""
from __future__ import annotations

import random
import shutil
from pathlib import Path

from cli_runner import run_cli
from fuzz_cases import trec_eval_path
from ties_and_bounds import PEAK_MB, check_names, measured, random_name, random_tied_run, reference, treckit_cmd

MEASURES = ["P.5,10", "map", "recip_rank", "ndcg_cut.10", "bpref", "Rprec", "num_rel_ret", "recall.100",
            "iprec_at_recall", "infAP", "ndcg", "set_F", "success.1", "num_ret", "map_cut.5,100"]


def _options(rng: random.Random) -> list[str]:
    flags = [a for m in rng.sample(MEASURES, rng.randint(1, 5)) for a in ("-m", m)]
    if rng.random() < 0.5:
        flags.append("-q")
    for flag, value in (("-M", str(rng.randint(1, 50))), ("-J", None), ("-l", "2"), ("-c", None)):
        if rng.random() < 0.2:
            flags += [flag] if value is None else [flag, value]
    return flags


def _tied_case(directory: Path, rng: random.Random, trec_eval: Path) -> list[str]:
    qrels, run = random_tied_run(directory, rng)
    flags = _options(rng)
    limit = ["--memory-limit", "1M"] if rng.random() < 0.3 else []
    expected = reference(trec_eval, *flags, qrels, run)
    got = measured(treckit_cmd("eval", *limit, *flags, qrels, run))
    found = []
    if got["code"] != 0:
        found.append(f"eval {' '.join(limit + flags)}: exit {got['code']}: {got['err'][-300:]}")
    elif got["out"] != expected:
        found.append(f"eval {' '.join(limit + flags)}: output differs from trec_eval's")
    if got["peak_mb"] >= PEAK_MB:
        found.append(f"eval {' '.join(limit + flags)}: peak {got['peak_mb']:.0f} MB")
    code, out, err = run_cli(["eval", "--ties", "break", "--tie-aware", "range", "-q", "-m", "recip_rank",
                              "-m", "P.5", qrels, run])
    spread = [line for line in out.splitlines()[1:] if len(set(line.split("\t")[2:])) != 1]
    if code != 0 or spread:
        found.append(f"--ties break --tie-aware range: exit {code}, a range left: {spread[:2]} {err[-200:]}")
    return found


def fuzz(cases: int, seed: int, out: Path) -> list[str]:
    trec_eval = trec_eval_path()
    findings: list[str] = []
    for i in range(cases):
        rng = random.Random(seed * 1_000_003 + i)
        directory = out / f"case{i:05d}"
        directory.mkdir(parents=True, exist_ok=True)
        if i % 3 == 2 or trec_eval is None:
            names = [random_name(rng) for _ in range(12)]
            problems, peak = check_names(directory, names)
            found = problems + ([f"peak {peak:.0f} MB over {names}"] if peak >= PEAK_MB else [])
        else:
            found = _tied_case(directory, rng, trec_eval)
        if found:
            findings += [f"case {i} (seed {seed}, {directory}): {line}" for line in found]
        else:
            shutil.rmtree(directory, ignore_errors=True)
    return findings
