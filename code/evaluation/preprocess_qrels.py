"""Stage 1: ground truth (QUEST JSONL, BEIR, TREC) -> TREC qrels.  Thin over treckit.stages.

    python code/evaluation/preprocess_qrels.py --input data/QUEST/test.jsonl --output data/QUEST/test_qrels
"""
from __future__ import annotations

import argparse

from treckit.inputs.formats import LAYOUTS, QRELS_FORMATS
from treckit.ranking import DUPLICATES
from treckit.stages import (DOCUMENT_LAYOUT, DOCUMENT_LAYOUT_WHY, MemoryLimit, add_memory_limit_argument,
                            qrels_stage, run_script)
from treckit.console.messages import say


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True)
    ap.add_argument("--output", "-o", required=True)
    ap.add_argument("--format", default=None, choices=QRELS_FORMATS, help="input format (default: detect)")
    ap.add_argument("--id_base", type=int, default=1, help="qid of the first line when lines have no id")
    ap.add_argument("--raw_ids", action="store_true", help="write doc ids unescaped (the old format)")
    ap.add_argument("--duplicates", default="error", choices=DUPLICATES)
    ap.add_argument("--id_added", default=None,
                    help="where to write the id-added JSONL when the input has no ids (default: beside the output)")
    ap.add_argument("--layout", default=DOCUMENT_LAYOUT, metavar="LAYOUT",
                    help=f"TREC qrels lines with more than 4 fields: {' | '.join(LAYOUTS)} "
                         f"(default: {DOCUMENT_LAYOUT}, {DOCUMENT_LAYOUT_WHY})")
    ap.add_argument("--skip-malformed", "--skip_malformed", dest="skip_malformed", action="store_true",
                    help="count and skip malformed lines instead of failing")
    add_memory_limit_argument(ap)
    a = ap.parse_args(argv)

    def body():
        with MemoryLimit.option(a.memory_limit).governing(own_process=True):
            r = qrels_stage(a.input, a.output, format=a.format, id_base=a.id_base, raw_ids=a.raw_ids,
                            duplicates=a.duplicates, id_added=a.id_added, layout=a.layout,
                            skip_malformed=a.skip_malformed)
        say(f"{r.judgments} judgments for {r.queries} queries written to {a.output}")
    return run_script(__file__, body)


if __name__ == "__main__":
    from treckit.console.process import exit_now
    exit_now(main())
