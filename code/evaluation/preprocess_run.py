"""Stage 2: a run (JSONL, TREC, TSV) -> canonical TREC run.  Thin over treckit.stages.

    python code/evaluation/preprocess_run.py --input RUN [--run_name NAME] [--output OUT]

The default output is the input path without its extensions plus ``_trec`` (``preds.jsonl`` ->
``preds_trec``), said on stderr; with ``--input -`` (stdin) it is stdout.  ``--run_name`` (default ``run``)
names a run whose input names none (JSONL, TSV, 3-column files); a TREC file keeps its own run tag.  A malformed
line is skipped with a warning ("Skipping malformed line N: ..."), all of them counted on stderr (``--strict``:
stop at the first one, exit 2).
"""
from __future__ import annotations

import argparse

from treckit.stages import add_reading_arguments
from treckit.inputs.options import reading_from_values
from treckit.stages import (DEFAULT_RUN_NAME, positive_int, DOCUMENT_LAYOUT, DOCUMENT_LAYOUT_WHY, MemoryLimit,
                            SKIPPING, add_memory_limit_argument, add_strict_argument, run_script, run_stage)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True)
    ap.add_argument("--run_name", "--run-name", dest="run_name", default=DEFAULT_RUN_NAME, metavar="NAME",
                    help=f"run tag for an input that names no run (default: {DEFAULT_RUN_NAME}); "
                         "a TREC file keeps its own")
    ap.add_argument("--output", "-o", default=None, help="default: the input path + _trec (said on stderr)")
    ap.add_argument("--depth", type=positive_int, default=None)
    ap.add_argument("--raw_ids", action="store_true")
    # --gold, --order, --break_ties ...: the options of every run reader
    add_reading_arguments(ap, {"layout": (DOCUMENT_LAYOUT, DOCUMENT_LAYOUT_WHY)}, {"skip_malformed": SKIPPING})
    add_memory_limit_argument(ap)
    add_strict_argument(ap)
    a = ap.parse_args(argv)

    def body():
        with MemoryLimit.option(a.memory_limit).governing(own_process=True):
            run_stage(a.input, a.output, untagged_name=a.run_name, reading=reading_from_values(vars(a)), depth=a.depth,
                      raw_ids=a.raw_ids)
    return run_script(__file__, body)


if __name__ == "__main__":
    from treckit.console.process import exit_now
    exit_now(main())
