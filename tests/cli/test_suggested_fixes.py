"""Every fix that an error or a warning suggests works in the command that printed it.

READINGS and OTHERS are the table: each suggestion (a fix or a warning that names an option or a command),
where it is written (``source``: a file and a phrase of the literal), the commands that can print it, an input
that triggers it and the suggested command.  Each (command, suggestion) pair is a test: the command prints the
message, the message names the fix as that command takes it (its own spelling of the option, the Python API's
keyword, or -- where the command does not read such files with that option -- a one-off conversion with
``treckit run`` / ``treckit qrels``), and the suggested command then succeeds with the right result: trec_eval's
output on the input written as meant (``clean``), or a value worked out by hand.  Where a command's own reading
rule reads a trigger as meant (the staged scripts read TREC files by the pipeline document's rule), it prints no
message, and test_read_as_meant checks that it gives those numbers.
test_every_suggestion_is_in_the_table keeps the table complete: a new fix or warning naming an option or a
command fails it until it is added here (or to NOT_SUGGESTIONS, with the reason).
"""
from __future__ import annotations

import ast
import importlib.util
import json
import re
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from helpers import ROOT, run_cli, significance_row
from treckit import thresholds
from treckit.console.errors import TreckitError

CODE = ROOT / "code"
SCRIPTS = CODE / "evaluation"

# ------------------------------------------------------------------ inputs
QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n2 0 d4 1\n2 0 d5 1\n"
RUN = "1 Q0 d2 1 3.0 t\n1 Q0 d1 2 2.0 t\n1 Q0 d3 3 1.0 t\n2 Q0 d5 1 4.0 t\n2 Q0 d9 2 3.5 t\n2 Q0 d4 3 3.0 t\n"
QUERIES = "1\talpha\n2\tbeta\n"
GOLD = '{"query": "alpha", "docs": ["d1", "d3"]}\n{"query": "beta", "docs": ["d4", "d5"]}\n'
# RUN as id-less JSONL predictions, beta first: numbered by line they pair with the wrong queries
PREDS = ('{"query": "beta", "docs": ["d5", "d9", "d4"], "scores": [4.0, 3.5, 3.0]}\n'
         '{"query": "alpha", "docs": ["d2", "d1", "d3"], "scores": [3.0, 2.0, 1.0]}\n')


def _jsonl(line: Callable[[str, list[tuple[str, float]]], dict]) -> str:
    """RUN as JSONL, one line per query written by ``line(qid, [(doc, score), ...])``."""
    by_q: dict[str, list] = {}
    for ln in RUN.splitlines():
        q, _, d, _, s, _ = ln.split()
        by_q.setdefault(q, []).append((d, float(s)))
    return "".join(json.dumps(line(q, hits)) + "\n" for q, hits in by_q.items())


@dataclass(frozen=True)
class Reading:
    """A suggestion of a reading option for a file (the run, or the qrels) that needs one.

    ``files``: the trigger (QRELS, RUN and any other file, by name); ``clean``: QRELS and RUN written as meant,
    which trec_eval reads.  ``given``: options the trigger itself passes.  ``said``: the phrase of the fix in a
    command that applies the option; ``said_py``: the same in the Python API; ``convert``: the option in the
    one-off conversion offered where the command does not apply it (None: never offered), which names the file
    as ``convert_file`` (``{NAME}``: the path of file NAME).  ``apply`` / ``keywords``: the suggested option, as
    run.  ``chain``: a second message the first fix leads to, and its phrase.  ``read_as_meant_by``: commands
    whose own reading rule reads the trigger as meant, which therefore print no message (test_read_as_meant)."""

    id: str
    source: str
    role: str
    message: str
    files: dict
    said: str
    said_py: str
    apply: tuple
    keywords: dict
    commands: tuple
    clean: dict = field(default_factory=dict)
    convert: str | None = None
    given: tuple = ()
    given_kw: dict = field(default_factory=dict)
    warning: bool = False
    detect_limit: int | None = None
    chain: tuple | None = None
    convert_file: str = "FILE"
    read_as_meant_by: tuple = ()


RUN_COMMANDS = ("eval", "run", "compare", "evaluate.py", "preprocess_run.py", "python", "fuse", "rq", "testset eval",
                "system eval", "eval -R")
RUN_OPTION_COMMANDS = ("eval", "run", "compare", "evaluate.py", "preprocess_run.py", "python")
QRELS_COMMANDS = ("eval", "qrels", "compare", "evaluate.py", "preprocess_qrels.py", "python", "fuse", "testset import",
                  "system eval", "testset kappa", "qrels-verify", "eval -R", "rq_eval.py")
DETECTING = tuple(c for c in QRELS_COMMANDS if c != "eval -R")      # -R qrels_prefs reads its qrels as TREC
DETECTION = DETECTING + ("detect",)                                  # messages of format detection
# The staged scripts read TREC runs / qrels by the pipeline document's rule (--layout docid-spaces,
# treckit.stages.DOCUMENT_LAYOUT): a doc id is everything between Q0 and the rank (runs) or between the second
# field and the last (qrels), spaces included.  A line that other commands cannot read unless told how is read
# as meant there; a line that does not read so is an error whose fix is the other layout.
STAGED_RUNS = ("evaluate.py", "preprocess_run.py")
STAGED_QRELS = ("evaluate.py", "preprocess_qrels.py")
# the commands that apply --layout to qrels (APPLIES), told the staged scripts' rule
QRELS_LAYOUT_COMMANDS = ("eval", "qrels", "compare", "evaluate.py", "preprocess_qrels.py", "python")


def _but(commands: tuple, left_out: tuple) -> tuple:
    return tuple(c for c in commands if c not in left_out)


# RUN written with negated scores, rank 1 on the lowest: the rank column rises as the score rises
NEGATED = "".join(f"{q} Q0 {d} {r} {-float(s)} {t}\n" for q, _, d, r, s, t in map(str.split, RUN.splitlines()))
LONG_ID = "x" * 70_000          # longer than the first block read (64 KiB) and the detection limit below

READINGS = [
    # ---------------------------------------------------------------- runs
    Reading("run-skip-malformed", "inputs/formats/common.py: pass_options(self.role, '--skip-malformed')", "run", "rank 'x' is not an integer",
            {"RUN": RUN + "2 Q0 d7 x 0.5 t\n"}, "pass --skip-malformed", "pass skip_malformed=True",
            ("--skip-malformed",), {"skip_malformed": True}, RUN_COMMANDS, convert="--skip-malformed"),
    Reading("run-trec3-spaces", "inputs/formats/trec.py: pass_options('run', '--layout docid-spaces', '--layout extra-columns') + '; or write", "run",
            "4 fields where a 'qid docid score' line has 3",
            {"RUN": "1 d2 3.0\n1 d 1 2.5\n1 d1 2.0\n1 d3 1.0\n2 d5 4.0\n2 d9 3.5\n2 d4 3.0\n"},
            "pass --layout docid-spaces or --layout extra-columns", "pass layout='docid-spaces' or layout='extra-columns'",
            ("--layout", "docid-spaces"), {"layout": "docid-spaces"}, _but(RUN_COMMANDS, STAGED_RUNS),
            clean={"RUN": RUN + "1 Q0 d%201 9 2.5 t\n"}, convert="--layout docid-spaces", read_as_meant_by=STAGED_RUNS),
    Reading("run-ambiguous", "inputs/formats/trec.py: separate fields with tabs, or say which: ' + pass_options('run'", "run", "ambiguous line: it reads both",
            {"QRELS": "1 0 d%201 1\n1 0 d%202 0\n2 0 e%201 1\n",
             "RUN": "1 Q0 d 1 1 5.0 t\n1 Q0 d 2 2 5.0 t\n2 Q0 e 1 1 5.0 t\n"},
            "pass --layout docid-spaces or --layout extra-columns", "pass layout='docid-spaces' or layout='extra-columns'",
            ("--layout", "docid-spaces"), {"layout": "docid-spaces"}, _but(RUN_COMMANDS, STAGED_RUNS),
            clean={"RUN": "1 Q0 d%201 1 5.0 t\n1 Q0 d%202 2 5.0 t\n2 Q0 e%201 1 5.0 t\n"}, convert="--layout docid-spaces",
            read_as_meant_by=STAGED_RUNS),
    Reading("run-qid-or-doc-spaces", "inputs/formats/trec.py: pass_options('run', '--layout docid-spaces') + ' (or write them escaped)'",
            "run", "is not an iteration (Q0 or 0)",
            {"QRELS": QRELS + "1 0 d%20e 1\n", "RUN": RUN + "1 X d e 4 0.5 t\n"}, "pass --layout docid-spaces",
            "pass layout='docid-spaces'", ("--layout", "docid-spaces"), {"layout": "docid-spaces"},
            _but(RUN_COMMANDS, STAGED_RUNS), clean={"RUN": RUN + "1 Q0 d%20e 4 0.5 t\n"}, convert="--layout docid-spaces",
            read_as_meant_by=STAGED_RUNS),
    # told the document's rule, a line with a column after the tag (or, trec3, after the score) has no score
    # where the rule reads it; the fix is the other layout
    Reading("run-extra-columns-by-the-documents-rule", "inputs/formats/trec.py: ignore the columns after field {columns}, ' + pass_options(role, '--layout extra-columns')",
            "run", "score 't' is not a number", {"RUN": RUN + "2 Q0 d7 5 0.5 t x\n"}, "pass --layout extra-columns",
            "pass layout='extra-columns'", ("--layout", "extra-columns"), {"layout": "extra-columns"}, RUN_OPTION_COMMANDS,
            clean={"RUN": RUN + "2 Q0 d7 5 0.5 t\n"}, given=("--layout", "docid-spaces"), given_kw={"layout": "docid-spaces"}),
    Reading("run-trec3-extra-columns-by-the-documents-rule", "inputs/formats/trec.py: ignore the columns after field {columns}, ' + pass_options(role, '--layout extra-columns')",
            "run", "score 'x' is not a number", {"RUN": "1 d2 3.0\n1 d1 2.0 x\n1 d3 1.0\n2 d5 4.0\n2 d9 3.5\n2 d4 3.0\n"},
            "pass --layout extra-columns", "pass layout='extra-columns'", ("--layout", "extra-columns"),
            {"layout": "extra-columns"}, RUN_OPTION_COMMANDS, given=("--layout", "docid-spaces"),
            given_kw={"layout": "docid-spaces"}),
    Reading("run-format-unknown", "inputs/formats/detect.py: pass_options('run', '--run-format trec|trec3|tsv|jsonl')", "run",
            "cannot tell the run format",
            {"RUN": "qid\titer\tdocid\trank\tscore\n" + RUN.replace(" t\n", "\n").replace(" ", "\t")},
            "pass --run-format trec|trec3|tsv|jsonl", "pass format='trec' | 'trec3' | 'tsv' | 'jsonl'",
            ("--run-format", "tsv"), {"format": "tsv"}, RUN_COMMANDS + ("detect",),
            convert="--run-format trec|trec3|tsv|jsonl"),
    Reading("run-first-line-too-long", "inputs/formats/common.py: pass_options(role, f'--{role}-format FORMAT', convert=False)", "run", "the first line is longer",
            {"RUN": f"1 Q0 {LONG_ID} 1 9.0 t\n" + RUN}, "pass --run-format FORMAT", "pass format=FORMAT",
            ("--run-format", "trec"), {"format": "trec"}, RUN_COMMANDS + ("detect",),
            clean={"RUN": f"1 Q0 {LONG_ID} 1 9.0 t\n" + RUN},
            detect_limit=1 << 16),
    Reading("run-docs-field", "inputs/formats/jsonl.py: pass_options('run', '--docs-field FIELD', '--hits-field FIELD')", "run", "no list of documents found",
            {"RUN": _jsonl(lambda q, h: {"id": q, "ranking": [d for d, _ in h], "scores": [s for _, s in h]})},
            "pass --docs-field FIELD or --hits-field FIELD", "pass docs_field=FIELD or hits_field=FIELD",
            ("--docs-field", "ranking"), {"docs_field": "ranking"}, RUN_COMMANDS, convert="--docs-field FIELD"),
    Reading("run-hit-doc-field", "inputs/formats/jsonl.py: pass_options('run', '--hit-doc-field FIELD')", "run", "a hit has no doc id field",
            {"RUN": _jsonl(lambda q, h: {"id": q, "hits": [{"pid": d, "score": s} for d, s in h]})},
            "pass --hit-doc-field FIELD", "pass hit_doc_field=FIELD", ("--hit-doc-field", "pid"), {"hit_doc_field": "pid"},
            RUN_COMMANDS, convert="--hit-doc-field FIELD"),
    Reading("run-id-field", "inputs/formats/jsonl.py: check --id-field", "run", "no 'qidx' field",
            {"RUN": _jsonl(lambda q, h: {"qid": q, "docs": [d for d, _ in h], "scores": [s for _, s in h]})},
            "check --id-field", "check id_field", ("--id-field", "qid"), {"id_field": "qid"}, RUN_OPTION_COMMANDS,
            given=("--id-field", "qidx"), given_kw={"id_field": "qidx"}),
    Reading("run-query-field", "inputs/formats/jsonl.py: add an id field or --query-field", "run", "no id field and no 'query' text",
            {"RUN": PREDS.replace('"query"', '"question"'), "GOLD": GOLD}, "add an id field or --query-field",
            "add an id field or query_field", ("--gold", "{GOLD}", "--query-field", "question"),
            {"gold": "{GOLD}", "query_field": "question"}, RUN_OPTION_COMMANDS,
            given=("--gold", "{GOLD}"), given_kw={"gold": "{GOLD}"}),
    Reading("run-numbered-by-line", "inputs/reading.py: pass_options('run', '--gold GOLD')", "run",
            "numbered by line", {"RUN": PREDS, "GOLD": GOLD}, "pass --gold GOLD", "pass gold=GOLD",
            ("--gold", "{GOLD}"), {"gold": "{GOLD}"}, RUN_COMMANDS, convert="--gold GOLD", warning=True),
    Reading("run-not-in-gold-order", "inputs/reading.py: pass_options('run', f'--gold {qrels_source}')", "run",
            "are not in the gold file's order", {"RUN": PREDS, "QRELS": GOLD}, "pass --gold {QRELS}", "pass gold='{QRELS}'",
            ("--gold", "{QRELS}"), {"gold": "{QRELS}"}, ("eval", "compare", "evaluate.py", "python"),
            clean={"QRELS": "1 0 d1 1\n1 0 d3 1\n2 0 d4 1\n2 0 d5 1\n"}),
    Reading("run-tsv-ranks", "inputs/reading.py: pass_options('run', '--tsv-third rank')", "run", "the third column counts 1, 2, 3",
            {"RUN": "".join(f"{q}\t{d}\t{r}\n" for q, d, r in (("1", "d2", 1), ("1", "d1", 2), ("1", "d3", 3),
                                                               ("2", "d5", 1), ("2", "d9", 2), ("2", "d4", 3)))},
            "pass --tsv-third rank", "pass tsv_third='rank'", ("--tsv-third", "rank"), {"tsv_third": "rank"},
            RUN_COMMANDS, convert="--tsv-third rank", warning=True),
    Reading("run-negated", "inputs/reading.py: pass_options('run', '--order desc')", "run", "ranked as negated scores",
            {"RUN": "1 d2 -1.0\n1 d1 -2.0\n1 d3 -3.0\n2 d5 -1.0\n2 d9 -1.5\n2 d4 -2.0\n"},
            "pass --order desc", "pass order='desc'", ("--order", "desc"), {"order": "desc"},
            tuple(c for c in RUN_COMMANDS if c not in ("run", "preprocess_run.py")), convert="--order desc", warning=True),
    Reading("run-rising-ranks", "inputs/reading.py: pass --order asc, which ranks every query lowest score first", "run",
            "the rank column rises as the score rises", {"RUN": NEGATED},
            "pass --order asc, which ranks every query lowest score first (or --order given to rank by the rank column)",
            "pass order='asc', which ranks every query lowest score first (or order='given' to rank by the rank column)",
            ("--order", "asc"), {"order": "asc"}, RUN_OPTION_COMMANDS, clean={"RUN": RUN}, warning=True),
    Reading("run-rising-ranks-given", "inputs/reading.py: pass --order asc, which ranks every query lowest score first", "run",
            "the rank column rises as the score rises", {"RUN": NEGATED},
            "pass --order asc, which ranks every query lowest score first (or --order given to rank by the rank column)",
            "pass order='asc', which ranks every query lowest score first (or order='given' to rank by the rank column)",
            ("--order", "given"), {"order": "given"}, RUN_OPTION_COMMANDS, clean={"RUN": RUN}, warning=True),
    # where runs are read without reading options (and rq_eval.py, whose runs its configs name)
    Reading("run-rising-ranks-converted", "inputs/reading.py: convert it first, `treckit run {source} --order asc -o FIXED`", "run",
            "the rank column rises as the score rises", {"RUN": NEGATED}, "", "", ("--order", "asc"), {},
            _but(RUN_COMMANDS, RUN_OPTION_COMMANDS) + ("rq_eval.py",), clean={"RUN": RUN}, convert="--order asc",
            convert_file="{RUN}", warning=True),
    Reading("run-duplicates-converted", "ranking/convert.py: pass_options('run', '--duplicates keep-first|keep-max|keep-last')", "run", "duplicate document",
            {"RUN": "1 d2 3.0\n1 d1 2.0\n1 d3 1.0\n1 d1 0.5\n2 d5 4.0\n2 d9 3.5\n2 d4 3.0\n"},
            "pass --duplicates keep-first|keep-max|keep-last", "pass duplicates='keep-first' | 'keep-max' | 'keep-last'",
            ("--duplicates", "keep-first"), {"duplicates": "keep-first"}, RUN_COMMANDS,
            convert="--duplicates keep-first|keep-max|keep-last"),
    Reading("run-duplicates-evaluated", "ranking/judged.py: pass_options('run', '--duplicates", "run",
            "the run lists doc 'd1' more than once", {"RUN": RUN + "1 Q0 d1 4 0.5 t\n"},
            "pass --duplicates keep-first|keep-max|keep-last", "pass duplicates='keep-first' | 'keep-max' | 'keep-last'",
            ("--duplicates", "keep-first"), {"duplicates": "keep-first"},
            ("eval", "compare", "evaluate.py", "python", "rq", "testset eval", "system eval"),
            convert="--duplicates keep-first|keep-max|keep-last"),
    Reading("run-duplicates-fused", "retrieval/fusion.py: pass_options('run', '--duplicates", "run", "lists doc 'd1' twice",
            {"RUN": RUN + "1 Q0 d1 4 0.5 t\n"}, "", "", ("--duplicates", "keep-first"), {}, ("fuse",),
            convert="--duplicates keep-first|keep-max|keep-last"),
    Reading("run-duplicates-prefs", "engines/prefs.py: pass_options('run', '--duplicates", "run",
            "the run lists doc 'd1' more than once", {"RUN": RUN + "1 Q0 d1 4 0.5 t\n"}, "", "",
            ("--duplicates", "keep-first"), {}, ("eval -R",), convert="--duplicates keep-first|keep-max|keep-last"),
    Reading("run-unknown-choice", "inputs/options.py: pass {flag} with one of", "run", "unknown order 'bogus'",
            {}, "pass --order with one of: auto, desc, asc, given", "pass order with one of: auto, desc, asc, given",
            ("--order", "desc"), {"order": "desc"}, RUN_OPTION_COMMANDS, given=("--order", "bogus"),
            given_kw={"order": "bogus"}),
    # ---------------------------------------------------------------- qrels
    Reading("qrels-skip-malformed", "inputs/formats/common.py: pass_options(self.role, '--skip-malformed')", "qrels",
            "grade 'x' is not an integer", {"QRELS": QRELS + "2 0 d7 x\n"}, "pass --skip-malformed",
            "pass skip_malformed=True to treckit.read_qrels", ("--skip-malformed",), {"skip_malformed": True},
            QRELS_COMMANDS, convert="--skip-malformed"),
    Reading("qrels-run-line", 'inputs/formats/trec.py: doc ids contain spaces, " + pass_options(\'qrels\', \'--layout docid-spaces\')', "qrels",
            "this looks like a TREC run line", {"QRELS": QRELS + "1 0 d 7 2 1\n", "RUN": RUN + "1 Q0 d%207%202 4 0.5 t\n"},
            "pass --layout docid-spaces", "pass layout='docid-spaces' to treckit.read_qrels", ("--layout", "docid-spaces"),
            {"layout": "docid-spaces"}, _but(QRELS_COMMANDS, STAGED_QRELS), clean={"QRELS": QRELS + "1 0 d%207%202 1\n"},
            convert="--layout docid-spaces", read_as_meant_by=STAGED_QRELS),
    Reading("qrels-ambiguous", "inputs/formats/trec.py: pass_options('qrels', '--layout docid-spaces', '--layout extra-columns')", "qrels", "ambiguous line of 5 fields",
            {"QRELS": QRELS + "1 0 d 1 1\n", "RUN": RUN + "1 Q0 d%201 4 0.5 t\n"},
            "pass --layout docid-spaces or --layout extra-columns",
            "pass layout='docid-spaces' or layout='extra-columns' to treckit.read_qrels", ("--layout", "docid-spaces"),
            {"layout": "docid-spaces"}, _but(QRELS_COMMANDS, STAGED_QRELS), clean={"QRELS": QRELS + "1 0 d%201 1\n"},
            convert="--layout docid-spaces", read_as_meant_by=STAGED_QRELS),
    Reading("qrels-extra-columns", "inputs/formats/trec.py: pass_options('qrels', '--layout extra-columns')", "qrels",
            "5 fields where a qrels line has 4", {"QRELS": QRELS.replace("1 0 d3 1", "1 0 d3 1 x")},
            "pass --layout extra-columns", "pass layout='extra-columns' to treckit.read_qrels",
            ("--layout", "extra-columns"), {"layout": "extra-columns"}, _but(QRELS_COMMANDS, STAGED_QRELS),
            convert="--layout extra-columns"),
    # told the document's rule (the staged scripts' own), the same line has the grade 'x'
    Reading("qrels-extra-columns-by-the-documents-rule", "inputs/formats/trec.py: ignore the columns after field {columns}, ' + pass_options(role, '--layout extra-columns')",
            "qrels", "grade 'x' is not an integer", {"QRELS": QRELS.replace("1 0 d3 1", "1 0 d3 1 x")},
            "pass --layout extra-columns", "pass layout='extra-columns' to treckit.read_qrels",
            ("--layout", "extra-columns"), {"layout": "extra-columns"}, QRELS_LAYOUT_COMMANDS,
            given=("--layout", "docid-spaces"), given_kw={"layout": "docid-spaces"}),
    Reading("qrels-qid-or-doc-spaces", "inputs/formats/trec.py: if the doc ids do, ' + pass_options('qrels', '--layout docid-spaces')",
            "qrels", "is not an iteration (0 or Q0)", {"QRELS": QRELS + "1 X d e 1\n", "RUN": RUN + "1 Q0 d%20e 4 0.5 t\n"},
            "pass --layout docid-spaces", "pass layout='docid-spaces' to treckit.read_qrels", ("--layout", "docid-spaces"),
            {"layout": "docid-spaces"}, _but(QRELS_COMMANDS, STAGED_QRELS), clean={"QRELS": QRELS + "1 X d%20e 1\n"},
            convert="--layout docid-spaces", read_as_meant_by=STAGED_QRELS),
    Reading("qrels-json-unknown", "inputs/formats/detect.py: pass_options('qrels', '--qrels-format beir-jsonl|quest')", "qrels",
            "JSON lines, but neither QUEST", {"QRELS": "".join(json.dumps({"qid": q, "docid": d, "score": int(g)}) + "\n"
                                                                for q, _, d, g in map(str.split, QRELS.splitlines()))},
            "pass --qrels-format beir-jsonl|quest", "pass format='beir-jsonl' | 'quest' to treckit.read_qrels",
            ("--qrels-format", "beir-jsonl"), {"format": "beir-jsonl"}, DETECTION,
            convert="--qrels-format beir-jsonl|quest"),
    Reading("qrels-run-lines", "inputs/formats/detect.py: pass_options('qrels', '--qrels-format trec --layout docid-spaces')", "qrels",
            "the first lines look like a TREC run",
            {"QRELS": "1 0 a 1 2.5 1\n1 0 b 2 1.5 0\n2 0 c 1 3.5 1\n",
             "RUN": "1 Q0 b%202%201.5 1 3.0 t\n1 Q0 a%201%202.5 2 2.0 t\n2 Q0 c%201%203.5 1 1.0 t\n"},
            "pass --qrels-format trec --layout docid-spaces",
            "pass format='trec' layout='docid-spaces' to treckit.read_qrels",
            ("--qrels-format", "trec", "--layout", "docid-spaces"), {"format": "trec", "layout": "docid-spaces"},
            DETECTION, clean={"QRELS": "1 0 a%201%202.5 1\n1 0 b%202%201.5 0\n2 0 c%201%203.5 1\n"},
            convert="--qrels-format trec --layout docid-spaces"),
    Reading("qrels-format-unknown", "inputs/formats/detect.py: pass_options('qrels', '--qrels-format trec|beir-tsv|beir-jsonl|quest')", "qrels",
            "cannot tell the qrels format", {"QRELS": QRELS.replace("\n", " annotator7\n")},
            "pass --qrels-format trec|beir-tsv|beir-jsonl|quest",
            "pass format='trec' | 'beir-tsv' | 'beir-jsonl' | 'quest' to treckit.read_qrels",
            ("--qrels-format", "trec", "--layout", "extra-columns"), {"format": "trec", "layout": "extra-columns"},
            _but(DETECTION, STAGED_QRELS), convert="--qrels-format trec|beir-tsv|beir-jsonl|quest",
            # trec: then each line has a 5th field, which the next message says how to read
            chain=(("--qrels-format", "trec"), {"format": "trec"}, "5 fields where a qrels line has 4",
                   "--layout extra-columns", "layout='extra-columns' to treckit.read_qrels")),
    # the same in the staged scripts, whose rule reads the 5th field as the grade: that message names the layout
    Reading("qrels-format-unknown-by-the-documents-rule", "inputs/formats/detect.py: pass_options('qrels', '--qrels-format trec|beir-tsv|beir-jsonl|quest')", "qrels",
            "cannot tell the qrels format", {"QRELS": QRELS.replace("\n", " annotator7\n")},
            "pass --qrels-format trec|beir-tsv|beir-jsonl|quest", "",
            ("--qrels-format", "trec", "--layout", "extra-columns"), {}, STAGED_QRELS,
            chain=(("--qrels-format", "trec"), {}, "grade 'annotator7' is not an integer", "--layout extra-columns", "")),
    Reading("qrels-first-line-too-long", "inputs/formats/common.py: pass_options(role, f'--{role}-format FORMAT', convert=False)", "qrels",
            "the first line is longer", {"QRELS": f"1 0 {LONG_ID} 0\n" + QRELS}, "pass --qrels-format FORMAT",
            "pass format=FORMAT to treckit.read_qrels", ("--qrels-format", "trec"), {"format": "trec"}, DETECTION,
            clean={"QRELS": f"1 0 {LONG_ID} 0\n" + QRELS}, detect_limit=1 << 16),
    Reading("qrels-quest-repeat", "inputs/formats/jsonl.py: pass_options('qrels', '--duplicates keep-first')", "qrels", "is listed twice for query",
            {"QRELS": GOLD.replace('["d1", "d3"]', '["d1", "d3", "d1"]')}, "pass --duplicates keep-first", "",
            ("--duplicates", "keep-first"), {}, DETECTING, clean={"QRELS": "1 0 d1 1\n1 0 d3 1\n2 0 d4 1\n2 0 d5 1\n"},
            convert="--duplicates keep-first"),
    Reading("qrels-repeated-judgment", "inputs/formats/common.py: pass_options('qrels', '--duplicates keep-first|keep-max|keep-last')", "qrels", "more than once",
            {"QRELS": QRELS + "1 0 d1 1\n"}, "pass --duplicates keep-first|keep-max|keep-last", "",
            ("--duplicates", "keep-first"), {}, ("qrels", "preprocess_qrels.py")),
    Reading("qrels-quest-id-field", "inputs/formats/jsonl.py: check --id-field", "qrels", "no 'idx' field",
            {"QRELS": '{"id": "1", "query": "alpha", "docs": ["d1", "d3"]}\n{"id": "2", "query": "beta", "docs": ["d4", "d5"]}\n'},
            "check --id-field", "", ("--id-field", "id"), {}, ("qrels",), given=("--id-field", "idx"),
            clean={"QRELS": "1 0 d1 1\n1 0 d3 1\n2 0 d4 1\n2 0 d5 1\n"}),
]


# ------------------------------------------------------------------ the commands, as the tests run them
RUN_OPTIONS = frozenset({"--run-format", "--order", "--ties", "--duplicates", "--gold", "--id-base", "--layout",
                         "--tsv-third", "--id-field", "--docs-field", "--scores-field", "--hits-field", "--hit-doc-field",
                         "--hit-score-field", "--query-field", "--skip-malformed", "--break-ties"})
QRELS_OPTIONS = frozenset({"--qrels-format", "--layout", "--skip-malformed", "--duplicates", "--id-field", "--id-base"})
# which reading options each command applies to which files (the rest reads them with the defaults; their
# messages offer a conversion with treckit run / treckit qrels); the same as treckit.console.spelling.COMMANDS
# (test_the_spelling_module_knows_the_reading_options).  Where qrels and runs are read together, TREC qrels
# take the run's --layout and --skip-malformed.
QRELS_WITH_RUN = {"--layout", "--skip-malformed"}
APPLIES = {
    "eval": {"run": RUN_OPTIONS, "qrels": {"--qrels-format"} | QRELS_WITH_RUN},
    "eval -R": {"run": {"--run-format"}, "qrels": {"--qrels-format"}},
    "run": {"run": RUN_OPTIONS},
    "compare": {"run": RUN_OPTIONS, "qrels": QRELS_WITH_RUN},
    "evaluate.py": {"run": RUN_OPTIONS, "qrels": {"--qrels-format"} | QRELS_WITH_RUN},
    "preprocess_run.py": {"run": RUN_OPTIONS},
    "python": {"run": RUN_OPTIONS, "qrels": {"--qrels-format", "--layout", "--skip-malformed"}},
    "qrels": {"qrels": QRELS_OPTIONS},
    "preprocess_qrels.py": {"qrels": {"--qrels-format", "--duplicates", "--id-base"} | QRELS_WITH_RUN},
}
# how a command spells an option that a message names otherwise
SPELLINGS = {"qrels": {"--qrels-format": "--format"},
             "preprocess_qrels.py": {"--qrels-format": "--format", "--id-base": "--id_base", "--raw-ids": "--raw_ids"},
             "preprocess_run.py": {"--raw-ids": "--raw_ids", "--run-name": "--run_name"}}


def spelled(command: str, text: str) -> str:
    for option, own in SPELLINGS.get(command, {}).items():
        text = re.sub(re.escape(option) + r"\b(?!-)", own, text)
    return text


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    value: str | None = None


class Ctx:
    """A test's files and ways to run treckit: the CLI in-process, the staged scripts' main() in-process
    (their spelling comes from the script's file name, as when run), the Python API, and trec_eval."""

    def __init__(self, tmp_path: Path, capsys, monkeypatch, trec_eval: Path):
        self.dir, self.capsys, self.monkeypatch, self.trec_eval = tmp_path, capsys, monkeypatch, trec_eval
        self.n = 0

    def file(self, text: str, name: str = "f") -> Path:
        self.n += 1
        p = self.dir / f"{self.n}.{name}"
        p.write_text(text, encoding="utf-8")
        return p

    def out(self, name: str = "out") -> Path:
        self.n += 1
        return self.dir / f"{self.n}.{name}"

    def cli(self, *argv) -> Outcome:
        return Outcome(*run_cli(list(map(str, argv)), self.capsys))

    def script(self, name: str, *argv) -> Outcome:
        module = _script(name)
        self.capsys.readouterr()
        code = module.main(list(map(str, argv)))
        got = self.capsys.readouterr()
        return Outcome(code, got.out, got.err)

    def python(self, call) -> Outcome:
        """``call()`` through the Python API: an InputError as exit 2, InputWarnings as the text said."""
        import treckit
        self.capsys.readouterr()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                value = call()
                code, err = 0, ""
            except treckit.InputError as exc:
                value, code, err = None, 2, str(exc)
            except TreckitError as exc:
                value, code, err = None, exc.exit_code, str(exc)
        said = "\n".join(str(w.message) for w in caught if issubclass(w.category, treckit.InputWarning))
        printed = self.capsys.readouterr().err          # the readers' notices (skipped lines, ids with spaces)
        return Outcome(code, "", "\n".join(filter(None, [err, said, printed])), value)

    def measure(self, qrels: Path, run: Path, *args: str) -> dict[str, str]:
        """trec_eval's summary values of ``run`` (``args``: its options, default -m map)."""
        key = (qrels.read_bytes(), run.read_bytes(), args)
        if key not in _MEASURED:
            got = subprocess.run([str(self.trec_eval), *(args or ("-m", "map")), str(qrels), str(run)],
                                 capture_output=True, text=True)
            assert got.returncode == 0, got.stderr
            _MEASURED[key] = {m: v for m, q, v in (ln.split() for ln in got.stdout.splitlines()) if q == "all"}
        return _MEASURED[key]

    def test_set(self, qrels: Path) -> Path:
        """A test set of ``qrels`` (its judgments) and QUERIES, as `treckit testset import` builds it."""
        text = qrels.read_text()
        if text not in _TEST_SETS:
            from treckit.api import read_qrels
            from treckit.testsets.load import test_set_from_judgments
            ts = test_set_from_judgments(read_qrels(qrels).to_dict(), {"1": "alpha", "2": "beta"}, None, name="ts")
            _TEST_SETS[text] = ts.to_yaml()
        return self.file(_TEST_SETS[text], "ts.yaml")

    def system(self, run: Path) -> Path:
        return self.file(f"components:\n  r: {{run: {json.dumps(str(run))}}}\n", "system.yaml")


@pytest.fixture(autouse=True, scope="module")
def _command_tree_built_once():
    """The CLI's click command tree built once for the module's hundreds of in-process runs (typer builds it
    anew on every call, which is a third of the module's time): the same commands, parsed and run the same way."""
    import typer.main
    build = typer.main.get_command
    built: dict[int, tuple] = {}

    def get_command(app):
        if id(app) not in built:
            built[id(app)] = (app, build(app))          # the app is kept: its id stays its own
        return built[id(app)][1]
    with pytest.MonkeyPatch.context() as m:
        m.setattr(typer.main, "get_command", get_command)
        yield


_SCRIPTS: dict[str, object] = {}
_MEASURED: dict[tuple, dict[str, str]] = {}        # trec_eval's numbers, by the files' content and the options
_TEST_SETS: dict[str, str] = {}


def _script(name: str):
    if name not in _SCRIPTS:
        spec = importlib.util.spec_from_file_location(f"staged_{name[:-3]}", SCRIPTS / name)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _SCRIPTS[name] = module
    return _SCRIPTS[name]


def _four(x) -> str:
    return f"{float(x):.4f}"


def _summary(text: str, measure: str) -> str | None:
    m = re.search(rf"^{re.escape(measure)}\s+all\s+(\S+)$", text, re.M)
    return m.group(1) if m else None


# Each command as the reading tests run it: (the number it gives for QRELS and RUN, with options; the trec_eval
# options of the same number).  ``p``: the files by name; ``args``: command-line options, ``kw``: keywords.
def _eval(c: Ctx, p, args, kw):
    o = c.cli("eval", "-m", "map", *args, p["QRELS"], p["RUN"])
    o.value = _summary(o.out, "map")
    return o


def _eval_prefs(c: Ctx, p, args, kw):
    o = c.cli("eval", "-R", "qrels_prefs", "-m", "prefs_simp", *args, p["QRELS"], p["RUN"])
    o.value = _summary(o.out, "prefs_simp")
    return o


def _run(c: Ctx, p, args, kw):
    out = c.out("trec")
    o = c.cli("run", p["RUN"], "-o", out, *args)
    o.value = c.measure(p["CLEAN_QRELS"], out)["map"] if o.code == 0 else None
    return o


def _compare(c: Ctx, p, args, kw):
    out = c.out("json")
    o = c.cli("compare", p["QRELS"], p["RUN"], p["RUN"], "--name", "a", "--name", "b", "-m", "map", "--test",
              "randomization", "--permutations", "100", "--out", out, *args)
    o.value = _four(json.loads(out.read_text())["systems"]["a"]["metrics"]["macro"]["map"]) if o.code == 0 else None
    return o


# The staged scripts skip malformed lines by default, as the pipeline document says (tests/pipeline/test_pipeline.py);
# run here with --strict, treckit's own reading, whose errors and fixes these tests are about.
def _evaluate_py(c: Ctx, p, args, kw):
    o = c.script("evaluate.py", "--run", p["RUN"], "--qrels", p["QRELS"], "--cutoffs", "10", "--strict", *args)
    m = re.search(r"MAP (\S+)", o.out)
    o.value = m.group(1) if m else None
    return o


def _preprocess_run(c: Ctx, p, args, kw):
    out = c.out("trec")
    o = c.script("preprocess_run.py", "--input", p["RUN"], "--run_name", "t", "--output", out, "--strict", *args)
    o.value = c.measure(p["CLEAN_QRELS"], out)["map"] if o.code == 0 else None
    return o


def _python(c: Ctx, p, args, kw):
    import treckit

    def call():
        if p["ROLE"] == "qrels":
            qrels = treckit.read_qrels(p["QRELS"], **kw) if kw else p["QRELS"]
            return treckit.evaluate(qrels, p["RUN"], ["map"], per_query=False)
        return treckit.evaluate(p["QRELS"], p["RUN"], ["map"], per_query=False, **kw)
    o = c.python(call)
    o.value = _four(o.value["map"].iloc[0]) if o.code == 0 else None
    return o


def _fuse(c: Ctx, p, args, kw):
    out = c.out("trec")
    tune = ("--tune", p["QRELS"]) if p["ROLE"] == "qrels" else ()
    o = c.cli("fuse", p["RUN"], p["RUN"], *tune, "-o", out, *args)
    o.value = c.measure(p["CLEAN_QRELS"], out)["map"] if o.code == 0 else None
    return o


def _rq(c: Ctx, p, args, kw):
    # --report-only: the exit code says whether the run was read (2: an error), not whether RQ passes its
    # threshold (FAIL exits 1), which a misread run may not
    o = c.cli("rq", "--test-set", c.test_set(p["CLEAN_QRELS"]), "--run", p["RUN"], "--k", "10", "--report-only", *args)
    m = re.search(r"RQ \(MRR@10\) = (\S+)", o.out)
    o.value = m.group(1) if m else None
    return o


def _testset_eval(c: Ctx, p, args, kw):
    out = c.out("json")
    o = c.cli("testset", "eval", c.test_set(p["CLEAN_QRELS"]), "--run", p["RUN"], "-m", "map", "--out", out, *args)
    o.value = _four(json.loads(out.read_text())["aggregates"]["map"]["mean"]) if o.code == 0 else None
    return o


def _system_eval(c: Ctx, p, args, kw):
    out = c.out("json")
    judged = (("--qrels", p["QRELS"], "--queries", p["QUERIES"]) if p["ROLE"] == "qrels"
              else ("--test-set", c.test_set(p["CLEAN_QRELS"])))
    o = c.cli("system", "eval", c.system(p["RUN"]), *judged, "-m", "map", "--no-cache", "--out", out, *args)
    o.value = _four(json.loads(out.read_text())["r"]["aggregates"]["map"]["mean"]) if o.code == 0 else None
    return o


def _qrels(c: Ctx, p, args, kw):
    out = c.out("qrels")
    o = c.cli("qrels", p["QRELS"], "-o", out, *args)
    o.value = c.measure(out, p["CLEAN_RUN"])["map"] if o.code == 0 else None
    return o


def _preprocess_qrels(c: Ctx, p, args, kw):
    out = c.out("qrels")
    o = c.script("preprocess_qrels.py", "--input", p["QRELS"], "--output", out, *args)
    o.value = c.measure(out, p["CLEAN_RUN"])["map"] if o.code == 0 else None
    return o


def _testset_import(c: Ctx, p, args, kw):
    ts, out = c.out("ts.yaml"), c.out("json")
    o = c.cli("testset", "import", "--qrels", p["QRELS"], "--queries", p["QUERIES"], "--name", "x", "-o", ts, *args)
    if o.code == 0:
        evaluated = c.cli("testset", "eval", ts, "--run", p["RUN"], "-m", "map", "--out", out)
        o.value = _four(json.loads(out.read_text())["aggregates"]["map"]["mean"]) if evaluated.code == 0 else None
    return o


def _kappa(c: Ctx, p, args, kw):
    o = c.cli("testset", "kappa", p["QRELS"], p["OTHER_QRELS"], "--threshold", "-1", *args)
    o.value = _four(json.loads(o.out)["kappa"]) if o.out.startswith("{") else None
    return o


def _qrels_verify(c: Ctx, p, args, kw):
    o = c.cli("qrels-verify", p["QRELS"], "--topics", p["QUERIES"], *args)
    m = re.search(r"all (\d+) expected topics judged", o.out)
    o.value = m.group(1) if m else None
    return o


def _rq_eval(c: Ctx, p, args, kw):
    out = c.out("json")
    config = c.file(f"run: {json.dumps(str(p['RUN']))}\n", "config.yaml")
    o = c.script("rq_eval.py", "--queries", p["QUERIES"], "--truth", p["QRELS"], "--configA", config, "--configB",
                 config, "--k", "10", "--out", out, *args)
    macro = json.loads(out.read_text())["systems"]["A"]["metrics"]["macro"] if o.code == 0 else None
    o.value = f"{_four(macro['recall'])} {_four(macro['mrr'])}" if macro else None          # R@10 and RR@10
    return o


def _detect(c: Ctx, p, args, kw):
    o = c.cli("detect", p["RUN" if p["ROLE"] == "run" else "QRELS"], "--role", p["ROLE"], *args)
    o.value = o.out.split("\t")[0] if o.code == 0 else None
    return o


def _kappa_by_hand(c: Ctx, p) -> str:
    """Cohen's kappa of the grades both files give (scikit-learn's, on the clean judgments)."""
    from sklearn.metrics import cohen_kappa_score

    def grades(path):
        return {(q, d): g for q, _, d, g in (ln.split() for ln in Path(path).read_text().splitlines())}
    a, b = grades(p["CLEAN_QRELS"]), grades(p["OTHER_QRELS"])
    both = sorted(set(a) & set(b))
    return _four(cohen_kappa_score([a[k] for k in both], [b[k] for k in both]))


# name: (runner, how the right value is found: trec_eval's options, or a function of the clean files)
COMMANDS: dict[str, tuple] = {
    "eval": (_eval, ("-m", "map")), "eval -R": (_eval_prefs, ("-R", "qrels_prefs", "-m", "prefs_simp")),
    "run": (_run, ("-m", "map")), "compare": (_compare, ("-m", "map")), "evaluate.py": (_evaluate_py, ("-m", "map")),
    "preprocess_run.py": (_preprocess_run, ("-m", "map")), "python": (_python, ("-m", "map")),
    "fuse": (_fuse, ("-m", "map")), "rq": (_rq, ("-m", "recip_rank")), "testset eval": (_testset_eval, ("-m", "map")),
    "system eval": (_system_eval, ("-m", "map")), "qrels": (_qrels, ("-m", "map")),
    "preprocess_qrels.py": (_preprocess_qrels, ("-m", "map")), "testset import": (_testset_import, ("-m", "map")),
    "testset kappa": (_kappa, _kappa_by_hand),
    "qrels-verify": (_qrels_verify, lambda c, p: str(len({ln.split()[0] for ln in Path(p["CLEAN_QRELS"]).read_text().splitlines()}))),
    "rq_eval.py": (_rq_eval, lambda c, p: " ".join(c.measure(p["CLEAN_QRELS"], p["CLEAN_RUN"], "-m", "recall.10", "-m",
                                                           "recip_rank")[m] for m in ("recall_10", "recip_rank"))),
    "detect": (_detect, lambda c, p: "trec"),          # what treckit run / treckit qrels write
}


def _reference(c: Ctx, command: str, p) -> str:
    how = COMMANDS[command][1]
    if callable(how):
        return how(c, p)
    got = c.measure(p["CLEAN_QRELS"], p["CLEAN_RUN"], *how)
    return next(iter(got.values())) if len(got) == 1 else got[how[-1].replace(".", "_")]


def _fill(x, p):
    """``{NAME}`` in an option, a keyword or a phrase: the path of file NAME."""
    if isinstance(x, str):
        return re.sub(r"\{([A-Z]+)\}", lambda m: str(p[m.group(1)]), x)
    if isinstance(x, dict):
        return {k: _fill(v, p) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(_fill(v, p) for v in x)
    return x


def _applies(command: str, role: str, options) -> bool:
    return all(o in APPLIES.get(command, {}).get(role, ()) for o in options if o.startswith("--"))


READING_CASES = [pytest.param(r, cmd, id=f"{r.id}[{cmd}]") for r in READINGS for cmd in r.commands]


def _reading_files(r: Reading, c: Ctx, monkeypatch) -> dict:
    """The files of reading case ``r`` by name (the trigger, QUERIES, the clean QRELS and RUN, OTHER_QRELS: the
    clean qrels with its first grade flipped) and its ROLE."""
    if r.detect_limit:
        monkeypatch.setattr(thresholds, "DETECT_MAX_BYTES", r.detect_limit)
    texts = {"QRELS": QRELS, "RUN": RUN, "QUERIES": QUERIES, **r.files}
    p: dict = {name: c.file(text, name.lower()) for name, text in texts.items()}
    clean_q = r.clean.get("QRELS", texts["QRELS"] if r.role == "run" else QRELS)
    clean_r = r.clean.get("RUN", texts["RUN"] if r.role == "qrels" else RUN)
    p["CLEAN_QRELS"], p["CLEAN_RUN"] = c.file(clean_q, "clean.qrels"), c.file(clean_r, "clean.run")
    first = clean_q.splitlines()[0].split()
    p["OTHER_QRELS"] = c.file(clean_q.replace(" ".join(first), " ".join(first[:3] + [str(1 - int(first[3]))]), 1))
    p["ROLE"] = r.role
    return p


@pytest.mark.parametrize("r, command", READING_CASES)
def test_reading_suggestion(r: Reading, command: str, tmp_path, capsys, monkeypatch, trec_eval):
    c = Ctx(tmp_path, capsys, monkeypatch, trec_eval)
    p = _reading_files(r, c, monkeypatch)
    run, _ = COMMANDS[command]
    subject = "RUN" if r.role == "run" else "QRELS"

    # the input: the message, naming the fix as this command takes it
    got = run(c, p, _fill(r.given, p), _fill(r.given_kw, p))
    message = r.message
    if command == "system eval" and r.role == "run" and not r.warning:     # named by a config: none of it is quoted
        message = re.sub(r"'[^']*'", "'…'", message)
        assert "content not shown: the file is named by the system config" in got.err, got
    assert (got.code == 0) == r.warning and message in got.err, got
    direct = _applies(command, r.role, r.chain[0] if r.chain else r.apply)
    if direct:
        phrase = _fill(r.said_py if command == "python" else spelled(command, r.said), p)
    elif r.convert is not None:
        phrase = f"`treckit {r.role} {_fill(r.convert_file, p)} {spelled(r.role, r.convert)} -o FIXED`"
    else:          # nothing this command could act on is offered
        assert "FIXED" not in got.err and not re.search(r"--(run|qrels)-format|format=", got.err), got.err
        return
    assert phrase in got.err, got.err

    def suggested(apply, kw):
        """The suggested command: the same with the option, or the conversion and the same on its output."""
        if _applies(command, r.role, apply):
            return run(c, p, spelled(command, " ".join(_fill(apply, p))).split(), _fill(kw, p)), None
        fixed = c.out(r.role)
        conversion = c.cli(r.role, p[subject], *spelled(r.role, " ".join(_fill(apply, p))).split(), "-o", fixed)
        if conversion.code != 0:
            return None, conversion
        return run(c, {**p, subject: fixed}, (), {}), conversion

    if r.chain:
        apply, kw, message, option, keyword = r.chain
        got, conversion = suggested(apply, kw)
        said = (got or conversion).err
        assert message in said, said
        if got is None or command != "python":
            said_by = r.role if got is None else command           # the conversion, or the command itself
            assert (f"pass {option}" if _applies(said_by, r.role, [option.split()[0]])
                    else f"`treckit {r.role} FILE {option} -o FIXED`") in said, said
        else:
            assert f"pass {keyword}" in said, said
    got, conversion = suggested(r.apply, r.keywords)
    assert got is not None and got.code == 0, (got, conversion)
    assert not r.warning or r.message not in got.err, got.err
    assert got.value == _reference(c, command, p), got


READ_AS_MEANT = [pytest.param(r, cmd, id=f"{r.id}[{cmd}]") for r in READINGS for cmd in r.read_as_meant_by]


@pytest.mark.parametrize("r, command", READ_AS_MEANT)
def test_read_as_meant(r: Reading, command: str, tmp_path, capsys, monkeypatch, trec_eval):
    """A trigger that a command's own reading rule reads as meant is no message there: the command reads it,
    says that it read doc ids containing whitespace, and gives trec_eval's numbers on the file written escaped
    (``clean``), which another layout would not give."""
    c = Ctx(tmp_path, capsys, monkeypatch, trec_eval)
    p = _reading_files(r, c, monkeypatch)
    run, _ = COMMANDS[command]
    got = run(c, p, _fill(r.given, p), _fill(r.given_kw, p))
    assert got.code == 0 and r.message not in got.err and "containing whitespace" in got.err, got
    assert got.value == _reference(c, command, p), got
    # the other reading of the same lines (columns after the tag or the grade ignored) gives other numbers
    other = run(c, p, spelled(command, "--layout extra-columns").split(), {})
    assert other.value != got.value, other


# ------------------------------------------------------------------ the other suggestions
@dataclass(frozen=True)
class Other:
    """A suggestion that is not a reading option: ``check(c)`` triggers it in ``command``, checks the message
    names the fix, runs the suggested command and checks its result.  ``needs``: a module it needs (the
    suggestion is tested where that is installed, or -- ``absent`` -- where it is not)."""

    id: str
    source: str
    command: str
    check: Callable
    needs: str | None = None
    absent: str | None = None


def said(o: Outcome, message: str, fix: str, code: int = 2) -> None:
    assert o.code == code and message in o.err and fix in o.err, o


def ok(o: Outcome) -> Outcome:
    assert o.code == 0, o
    return o


def _files(c: Ctx, qrels: str = QRELS, run: str = RUN):
    return c.file(qrels, "qrels"), c.file(run, "run")


def _te_out(c: Ctx, qrels: Path, run: Path, *args: str) -> str:
    got = subprocess.run([str(c.trec_eval), *args, str(qrels), str(run)], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    return got.stdout


MISSING = QRELS + "3 0 d8 1\n"        # query 3 is judged, and the run has no line for it


def missing_error_eval(c: Ctx):
    q, r = _files(c, MISSING)
    said(c.cli("eval", "--missing", "error", q, r), "judged queries have no results",
         "pass --missing skip (evaluate shared queries) or --missing zero")
    assert ok(c.cli("eval", "--missing", "zero", "-m", "map", q, r)).out == _te_out(c, q, r, "-c", "-m", "map")


def missing_error_script(c: Ctx):
    q, r = _files(c, MISSING)
    said(c.script("evaluate.py", "--run", r, "--qrels", q, "--missing", "error"), "judged queries have no results",
         "pass --missing skip (evaluate shared queries) or --missing zero")
    got = ok(c.script("evaluate.py", "--run", r, "--qrels", q, "--missing", "zero", "--cutoffs", "10"))
    assert re.search(r"MAP (\S+)", got.out).group(1) == c.measure(q, r, "-c", "-m", "map")["map"]


def missing_error_python(c: Ctx):
    import treckit
    q, r = _files(c, MISSING)
    said(c.python(lambda: treckit.evaluate(q, r, ["map"], missing="error")), "judged queries have no results",
         "pass missing='skip' (evaluate shared queries) or missing='zero'")
    got = ok(c.python(lambda: treckit.evaluate(q, r, ["map"], missing="zero", per_query=False)))
    assert _four(got.value["map"].iloc[0]) == c.measure(q, r, "-c", "-m", "map")["map"]


def missing_warning_eval(c: Ctx):
    q, r = _files(c, MISSING)
    said(c.cli("eval", "-m", "map", q, r), "1 judged queries have no results", "(--missing zero scores them 0)", 0)
    got = ok(c.cli("eval", "--missing", "zero", "-m", "map", q, r))
    assert got.out == _te_out(c, q, r, "-c", "-m", "map") and "no results" not in got.err


def missing_warning_script(c: Ctx):
    q, r = _files(c, MISSING)
    said(c.script("evaluate.py", "--run", r, "--qrels", q), "1 judged queries have no results",
         "(--missing zero scores them 0)", 0)
    got = ok(c.script("evaluate.py", "--run", r, "--qrels", q, "--missing", "zero", "--cutoffs", "10"))
    assert re.search(r"MAP (\S+)", got.out).group(1) == c.measure(q, r, "-c", "-m", "map")["map"]


def missing_warning_python(c: Ctx):
    import treckit
    q, r = _files(c, MISSING)
    said(c.python(lambda: treckit.evaluate(q, r, ["map"])), "1 judged queries have no results",
         "(missing='zero' scores them 0)", 0)
    got = ok(c.python(lambda: treckit.evaluate(q, r, ["map"], missing="zero", per_query=False)))
    assert _four(got.value["map"].iloc[0]) == c.measure(q, r, "-c", "-m", "map")["map"] and got.err == ""


def eval_results_format(c: Ctx):
    q, r = _files(c)
    said(c.cli("eval", "-T", "ranx", q, r), "only the trec_results format", "use --qrels-format / --run-format")
    assert ok(c.cli("eval", "--run-format", "trec", q, r)).out == _te_out(c, q, r)


def eval_bad_choice(c: Ctx):
    q, r = _files(c)
    said(c.cli("eval", "--format", "xml", q, r), "--format xml: not one of", "e.g. --format trec_eval")
    assert ok(c.cli("eval", "--format", "trec_eval", q, r)).out == _te_out(c, q, r)
    said(c.cli("eval", "--missing", "none", q, r), "--missing none: not one of", "e.g. --missing skip")
    assert ok(c.cli("eval", "--missing", "skip", q, r)).out == _te_out(c, q, r)


def eval_needs_value(c: Ctx):
    q, r = _files(c, MISSING)
    said(c.cli("eval", q, r, "--missing"), "--missing needs a value", "e.g. --missing VALUE")
    assert ok(c.cli("eval", q, r, "--missing", "zero")).out == _te_out(c, q, r, "-c")


def eval_unknown_option(c: Ctx):
    q, r = _files(c)
    for bad in ("--bogus", "-x"):
        said(c.cli("eval", bad, q, r), "unknown option", "see `treckit eval --help`")
        helped = ok(c.cli("eval", "--help"))
        assert "--missing" in helped.out and "--run-format" in helped.out and "-m" in helped.out


def eval_integer(c: Ctx):
    q, r = _files(c)
    said(c.cli("eval", "--id-base", "one", q, r), "--id-base takes an integer", "e.g. --id-base 1")
    assert ok(c.cli("eval", "--id-base", "1", q, r)).out == _te_out(c, q, r)


def _engine_cases(command: str):
    """(trigger args, the run of the command without them, its value and the right value) for --engine checks."""
    def runner(c: Ctx, extra: tuple):
        import treckit
        q, r = _files(c)
        if command == "eval":
            o = c.cli("eval", "-m", "map", *extra, q, r)
            return o, _summary(o.out, "map"), c.measure(q, r)["map"]
        if command == "compare":
            out = c.out("json")
            o = c.cli("compare", q, r, r, "--name", "a", "--name", "b", "-m", "map", "--test", "randomization",
                      "--permutations", "100", "--out", out, *extra)
            got = _four(json.loads(out.read_text())["systems"]["a"]["metrics"]["macro"]["map"]) if o.code == 0 else None
            return o, got, c.measure(q, r)["map"]
        if command == "testset eval":
            out = c.out("json")
            o = c.cli("testset", "eval", c.test_set(q), "--run", r, "-m", "map", "--out", out, *extra)
            got = _four(json.loads(out.read_text())["aggregates"]["map"]["mean"]) if o.code == 0 else None
            return o, got, c.measure(q, r)["map"]
        kw = dict(zip(extra[0::2], extra[1::2]))
        kw = {k.lstrip("-"): v for k, v in kw.items()}
        o = c.python(lambda: treckit.evaluate(q, r, ["map"], per_query=False, **kw))
        return o, _four(o.value["map"].iloc[0]) if o.code == 0 else None, c.measure(q, r)["map"]
    return runner


def engine_check(command: str, trigger: tuple, message: str, fix: str, fix_py: str, then: tuple, code: int = 2):
    def check(c: Ctx):
        runner = _engine_cases(command)
        o, _, _ = runner(c, trigger)
        said(o, message, fix_py if command == "python" else fix, code)
        o, got, right = runner(c, then)
        assert ok(o) and got == right
    return check


def compare_same_names(c: Ctx):
    q, r = _files(c)
    out = c.out("json")
    said(c.cli("compare", q, r, r, "-m", "map"), "two systems share a name", "give distinct names with --name")
    ok(c.cli("compare", q, r, r, "-m", "map", "--name", "a", "--name", "b", "--test", "randomization", "--out", out))
    assert _four(json.loads(out.read_text())["systems"]["b"]["metrics"]["macro"]["map"]) == c.measure(q, r)["map"]


def _second_run(c: Ctx) -> Path:
    return c.file(RUN.replace(" t\n", " u\n").replace("d9 2 3.5", "d9 2 4.5"), "run")


def compare_needs_two_runs(c: Ctx):
    q, r = _files(c)
    said(c.cli("compare", q, r, "-m", "map"), "compare needs at least two runs",
         "treckit compare QRELS BASELINE_RUN OTHER_RUN [...]")
    other, out = _second_run(c), c.out("json")
    ok(c.cli("compare", q, r, other, "-m", "map", "--test", "randomization", "--out", out))
    systems = json.loads(out.read_text())["systems"]
    assert [_four(s["metrics"]["macro"]["map"]) for s in systems.values()] == [c.measure(q, r)["map"],
                                                                              c.measure(q, other)["map"]]


def compare_needs_judgments(c: Ctx):
    q, r = _files(c)
    said(c.cli("compare", "--k", "5"), "compare needs the judgments",
         "treckit compare QRELS BASELINE_RUN OTHER_RUN, or --test-set TS.yaml --config A.yaml --config B.yaml")
    other, out = _second_run(c), c.out("json")
    ok(c.cli("compare", q, r, other, "-m", "map", "--k", "5", "--test", "randomization", "--out", out))
    assert _four(json.loads(out.read_text())["systems"]["t"]["metrics"]["macro"]["map"]) == c.measure(q, r)["map"]


def compare_needs_queries(c: Ctx):
    """A system that retrieves (bag of words over CORPUS) is run on the queries' texts; one of run files only is
    run on the judged queries, and needs none."""
    q, r = _files(c)
    bow = c.file(f"corpus: {json.dumps(str(c.file(CORPUS, 'jsonl')))}\ncomponents:\n  bow: {{method: bow}}\n",
                 "system.yaml")
    configs = ("--config", bow, "--config", c.system(r), "--name", "a", "--name", "b", "-m", "map")
    said(c.cli("compare", q, *configs), "is run on queries, and none were given",
         "pass --queries QUERIES.tsv, or a test set (--test-set TS.yaml) in place of QRELS")
    for judgments in ((q, "--queries", c.file(QUERIES, "tsv")), ("--test-set", c.test_set(q))):
        out = c.out("json")
        ok(c.cli("compare", *judgments, *configs, "--test", "randomization", "--out", out))
        systems = json.loads(out.read_text())["systems"]
        # bag of words: each query retrieves the one document holding its word (alpha: d1, beta: d4), relevant, of
        # its 2 relevant: AP 1/2 each
        assert _four(systems["a"]["metrics"]["macro"]["map"]) == _four((1 / 2 + 1 / 2) / 2)
        assert _four(systems["b"]["metrics"]["macro"]["map"]) == c.measure(q, r)["map"]
    out, other = c.out("json"), _second_run(c)
    ok(c.cli("compare", q, "--config", c.system(r), "--config", c.system(other), "--name", "a", "--name", "b", "-m",
             "map", "--test", "randomization", "--out", out))              # run files only: no queries needed
    systems = json.loads(out.read_text())["systems"]
    assert [_four(s["metrics"]["macro"]["map"]) for s in systems.values()] == [c.measure(q, r)["map"],
                                                                              c.measure(q, other)["map"]]


def cross_check_options(command: str):
    """--cross-check with an option whose numbers ir_measures cannot recompute: either one left out works (without
    -c / --missing zero, query 3, judged and not answered, is left out: trec_eval's numbers without it)."""
    def check(c: Ctx):
        q, r = _files(c, MISSING)
        answered = c.file(QRELS, "qrels")
        if command == "eval":
            said(c.cli("eval", "--cross-check", "-c", "-m", "map", q, r), "which has no -c", "leave out -c or --cross-check")
            got = ok(c.cli("eval", "--cross-check", "-m", "map", q, r))
            assert got.out == _te_out(c, answered, r, "-m", "map") and re.search("agrees? with ir_measures", got.err), got
            assert ok(c.cli("eval", "-c", "-m", "map", q, r)).out == _te_out(c, q, r, "-c", "-m", "map")
            return
        base = ("--run", r, "--qrels", q, "--cutoffs", "10")
        said(c.script(command, *base, "--cross-check", "--missing", "zero"), "which has no --missing zero",
             "leave out --missing zero or --cross-check")
        got = ok(c.script(command, *base, "--cross-check"))
        assert re.search(r"MAP (\S+)", got.out).group(1) == c.measure(answered, r)["map"]
        assert re.search("agrees? with ir_measures", got.err), got
        got = ok(c.script(command, *base, "--missing", "zero"))
        assert re.search(r"MAP (\S+)", got.out).group(1) == c.measure(q, r, "-c", "-m", "map")["map"]
    return check


def cross_check_not_installed(command: str):
    """--cross-check where ir_measures is not installed names the distributions to install: they are the ones
    holding the modules it imports, and with them installed the same command runs."""
    def check(c: Ctx):
        q, r = _files(c)
        run = ((lambda: c.cli("eval", "--cross-check", "-m", "map", q, r)) if command == "eval" else
               (lambda: c.script(command, "--run", r, "--qrels", q, "--cutoffs", "10", "--cross-check")))
        with c.monkeypatch.context() as m:
            m.setitem(sys.modules, "ir_measures", None)          # an import of it fails, as where it is absent
            said(run(), "--cross-check needs ir_measures and pytrec_eval, which are not installed (ir_measures)",
                 "pip install ir-measures pytrec-eval-terrier")
        from importlib.metadata import packages_distributions
        installs = {module: {re.sub(r"[-_.]+", "-", d).lower() for d in dists}
                    for module, dists in packages_distributions().items()}
        assert "ir-measures" in installs["ir_measures"] and "pytrec-eval-terrier" in installs["pytrec_eval"]
        got = ok(run())
        value = got.out.split()[2] if command == "eval" else re.search(r"MAP (\S+)", got.out).group(1)
        assert value == c.measure(q, r)["map"] and re.search("agrees? with ir_measures", got.err), got
    return check


def gate_no_definitions(c: Ctx):
    """Results that record no measure definitions (an old schema, or the block missing) are refused; the
    command the fix names writes a baseline the gate takes."""
    q, r = _files(c)
    ts = c.test_set(q)
    current = _results(c, ts, r)
    data = json.loads(current.read_text())
    stripped = {k: v for k, v in data.items() if k != "definitions"}
    for old in (dict(stripped, schema="treckit.testset-results/1"), stripped):
        said(c.cli("gate", "--baseline", c.file(json.dumps(old), "json"), "--current", current),
             "records no measure definitions", "re-run the baseline with this treckit version (e.g. treckit testset "
             "eval TEST_SET --run BASELINE_RUN --out BASELINE.json)")
    baseline = c.dir / "BASELINE.json"
    ok(c.cli("testset", "eval", ts, "--run", r, "--out", baseline))           # the command the fix names
    got = ok(c.cli("gate", "--baseline", baseline, "--current", current))
    assert re.search(r"recall_at_10\s+baseline (\S+)", got.out).group(1) == \
        c.measure(q, r, "-m", "recall.10")["recall_10"]



def retrieve_stop_words(c: Ctx):
    """A corpus of stop words only cannot be indexed with the English list; with --stopwords none it is, and
    the doc holding the query's words comes first."""
    corpus = c.file('{"_id": "d0", "text": "the of and"}\n{"_id": "d1", "text": "to be or not"}\n', "jsonl")
    queries = c.file("q1\tthe and\n", "tsv")
    out = c.dir / "bow.trec"
    said(c.cli("retrieve", "--corpus", corpus, "--queries", queries, "-o", out),
         "no document of the corpus has a word to index", "or keep stop words (--stopwords none)")
    ok(c.cli("retrieve", "--corpus", corpus, "--queries", queries, "--stopwords", "none", "-o", out))
    assert [line.split()[2] for line in out.read_text().splitlines()] == ["d0"]


def gate_damaged(c: Ctx):
    """A results file with a part missing (cut or edited): the fix is the file as `testset eval --out` writes it."""
    q, r = _files(c)
    data = json.loads(_results(c, c.test_set(q), r).read_text())
    del data["aggregates"]
    gate_not_results(c, json.dumps(data), "aggregates: missing",
                     "pass the --out file of `treckit testset eval` as it was written")


def rq_threshold(c: Ctx):
    """rq --threshold nan is refused; the threshold the fix names gives RQ by hand: MRR@5 of the run."""
    q, r = _files(c)
    ts = c.test_set(q)
    said(c.cli("rq", "--test-set", ts, "--run", r, "--threshold", "nan"), "threshold",
         "e.g. --threshold 0.6 (RQ passes when MRR@k is above it)")
    got = c.cli("rq", "--test-set", ts, "--run", r, "--threshold", "0.6", "--report-only")
    mrr_at_5 = c.measure(q, r, "-M", "5", "-m", "recip_rank")["recip_rank"]       # every query labelled and answered
    assert got.code == 0 and f"= {mrr_at_5} over" in got.out, got

def compare_options(what: str, bad, good, fix: str):
    def check(c: Ctx):
        from treckit.compare.compare import CompareOptions
        from treckit.stages import compare_stage
        q, r = _files(c)
        said(c.python(lambda: CompareOptions(**{what: bad})), what if what != "seed" else "the seed", fix)
        got = ok(c.python(lambda: compare_stage(q, [r, _second_run(c)], ["map"], names=["a", "b"],
                                                options=CompareOptions(tests=("randomization",), **{what: good}))))
        assert _four(got.value.values["a"][:, 0].mean()) == c.measure(q, r)["map"]
    return check


def fuse_infinite_score(c: Ctx):
    """A score-adding method refuses an infinite score; RRF, which the fix names, fuses the ranks: query 1 d2 (ranks
    1 and 1), d1 (2, 2), d3 (3, 3) is the run's own order (AP (1/2 + 2/3) / 2), query 2 likewise (AP (1 + 2/3) / 2)."""
    q, r = _files(c)
    infinite = c.file(RUN.replace("d2 1 3.0", "d2 1 inf"), "run")
    out = c.out("trec")
    said(c.cli("fuse", infinite, r, "--method", "combsum", "-o", out), "an infinite score",
         "fuse ranks instead (--method rrf)")
    ok(c.cli("fuse", infinite, r, "--method", "rrf", "-o", out))
    assert c.measure(q, out)["map"] == c.measure(q, r)["map"] == _four(((1 / 2 + 2 / 3) / 2 + (1 + 2 / 3) / 2) / 2)


def rq_huge_k(c: Ctx):
    """rq --k beyond a test set's cutoffs is refused before any file is read; --k 5 gives MRR@5 by hand."""
    q, r = _files(c)
    ts = c.test_set(q)
    said(c.cli("rq", "--test-set", ts, "--run", r, "--k", str(10 ** 20)), "the RQ cutoff k must be a whole number",
         "e.g. --k 5")
    got = c.cli("rq", "--test-set", ts, "--run", r, "--k", "5", "--report-only")
    assert got.code == 0 and "= 0.7500 over 2 labelled queries" in got.out, got      # (1/2 + 1) / 2


def export_tabbed_text(c: Ctx):
    """A query text with a tab cannot go to a queries TSV; without --queries the qrels are written."""
    q = c.file(QRELS, "qrels")
    ts = c.file(c.test_set(q).read_text().replace("query_text: alpha", 'query_text: "al\\tpha"'), "ts.yaml")
    out = c.out("qrels")
    said(c.cli("testset", "export", ts, "-o", out, "--queries", c.out("tsv")), "its text holds a tab or a line break",
         "remove it from the query text, or leave out --queries")
    ok(c.cli("testset", "export", ts, "-o", out))
    assert c.measure(out, c.file(RUN, "run"))["map"] == c.measure(q, c.file(RUN, "run"))["map"]


def fuse_weights_by_name(c: Ctx):
    q, r = _files(c)
    other, out = _second_run(c), c.out("trec")
    said(c.cli("fuse", r, other, "--method", "weighted", "--weights", "a=1,b=2", "-o", out),
         "--weights names ['a', 'b'] but the runs are ['t', 'u']", "name every run once: t=W,u=W")
    ok(c.cli("fuse", r, other, "--method", "weighted", "--weights", "t=1,u=0", "-o", out))
    assert c.measure(q, out)["map"] == c.measure(q, r)["map"]          # all the weight on run t


def fuse_weights_numbers(c: Ctx):
    q, r = _files(c)
    other, out = _second_run(c), c.out("trec")
    said(c.cli("fuse", r, other, "--method", "weighted", "--weights", "one,two", "-o", out), "is not a list of numbers",
         "one number per run, in order, e.g. --weights 1,1")
    ok(c.cli("fuse", r, other, "--method", "weighted", "--weights", "1,1", "-o", out))
    # min-max, summed: query 1 d2 2, d1 1, d3 0 (AP (1/2 + 2/3) / 2); query 2 d5 1 + 2/3, d9 1/2 + 1, d4 0
    # (AP (1 + 2/3) / 2)
    assert c.measure(q, out)["map"] == _four(((1 / 2 + 2 / 3) / 2 + (1 + 2 / 3) / 2) / 2)


def fuse_tune_method(c: Ctx):
    q, r = _files(c)
    out = c.out("trec")
    said(c.cli("fuse", r, r, "--method", "combsum", "--tune", q, "-o", out), "--tune applies to rrf and weighted",
         "use --method rrf or weighted")
    ok(c.cli("fuse", r, r, "--method", "rrf", "--tune", q, "-o", out))
    assert c.measure(q, out)["map"] == c.measure(q, r)["map"]


CORPUS = "".join(json.dumps({"_id": d, "text": t}) + "\n" for d, t in
                 (("d1", "alpha one"), ("d2", "other words"), ("d3", "gamma"), ("d4", "beta four"), ("d5", "delta")))


def retrieve_stemmer(c: Ctx):
    q = c.file(QRELS, "qrels")
    corpus, queries, out = c.file(CORPUS, "jsonl"), c.file(QUERIES, "tsv"), c.out("trec")
    said(c.cli("retrieve", "--corpus", corpus, "--queries", queries, "--stemmer", "klingon", "-o", out),
         "no Snowball stemmer for 'klingon'", "e.g. --stemmer english, or --stemmer none")
    ok(c.cli("retrieve", "--corpus", corpus, "--queries", queries, "--stemmer", "english", "-o", out))
    # each query's words are in one document only, a relevant one: ranked first
    assert c.measure(q, out, "-m", "recip_rank")["recip_rank"] == "1.0000"


def _five_queries(c: Ctx) -> Path:
    from treckit.testsets.load import test_set_from_judgments
    judged = {str(i): {f"d{i}": 1} for i in range(1, 6)}
    ts = test_set_from_judgments(judged, {str(i): f"query {i}" for i in range(1, 6)}, None, name="five")
    return c.file(ts.to_yaml(), "ts.yaml")


def split_empty_part(c: Ctx):
    ts = c.test_set(c.file(QRELS, "qrels"))
    train, hold = c.out("yaml"), c.out("yaml")
    said(c.cli("testset", "split", ts, "--holdout", "0.1", "--train-out", train, "--holdout-out", hold),
         "holdout of 2 queries leaves one part empty", "use more queries or another --holdout")
    ok(c.cli("testset", "split", ts, "--holdout", "0.5", "--train-out", train, "--holdout-out", hold))
    from treckit.testsets import load_test_set
    assert sorted(q.query_id for f in (train, hold) for q in load_test_set(f).queries) == ["1", "2"]
    assert len(load_test_set(hold).queries) == 1              # round(2 x 0.5)


def split_empty_part_eval(c: Ctx):
    q, r = _files(c)
    ts, out = c.test_set(q), c.out("json")
    said(c.cli("testset", "eval", ts, "--run", r, "-m", "map", "--holdout", "0.1"),
         "holdout of 2 queries leaves one part empty", "use more queries or another --holdout")
    ok(c.cli("testset", "eval", ts, "--run", r, "-m", "map", "--holdout", "0.5", "--out", out))
    data = json.loads(out.read_text())
    assert _four(data["aggregates"]["map"]["mean"]) == c.measure(q, r)["map"] and "split" in data


def split_holdout_python(c: Ctx):
    from treckit.testsets import load_test_set
    from treckit.testsets.lifecycle import split
    ts = load_test_set(_five_queries(c))
    said(c.python(lambda: split(ts, 2.0)), "must be between 0 and 1", "e.g. holdout=0.2")
    got = ok(c.python(lambda: split(ts, 0.2)))
    assert [len(part.queries) for part in got.value] == [4, 1]


def refresh_replace(c: Ctx):
    ts = c.test_set(c.file(QRELS, "qrels"))
    candidates = c.file('{"query_id": "7", "query_text": "gamma"}\n{"query_id": "8", "query_text": "delta"}\n', "jsonl")
    labels = c.file("7 0 d3 1\n7 0 d2 0\n8 0 d5 1\n8 0 d1 0\n", "qrels")
    out = c.out("yaml")
    args = ("testset", "refresh", ts, "--candidates", candidates, "--labels-a", labels, "--labels-b", labels, "--out", out)
    said(c.cli(*args, "--replace", "5"), "--replace 5 must be between 1 and the 2 queries",
         "give --replace a number from 1 to 2")
    ok(c.cli(*args, "--replace", "1"))
    from treckit.testsets import load_test_set
    ids = sorted(q.query_id for q in load_test_set(out).queries)
    assert len(ids) == 2 and len(set(ids) & {"1", "2"}) == 1 and len(set(ids) & {"7", "8"}) == 1


def _results(c: Ctx, ts: Path, run: Path, *measures: str) -> Path:
    out = c.out("json")
    ok(c.cli("testset", "eval", ts, "--run", run, *(a for m in measures for a in ("--measure", m)), "--out", out))
    return out


def gate_max_drop(c: Ctx):
    q, r = _files(c)
    res = _results(c, c.test_set(q), r)
    for bad, message in (("abc", "is not a number"), ("150%", "must be between 0 and 100%")):
        said(c.cli("gate", "--baseline", res, "--current", res, "--max-drop", bad), message, "e.g. --max-drop 5%")
    got = ok(c.cli("gate", "--baseline", res, "--current", res, "--max-drop", "5%"))
    recall = float(c.measure(q, r, "-m", "recall.10")["recall_10"])
    assert re.search(r"recall_at_10\s+baseline (\S+)\s+current \S+\s+limit (\S+)", got.out).groups() == (
        _four(recall), _four(recall * 0.95))


def gate_not_results(c: Ctx, bad_text: str, message: str, fix: str):
    q, r = _files(c)
    ts = c.test_set(q)
    bad = c.file(bad_text, "json")
    said(c.cli("gate", "--baseline", bad, "--current", bad), message, fix)
    out = c.dir / "results.json"
    ok(c.cli("testset", "eval", ts, "--run", r, "--out", out))           # the command the fix names
    got = ok(c.cli("gate", "--baseline", out, "--current", out))
    assert re.search(r"recall_at_10\s+baseline (\S+)", got.out).group(1) == c.measure(q, r, "-m", "recall.10")["recall_10"]


def gate_missing_measure(c: Ctx):
    q, r = _files(c)
    ts = c.test_set(q)
    res = _results(c, ts, r, "mrr")
    said(c.cli("gate", "--baseline", res, "--current", res, "--metric", "map"), "the baseline results have no map",
         "evaluate with it (`treckit testset eval TEST_SET --run RUN --measure map --out RESULTS.json`), or gate on "
         "one of mrr (--metric NAME)")
    res = _results(c, ts, r, "map")
    got = ok(c.cli("gate", "--baseline", res, "--current", res, "--metric", "map"))
    assert re.search(r"map\s+baseline (\S+)", got.out).group(1) == c.measure(q, r)["map"]
    got = ok(c.cli("gate", "--baseline", _results(c, ts, r, "mrr"), "--current", _results(c, ts, r, "mrr"),
                   "--metric", "mrr"))
    assert re.search(r"mrr\s+baseline (\S+)", got.out).group(1) == c.measure(q, r, "-m", "recip_rank")["recip_rank"]


def gate_exp_gain_named_nDCG(c: Ctx):
    """Results that record exp gain under the name nDCG@10 (as test sets once read nDCG@10): the fix names ndcg_at_10.
    Grades here are 0 and 1, where 2^grade - 1 is the grade: trec_eval's ndcg_cut.10 (-c) is its value."""
    q, r = _files(c)
    ts = c.test_set(q)
    old = c.file(_results(c, ts, r, "ndcg_at_10").read_text().replace('"ndcg_at_10"', '"nDCG@10"'), "json")
    said(c.cli("gate", "--baseline", old, "--current", _results(c, ts, r, "nDCG@10"), "--metric", "nDCG@10"),
         "exp gain (2^grade - 1) under the name nDCG@10", "evaluate again with its name for exp gain: treckit testset "
         "eval TEST_SET --run RUN -m ndcg_at_10 --out RESULTS.json")
    res = _results(c, ts, r, "ndcg_at_10")            # the command the fix names
    got = ok(c.cli("gate", "--baseline", res, "--current", res, "--metric", "ndcg_at_10"))
    assert re.search(r"ndcg_at_10\s+baseline (\S+)", got.out).group(1) == \
        c.measure(q, r, "-c", "-m", "ndcg_cut.10")["ndcg_cut_10"]


def rq_baseline(c: Ctx):
    ts = c.test_set(c.file(QRELS, "qrels"))
    said(c.cli("rq", "--test-set", ts, "--baseline", "bow"), "needs --corpus and must be bow",
         "--corpus DOCS.jsonl --baseline bow")
    got = ok(c.cli("rq", "--test-set", ts, "--corpus", c.file(CORPUS, "jsonl"), "--baseline", "bow"))
    # "alpha" and "beta" each match one relevant document only: first for both queries
    assert "RQ (MRR@5) = 1.0000 over 2 labelled queries" in got.out


def system_eval_judgments(c: Ctx):
    q, r = _files(c)
    out = c.out("json")
    said(c.cli("system", "eval", c.system(r)), "name the queries and their judgments",
         "--test-set TS.yaml, or --qrels Q --queries Q.tsv")
    ok(c.cli("system", "eval", c.system(r), "--qrels", q, "--queries", c.file(QUERIES, "tsv"), "-m", "map",
             "--no-cache", "--out", out))
    assert _four(json.loads(out.read_text())["r"]["aggregates"]["map"]["mean"]) == c.measure(q, r)["map"]


def schema_check(command: str):
    def check(c: Ctx):
        q, r = _files(c)
        bad = c.file(c.test_set(q).read_text().replace("grade: 1", "grade: 9", 1), "ts.yaml")
        args = {"testset validate": ("testset", "validate", bad),
                "testset eval": ("testset", "eval", bad, "--run", r),
                "rq": ("rq", "--test-set", bad, "--run", r)}[command]
        said(c.cli(*args), "grade", "(schema: treckit testset schema)")
        schema = json.loads(ok(c.cli("testset", "schema")).out)
        assert "grade" in json.dumps(schema) and "maximum" in json.dumps(schema)
    return check


def prefs_measures(c: Ctx, shared: Path):
    prefs, results = shared / "trec_eval" / "prefs.test", shared / "trec_eval" / "prefs.results.test"
    said(c.cli("eval", "-R", "prefs", "-m", "map", prefs, results), "-R prefs: measure 'map' needs -R qrels",
         "with -R prefs / qrels_prefs use -m all_prefs, -m prefs or prefs_* names (see `treckit measures`)")
    assert ok(c.cli("eval", "-R", "prefs", "-m", "prefs", prefs, results)).out == _te_out(
        c, prefs, results, "-R", "prefs", "-m", "prefs")
    assert "prefs_simp" in ok(c.cli("measures")).out


def prefs_need_rel_format(c: Ctx, shared: Path):
    q, r = _files(c)
    prefs, results = shared / "trec_eval" / "prefs.test", shared / "trec_eval" / "prefs.results.test"
    said(c.cli("eval", "-m", "prefs_simp", q, r), "measure 'prefs_simp' needs -R prefs",
         "pass -R prefs and a matching judgments file")
    assert ok(c.cli("eval", "-R", "prefs", "-m", "prefs_simp", prefs, results)).out == _te_out(
        c, prefs, results, "-R", "prefs", "-m", "prefs_simp")


def reference_command(c: Ctx):
    """ERR@k is computed by name at the numbers treckit gdeval prints; an ir_measures name treckit does not compute
    (Accuracy) names the closest one it does, which runs on the same files."""
    q, r = _files(c)
    err = ok(c.cli("eval", "-q", "-m", "ERR@5", q, r)).out.splitlines()
    out = ok(c.cli("gdeval", q, r, "5")).out.splitlines()
    assert out[0] == "runid,topic,ndcg@5,err@5" and len(out) > 1
    assert [ln.split()[1:] for ln in err[:-1]] == [[ln.split(",")[1], f"{float(ln.split(',')[3]):.4f}"] for ln in out[1:]]
    assert ok(c.cli("gdeval", q, r, "5", "--amean")).out.splitlines()[-1].split(",")[1] == "amean"
    said(c.cli("eval", "-m", "Accuracy@5", q, r), "unknown measure 'Accuracy@5'", "the closest it computes is bpref")
    assert ok(c.cli("eval", "-m", "bpref", q, r)).out == _te_out(c, q, r, "-m", "bpref")


SUBTOPICS = "1 1 d1 1\n1 2 d1 1\n1 2 d3 1\n1 1 d2 0\n2 1 d4 1\n2 2 d5 1\n"


def diversity_streamed(c: Ctx):
    """A diversity name on a run that would be streamed: refused; with --memory-limit 0 the run is read whole and
    the values are the API's (pyndeval's, tests/measures/test_diversity_names.py); treckit ndeval, the other fix, prints
    ndeval's table of the same files."""
    import treckit
    sub, r = c.file(SUBTOPICS, "subtopics"), c.file(RUN, "run")
    said(c.cli("eval", "--memory-limit", "1", "-m", "alpha_nDCG@5", sub, r), "computed in memory only",
         "give --memory-limit 0")
    out = ok(c.cli("eval", "--memory-limit", "0", "-m", "alpha_nDCG@5", sub, r)).out.split("\t")
    assert float(out[2]) == pytest.approx(treckit.evaluate(str(sub), str(r), ["alpha_nDCG@5"]).iloc[-1, 1], abs=5e-5)
    assert ok(c.cli("ndeval", sub, r)).out.splitlines()[0].startswith("runid,topic,ERR-IA@5")


def held_past_the_budget(command: str):
    """A JSON-lines run whose estimate passes the budget (the smallest lowered to a few bytes): refused, naming the
    budget; with a larger --memory-limit, or 0, the command reads it and gives what it gives without a budget."""
    def check(c: Ctx):
        from treckit import thresholds
        c.monkeypatch.setattr(thresholds, "MEMORY_LIMIT_MIN", 1)
        c.monkeypatch.setattr(thresholds, "HELD_LINE_SHARE", 1)          # a line may take the whole budget here
        lines = [ln.split() for ln in RUN.splitlines()]
        run = c.file("".join(json.dumps({"qid": q, "docs": [f[2] for f in lines if f[0] == q],
                                         "scores": [float(f[4]) for f in lines if f[0] == q]}) + "\n"
                             for q in dict.fromkeys(f[0] for f in lines)), "run.jsonl")
        q = c.file(QRELS, "qrels")
        argv = ["run", run, "-o", "-"] if command == "run" else ["eval", q, run]
        said(c.cli(argv[0], "--memory-limit", "100", *argv[1:]), "bytes of memory to read whole, more than the budget of "
             "100 bytes (--memory-limit)", "give a larger --memory-limit (or --memory-limit 0: no limit)")
        plain = ok(c.cli(*argv)).out
        assert ok(c.cli(argv[0], "--memory-limit", "1G", *argv[1:])).out == plain
        assert ok(c.cli(argv[0], "--memory-limit", "0", *argv[1:])).out == plain
    return check


def one_query_past_the_budget(c: Ctx):
    """A streamed run one of whose queries alone passes the budget: refused (its values need all its lines); with
    --memory-limit 0 the values are trec_eval's."""
    from treckit import thresholds
    c.monkeypatch.setattr(thresholds, "MEMORY_LIMIT_MIN", 1)
    c.monkeypatch.setattr(thresholds, "STREAM_BLOCK_MIN_BYTES", 16)
    c.monkeypatch.setattr(thresholds, "HELD_LINE_SHARE", 1)              # lines and the qrels are within 100 bytes
    c.monkeypatch.setattr(thresholds, "LINE_READER_BYTES_PER_BYTE", 1)
    q, r = _files(c)
    said(c.cli("eval", "--memory-limit", "100", q, r), "alone takes about",
         "give a larger --memory-limit (or --memory-limit 0: no limit)")
    assert ok(c.cli("eval", "--memory-limit", "0", q, r)).out == _te_out(c, q, r)
    assert ok(c.cli("eval", "--memory-limit", "1G", q, r)).out == _te_out(c, q, r)


def diversity_without_max_docs(c: Ctx):
    """-M with a diversity name (or Compat): refused (-M cuts trec_eval's order, these rank ties by doc id
    ascending); the fix, the measure in a treckit eval of its own without -M, gives the API's numbers."""
    import treckit
    sub, r = c.file(SUBTOPICS, "subtopics"), c.file(RUN, "run")
    said(c.cli("eval", "-M", "2", "-m", "StRecall@2", sub, r), "-M 2 with StRecall@2",
         "evaluate StRecall@2 without -M, in a treckit eval of its own")
    out = ok(c.cli("eval", "-m", "StRecall@2", sub, r)).out.split("\t")
    assert float(out[2]) == pytest.approx(treckit.evaluate(str(sub), str(r), ["StRecall@2"]).iloc[-1, 1], abs=5e-5)


def subtopic_qrels_beside_map(c: Ctx):
    """Subtopic qrels (a document judged on two subtopics) with map beside a diversity name: refused; the fix, map
    with ad hoc qrels in a treckit eval of its own and the diversity name with the subtopic qrels, runs: map as
    trec_eval prints it."""
    sub, r = c.file(SUBTOPICS, "subtopics"), c.file(RUN, "run")
    said(c.cli("eval", "-m", "map", "-m", "AP_IA", sub, r), "subtopic qrels, as AP_IA reads them",
         "evaluate map in a treckit eval of its own with ad hoc qrels")
    q = c.file(QRELS, "qrels")
    assert ok(c.cli("eval", "-m", "map", q, r)).out == _te_out(c, q, r, "-m", "map")
    assert ok(c.cli("eval", "-m", "AP_IA", sub, r)).out.startswith("AP_IA")


def cwl_without_max_docs(c: Ctx):
    """-M with a C/W/L name: refused (-M cuts trec_eval's order, these measures rank ties in line order); the fix,
    the measure in a treckit eval of its own without -M, gives cwl-eval's numbers (those of the API)."""
    import treckit
    q, r = _files(c)
    said(c.cli("eval", "-M", "2", "-m", "map", "-m", "INST(max_rel=1)", q, r), "-M 2 with INST(max_rel=1)",
         "evaluate INST(max_rel=1) without -M")
    out = ok(c.cli("eval", "-m", "INST(max_rel=1)", q, r)).out.split("\t")
    assert float(out[2]) == pytest.approx(treckit.evaluate(str(q), str(r), ["INST(max_rel=1)"]).iloc[-1, 1], abs=5e-5)


def unknown_measure(command: str):
    def check(c: Ctx):
        import treckit
        q, r = _files(c)
        fix = "did you mean map or gm_map or set_map or MAP? `treckit measures` lists every name"
        if command == "eval":
            said(c.cli("eval", "-m", "mapp", q, r), "unknown measure 'mapp'", fix)
            assert ok(c.cli("eval", "-m", "map", q, r)).out == _te_out(c, q, r, "-m", "map")
        elif command == "compare":
            out = c.out("json")
            said(c.cli("compare", q, r, _second_run(c), "-m", "mapp"), "unknown measure 'mapp'", fix)
            ok(c.cli("compare", q, r, _second_run(c), "-m", "map", "--test", "randomization", "--out", out))
            assert _four(json.loads(out.read_text())["systems"]["t"]["metrics"]["macro"]["map"]) == c.measure(q, r)["map"]
        elif command == "fuse":
            out = c.out("trec")
            said(c.cli("fuse", r, r, "--tune", q, "--measure", "mapp", "-o", out), "unknown measure 'mapp'", fix)
            ok(c.cli("fuse", r, r, "--tune", q, "--measure", "map", "-o", out))
            assert c.measure(q, out)["map"] == c.measure(q, r)["map"]
        else:
            said(c.python(lambda: treckit.evaluate(q, r, ["mapp"])), "unknown measure 'mapp'", fix)
            got = ok(c.python(lambda: treckit.evaluate(q, r, ["map"], per_query=False)))
            assert _four(got.value["map"].iloc[0]) == c.measure(q, r)["map"]
        assert "map" in ok(c.cli("measures")).out.split()
    return check


def first_parameters_win(c: Ctx):
    import treckit
    q, r = _files(c)
    said(c.cli("eval", "-m", "P.5", "-m", "P.2", q, r), "P.2 ignored",
         "ask for each in a separate treckit eval, or use the Python API", 0)
    assert ok(c.cli("eval", "-m", "P.2", q, r)).out == _te_out(c, q, r, "-m", "P.2")
    got = ok(c.python(lambda: treckit.evaluate(q, r, ["P.5", "P.2"], per_query=False)))
    assert _four(got.value["P_2"].iloc[0]) == c.measure(q, r, "-m", "P.2")["P_2"]


# a doc id with a line break, which no TREC file can hold unescaped
BROKEN_JSONL = ('{"id": "1", "docs": ["d2", "d\\n1", "d1", "d3"], "scores": [3, 2.5, 2, 1]}\n'
                '{"id": "2", "docs": ["d5", "d9", "d4"], "scores": [4, 3.5, 3]}\n')


def raw_ids(command: str):
    def check(c: Ctx):
        import treckit
        q = c.file(QRELS, "qrels")
        clean = c.file(RUN + "1 Q0 d%0A1 9 2.5 t\n", "run")
        run = c.file(BROKEN_JSONL, "jsonl")
        gold = c.file(GOLD.replace('"d3"]', '"d3", "d\\n1"]'), "jsonl")
        clean_q = c.file(QRELS + "1 0 d%0A1 1\n", "qrels")
        out = c.out("trec")
        fix = "write escaped ids (the default) instead of --raw-ids"
        if command == "run":
            said(c.cli("run", run, "-o", out, "--raw-ids"), "contains a line break", fix)
            ok(c.cli("run", run, "-o", out))
            assert c.measure(q, out)["map"] == c.measure(q, clean)["map"]
        elif command == "preprocess_run.py":
            said(c.script(command, "--input", run, "--run_name", "t", "--output", out, "--raw_ids"),
                 "contains a line break", fix.replace("--raw-ids", "--raw_ids"))
            ok(c.script(command, "--input", run, "--run_name", "t", "--output", out))
            assert c.measure(q, out)["map"] == c.measure(q, clean)["map"]
        elif command == "qrels":
            said(c.cli("qrels", gold, "-o", out, "--raw-ids"), "contains a line break", fix)
            ok(c.cli("qrels", gold, "-o", out))
            assert c.measure(out, clean)["map"] == c.measure(clean_q, clean)["map"]
        elif command == "preprocess_qrels.py":
            said(c.script(command, "--input", gold, "--output", out, "--raw_ids"), "contains a line break",
                 fix.replace("--raw-ids", "--raw_ids"))
            ok(c.script(command, "--input", gold, "--output", out))
            assert c.measure(out, clean)["map"] == c.measure(clean_q, clean)["map"]
        else:
            read = treckit.read_run(run)
            said(c.python(lambda: treckit.write_run(read, out, escape_ids=False)), "contains a line break",
                 "write escaped ids (the default) instead of escape_ids=False")
            ok(c.python(lambda: treckit.write_run(read, out)))
            assert c.measure(q, out)["map"] == c.measure(q, clean)["map"]
    return check


TIED = "1 Q0 d1 1 1.0 t\n1 Q0 d2 2 1.0 t\n1 Q0 d6 3 1.0 t\n2 Q0 d5 1 4.0 t\n2 Q0 d4 2 3.0 t\n"
# in the input's order (d1 d2 d6): query 1's AP 1/2 (d3 is not retrieved), query 2's 1; trec_eval's order
# (d6 d2 d1) would give query 1 (1/3) / 2
TIED_IN_ORDER = _four((1 / 2 + 1) / 2)


def break_ties(command: str):
    def check(c: Ctx):
        import treckit
        q, r = _files(c, run=TIED)
        out = c.out("trec")
        if command == "python":
            got = ok(c.python(lambda: treckit.convert_run(treckit.read_run(r))))
            assert any("use ties='break' to keep the input order" in line for line in got.value[1].lines())
            converted = ok(c.python(lambda: treckit.convert_run(treckit.read_run(r), ties="break"))).value[0]
            treckit.write_run(converted, out)
        else:
            run = ((lambda *a: c.cli("run", r, "-o", out, *a)) if command == "run" else
                   (lambda *a: c.script(command, "--input", r, "--run_name", "t", "--output", out, *a)))
            said(run(), "share a score", "use --break-ties to keep the input order instead", 0)
            ok(run("--break-ties"))
        assert c.measure(q, out)["map"] == TIED_IN_ORDER != c.measure(q, r)["map"]
    return check


def no_cache(c: Ctx):
    q = c.file(QRELS, "qrels")
    ts = c.test_set(q)
    c.monkeypatch.setenv("TRECKIT_CACHE_DIR", str(c.dir / "cache"))
    module = c.file("def search(text):\n    return {'alpha': ['d2', 'd1', 'd3'], 'beta': ['d5', 'd9', 'd4']}[text]\n",
                    "search.py")
    args = ("testset", "eval", ts, "--function", f"{module}:search", "--config", c.file("name: s\n", "yaml"), "-m", "mrr")
    ok(c.cli(*args))
    said(c.cli(*args), "answered from the cache", "--no-cache to recompute", 0)
    got = ok(c.cli(*args, "--no-cache"))
    assert "answered from the cache" not in got.err
    assert re.search(r"^mrr\s+(\S+)", got.out, re.M).group(1) == c.measure(q, c.file(RUN, "run"), "-m", "recip_rank")["recip_rank"]


def serve_help(c: Ctx):
    bad = c.file("metrics_prefix: [1, 2]\n", "yaml")
    said(c.cli("serve", "--config", bad), "metrics_prefix", "see `treckit serve --help`")
    assert "--config" in ok(c.cli("serve", "--help")).out


def convert_depth(c: Ctx):
    import treckit
    r = treckit.read_run(c.file(RUN, "run"))
    said(c.python(lambda: treckit.convert_run(r, depth=0)), "depth must be at least 1", "pass a positive depth")
    got = ok(c.python(lambda: treckit.convert_run(r, depth=1))).value[0]
    assert sorted(zip(got.table.column("qid").to_pylist(), got.table.column("docid").to_pylist())) == [("1", "d2"), ("2", "d5")]


def id_base(c: Ctx):
    import treckit
    preds = c.file(PREDS, "jsonl")
    said(c.python(lambda: treckit.read_run(preds, id_base="1")), "id base must be an integer", "pass id_base=N")
    got = ok(c.python(lambda: treckit.read_run(preds, id_base=10)))
    assert sorted(set(got.value.table.column("qid").to_pylist())) == ["10", "11"]


def _light_dask(monkeypatch) -> None:
    """The local cluster a command starts without --scheduler, as threads (a cluster of worker processes takes
    seconds to start), and a short wait for an unreachable scheduler or a worker that never joins."""
    import distributed

    from treckit.engines import dask
    cluster = distributed.LocalCluster
    monkeypatch.setattr(distributed, "LocalCluster",
                        lambda **kw: cluster(**{**kw, "n_workers": 1, "processes": False}))
    monkeypatch.setattr(dask, "SCHEDULER_TIMEOUT", "0.2s")
    monkeypatch.setattr(dask, "WORKER_WAIT_SECONDS", 0.2)


def prefs_on_dask(c: Ctx, shared: Path):
    prefs, results = shared / "trec_eval" / "prefs.test", shared / "trec_eval" / "prefs.results.test"
    said(c.cli("eval", "-R", "prefs", "-m", "prefs", "--engine", "dask", prefs, results),
         "evaluated by the local engine only", "leave out --engine dask")
    assert ok(c.cli("eval", "-R", "prefs", "-m", "prefs", prefs, results)).out == _te_out(
        c, prefs, results, "-R", "prefs", "-m", "prefs")


def function_on_dask(c: Ctx):
    q = c.file(QRELS, "qrels")
    module = c.file("def search(text):\n    return {'alpha': ['d2', 'd1', 'd3'], 'beta': ['d5', 'd9', 'd4']}[text]\n",
                    "search.py")
    args = ("testset", "eval", c.test_set(q), "--function", f"{module}:search", "--no-cache", "-m", "mrr")
    said(c.cli(*args, "--engine", "dask"), "a retrieval function runs here", "leave out --engine dask")
    got = ok(c.cli(*args))
    assert re.search(r"^mrr\s+(\S+)", got.out, re.M).group(1) == c.measure(q, c.file(RUN, "run"), "-m", "recip_rank")["recip_rank"]


def no_worker(command: str):
    def check(c: Ctx):
        from distributed.deploy.local import LocalCluster          # not the lighter one of _light_dask
        with LocalCluster(n_workers=0, processes=False, dashboard_address="127.0.0.1:0") as cluster:
            engine_check(command, ("--engine", "dask", "--scheduler", cluster.scheduler_address),
                         "no worker joined the Dask scheduler", "or leave out --scheduler to start a local cluster",
                         "or leave out scheduler to start a local cluster", ("--engine", "dask"), code=3)(c)
    return check


def tie_aware_mode(c: Ctx):
    q, r = _files(c)          # RUN has no ties: its tie-aware values are trec_eval's
    said(c.cli("eval", "--tie-aware", "mean", "-m", "map", q, r), "--tie-aware mean: not one of", "e.g. --tie-aware expected")
    assert ok(c.cli("eval", "--tie-aware", "expected", "-m", "map", q, r)).out == _te_out(c, q, r, "-m", "map")


def tie_aware_compare_mode(c: Ctx):
    q, r = _files(c)
    said(c.cli("compare", "--tie-aware", "best", "-m", "map", "--test", "t-test", q, r, _second_run(c)),
         "--tie-aware best: compare takes range or expected", "--tie-aware range")
    got = ok(c.cli("compare", "--tie-aware", "range", "-m", "map", "--test", "t-test", q, r, _second_run(c)))
    assert "inside tie ranges" in got.out and c.measure(q, r)["map"] in got.out


def tie_aware_engine(command: str):
    def check(c: Ctx):
        q, r = _files(c)
        if command == "eval":
            said(c.cli("eval", "--tie-aware", "expected", "--engine", "dask", "-m", "map", q, r),
                 "the dask engine does not compute tie-aware values", "--engine local")
            assert ok(c.cli("eval", "--tie-aware", "expected", "--engine", "local", "-m", "map", q, r)).out == \
                _te_out(c, q, r, "-m", "map")
        else:
            said(c.cli("compare", "--tie-aware", "range", "--engine", "dask", "-m", "map", "--test", "t-test", q, r,
                       _second_run(c)), "the dask engine does not compute tie-aware values", "--engine local")
            got = ok(c.cli("compare", "--tie-aware", "range", "--engine", "local", "-m", "map", "--test", "t-test", q, r,
                           _second_run(c)))
            assert c.measure(q, r)["map"] in got.out
    return check


def tie_aware_with(flag: str, extra):
    def check(c: Ctx):
        q, r = _files(c)
        args = extra(c, q)
        said(c.cli("eval", "--tie-aware", "expected", *args, "-m", "map", q, r), f"--tie-aware with {flag}",
             f"leave out {flag}, or --tie-aware")
        assert ok(c.cli("eval", "--tie-aware", "expected", "-m", "map", q, r)).out == _te_out(c, q, r, "-m", "map")
    return check


def detect_ties_of_a_run(c: Ctx):
    q, r = _files(c)
    said(c.cli("detect", "--ties", "--role", "qrels", q), "--ties looks at a run file's scores",
         "give a run file (not stdin), without --role qrels")
    assert ok(c.cli("detect", "--ties", r)).out.splitlines()[1] == "ties\tno ties: every score is unique within its query"


def compare_correction_none(c: Ctx):
    """A plain compare decides by Holm's p and names --correction none for seed 004's rule: on the sample, the dense
    run's nDCG@10 t-test p is 0.0445, Holm's over two measures 0.0890; with the option the raw p decides."""
    sample = ROOT / "data" / "quest_sample"
    argv = ["compare", sample / "test.jsonl", sample / "bm25_predictions.jsonl", sample / "dense_predictions.jsonl",
            "--gold", sample / "test.jsonl", "-m", "ndcg_cut.10", "-m", "recip_rank"]
    first = ok(c.cli(*argv))
    assert "--correction none: the raw p decides (seed 004's A/B)" in first.out
    row = significance_row(first.out, "ndcg_cut_10")
    assert "0.0445" in row and "0.0890" in row and row.endswith("no")
    assert significance_row(ok(c.cli(*argv, "--correction", "none")).out, "ndcg_cut_10").endswith("yes")


def gate_linear_gain(c: Ctx):
    """Results of --gain linear hold ndcg_cut_10, not ndcg_at_10: the gate says so and names --gain exp, whose
    results it then takes."""
    ts, run = ROOT / "data" / "test_sets" / "clinical_v1.yaml", ROOT / "data" / "test_sets" / "baseline_bow.trec"
    linear, fixed = c.out("json"), c.out("json")
    ok(c.cli("testset", "eval", ts, "--run", run, "--gain", "linear", "--out", linear))
    said(c.cli("gate", "--baseline", ROOT / "data" / "test_sets" / "baseline_results.json", "--current", linear),
         "they were evaluated with --gain linear", "--measure ndcg_at_10 --gain exp")
    ok(c.cli("testset", "eval", ts, "--run", run, "--gain", "exp", "--out", fixed))
    ok(c.cli("gate", "--baseline", ROOT / "data" / "test_sets" / "baseline_results.json", "--current", fixed))


def staged_skip_over_the_memory_limit(c: Ctx):
    """evaluate.py skips malformed lines by reading the run whole: over --memory-limit it does not, and says to raise
    the limit; with --memory-limit 0 the line is skipped and the numbers are the clean run's."""
    q = c.file(QRELS, "qrels")
    filler = "".join(f"9 Q0 x{i} {i} 0.5 t\n" for i in range(1, 400))          # larger than 1K x 3 in all
    r = c.file(RUN + "2 Q0 d7 5 zero t\n" + filler, "run")
    said(c.script("evaluate.py", "--run", r, "--qrels", q, "--memory-limit", "1K"), "score 'zero' is not a number",
         "raise --memory-limit (0: read it whole)")
    got = ok(c.script("evaluate.py", "--run", r, "--qrels", q, "--memory-limit", "0", "--cutoffs", "10"))
    assert "Skipping malformed line" in got.err
    assert re.search(r"MAP (\S+)", got.out).group(1) == c.measure(q, c.file(RUN + filler, "run"))["map"]


def html_tie_aware(c: Ctx):
    q, r = _files(c)
    said(c.cli("eval", "--tie-aware", "range", "--html", c.dir / "e.html", "-m", "map", q, r),
         "--html and --plot draw trec_eval's values", "leave them out (compare --tie-aware range --html draws tie ranges)")
    assert not (c.dir / "e.html").exists()
    r2 = c.file(RUN.replace("3.0 t", "2.0 t"), "run")
    ok(c.cli("compare", q, r, r2, "-m", "map", "--tie-aware", "range", "--html", c.dir / "c.html"))
    assert "<html" in (c.dir / "c.html").read_text()[:2000].lower()


def plot_no_curve(c: Ctx):
    q, r = _files(c)
    said(c.cli("eval", "--plot", c.dir / "pr.png", "-m", "map", q, r), "no precision-recall curve",
         "add -m iprec_at_recall")
    ok(c.cli("eval", "--plot", c.dir / "pr.png", "-m", "map", "-m", "iprec_at_recall", q, r))
    assert (c.dir / "pr.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def report_not_results(c: Ctx):
    q, r = _files(c)
    not_results = c.file('{"hello": 1}', "json")
    said(c.cli("report", not_results, "-o", c.dir / "r.html"), "not a results file treckit report draws",
         "give the --out file of treckit compare, testset eval or system eval")
    r2 = c.file(RUN.replace("3.0 t", "2.0 t"), "run")
    ok(c.cli("compare", q, r, r2, "-m", "map", "--out", c.dir / "cmp.json"))
    ok(c.cli("report", c.dir / "cmp.json", "-o", c.dir / "r.html"))
    assert "<html" in (c.dir / "r.html").read_text()[:2000].lower()


def report_incomplete_compare(c: Ctx):
    import json
    q, r = _files(c)
    r2 = c.file(RUN.replace("3.0 t", "2.0 t"), "run")
    ok(c.cli("compare", q, r, r2, "-m", "map", "--out", c.dir / "cmp.json"))
    record = json.loads((c.dir / "cmp.json").read_text())
    del record["per_query"][0]["qid"]                # a row edited by hand
    broken = c.file(json.dumps(record), "json")
    said(c.cli("report", broken, "-o", c.dir / "r.html"), "not a complete compare results file",
         "pass the --out file of `treckit compare` as it was written")
    ok(c.cli("report", c.dir / "cmp.json", "-o", c.dir / "r.html"))


OTHERS = [
    Other("staged-skip-over-the-limit", "stages.py: the run is larger than --memory-limit allows to read whole",
          "evaluate.py", staged_skip_over_the_memory_limit),
    Other("correction-none", "compare/report.py: --correction none: the raw p decides", "compare", compare_correction_none),
    Other("gate-linear-gain", "testsets/gate.py: they were evaluated with --gain linear", "gate", gate_linear_gain),
    Other("missing-error", "ranking/judged.py: pass --missing skip", "eval", missing_error_eval),
    Other("missing-error", "ranking/judged.py: pass --missing skip", "evaluate.py", missing_error_script),
    Other("missing-error", "ranking/judged.py: pass --missing skip", "python", missing_error_python),
    Other("missing-warning", "ranking/judged.py: (--missing zero scores them 0)", "eval", missing_warning_eval),
    Other("missing-warning", "ranking/judged.py: (--missing zero scores them 0)", "evaluate.py", missing_warning_script),
    Other("missing-warning", "ranking/judged.py: (--missing zero scores them 0)", "python", missing_warning_python),
    Other("results-format", "cli/evaluate.py: use --qrels-format / --run-format", "eval", eval_results_format),
    Other("bad-choice", "cli/evaluate.py: e.g. {flag} {allowed[0]}", "eval", eval_bad_choice),
    Other("needs-value", "cli/evaluate.py: e.g. {flag} VALUE", "eval", eval_needs_value),
    Other("unknown-option", "cli/evaluate.py: see `treckit eval --help`", "eval", eval_unknown_option),
    Other("takes-an-integer", "cli/evaluate.py: e.g. {flag} 1", "eval", eval_integer),
    *[Other("unknown-engine", "engines/dask.py: --engine {e}", cmd,
            engine_check(cmd, ("--engine", "spark"), "--engine spark: not one of local, dask",
                         "--engine local or --engine dask", "engine='local' or engine='dask'", ("--engine", "local")))
      for cmd in ("eval", "compare", "testset eval", "python")],
    *[Other("scheduler-without-dask-engine", "engines/dask.py: add --engine dask, or leave out --scheduler", cmd,
            engine_check(cmd, ("--scheduler", "tcp://127.0.0.1:1"), "is for the Dask engine",
                         "add --engine dask, or leave out --scheduler", "add engine='dask', or leave out scheduler", ()))
      for cmd in ("eval", "compare", "testset eval", "python")],
    *[Other("dask-not-installed", "engines/dask.py: or leave out --engine dask (the local engine", cmd,
            engine_check(cmd, ("--engine", "dask"), "--engine dask needs Dask",
                         "or leave out --engine dask", "or leave out engine='dask'", ()), absent="distributed")
      for cmd in ("eval", "compare", "testset eval", "python")],
    *[Other("scheduler-empty", "engines/dask.py: give the scheduler's address (tcp://host:8786), or leave out --scheduler", cmd,
            engine_check(cmd, ("--engine", "dask", "--scheduler", " "), "--scheduler is empty",
                         "or leave out --scheduler to start a local cluster",
                         "or leave out scheduler to start a local cluster", ("--engine", "dask")), needs="distributed")
      for cmd in ("eval", "compare", "testset eval", "python")],
    *[Other("scheduler-unreachable", "engines/dask.py: the scheduler runs, or leave out", cmd,
            engine_check(cmd, ("--engine", "dask", "--scheduler", "tcp://127.0.0.1:1"), "cannot reach the Dask scheduler",
                         "or leave out --scheduler to start a local cluster",
                         "or leave out scheduler to start a local cluster", ("--engine", "dask")), needs="distributed")
      for cmd in ("eval", "compare", "testset eval", "python")],
    *[Other("no-worker", "engines/dask.py: spell(f'{scheduler}), or leave out --scheduler to start a local cluster')", cmd,
            no_worker(cmd), needs="distributed") for cmd in ("eval", "compare", "testset eval", "python")],
    Other("prefs-on-dask", "engines/choice.py: leave out --engine dask", "eval", prefs_on_dask, needs="distributed"),
    Other("function-on-dask", "cli/testsets.py: leave out --engine dask", "testset eval", function_on_dask,
          needs="distributed"),
    Other("same-names", "compare/compare.py: give distinct names with --name", "compare", compare_same_names),
    Other("one-run", "compare/compare.py: treckit compare QRELS BASELINE_RUN OTHER_RUN [...]", "compare",
          compare_needs_two_runs),
    Other("no-judgments", "cli/compare.py: treckit compare QRELS BASELINE_RUN OTHER_RUN, or --test-set", "compare",
          compare_needs_judgments),
    Other("no-queries", "compare/stage.py: pass --queries QUERIES.tsv", "compare", compare_needs_queries),
    Other("compare-k", "compare/compare.py: pass e.g. --k 10", "python", compare_options("k", 0, 10, "pass e.g. k=10")),
    Other("compare-alpha", "compare/compare.py: pass e.g. --alpha 0.05", "python",
          compare_options("alpha", 1.5, 0.05, "pass e.g. alpha=0.05")),
    Other("compare-draws", "compare/compare.py: pass e.g. --{what} 10000", "python",
          compare_options("permutations", 5, 10000, "pass e.g. permutations=10000")),
    Other("compare-seed", "compare/compare.py: pass e.g. --seed 42", "python",
          compare_options("seed", -1, 42, "pass e.g. seed=42")),
    Other("compare-tie-aware", "compare/compare.py: pass e.g. --tie-aware range", "python",
          compare_options("tie_aware", "best", "range", "pass e.g. tie_aware='range'")),
    Other("tie-aware-mode", "engines/tie_aware.py: e.g. --tie-aware expected", "eval", tie_aware_mode),
    Other("tie-aware-compare-mode", "engines/tie_aware.py: --tie-aware range (tests on trec_eval's values) or --tie-aware expected",
          "compare", tie_aware_compare_mode),
    *[Other("tie-aware-engine", "engines/tie_aware.py: --engine local (the in-memory and streaming engines", cmd,
            tie_aware_engine(cmd)) for cmd in ("eval", "compare")],
    Other("tie-aware-zscores", "engines/tie_aware.py: leave out -Z, or --tie-aware", "eval",
          tie_aware_with("-Z", lambda c, q: ("-Z", c.file("1 map 0.5 0.1\n", "zscores")))),
    Other("tie-aware-cross-check", "engines/tie_aware.py: leave out --cross-check, or --tie-aware", "eval",
          tie_aware_with("--cross-check", lambda c, q: ("--cross-check",))),
    Other("tie-aware-prefs", "engines/tie_aware.py: leave out -R, or --tie-aware", "eval",
          tie_aware_with("-R", lambda c, q: ("-R", "qrels_prefs"))),
    Other("detect-ties", "cli/info.py: give a run file (not stdin), without --role qrels", "detect", detect_ties_of_a_run),
    Other("weights-names", "retrieval/fusion.py: --weights names", "fuse", fuse_weights_by_name),
    Other("fuse-infinite", "retrieval/fusion.py: fuse ranks instead (--method rrf)", "fuse", fuse_infinite_score),
    Other("rq-k", "testsets/rq.py: e.g. --k 5", "rq", rq_huge_k),
    Other("export-text", "cli/testsets.py: remove it from the query text, or leave out --queries", "testset export",
          export_tabbed_text),
    Other("weights-numbers", "retrieval/fusion.py: e.g. --weights {", "fuse", fuse_weights_numbers),
    Other("tune-method", "retrieval/fusion.py: use --method rrf or weighted", "fuse", fuse_tune_method),
    Other("stemmer", "retrieval/bm25.py: e.g. --stemmer english, or --stemmer none", "retrieve", retrieve_stemmer,
          needs="Stemmer"),
    Other("holdout-empty", "testsets/lifecycle.py: use more queries or another --holdout", "testset split",
          split_empty_part),
    Other("holdout-empty", "testsets/lifecycle.py: use more queries or another --holdout", "testset eval",
          split_empty_part_eval),
    Other("holdout-range", "testsets/lifecycle.py: e.g. --holdout 0.2", "python", split_holdout_python),
    Other("replace-range", "testsets/lifecycle.py: give --replace a number from 1 to", "testset refresh", refresh_replace),
    Other("max-drop", "testsets/gate.py: e.g. --max-drop 5%", "gate", gate_max_drop),
    Other("not-results", "testsets/results.py: write one with `treckit testset eval", "gate",
          lambda c: gate_not_results(c, '{"runs": []}\n', "not a results file of `treckit testset eval`",
                                     "write one with `treckit testset eval TEST_SET --run RUN --out results.json`")),
    Other("not-json", "cli/testsets.py: pass the --out file of `treckit testset eval`", "gate",
          lambda c: gate_not_results(c, "recall 0.5\n", "not JSON", "pass the --out file of `treckit testset eval`")),
    Other("gate-measure", "testsets/gate.py: evaluate with it (`treckit testset eval", "gate", gate_missing_measure),
    Other("gate-exp-gain-nDCG", "testsets/results.py: evaluate again with its name for exp gain: treckit testset eval",
          "gate", gate_exp_gain_named_nDCG),
    Other("gate-damaged", "testsets/results.py: pass the --out file of `treckit testset eval` as it was written", "gate",
          gate_damaged),
    Other("stop-words", "retrieval/bm25.py: , or keep stop words (--stopwords none)", "retrieve", retrieve_stop_words),
    Other("rq-threshold", "testsets/rq.py: e.g. --threshold 0.6", "rq", rq_threshold),
    Other("gate-definitions", "measures/definitions.py: re-run the baseline with this treckit version (e.g. treckit testset eval",
          "gate", gate_no_definitions),
    *[Other("cross-check-options", "engines/crosscheck.py: leave out {' and '.join(named)} or --cross-check", cmd,
            cross_check_options(cmd)) for cmd in ("eval", "evaluate.py")],
    *[Other("cross-check-not-installed", "engines/crosscheck.py: --cross-check needs ir_measures and pytrec_eval", cmd,
            cross_check_not_installed(cmd)) for cmd in ("eval", "evaluate.py")],
    Other("rq-baseline", "cli/testsets.py: --corpus DOCS.jsonl --baseline bow", "rq", rq_baseline),
    Other("system-judgments", "cli/retrieval.py: --test-set TS.yaml, or --qrels Q --queries Q.tsv", "system eval",
          system_eval_judgments),
    *[Other("test-set-schema", "testsets/load.py: (schema: treckit testset schema)", cmd, schema_check(cmd))
      for cmd in ("testset validate", "testset eval", "rq")],
    Other("prefs-measures", "measures/registry.py: with -R prefs / qrels_prefs use -m", "eval", prefs_measures),
    Other("prefs-needs-R", "measures/registry.py: pass {need", "eval", prefs_need_rel_format),
    *[Other("unknown-measure", "measures/registry.py: `treckit measures` lists every name", cmd, unknown_measure(cmd))
      for cmd in ("eval", "compare", "fuse", "python")],
    Other("reference-command", "measures/registry.py: the closest it computes is {closest}", "eval", reference_command),
    Other("diversity-streamed", "measures/subtopics.py: give --memory-limit 0 (read the run whole)", "eval",
          diversity_streamed),
    Other("diversity-without-max-docs", "measures/subtopics.py: without -M, in a treckit eval of its own", "eval",
          diversity_without_max_docs),
    *[Other("held-past-the-budget", "inputs/held.py: give a larger --memory-limit (or --memory-limit 0: no limit)", cmd,
            held_past_the_budget(cmd)) for cmd in ("run", "eval")],
    Other("one-query-past-the-budget", "engines/stream.py: give a larger --memory-limit (or --memory-limit 0: no limit)",
          "eval", one_query_past_the_budget),
    Other("subtopic-qrels-beside-map", "measures/subtopics.py: in a treckit eval of its own with ad hoc qrels", "eval",
          subtopic_qrels_beside_map),
    Other("cwl-without-max-docs", "engines/memory.py: without -M (cwl-eval reads at most 1000 ranks)", "eval",
          cwl_without_max_docs),
    Other("first-parameters-win", "measures/registry.py: ask for each in a separate treckit eval", "eval",
          first_parameters_win),
    *[Other("raw-ids", "output/trec.py: instead of --raw-ids", cmd, raw_ids(cmd))
      for cmd in ("run", "qrels", "preprocess_run.py", "preprocess_qrels.py", "python")],
    *[Other("break-ties", "ranking/convert.py: use --break-ties to keep the input order", cmd, break_ties(cmd))
      for cmd in ("run", "preprocess_run.py", "python")],
    Other("no-cache", "cli/testsets.py: --no-cache to recompute", "testset eval", no_cache),
    Other("serve-help", "service/app.py: see `treckit serve --help`", "serve", serve_help, needs="uvicorn"),
    Other("depth", "ranking/convert.py: pass a positive --depth", "python", convert_depth),
    Other("id-base", "inputs/options.py: pass --id-base N", "python", id_base),
    Other("html-tie-aware", "cli/evaluate.py: leave them out (compare --tie-aware range --html draws tie ranges)", "eval",
          html_tie_aware, needs="plotly"),
    Other("plot-no-curve", "cli/eval_pages.py: --plot {a.plot}: {NO_CURVE_EVAL}", "eval", plot_no_curve, needs="matplotlib"),
    Other("report-not-results", "report/results.py: give the --out file of treckit compare, testset eval or system eval",
          "report", report_not_results, needs="plotly"),
    Other("report-not-json", "cli/report.py: pass the --out file of treckit compare, testset eval or system eval",
          "report", report_not_results, needs="plotly"),
    Other("report-incomplete-compare", "report/sources.py: pass the --out file of `treckit compare` as it was written",
          "report", report_incomplete_compare, needs="plotly"),
]


@pytest.mark.parametrize("case", [pytest.param(o, id=f"{o.id}[{o.command}]") for o in OTHERS])
def test_other_suggestion(case: Other, tmp_path, capsys, monkeypatch, trec_eval, request):
    if case.needs and importlib.util.find_spec(case.needs) is None:
        pytest.skip(f"needs {case.needs}")
    if case.absent and importlib.util.find_spec(case.absent) is not None:
        pytest.skip(f"only where {case.absent} is not installed")
    c = Ctx(tmp_path, capsys, monkeypatch, trec_eval)
    if case.needs == "distributed":
        _light_dask(monkeypatch)
    if "shared" in case.check.__code__.co_varnames[:case.check.__code__.co_argcount]:
        case.check(c, request.getfixturevalue("shared"))
    else:
        case.check(c)


# ------------------------------------------------------------------ the table is complete
# Literals that name an option or a command and suggest nothing to run (what they say, and why not tested here).
NOT_SUGGESTIONS = [
    ("compare/report.py: significant = raw p < {o.alpha:g} (--correction none)",
     "the significance rule in force, naming the option that set it"),
    ("report/page.py: raw p (--correction none)", "the significance rule in force on a report page, naming the option "
     "that set it"),
    ("cli/evaluate.py: --html and --plot draw trec_eval's values of qrels judgments", "the error's reason (its fix is tested)"),
    ("report/html.py: <p>Query texts were left out of this page (--no-query-text)", "a page's own text"),
    ("report/results.py: no precision-recall curve: test-set results hold no iprec_at_recall", "a page's own text"),
    ("report/sources.py: Means over ", "a page's own text"),
    ("report/sources.py: no precision-recall curve: the comparison measured no iprec_at_recall", "a page's own text"),
    ("cli/main.py: Check that every expected topic is judged (and, with --no-extras",
     "a command's help as `treckit --help` lists it (test_startup checks it is the command's own)"),
    ("cli/main.py: same flags, byte-identical output (treckit eval -h)",
     "a command's help as `treckit --help` lists it (test_startup checks it is the command's own)"),
    ("measures/subtopics.py: is computed in memory only, and this run is larger", "the error's reason (its fix is tested)"),
    ("cli/info.py: --ties looks at a run file's scores", "the error's reason (its fix is tested)"),
    ("engines/tie_aware.py: --tie-aware {mode}: not one of", "the error's reason (its fix is tested)"),
    ("engines/tie_aware.py: --tie-aware {mode}: compare takes", "the error's reason (its fix is tested)"),
    ("engines/tie_aware.py: --tie-aware: the {engine} engine does not", "the error's reason (its fix is tested)"),
    ("engines/tie_aware.py: --tie-aware with -Z", "the error's reason (its fix is tested)"),
    ("engines/tie_aware.py: --tie-aware with --cross-check", "the error's reason (its fix is tested)"),
    ("engines/tie_aware.py: --tie-aware with -R {rel_format}", "the error's reason (its fix is tested)"),
    ("cli/service.py: --log-level ", "the error's reason (its fix lists the levels)"),
    ("retrieval/callables.py: correct the function; its exception's message is not shown, as it may hold secrets (--debug",
     "its fix is run in tests/testsets/test_hostile_second_half.py::test_a_functions_exception_text_is_shown_only_when_debugging"),
    ("service/metrics.py: --pushgateway ", "the error's reason (its fix gives an address)"),
    ("retrieval/system_config.py: is not a setting of a system: a stage's depth is the command's -k",
     "the error's reason, saying where a depth is set; its fix removes the key"),
    ("console/spelling.py: ", "the mechanism that words the suggestions (tested through every reading case above)"),
    ("cli/evaluate.py: treckit eval [OPTIONS] QRELS RUN", "usage line of the help"),
    ("cli/evaluate.py: usage: treckit eval [flags] QRELS RUN", "usage in an error whose fix names no option"),
    ("cli/evaluate.py: Reading runs: the options of `treckit run`", "help text"),
    ("cli/evaluate.py: (trec_eval version 10.0-rc3", "the version line"),
    ("cli/evaluate.py: trec_eval names with optional parameters", "help text"),
    ("cli/evaluate.py: judgments: TREC qrels, BEIR TSV/JSONL", "help text"),
    ("cli/evaluate.py: qrels (default), or prefs", "help text"),
    ("cli/evaluate.py: trec_results only (use --run-format", "help text"),
    ("cli/evaluate.py: --engine dask: the scheduler to use", "help text"),
    ("cli/evaluate.py: treckit eval -R", "the name of the command's variant, for its spelling"),
    ("inputs/formats/trec.py: 'say which: ' + pass_options('run', '--layout docid-spaces', '--layout extra-columns')$",
     "unreachable: a 7+-field line whose rank and score fields parse always has a reading"),
    ("cli/compare.py: compare needs the judgments: QRELS, or --test-set", "the error's reason (its fix is tested)"),
    ("cli/retrieval.py: give either --test-set or --qrels with --queries", "reason; the fix is 'pick one'"),
    ("cli/testsets.py: give either --run RUN or --function", "reason; the fix is 'pick one'"),
    ("cli/testsets.py: give either --run RUN or --corpus DOCS.jsonl", "reason; the fix is 'pick one'"),
    ("cli/testsets.py: --engine dask evaluates a run (--run)", "the error's reason (its fix is tested)"),
    ("cli/testsets.py: --baseline {baseline!r} needs --corpus", "the error's reason (its fix is tested)"),
    ("testsets/gate.py: --max-drop {text!r}", "the error's reason: the option as given (its fix is tested)"),
    ("testsets/results.py: not a results file of `treckit testset eval`", "the error's reason (its fix is tested)"),
    ("testsets/lifecycle.py: --holdout {holdout} must be", "the error's reason (its fix is tested)"),
    ("testsets/lifecycle.py: --replace {replace} must be", "the error's reason (its fix is tested)"),
    ("retrieval/fusion.py: --weights {text!r} is not", "the error's reason (its fix is tested)"),
    ("retrieval/fusion.py: --tune applies to", "the error's reason (its fix is tested)"),
    ("engines/dask.py: --engine {engine}: not one of", "the error's reason (its fix is tested)"),
    ("engines/dask.py: --scheduler (a Dask client) is for", "the error's reason (its fix is tested)"),
    ("engines/dask.py: --scheduler is empty", "the error's reason (its fix is tested)"),
    ("engines/dask.py: --engine dask needs Dask", "the error's reason (its fix is tested)"),
    ("engines/budget.py: --memory-limit {text}: not a size", "the option as given; the fix is a size"),
    ("engines/stream.py: --skip-malformed reads the run whole", "why a run is read whole (said, nothing to do)"),
    ("engines/stream.py: read whole into memory, beyond --memory-limit", "a note of what was done"),
    ("engines/stream.py: more than the memory budget of {budget:,} bytes (--memory-limit)",
     "the error's reason names the budget in force (its fix is tested)"),
    ("inputs/held.py: more than {budget_of} (--memory-limit)", "the error's reason names the budget in force (its fix "
                                                                "is tested)"),
    ("inputs/long_lines.py: within this --memory-limit", "the error's reason names the bound in force (its fix, the "
                                                         "right file, is tested)"),
    ("inputs/formats/jsonl.py: (then the --gold query text or the line number", "the fix is to edit the file"),
    ("evaluation/rq_eval.py: --emit-traces was not given", "the JSON's record of why no trace was written"),
    ("ranking/convert.py: 'they keep their input order (--break-ties)'", "names the tie rule in force, suggests nothing"),
    ("ranking/convert.py: 'they are ordered by doc id ascending (--ties docid-asc)'", "names the tie rule in force"),
    ("measures/definitions.py: (the A/B evaluator rq_eval.py; --ties docid-asc)", "a ranking's definition in a report"),
    ("measures/definitions.py: ties in the order the run lists them (--ties break)", "a ranking's definition in a report"),
    ("engines/crosscheck.py: '--missing zero'", "an option the cross-check's fix names (tested with it)"),
    ("engines/crosscheck.py: --cross-check recomputes numbers with ir_measures, which has no", "the error's reason (its fix is tested)"),
]

_SUGGESTING = re.compile(r"(?<![\w'\"/=.-])--[a-z{]|`treckit |\btreckit (?:qrels|run|eval|compare|testset|rq|gate|fuse|"
                         r"retrieve|system|measures|detect|serve|cache)\b")
_LONE_OPTION = re.compile(r"--?[\w-]+")
_NAMED_OPTION = re.compile(r"\b(?:pass|e\.g\.) \{(?:flag|name|need)[^}]*\}(?: |$)")


def _literal(node) -> str | None:
    """The text of a string literal (an f-string's expressions as ``{expr}``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}" for v in node.values)
    return None


def _wording(node) -> bool:
    """Whether ``node`` words (part of) a message: a string, text joined with +, or the fix of a reading option."""
    if _literal(node) is not None:
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _wording(node.left) or _wording(node.right)
    return isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("pass_options", "spell")


def suggestion_texts() -> list[tuple[str, str]]:
    """(file under code/, source text) of every piece of wording in the code that names an option or a command
    (a literal, or text joined with + and :func:`treckit.console.spelling.pass_options`): not docstrings, and not the
    options' own declarations and help (typer.Option, add_argument, ReadFlag, help=)."""
    found = []
    for path in sorted(CODE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip: set[int] = set()
        for n in ast.walk(tree):
            body = getattr(n, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and _literal(body[0].value) is not None:
                skip.add(id(body[0].value))                                   # a docstring
            if isinstance(n, ast.Call):
                name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
                parts = [n] if name in ("Option", "Argument", "add_argument", "ReadFlag") else \
                    [kw.value for kw in n.keywords if kw.arg in ("help", "metavar")]
                skip.update(id(x) for part in parts for x in ast.walk(part))
        fixes = {id(kw.value) for n in ast.walk(tree) if isinstance(n, ast.Call) for kw in n.keywords if kw.arg == "fix"}
        inner: set[int] = set()
        for n in ast.walk(tree):                  # breadth first: the whole wording before its parts
            if id(n) in skip or id(n) in inner or not _wording(n):
                continue
            inner.update(id(x) for x in ast.walk(n))
            pieces = [t for x in ast.walk(n) if id(x) not in skip and (t := _literal(x)) is not None]
            option_fix = any(isinstance(x, ast.Call) and getattr(x.func, "id", None) == "pass_options" for x in ast.walk(n))
            named = id(n) in fixes and any(_NAMED_OPTION.search(t) for t in pieces)      # an option held in a variable
            if option_fix or named or any(_SUGGESTING.search(t) and not _LONE_OPTION.fullmatch(t) for t in pieces):
                found.append((str(path.relative_to(CODE)).removeprefix("treckit/"), ast.unparse(n)))
    return found


def _covers(source: str, file: str, text: str) -> bool:
    """Whether ``source`` ("file: phrase", the phrase ending the text when it ends with $) is ``text`` of ``file``."""
    where, _, phrase = source.partition(": ")
    return file == where and (text.endswith(phrase[:-1]) if phrase.endswith("$") else phrase in text)


def test_every_suggestion_is_in_the_table():
    """Every fix or warning in the code that names an option or a command is in READINGS or OTHERS (tested above)
    or in NOT_SUGGESTIONS (with the reason); and every entry still names one."""
    texts = suggestion_texts()
    sources = [r.source for r in READINGS] + [o.source for o in OTHERS] + [s for s, _ in NOT_SUGGESTIONS]
    missing = [f"{f}: {text}" for f, text in texts if not any(_covers(s, f, text) for s in sources)]
    assert not missing, "add these suggestions to the table (READINGS or OTHERS), or to NOT_SUGGESTIONS:\n" + \
        "\n".join(missing)
    stale = [s for s in sources if not any(_covers(s, f, text) for f, text in texts)]
    assert not stale, f"entries that name no wording in the code any more: {stale}"
    # the scan sees the kinds of wording it must: a plain fix, an option in a variable, a reading option's fix
    assert ("engines/dask.py", "'add --engine dask, or leave out --scheduler'") in texts
    assert any(f == "inputs/options.py" and "pass {flag} with one of" in t for f, t in texts)
    assert ("ranking/judged.py", "pass_options('run', '--duplicates keep-first|keep-max|keep-last')") in texts


def test_the_spelling_module_knows_the_reading_options():
    """treckit.console.spelling's lists of reading options are the commands' (treckit.inputs.options.FLAGS, treckit qrels's)."""
    from treckit.console import spelling
    from treckit.inputs.options import FLAGS
    assert spelling.RUN_OPTIONS == {f.flag for f in FLAGS} | {"--break-ties"} == RUN_OPTIONS
    assert spelling.QRELS_OPTIONS == QRELS_OPTIONS
    for command, roles in APPLIES.items():
        name = {"python": None, "evaluate.py": "evaluate.py", "preprocess_run.py": "preprocess_run.py",
                "preprocess_qrels.py": "preprocess_qrels.py"}.get(command, f"treckit {command}")
        declared = spelling.PYTHON if name is None else spelling.command_named(name)
        assert {r: set(o) for r, o in declared.reads.items()} == {r: set(o) for r, o in roles.items()}, command


@pytest.mark.parametrize("text, keywords", [
    ("pass --order desc to rank them as written", "pass order='desc' to rank them as written"),
    ("pass --gold GOLD", "pass gold=GOLD"),
    ("pass --gold /data/gold.jsonl to join", "pass gold='/data/gold.jsonl' to join"),
    ("(or pass --skip-malformed to count)", "(or pass skip_malformed=True to count)"),
    ("pass --duplicates keep-first|keep-max", "pass duplicates='keep-first' | 'keep-max'"),
    ("add --engine dask, or leave out --scheduler", "add engine='dask', or leave out scheduler"),
    ("pass e.g. --k 10", "pass e.g. k=10"),
    ("instead of --raw-ids", "instead of escape_ids=False"),
    ("use --break-ties to keep", "use ties='break' to keep"),
    ("pass --run-format FORMAT", "pass format=FORMAT"),
    ("check --id-field", "check id_field"),
    ("pass --layout docid-spaces.", "pass layout='docid-spaces'."),
    ("with `treckit run --duplicates keep-first` first", "with `treckit run --duplicates keep-first` first"),
    ("doc '--x' and path/--y", "doc '--x' and path/--y"),
])
def test_options_as_python_keywords(text, keywords):
    from treckit.console import spelling
    assert spelling.PYTHON.spell(text) == keywords


@pytest.mark.parametrize("argv, name", [
    (["eval", "-m", "map", "q", "r"], "treckit eval"), (["qrels", "verify", "q"], "treckit qrels-verify"),
    (["testset", "eval", "ts"], "treckit testset eval"), (["qrels", "q", "-o", "x"], "treckit qrels"),
    (["--version"], "treckit")])
def test_the_command_that_speaks(argv, name):
    from treckit.console import spelling
    assert spelling.cli_command(argv).name == name
    assert spelling.command_named("preprocess_qrels.py").spell("pass --qrels-format X --id-base 2 (`treckit qrels "
                                                               "--qrels-format`)") == \
        "pass --format X --id_base 2 (`treckit qrels --qrels-format`)"


def test_staged_scripts_speak_as_themselves(tmp_path):
    """Run as scripts (the tests above call their main() in-process), the staged scripts name their own options."""
    qrels_json = tmp_path / "q.jsonl"
    qrels_json.write_text('{"qid": "1", "docid": "d1", "score": 1}\n')
    bad_qrels, run = tmp_path / "q.trec", tmp_path / "r.trec"
    bad_qrels.write_text(QRELS + "2 0 d7 x\n")
    run.write_text(RUN)
    broken = tmp_path / "r.jsonl"
    broken.write_text(BROKEN_JSONL)
    for argv, fix in (
            (["preprocess_qrels.py", "--input", qrels_json, "--output", tmp_path / "o"], "pass --format beir-jsonl|quest"),
            # evaluate.py reads TREC qrels with its --skip-malformed (Python: skip_malformed=True; a command that
            # does not: a conversion)
            (["evaluate.py", "--run", run, "--qrels", bad_qrels, "--strict"],
             "(or, to count and skip such lines, pass --skip-malformed)"),
            (["preprocess_run.py", "--input", broken, "--run_name", "t", "--output", tmp_path / "o", "--raw_ids"],
             "instead of --raw_ids")):
        got = subprocess.run([sys.executable, str(SCRIPTS / argv[0]), *map(str, argv[1:])], capture_output=True,
                             text=True)
        assert got.returncode == 2 and fix in got.stderr and "Traceback" not in got.stderr, got.stderr

