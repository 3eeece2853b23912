"""The values of enumerated options, for the command line's choices and its help.

Kept free of heavy imports (help must not load pyarrow); each tuple mirrors the library's own
(tests/test_files_and_processes.py checks that they agree).
"""
from __future__ import annotations

from typing import Literal

QRELS_FORMATS = ("trec", "beir-tsv", "beir-jsonl", "quest")      # formats.detect.QRELS_FORMATS
RUN_FORMATS = ("trec", "trec3", "tsv", "jsonl")                  # formats.detect.RUN_FORMATS
ORDERS = ("auto", "desc", "asc", "given")                        # convert.ORDERS
DUPLICATES = ("error", "keep-first", "keep-max", "keep-last")    # convert.DUPLICATES
LAYOUTS = ("auto", "docid-spaces", "extra-columns")              # formats.trec.RunLayout
TSV_THIRD = ("score", "rank")                                    # formats.tsv.read_tsv_run(third=)
ROLES = ("run", "qrels")                                         # treckit detect --role

EVAL_MISSING = ("skip", "zero", "error")                         # evaluation.EvalOptions.missing
EVAL_ORDERS = ("score", "rank")                                  # evaluation.EvalOptions.order
EVAL_FORMATS = ("trec_eval", "table", "json", "csv", "jsonl")    # output.records.render

QrelsFormat = Literal[QRELS_FORMATS]
RunFormat = Literal[RUN_FORMATS]
Order = Literal[ORDERS]
Duplicates = Literal[DUPLICATES]
Layout = Literal[LAYOUTS]
TsvThird = Literal[TSV_THIRD]
Role = Literal[ROLES]


def positive_int(text: str) -> int:
    """argparse type of the staged scripts' cutoffs and depths: a whole number >= 1."""
    import argparse
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive number")
    return value
