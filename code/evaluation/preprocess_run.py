"""Stage 2: a run (JSONL, TREC, TSV) -> canonical TREC run.  Thin over treckit.stages.

    python code/evaluation/preprocess_run.py --input RUN --run_name NAME [--output OUT]

The default output is the input path without its extensions plus ``_trec`` (``preds.jsonl`` ->
``preds_trec``); with ``--input -`` (stdin) it is stdout.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from treckit.options import positive_int  # noqa: E402
from treckit.reading import add_reading_arguments, reading_from_values  # noqa: E402
from treckit.stages import default_run_output, run_script, run_stage  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True)
    ap.add_argument("--run_name", required=True)
    ap.add_argument("--output", default=None)
    ap.add_argument("--depth", type=positive_int, default=None)
    ap.add_argument("--raw_ids", action="store_true")
    add_reading_arguments(ap)          # --gold, --order, --break_ties ...: the options of every run reader
    a = ap.parse_args(argv)
    out = a.output or default_run_output(a.input)
    return run_script(lambda: run_stage(a.input, out, run_name=a.run_name, reading=reading_from_values(vars(a)),
                                        depth=a.depth, raw_ids=a.raw_ids))


if __name__ == "__main__":
    from treckit.startup import exit_now
    exit_now(main())
