"""The single-machine scale benchmark: `treckit eval` on a 100M-line run under its default memory budget,
next to trec_eval 10.0 on the same file, and against treckit's in-memory time per line on the 7M-line run.

    .venv/bin/python -m bench.generate --mode large --queries 100000 --docs 1000 --interleave 10 --out DIR
    .venv/bin/python -m bench.scale_bench --data DIR [--treckit PATH] [--trec-eval PATH] [--repeat 1]
        [--measures "ndcg_cut.10 recall.100 recip_rank map"] [--interleaved] [--treckit-args "--memory-limit 2GiB"]

--treckit is the treckit to measure: an executable, a virtualenv or a worktree (its .venv/bin/treckit), or a
source root holding the `treckit` package (a worktree's `code/`; run as `python -m treckit` with this Python
and PYTHONPATH set to it); the default is this repository's .venv. Every command runs as a fresh process, one
at a time (trec_eval alone needs about 8 GB here); wall time is the best of --repeat, peak RSS is the process's
own (read by bench/run_bench.py's forking reader). treckit's output must be byte-identical to trec_eval's.
The in-memory reference is the same treckit on bench/run_bench.py's 7M-line run (245 MB, below the default
budget, so evaluated in memory), generated into --small-data on first use.
Target: peak RSS <= 2 GiB and wall time per line <= 1.5x the in-memory time per line.
"""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from .run_bench import PY, measured_with_cpu

DEFAULT_MEASURES = "ndcg_cut.10 recall.100 recip_rank map"    # bench/run_bench.py's four
BUDGET_MIB = 2048
PER_LINE_TARGET = 1.5


def treckit_command(spec: Path | None) -> list[str]:
    """The argv prefix that runs the treckit named by --treckit (see the module's help)."""
    if spec is None:
        spec = ROOT / ".venv" / "bin" / "treckit"
    spec = spec.resolve()
    if spec.is_file():
        return [str(spec)]
    for exe in (spec / ".venv" / "bin" / "treckit", spec / "bin" / "treckit"):
        if exe.is_file():
            return [str(exe)]
    for src in (spec / "code", spec):
        if (src / "treckit" / "__init__.py").is_file():
            return ["env", f"PYTHONPATH={src}", PY, "-m", "treckit"]
    raise SystemExit(f"--treckit {spec}: neither an executable, a virtualenv, a worktree nor a source root "
                     "holding the treckit package")


def count_lines(path: Path) -> int:
    """Newlines in the file, reading it once in large blocks (this also warms the page cache, so the
    first timed command does not pay for the disk alone)."""
    n = 0
    with open(path, "rb") as fh:
        while block := fh.read(1 << 24):
            n += block.count(b"\n")
    return n


def best(argv: list[str], repeat: int, got: tuple | None = None) -> tuple[float, float, bytes, float] | str:
    """(best wall s, and peak RSS MiB, stdout and CPU s of that run), or the failure's message; ``got`` is a
    result to better."""
    for _ in range(repeat):
        try:
            run = measured_with_cpu(argv)
        except SystemExit as failure:      # measured() reports a non-zero exit so: keep it for the table
            return str(failure).strip().splitlines()[-1][:200] if str(failure).strip() else "failed"
        if got is None or run[0] < got[0]:
            got = run
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT / "outputs" / "bench" / "100m",
                    help="directory with run.trec and qrels (and run_interleaved.trec) from generate.py --mode large")
    ap.add_argument("--treckit", type=Path, default=None, help="the treckit to measure (default: this repo's .venv)")
    ap.add_argument("--treckit-args", default="", help="extra arguments for treckit eval on the large run")
    ap.add_argument("--trec-eval", type=Path, default=ROOT.parent / "shared" / "tools" / "trec_eval")
    ap.add_argument("--skip-trec-eval", action="store_true")
    ap.add_argument("--reference", type=Path, default=None,
                    help="trec_eval's output for these measures: written when trec_eval runs, compared with when "
                         "--skip-trec-eval (trec_eval takes about 12 minutes on 100M lines here)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--measures", default=DEFAULT_MEASURES,
                    help="space-separated trec_eval measure names, or 'official' for trec_eval's default set")
    ap.add_argument("--per-query", action="store_true", help="-q: every query's values too (a stronger byte check)")
    ap.add_argument("--interleaved", action="store_true", help="also evaluate run_interleaved.trec with treckit")
    ap.add_argument("--small-data", type=Path, default=ROOT / "outputs" / "bench",
                    help="where bench/run_bench.py's 7M-line run is (generated there on first use)")
    ap.add_argument("--skip-small", action="store_true", help="no in-memory reference on the 7M-line run")
    a = ap.parse_args()

    treckit = treckit_command(a.treckit)
    measures = [] if a.measures == "official" else [arg for m in a.measures.split() for arg in ("-m", m)]
    measures = ["-q"] * a.per_query + measures
    qrels, run = a.data / "qrels", a.data / "run.trec"
    for p in (qrels, run):
        if not p.is_file():
            raise SystemExit(f"{p} not found: write it with bench/generate.py --mode large --out {a.data}")
    files = {"run.trec": run}
    if a.interleaved:
        files["run_interleaved.trec"] = a.data / "run_interleaved.trec"
    lines = {name: count_lines(p) for name, p in files.items()}
    extra = shlex.split(a.treckit_args)

    rows = []           # (tool, file, lines, result)
    print(f"treckit: {' '.join(treckit)}", file=sys.stderr)
    small = None
    if not a.skip_small:
        # measured before and after the large runs: the machine is shared, and the ratio is only as good as
        # the two times being taken in the same conditions
        from .generate import generate
        tag = "7000x1000"
        s_run, s_qrels = a.small_data / f"run.{tag}.trec", a.small_data / f"qrels.{tag}.trec"
        if not (s_run.is_file() and s_qrels.is_file()):
            print(f"generating the 7M-line run into {a.small_data} ...", file=sys.stderr)
            generate(a.small_data, 7000, 1000)
        small_argv = [*treckit, "eval", *measures, str(s_qrels), str(s_run)]
        print(f"treckit eval on {s_run} (in memory) ...", file=sys.stderr, flush=True)
        small = (count_lines(s_run), best(small_argv, max(1, a.repeat // 2)))
    if not a.skip_trec_eval:
        if not a.trec_eval.is_file():
            raise SystemExit(f"--trec-eval {a.trec_eval} not found (or pass --skip-trec-eval)")
        print(f"trec_eval on {run} ...", file=sys.stderr, flush=True)
        rows.append(("trec_eval 10.0", "run.trec", lines["run.trec"],
                     best([str(a.trec_eval), *measures, str(qrels), str(run)], a.repeat)))
    for name, path in files.items():
        count_lines(path)           # the file back in the page cache after the previous command
        print(f"treckit eval on {path} ...", file=sys.stderr, flush=True)
        rows.append(("treckit eval" + (f" {a.treckit_args}" if extra else ""), name, lines[name],
                     best([*treckit, "eval", *extra, *measures, str(qrels), str(path)], a.repeat)))
    if small is not None and not isinstance(small[1], str):
        count_lines(s_run)
        small = (small[0], best(small_argv, max(a.repeat, 3) - max(1, a.repeat // 2), small[1]))

    reference = next((r[2] for t, _, _, r in rows if t.startswith("trec_eval") and not isinstance(r, str)), None)
    if a.reference and reference is not None:
        a.reference.write_bytes(reference)
    elif a.reference and a.reference.is_file():
        reference = a.reference.read_bytes()
    print(f"\n## {lines['run.trec']:,}-line run (`{a.data}`), measures: {a.measures}{' with -q' if a.per_query else ''}\n")
    print(f"treckit: `{' '.join(treckit)}`; best of {a.repeat}\n")
    print("| tool | file | wall (s) | CPU (s) | peak RSS (MiB) | µs per line (wall) | output |")
    print("|---|---|---|---|---|---|---|")
    for tool, name, n, r in rows:
        if isinstance(r, str):
            print(f"| {tool} | {name} | failed | | | | {r} |")
            continue
        wall, rss, out, cpu = r
        if tool.startswith("trec_eval"):
            verdict = "the reference"
        elif reference is None:
            verdict = "(no trec_eval output to compare)"
        else:
            verdict = "byte-identical to trec_eval's" if out == reference else "DIFFERS from trec_eval's"
        print(f"| {tool} | {name} | {wall:.1f} | {cpu:.1f} | {rss:.0f} | {wall / n * 1e6:.3f} | {verdict} |")
    if small is not None:
        n_small, r = small
        if isinstance(r, str):
            print(f"\nIn-memory reference on the 7M-line run failed: {r}")
            return
        wall_s, rss_s, _, cpu_s = r
        per_line = wall_s / n_small
        print(f"\nIn-memory reference: treckit eval on the {n_small:,}-line run, {wall_s:.2f} s wall "
              f"({per_line * 1e6:.3f} µs per line), {cpu_s:.2f} s CPU, {rss_s:.0f} MiB (best of {max(a.repeat, 3)}, "
              "taken before and after the large runs).\n")
        for tool, name, n, res in rows:
            if tool.startswith("treckit") and not isinstance(res, str):
                ratio, cpu_ratio = res[0] / n / per_line, res[3] / n / (cpu_s / n_small)
                print(f"- {name}: peak {res[1]:.0f} MiB {'<=' if res[1] <= BUDGET_MIB else '>'} {BUDGET_MIB} MiB "
                      f"({'met' if res[1] <= BUDGET_MIB else 'NOT met'}); wall per line {ratio:.2f}x the in-memory "
                      f"wall per line ({'met' if ratio <= PER_LINE_TARGET else 'NOT met'}: target <= "
                      f"{PER_LINE_TARGET}x); CPU per line {cpu_ratio:.2f}x")


if __name__ == "__main__":
    main()
