"""Hostile inputs: each failure kind is one test, and every reading runs through both the line
parser (small files) and the vectorized Arrow path (large files, here by lowering the size
thresholds), which must give the same rows, the same notices or the same error.

The reading rules tested here are the "Reading rules" of docs/formats.md.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from helpers import SHARED, run_cli
from treckit import thresholds
from treckit.console.errors import InputError
from treckit.inputs.formats import common, detect, jsonl, trec
from treckit.inputs.formats.beir import read_beir_jsonl, read_beir_tsv
from treckit.inputs.formats.jsonl import read_jsonl_run, read_quest
from treckit.inputs.formats.trec import read_trec_qrels, read_trec_run
from treckit.ids import WHITESPACE

TREC_EVAL = SHARED.parent / "tools" / "trec_eval"

# clean lines around a hostile one, so that the Arrow path would take the file if the hostile line
# were not there (test_fast_paths_take_clean_files proves it does)
RUN_PAD = "".join(f"7 Q0 pad{i} {i + 1} {10 - i} tag\n" for i in range(5))
QRELS_PAD = "".join(f"7 0 pad{i} {i % 2}\n" for i in range(5))
JSONL_PAD = "".join(json.dumps({"id": f"p{i}", "docs": ["a", "b"], "scores": [2.0, 1.0]}) + "\n" for i in range(3))


def _thresholds(monkeypatch, large: bool) -> None:
    """Send every file to the Arrow path (``large``) or none (small), wherever the size thresholds
    of the readers live (helper modules may move them into ``treckit.thresholds``)."""
    import importlib

    modules = [trec, jsonl]
    try:
        modules.append(importlib.import_module("treckit.thresholds"))
    except ImportError:
        pass
    for module in modules:
        for name in dir(module):
            if name.upper() == name and name.endswith("MIN_BYTES"):
                monkeypatch.setattr(module, name, 0 if large else 1 << 62)


def _outcome(read, path, capsys, **kw):
    """What a reader made of a file: its rows (dictionary columns decoded), notes, tag and notices,
    or the error (message and line)."""
    capsys.readouterr()
    try:
        got = read(path, **kw)
    except InputError as exc:
        return ("error", exc.reason, exc.line, exc.fix)
    err = capsys.readouterr().err.replace(str(path), "<path>")
    t = got.table
    notes = getattr(got, "notes", {})
    tag = got.tag if hasattr(got, "tag") else None
    # the Arrow paths may leave a run's tag column null (one tag for the whole file, in the notes)
    rows = [tuple(t.column(c)[i].as_py() if c != "tag" else t.column(c)[i].as_py() or tag for c in t.column_names)
            for i in range(t.num_rows)]
    return ("ok", rows, {k: v for k, v in notes.items() if k != "tag"}, tag, err)


def both(read, path: Path, monkeypatch, capsys, **kw):
    """The outcome of ``read`` on ``path`` through the line parser and through the Arrow path:
    asserted equal, returned."""
    with monkeypatch.context() as m:
        _thresholds(m, large=False)
        small = _outcome(read, path, capsys, **kw)
    with monkeypatch.context() as m:
        _thresholds(m, large=True)
        large = _outcome(read, path, capsys, **kw)
    assert small == large
    return small


def _write(tmp_path, text: str | bytes, name="f") -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return p


def _trec_eval(*args) -> subprocess.CompletedProcess:
    if not TREC_EVAL.exists():
        pytest.skip(f"trec_eval not found at {TREC_EVAL}")
    return subprocess.run([str(TREC_EVAL), *map(str, args)], capture_output=True, text=True)


# ------------------------------------------------------------------ both paths are real
def test_fast_paths_take_clean_files(tmp_path, monkeypatch):
    """On clean input the lowered thresholds really send files down the Arrow paths."""
    taken = []
    for module, name in ((trec, "_arrow_read"), (jsonl, "read_jsonl_run_fast")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _real=real, _n=name, **k: taken.append((_n, _real(*a, **k) is not None)) or taken[-1][1] and _real(*a, **k))
    _thresholds(monkeypatch, large=True)
    read_trec_run(_write(tmp_path, RUN_PAD))
    read_trec_qrels(_write(tmp_path, QRELS_PAD, "q"))
    read_jsonl_run(_write(tmp_path, JSONL_PAD, "j"))
    assert taken == [("_arrow_read", True), ("_arrow_read", True), ("read_jsonl_run_fast", True)]


# ------------------------------------------------------------------ misreads
def test_run_qid_with_a_space_is_an_error(tmp_path, monkeypatch, capsys):
    """`q 1 Q0 d1 1 2 t` was read as qid q, doc 'Q0 d1': the second field is no iteration mark."""
    got = both(read_trec_run, _write(tmp_path, RUN_PAD + "q 1 Q0 d1 1 2 t\n"), monkeypatch, capsys)
    assert got[0] == "error" and got[2] == 6 and "'1' is not an iteration" in got[1]
    # the same line tab-separated: the query id field holds the space
    got = both(read_trec_run, _write(tmp_path, RUN_PAD + "q 1\tQ0\td1\t1\t2\tt\n"), monkeypatch, capsys)
    assert got[0] == "error" and got[2] == 6


def test_run_given_as_qrels_is_refused(tmp_path, monkeypatch, capsys):
    """A run with a numeric tag became garbage qrels (doc 'd1 1 2.5', grade 7)."""
    run = _write(tmp_path, "1 Q0 d1 1 2.5 7\n1 Q0 d2 2 1.5 7\n", "run")
    code, out, err = run_cli(["qrels", run, "-o", "-"], capsys)
    assert code == 2 and out == "" and "look like a TREC run" in err
    got = both(read_trec_qrels, run, monkeypatch, capsys)               # --format trec skips detection
    assert got[0] == "error" and got[2] == 1 and "looks like a TREC run" in got[1]
    int_scores = _write(tmp_path, QRELS_PAD + "1 Q0 d1 1 10 7\n", "run2")
    got = both(read_trec_qrels, int_scores, monkeypatch, capsys)
    assert got[0] == "error" and got[2] == 6 and "looks like a TREC run" in got[1]


def test_tab_separated_qrels_with_space_in_qid_is_an_error(tmp_path, monkeypatch, capsys):
    """`q 1<TAB>0<TAB>d1<TAB>1` was read as qid q, doc '0<TAB>d1'."""
    got = both(read_trec_qrels, _write(tmp_path, QRELS_PAD + "q 1\t0\td1\t1\n"), monkeypatch, capsys)
    assert got[0] == "error" and got[2] == 6 and "not an iteration" in got[1]
    # tabs as separators with a space inside the doc id: read, and counted
    got = both(read_trec_qrels, _write(tmp_path, QRELS_PAD + "1\t0\tAmerican Psycho\t1\n"), monkeypatch, capsys)
    assert got[0] == "ok" and got[1][-1] == ("1", "0", "American Psycho", 1)
    assert "read 1 doc id(s) containing whitespace (first on line 6)" in got[4]


@pytest.mark.parametrize("score", ["true", "false", '"2.5"', '"1_000"', '"inf"', "null", "[1]",
                                   "NaN", "Infinity", "-Infinity", "1e999", "-" + "9" * 400])
def test_jsonl_score_must_be_a_finite_json_number(tmp_path, monkeypatch, capsys, score):
    line = '{"id": "q", "docs": ["a", "b"], "scores": [1.5, %s]}\n' % score
    got = both(read_jsonl_run, _write(tmp_path, JSONL_PAD + line), monkeypatch, capsys)
    assert got[0] == "error" and got[2] == 4, got
    # an integer is a JSON number
    got = both(read_jsonl_run, _write(tmp_path, JSONL_PAD + line.replace(score, "-3")), monkeypatch, capsys)
    assert got[0] == "ok" and got[1][-1][:3] == ("q", "b", -3.0)


@pytest.mark.parametrize("value,ok", [('"7"', "7"), ("7", "7"), ("7.0", None), ("true", None), ("null", None),
                                      ('""', None), ("[7]", None)])
def test_jsonl_ids_are_strings_or_integers(tmp_path, monkeypatch, capsys, value, ok):
    got = both(read_jsonl_run, _write(tmp_path, JSONL_PAD + '{"id": %s, "docs": ["a"], "scores": [1]}\n' % value),
               monkeypatch, capsys)
    assert (got[0], got[1][-1][0] if got[0] == "ok" else None) == (("ok", ok) if ok else ("error", None))


def test_jsonl_lines_without_id_after_lines_with_ids(tmp_path, monkeypatch, capsys):
    got = both(read_jsonl_run, _write(tmp_path, JSONL_PAD + '{"docs": ["a"], "scores": [1]}\n'), monkeypatch, capsys)
    assert got[0] == "error" and got[2] == 4 and "some lines have an id" in got[1]
    # no line has an id: numbered by line, in the notes (RunReading says it once, with how to join by text)
    got = both(read_jsonl_run, _write(tmp_path, '{"docs": ["a"], "scores": [1]}\n{"docs": ["b"]}\n'), monkeypatch, capsys)
    assert got[0] == "ok" and [r[0] for r in got[1]] == ["1", "2"] and got[2]["numbered_by_line"] == 2
    assert "no id" not in got[4] and "numbered" not in got[4]


@pytest.mark.parametrize("line", ['{"id": "q", "docs": ["a"], "scores": [1], "scores": [2]}',
                                  '{"id": "q", "id": "r", "docs": ["a"], "scores": [1]}',
                                  '{"id": "q", "hits": [{"docid": "a", "score": 1, "score": 2}]}'])
def test_jsonl_repeated_keys_are_an_error(tmp_path, monkeypatch, capsys, line):
    got = both(read_jsonl_run, _write(tmp_path, JSONL_PAD + line + "\n"), monkeypatch, capsys)
    assert got[0] == "error" and got[2] == 4 and "appears twice in one object" in got[1]
    # in an object treckit does not read, a repeated key is not its business (at any size)
    meta = '{"id": "q", "docs": ["a"], "scores": [1], "meta": {"k": 1, "k": 2}}\n'
    assert both(read_jsonl_run, _write(tmp_path, JSONL_PAD + meta), monkeypatch, capsys)[0] == "ok"
    with pytest.raises(InputError, match="appears twice"):
        read_quest(_write(tmp_path, '{"query": "x", "docs": ["a"], "docs": ["b"]}\n', "gold"))


def test_jsonl_keys_are_chosen_per_line_at_any_size(tmp_path, monkeypatch, capsys):
    """The id and docs fields are looked for on each line in one order (id, qid, ...; docs, doc_ids, ...)."""
    text = ('{"qid": "a", "docs": ["x"], "scores": [1]}\n{"id": "b", "qid": "c", "docs": ["y"], "scores": [1]}\n'
            '{"qid": "d", "doc_ids": ["z"], "docs": ["w"], "scores": [1]}\n')
    got = both(read_jsonl_run, _write(tmp_path, text), monkeypatch, capsys)
    assert [r[:2] for r in got[1]] == [("a", "x"), ("b", "y"), ("d", "w")]


def test_jsonl_query_without_documents_is_kept_and_reported(tmp_path, monkeypatch, capsys):
    text = JSONL_PAD + '{"id": "empty1", "docs": [], "scores": []}\n{"id": "q", "docs": ["a"], "scores": [1]}\n'
    got = both(read_jsonl_run, _write(tmp_path, text), monkeypatch, capsys)
    assert got[0] == "ok" and got[2]["empty_queries"] == ["empty1"] and len(got[1]) == 7
    assert "1 query has no documents (first: empty1)" in got[4]
    gold = _write(tmp_path, '{"query": "a", "docs": []}\n{"query": "b", "docs": ["x"]}\n', "gold")
    gt = read_quest(gold)
    assert gt.empty_queries == ["1"] and [q for q, _ in gt.queries] == ["1", "2"] and len(gt.qrels) == 1
    assert "1 query lists no relevant documents (first: 1)" in capsys.readouterr().err


def test_lone_surrogate_in_json_is_an_error(tmp_path, monkeypatch, capsys):
    got = both(read_jsonl_run, _write(tmp_path, JSONL_PAD + '{"id": "q", "docs": ["\\ud800"], "scores": [1]}\n'),
               monkeypatch, capsys)
    assert got[0] == "error" and "surrogate" in got[1]
    ok = both(read_jsonl_run, _write(tmp_path, JSONL_PAD + '{"id": "q", "docs": ["\\ud83d\\ude00"], "scores": [1]}\n'),
              monkeypatch, capsys)
    assert ok[0] == "ok" and ok[1][-1][1] == "\U0001F600"


# ------------------------------------------------------------------ ids with spaces
def test_qrels_line_of_five_fields_is_never_a_silent_guess(tmp_path, monkeypatch, capsys):
    p = _write(tmp_path, QRELS_PAD + "1 0 d1 1 2\n")
    te = _trec_eval(p, _write(tmp_path, "1 Q0 d1 1 1.0 t\n", "run"))
    assert te.returncode != 0 and "Malformed line" in te.stderr          # trec_eval refuses it too
    got = both(read_trec_qrels, p, monkeypatch, capsys)
    # called from Python, the fix names the keyword (a command names its option: test_suggested_fixes.py)
    assert got[0] == "error" and got[2] == 6 and "ambiguous" in got[1] and "layout='docid-spaces'" in got[3]
    got = both(read_trec_qrels, p, monkeypatch, capsys, layout="docid-spaces")
    assert got[1][-1] == ("1", "0", "d1 1", 2) and "read 1 doc id(s) containing whitespace" in got[4]
    got = both(read_trec_qrels, p, monkeypatch, capsys, layout="extra-columns")
    assert got[1][-1] == ("1", "0", "d1", 1) and "ignored the columns after field 4 on 1 line(s)" in got[4]
    # one reading only (the 4th field is no grade) and an iteration mark: read, and counted
    got = both(read_trec_qrels, _write(tmp_path, QRELS_PAD + "8 0 American Psycho (film) 1\n", "g"), monkeypatch, capsys)
    assert got[1][-1] == ("8", "0", "American Psycho (film)", 1) and "read 1 doc id(s)" in got[4]
    code, out, err = run_cli(["qrels", p, "-o", "-"], capsys)
    assert code == 2 and "ambiguous" in err
    code, out, err = run_cli(["qrels", p, "-o", "-", "--layout", "docid-spaces"], capsys)
    assert code == 0 and out.splitlines()[0] == "1 0 d1%201 2" and "containing whitespace" in err
    code, out, err = run_cli(["qrels", p, "-o", "-", "--layout", "bogus"], capsys)
    assert code == 2 and "'bogus' is not one of 'auto', 'docid-spaces', 'extra-columns'" in err


def test_run_doc_ids_with_spaces_are_counted(tmp_path, monkeypatch, capsys):
    p = _write(tmp_path, RUN_PAD + "7 Q0 American Psycho (film) 6 -2.0 tag\n")
    got = both(read_trec_run, p, monkeypatch, capsys)
    assert got[1][-1][:3] == ("7", "American Psycho (film)", -2.0) and "read 1 doc id(s) containing whitespace" in got[4]
    # trec3 (qid docid score) has no iteration field to anchor a reading: ambiguous without --layout
    p3 = _write(tmp_path, "1 Rio 2 3.5\n", "run3")
    got = both(lambda path, **k: read_trec_run(path, columns=3, **k), p3, monkeypatch, capsys)
    assert got[0] == "error" and "layout='docid-spaces'" in got[3]
    got = both(lambda path, **k: read_trec_run(path, columns=3, **k), p3, monkeypatch, capsys, layout="docid-spaces")
    assert got[1][0][:3] == ("1", "Rio 2", 3.5)


def test_extra_columns_after_the_tag_are_counted(tmp_path, monkeypatch, capsys):
    """trec_eval ignores what follows the run tag (its own results.trunc has 'STANDARD more junk at')."""
    p = _write(tmp_path, RUN_PAD + "7\tQ0\tx\t6\t1.5\ttag more junk\n")
    got = both(read_trec_run, p, monkeypatch, capsys)
    assert got[1][-1] == ("7", "x", 1.5, 6, "tag") and "ignored the columns after field 6 on 1 line(s)" in got[4]


# ------------------------------------------------------------------ duplicates
@pytest.mark.parametrize("fmt,text", [
    ("trec", "1 0 d1 1\n1 0 d2 0\n1 0 d1 2\n1 0 d1 0\n"),
    ("beir-tsv", "query-id\tcorpus-id\tscore\n1\td1\t1\n1\td2\t0\n1\td1\t2\n1\td1\t0\n"),
    ("beir-jsonl", "".join(json.dumps({"query-id": "1", "corpus-id": d, "score": g}) + "\n"
                           for d, g in (("d1", 1), ("d2", 0), ("d1", 2), ("d1", 0)))),
])
def test_qrels_duplicates_policy_in_every_format(tmp_path, capsys, fmt, text):
    p = _write(tmp_path, text)
    code, out, err = run_cli(["qrels", p, "-o", "-", "--format", fmt], capsys)
    assert code == 2 and "judges doc 'd1' more than once (2 repeated judgment(s) in all)" in err
    for policy, grade in (("keep-first", 1), ("keep-max", 2), ("keep-last", 0)):
        code, out, err = run_cli(["qrels", p, "-o", "-", "--format", fmt, "--duplicates", policy], capsys)
        assert code == 0 and out == f"1 0 d1 {grade}\n1 0 d2 0\n" and "dropped 2 repeated judgment(s)" in err
    code, out, err = run_cli(["qrels", p, "-o", "-", "--format", fmt, "--duplicates", "bogus"], capsys)
    assert code == 2 and "'bogus' is not one of 'error', 'keep-first', 'keep-max', 'keep-last'" in err


def test_quest_repeats_are_counted(tmp_path, capsys):
    p = _write(tmp_path, '{"id": "1", "query": "x", "docs": ["a", "b", "a", "a"]}\n')
    code, out, err = run_cli(["qrels", p, "-o", "-"], capsys)
    assert code == 2 and "listed twice" in err
    code, out, err = run_cli(["qrels", p, "-o", "-", "--duplicates", "keep-max"], capsys)
    assert code == 0 and out == "1 0 a 1\n1 0 b 1\n" and "dropped 2 repeated judgment(s)" in err


# ------------------------------------------------------------------ size never changes meaning (item 5)
def test_detection_reads_whole_first_lines(tmp_path, monkeypatch):
    docs = [f"Some Wikipedia Title Number {i}" for i in range(3000)]             # ~100 KiB on one line
    quest = _write(tmp_path, json.dumps({"query": "q", "docs": docs}) + "\n", "gold")
    assert quest.stat().st_size > 1 << 16
    assert detect.detect_qrels(quest).format == "quest"
    long_id = "x" * 100_000
    run = _write(tmp_path, f"1 Q0 {long_id} 1 2.5 t\n1 Q0 b 2 1.5 t\n", "run")
    assert detect.detect_run(run).format == "trec"
    assert read_trec_run(run).table.column("docid")[0].as_py() == long_id
    monkeypatch.setattr(thresholds, "DETECT_MAX_BYTES", 50_000)
    with pytest.raises(InputError, match="first line is longer than 50,000 bytes") as exc:
        detect.detect_run(run)
    assert "format=FORMAT" in exc.value.fix


@pytest.mark.parametrize("ch", sorted(set(WHITESPACE) | {"\x00", "\ufeff", "\u200b"}), ids=lambda c: f"U+{ord(c):04X}")
def test_every_whitespace_character_reads_alike_at_any_size(tmp_path, monkeypatch, capsys, ch):
    """Lines end at '\\n' only, fields split at ASCII whitespace only: U+2028, U+0085, \\x1c, NBSP...
    are part of a field (as trec_eval reads them), in the doc id and in the tag, small or large."""
    for place in ("doc", "tag", "qid"):
        doc, tag, qid = (f"d{ch}x" if place == "doc" else "d"), (f"t{ch}x" if place == "tag" else "tag"), \
            (f"7{ch}" if place == "qid" else "7")
        got = both(read_trec_run, _write(tmp_path, RUN_PAD + f"{qid} Q0 {doc} 6 1.5 {tag}\n"), monkeypatch, capsys)
        if ch in common.FIELD_SEPARATORS:
            continue                        # a separator: whatever the rules make of it, both paths agree
        assert got[0] == "ok" and got[1][-1] == (qid, doc, 1.5, 6, tag), got
    got = both(read_trec_qrels, _write(tmp_path, QRELS_PAD + f"7 0 d{ch}x 1\n"), monkeypatch, capsys)
    if ch not in common.FIELD_SEPARATORS:
        assert got[1][-1] == ("7", "0", f"d{ch}x", 1)
    got = both(read_jsonl_run, _write(tmp_path, JSONL_PAD + json.dumps({"id": "q", "docs": [f"d{ch}x"], "scores": [1]},
                                                                       ensure_ascii=False) + "\n"), monkeypatch, capsys)
    assert got[0] == "ok" and got[1][-1][1] == f"d{ch}x"


def test_nbsp_in_run_tag_is_what_trec_eval_reads(tmp_path, monkeypatch, capsys):
    p = _write(tmp_path, RUN_PAD.replace(" tag\n", " t\u00a0x\n"))
    got = both(read_trec_run, p, monkeypatch, capsys)
    assert got[3] == "t\u00a0x"
    te = _trec_eval("-m", "runid", _write(tmp_path, "7 0 pad0 1\n", "q"), p)
    assert te.stdout.split("\t")[-1].strip() == "t\u00a0x"


def _lean(path, **kw):
    """A run read for evaluation: the Arrow path keeps no ranks and one tag (null columns)."""
    import dataclasses

    from treckit.fast.arrow import repeated_column

    run = read_trec_run(path, lean=True, **kw)
    t = run.table
    n = t.num_rows
    t = t.set_column(t.column_names.index("rank"), "rank", repeated_column(n, None, t.column("rank").type))
    return dataclasses.replace(run, table=t.set_column(t.column_names.index("tag"), "tag", repeated_column(n, run.tag)))


@pytest.mark.parametrize("text,line", [
    ("7 Q0 d 6 1.5 tag\r\n", None),                       # CRLF: the '\r' ends the line, not the tag
    ("7  d 6 1.5 tag\n", 6),                               # an empty field: 5 fields
    ("7 Q0 d  1.5 tag\n", 6),
    ("7 Q0 d x 1.5 tag\n", 6),                             # a rank that is no integer
    ("7 Q0 d 6 1.5 \n", 6),
    (" 7 Q0 d 6 1.5 tag\n", None),                         # leading whitespace
    ("7 Q0 d 6 nan tag\n", 6),
    ("7 Q0 d 6 1_000 tag\n", 6),
    ("7 Q0 d 6 0x10 tag\n", 6),
    ("7 Q0 d 6 +1.5 tag\n", None),
    ("7 Q0 d 6 .5 tag\n", None),
    ("7 Q0 d 6 5. tag\n", None),
    ("7 Q0 d 6 -inf tag\n", None),
    ("7 Q0 d 6 1e400 tag\n", None),
    ("7 Q0 d 6 1.5 tag\x0b\n", None),
    ("  # a comment line\n", None),
    ("7 Q0 d\x0cx 6 1.5 tag\n", None),
])
def test_odd_lines_read_alike_at_any_size(tmp_path, monkeypatch, capsys, text, line):
    got = both(read_trec_run, _write(tmp_path, RUN_PAD + text), monkeypatch, capsys)
    assert (got[0], got[2] if got[0] == "error" else None) == (("error", line) if line else ("ok", None)), got
    got = both(_lean, _write(tmp_path, RUN_PAD + text), monkeypatch, capsys)
    assert got[0] == ("error" if line else "ok")


@pytest.mark.parametrize("text", ["7 0 d 1\r\n", "7 0  1\n", "7 0 d 1 \n", "7 0 d x\n", "7\t0\td\t1\n", "7 0 d\x0b1\n",
                                  "7 0 d 99999999999\n"])
def test_odd_qrels_lines_read_alike_at_any_size(tmp_path, monkeypatch, capsys, text):
    both(read_trec_qrels, _write(tmp_path, QRELS_PAD + text), monkeypatch, capsys)


def test_beir_and_tsv_split_lines_on_newline_only(tmp_path):
    p = _write(tmp_path, "query-id\tcorpus-id\tscore\n1\td\u2028x\t1\n1\td\x85y\t2\r\n")
    assert read_beir_tsv(p).table.column("docid").to_pylist() == ["d\u2028x", "d\x85y"]
    j = _write(tmp_path, json.dumps({"query-id": "1", "corpus-id": "a\u2028b", "score": 1}, ensure_ascii=False) + "\n", "j")
    assert read_beir_jsonl(j).table.column("docid").to_pylist() == ["a\u2028b"]
    with pytest.raises(InputError, match="string or an integer"):
        read_beir_jsonl(_write(tmp_path, '{"query-id": 1.0, "corpus-id": "a", "score": 1}\n', "k"))


# ------------------------------------------------------------------ random lines: size never changes meaning
_PIECES = ["7", "Q0", "0", "d", "1", "2.5", "-3", "nan", "inf", "#", "%20", "", "", "", " ", "\t", "\r", "\x0b", "\x0c",
           "\u00a0", "\u2028", "\x85", "\x1c", "\ufeff", "é", "tag"]


@pytest.mark.parametrize("reader,width", [("run", 6), ("qrels", 4), ("trec3", 3)])
def test_random_lines_read_alike_at_any_size(tmp_path, monkeypatch, capsys, reader, width):
    """Hypothesis builds lines of about the right number of fields, each field a number or a word
    perhaps with a tricky character in it (separators of every kind, Unicode spaces, comments,
    escapes), between clean lines; the line parser and the Arrow path must agree on each file."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    read = {"run": read_trec_run, "qrels": read_trec_qrels,
            "trec3": lambda p, **k: read_trec_run(p, columns=3, **k)}[reader]
    pad = {"run": RUN_PAD, "qrels": QRELS_PAD, "trec3": "".join(f"7 pad{i} {i}.5\n" for i in range(5))}[reader]
    plain = {"run": ["7", "Q0", "d", "1", "2.5", "tag"], "qrels": ["7", "0", "d", "1"], "trec3": ["7", "d", "2.5"]}[reader]
    counter = iter(range(10**6))
    field = st.tuples(st.integers(0, width - 1), st.sampled_from(_PIECES), st.sampled_from(["replace", "append", "insert"]))

    @settings(max_examples=200, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(field, max_size=3), st.sampled_from([" ", " ", " ", "\t", "  ", " \t"]),
           st.sampled_from(["", "", " ", "\r"]))
    def check(changes, sep, end):
        fields = list(plain)
        for i, piece, how in changes:
            old = fields[i]
            fields[i] = piece if how == "replace" else old + piece if how == "append" else old[:1] + piece + old[1:]
        line = sep.join(fields) + end
        both(read, _write(tmp_path, pad + line + "\n" + pad, f"h{next(counter)}"), monkeypatch, capsys)

    check()


def test_random_jsonl_lines_read_alike_at_any_size(tmp_path, monkeypatch, capsys):
    """Hypothesis builds JSONL run lines from values of every JSON type (and the non-JSON NaN and
    Infinity, repeated keys, empty lists); the line reader and the Arrow reader must agree."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    counter = iter(range(10**6))
    value = st.sampled_from(['"a"', '"b c"', '""', "1", "-2.5", "1e999", "true", "null", "NaN", "Infinity",
                             '"2.5"', "[]", "{}", '"\\u2028"', '"\\ud800"'])
    key = st.sampled_from(["id", "qid", "docs", "scores", "x"])

    @settings(max_examples=200, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(st.tuples(key, st.sampled_from(["value", "list"]), st.lists(value, max_size=3)), max_size=3))
    def check(changes):
        obj = {"id": '"q"', "docs": '["a", "b"]', "scores": "[2, 1]"}
        text = None
        for k, kind, values in changes:
            new = values[0] if kind == "value" and values else "[" + ", ".join(values) + "]"
            if k in obj:
                obj[k] = new
            else:
                text = f', "{k}": {new}'                   # an extra (perhaps repeated) key
        line = "{" + ", ".join(f'"{k}": {v}' for k, v in obj.items()) + (text or "") + "}"
        both(read_jsonl_run, _write(tmp_path, JSONL_PAD + line + "\n" + JSONL_PAD.replace('"p', '"r'),
                                    f"j{next(counter)}"), monkeypatch, capsys)

    check()


@pytest.mark.parametrize("read,text", [(read_trec_run, RUN_PAD), (read_trec_qrels, QRELS_PAD), (read_jsonl_run, JSONL_PAD)])
def test_byte_order_mark_reads_alike_at_any_size(tmp_path, monkeypatch, capsys, read, text):
    got = both(read, _write(tmp_path, b"\xef\xbb\xbf" + text.encode()), monkeypatch, capsys)
    assert got[0] == "ok" and got[1][0][0] in ("7", "p0")
