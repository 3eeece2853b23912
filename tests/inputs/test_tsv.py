"""Tab-separated runs (formats/tsv.py): headers in any order, rank columns, bad lines named, and the same run as
the equivalent TREC file."""
from __future__ import annotations

import pytest

from treckit.api import read_run
from treckit.console.errors import InputError

EXPECTED = {"1": {"d1": 2.5, "d2": 1.0}, "2": {"d9": -0.5}}
TREC = "1 Q0 d1 1 2.5 t\n1 Q0 d2 2 1.0 t\n2 Q0 d9 1 -0.5 t\n"


def _write(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    return tmp_path / name


@pytest.mark.parametrize("text", [
    "1\td1\t2.5\n1\td2\t1.0\n2\td9\t-0.5\n",                              # no header: qid docid score
    "qid\tdocid\tscore\n1\td1\t2.5\n1\td2\t1.0\n# a comment\n2\td9\t-0.5\n",
    "score\tquery-id\tcorpus-id\n2.5\t1\td1\n1.0\t1\td2\n-0.5\t2\td9\n",   # any column order
    "query\tdoc\tsim\trank\n1\td1\t 2.5 \t1\n1\td2\t1e0\t2\n\n2\td9\t-5E-1\t1\n",
])
def test_tsv_run_equals_the_trec_run(tmp_path, text):
    # order="desc": the scores as written (the default `auto` would rank query 2's all-negative scores as negated)
    run = read_run(_write(tmp_path, "run.tsv", text), "tsv", order="desc")
    assert run.to_dict() == EXPECTED == read_run(_write(tmp_path, "run", TREC)).to_dict()


def test_detected_as_tsv(tmp_path):
    assert read_run(_write(tmp_path, "r", "1\td1\t2.5\n1\td2\t1.0\n2\td9\t-0.5\n"), order="desc").to_dict() == EXPECTED


def test_rank_column_orders_the_run(tmp_path):
    """MS MARCO's ``qid pid rank``: ranked by rank, lower first.  The reader gives positive scores
    (highest rank + 1 - rank), so no order rule can flip them, and the note says so."""
    from treckit.inputs.formats.tsv import read_tsv_run
    raw = read_tsv_run(_write(tmp_path, "r", "1\tdB\t2\n1\tdA\t1\n2\tdC\t1\n"), third="rank")
    assert raw.to_dict() == {"1": {"dB": 1.0, "dA": 2.0}, "2": {"dC": 2.0}}
    assert raw.notes.get("scores_from_rank") is True and raw.table.column("rank").to_pylist() == [2, 1, 1]
    run = read_run(tmp_path / "r", "tsv", tsv_third="rank")        # converted: dA first
    assert run.table.column("docid").to_pylist() == ["dA", "dB", "dC"] and run.table.column("rank").to_pylist() == [1, 2, 1]
    named = read_run(_write(tmp_path, "h", "qid\tpid\trank\n1\tdB\t2\n1\tdA\t1\n"), "tsv")
    assert named.to_dict() == {"1": {"dA": 2.0, "dB": 1.0}}


@pytest.mark.parametrize("text,message", [
    ("1\td1\n", "expected at least 3 tab-separated fields, found 2"),
    ("1\td1\tabc\n", "abc"),
    ("\td1\t1.0\n", "empty query id or doc id"),
    ("qid\tpid\trank\n1\tdB\tfirst\n", "rank 'first' is not an integer"),
    ("qid\tdocid\tfoo\n1\td\t1\n", "names no score or rank column"),
    ("# only a comment\n\n", "the file is empty"),
])
def test_bad_lines_are_named(tmp_path, text, message):
    with pytest.raises(InputError, match=message) as info:
        read_run(_write(tmp_path, "bad.tsv", text), "tsv")
    assert "bad.tsv" in str(info.value)


def test_skip_malformed_counts_and_keeps_the_rest(tmp_path):
    run = read_run(_write(tmp_path, "r", "1\td1\t2.5\n1\td2\n2\td9\t-0.5\n"), "tsv", skip_malformed=True, order="desc")
    assert run.to_dict() == {"1": {"d1": 2.5}, "2": {"d9": -0.5}}
    with pytest.raises(InputError, match="no run lines found"):
        read_run(_write(tmp_path, "s", "1\td2\n"), "tsv", skip_malformed=True)
