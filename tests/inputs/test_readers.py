"""Readers on real reference data, and clear errors on bad input."""
from __future__ import annotations

import gzip
import json

import pytest

from treckit.api import read_qrels, read_run, write_qrels
from treckit.console.errors import InputError
from treckit.inputs.formats.jsonl import read_quest
from treckit.inputs.formats.trec import read_trec_qrels, read_trec_run


def test_quest_test_qrels_parse_and_raw_roundtrip(shared, tmp_path):
    src = shared / "quest" / "test_id_added_qrels"
    q = read_trec_qrels(src, decode_ids=False, layout="docid-spaces")   # raw titles: "8 0 District 9 1" is ambiguous
    assert len(q) == 17962
    assert len(set(q.table.column("qid").to_pylist())) == 1727
    assert "American Psycho (film)" in q.table.column("docid").to_pylist()
    out = tmp_path / "raw"
    write_qrels(q, out, escape_ids=False, sort=False)
    assert out.read_bytes() == src.read_bytes()                      # in input order: byte for byte
    write_qrels(q, out, escape_ids=False)                            # sorted (the default): the same lines
    assert sorted(out.read_text(encoding="utf-8").splitlines()) == sorted(src.read_text(encoding="utf-8").splitlines())


def test_quest_qrels_escaped_roundtrip(shared, tmp_path):
    q = read_trec_qrels(shared / "quest" / "test_id_added_qrels", layout="docid-spaces")
    out = tmp_path / "esc"
    write_qrels(q, out)
    text = out.read_text(encoding="utf-8")
    assert all(len(line.split()) == 4 for line in text.splitlines())
    back = read_trec_qrels(out)
    assert back.to_dict() == q.to_dict()


@pytest.mark.parametrize("name", ["train_sample_a.jsonl", "train_sample_b.jsonl", "train_sample_c.jsonl"])
def test_quest_train_samples_convert(shared, name):
    path = shared / "quest" / name
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    gt = read_quest(path)
    assert len(gt.qrels) == sum(len(set(x["docs"])) for x in lines)
    assert not gt.ids_were_given and gt.queries[0][0] == "1"


def test_beir_tsv_equals_trec(shared):
    tsv = read_qrels(shared / "beir" / "scifact.qrels.test.tsv")
    trec = read_qrels(shared / "beir" / "scifact.qrels.test.trec")
    assert len(tsv) == 339
    assert tsv.to_dict() == trec.to_dict()


def test_results_trunc_reads_as_trec_eval(shared):
    r = read_trec_run(shared / "trec_eval" / "results.trunc")
    t = r.table
    assert len(r) == 584
    assert set(t.column("tag").to_pylist()) == {"STANDARD"}
    assert "302" not in set(t.column("qid").to_pylist())
    row = t.slice(0, 1).to_pylist()[0]
    assert row == {"qid": "301", "docid": "FBIS3-27619", "score": 2.138276, "rank": 99, "tag": "STANDARD"}


def test_results_test_tabs_and_padding(shared):
    r = read_trec_run(shared / "trec_eval" / "results.test")
    assert len(r) == 1500 and r.tag == "STANDARD"
    assert r.table.column("score")[0].as_py() == 2.129133


def test_comment_files_keep_hash_in_ids(shared):
    r = read_trec_run(shared / "trec_eval" / "results.comment.test")
    q = read_trec_qrels(shared / "trec_eval" / "qrels.comment.test")
    assert len(r) == 30100
    assert r.table.column("docid")[0].as_py() == "msmarco_v2.1_doc_50_2286987788#13_3087841662"
    assert any("#" in d for d in q.table.column("docid").to_pylist())
    c = read_trec_qrels(shared / "trec_eval" / "qrels.test.with-comments").to_dict()
    plain = read_trec_qrels(shared / "trec_eval" / "qrels.test").to_dict()
    assert c["301"].pop("CR#93E-1860") == plain["301"].pop("CR93E-1860") == 0   # the one id the files differ in
    assert c == plain


def test_run_doc_ids_with_spaces(tmp_path):
    p = tmp_path / "run"
    p.write_text("1 Q0 Rio 2 1 -3.5 bm25\n1 Q0 American Psycho (film) 2 -2.0 bm25\n1 Q0 Zürich 3 -1 bm25\n")
    r = read_trec_run(p)
    assert r.table.column("docid").to_pylist() == ["Rio 2", "American Psycho (film)", "Zürich"]
    assert r.table.column("score").to_pylist() == [-3.5, -2.0, -1.0]


def test_ambiguous_line_is_reported(tmp_path):
    p = tmp_path / "run"
    p.write_text("1 Q0 Rio 2 1 -3.5 x\n1 Q0 Rio 3 2 -3.0 y\n")
    with pytest.raises(InputError, match="ambiguous"):
        read_trec_run(p)
    r = read_trec_run(p, layout="docid-spaces")
    assert r.table.column("docid").to_pylist() == ["Rio 2", "Rio 3"]


@pytest.mark.parametrize("content,message", [
    ("1 Q0 d1 1 nan run\n", "NaN"),
    ("1 Q0 d1 1 abc run\n", "not a number"),
    ("1 Q0 d1\n", "needs 6 fields"),
    ("", "empty"),
    ("# only a comment\n", "no run lines"),
])
def test_run_errors_name_file_line_text_and_fix(tmp_path, content, message):
    p = tmp_path / "bad.run"
    p.write_text(content)
    with pytest.raises(InputError) as exc:
        read_run(p, "trec")
    text = str(exc.value)
    assert message in text and str(p) in text and "fix:" in text
    if content.strip() and not content.startswith("#"):
        assert ":1:" in text and "line:" in text


def test_missing_file_and_wrong_encoding(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_run(tmp_path / "nope")
    p = tmp_path / "latin1"
    p.write_bytes("1 Q0 Z\xfcrich 1 2.0 r\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8") as exc:
        read_run(p, "trec")
    assert ":1:" in str(exc.value)


def test_skip_malformed_counts_each_kind(tmp_path, capsys):
    p = tmp_path / "run"
    p.write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 nan r\n1 Q0\n1 Q0 c 3 1.0 r\n1 Q0 d 4 zz r\n")
    r = read_trec_run(p, skip_malformed=True)
    assert r.table.column("docid").to_pylist() == ["a", "c"]
    err = capsys.readouterr().err
    assert "skipped 3 malformed" in err and "NaN" in err


def test_gzip_and_stdin(tmp_path, monkeypatch, fresh_streams):
    import io
    import sys
    p = tmp_path / "q.gz"
    p.write_bytes(gzip.compress(b"1 0 d1 1\n1 0 d2 0\n"))
    assert read_qrels(p).to_dict() == {"1": {"d1": 1, "d2": 0}}
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"7 0 x 2\n")))
    assert read_qrels("-", "trec").to_dict() == {"7": {"x": 2}}


def test_jsonl_run_shapes(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text('{"qid": "q1", "docs": ["a", "b"], "scores": [0.5, 0.9]}\n{"id": 2, "docs": ["c", "d"]}\n')
    r = read_run(p)
    assert r.to_dict() == {"q1": {"a": 0.5, "b": 0.9}, "2": {"c": 2.0, "d": 1.0}}
    h = tmp_path / "h.jsonl"
    h.write_text('{"query_id": "q", "ctxs": [{"id": "x", "title": "X", "score": 3}, {"id": "y", "score": 4}]}\n'
                 '{"query_id": "r", "hits": [{"docid": "z", "rank": 2}, {"docid": "w", "rank": 1}]}\n')
    r = read_run(h)
    assert r.to_dict()["q"] == {"x": 3.0, "y": 4.0}
    assert r.table.column("docid").to_pylist()[2:] == ["w", "z"]


def test_detection_failure_says_what_was_seen(tmp_path):
    p = tmp_path / "x"
    p.write_text("hello world\n")
    with pytest.raises(InputError, match="cannot tell") as exc:
        read_run(p)
    assert "hello world" in str(exc.value)


@pytest.mark.parametrize("layout", ["docid-spaces", "extra-columns"])
def test_every_layout_takes_the_vectorized_path_for_clean_runs(tmp_path, monkeypatch, layout):
    """A layout decides only about lines with more fields than the format; a file whose every line has exactly
    6 takes the vectorized reader under any layout (the staged scripts read docid-spaces by default), and
    reads what the line parser reads."""
    from treckit import thresholds
    from treckit.inputs.formats import trec
    path = tmp_path / "run"
    path.write_text("".join(f"{q} Q0 d{q}_{d} {d + 1} {9 - d}.25 t\n" for q in range(1, 4) for d in range(8)))
    slow = read_trec_run(path, layout=layout)
    calls = []
    real = trec.read_run_fast
    monkeypatch.setattr(trec, "read_run_fast", lambda *a, **k: calls.append(a) or real(*a, **k))
    monkeypatch.setattr(thresholds, "TREC_RUN_FAST_MIN_BYTES", 0)
    fast = read_trec_run(path, layout=layout)
    assert calls and fast.table.to_pylist() == slow.table.to_pylist()
    spaced = tmp_path / "spaced"                        # a line of 7 fields: the line parser, by the layout's rule
    spaced.write_text(path.read_text() + "4 Q0 d 4 1 2.5 t\n")
    got = read_trec_run(spaced, layout=layout).table.slice(24).to_pylist()[0]
    assert (got["docid"], got["tag"]) == (("d 4", "t") if layout == "docid-spaces" else ("d", "2.5"))
