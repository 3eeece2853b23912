"""Stage 3: Recall@k, NDCG@k (trec_eval's recall_k / ndcg_cut_k), MRR and MAP of a run.

    python code/evaluation/evaluate.py --run RUN --qrels QRELS [--cutoffs 1 5 10 20 50 100] [--output results.json]
                                       [--cross-check]

TREC qrels and runs are read by the pipeline document's rule (--layout docid-spaces): a doc id is everything
between the second field and the last (qrels), or between Q0 and the rank (runs).  A malformed line is skipped
with a warning ("Skipping malformed line N: ..."), and counted in the JSON's ``malformed_lines_skipped``
(``--strict``: stop at the first one, exit 2).
"""
from __future__ import annotations

import argparse
import sys

from treckit.output.files import refuse_overwriting_inputs
from treckit.engines import MISSING as EVAL_MISSING
from treckit.inputs.formats import QRELS_FORMATS
from treckit.stages import add_reading_arguments
from treckit.inputs.options import reading_from_values
from treckit.stages import (positive_int, DOCUMENT_LAYOUT, DOCUMENT_LAYOUT_WHY, MemoryLimit, add_memory_limit_argument,
                            SKIPPING, add_strict_argument,
                            cutoff_table, format_cutoff_table, run_script, write_json)
from treckit.console.messages import say


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True)
    ap.add_argument("--qrels", required=True)
    ap.add_argument("--cutoffs", type=positive_int, nargs="+", default=[1, 5, 10, 20, 50, 100])
    ap.add_argument("--output", "-o", default=None, help="JSON file for the numbers")
    ap.add_argument("--qrels-format", "--qrels_format", dest="qrels_format", default=None, choices=QRELS_FORMATS,
                    help="the qrels' format (default: detect)")
    ap.add_argument("--missing", default="skip", choices=EVAL_MISSING)
    add_memory_limit_argument(ap)
    ap.add_argument("--cross-check", "--cross_check", dest="cross_check", action="store_true",
                    help="recompute every number with ir_measures (pytrec_eval) before printing it; "
                         "exit 3 naming the number on any difference beyond 1e-9")
    # how the run is read: the options of every run reader (--order rank: the rank column); --layout and
    # --skip-malformed read TREC qrels too
    add_reading_arguments(ap, {"layout": (DOCUMENT_LAYOUT, DOCUMENT_LAYOUT_WHY)},
                          {"layout": "TREC qrels and runs", "skip_malformed": f"TREC qrels lines too; {SKIPPING}"})
    add_strict_argument(ap)
    a = ap.parse_args(argv)

    def body():
        limit = MemoryLimit.option(a.memory_limit)
        refuse_overwriting_inputs([a.run, a.qrels], [a.output])
        with limit.governing(own_process=True):
            table = cutoff_table(a.qrels, a.run, a.cutoffs, missing=a.missing, reading=reading_from_values(vars(a)),
                                 memory_limit=limit, cross_check=a.cross_check, qrels_format=a.qrels_format)
        sys.stdout.write(format_cutoff_table(table))
        if a.output:
            write_json(table, a.output)
            say(f"wrote {a.output}")
    return run_script(__file__, body)


if __name__ == "__main__":
    from treckit.console.process import exit_now
    exit_now(main())
