"""The typed qrels builder and its verification (treckit.qrels)."""
from __future__ import annotations

import dataclasses
import hashlib
import warnings

import pytest

from treckit.qrels import (QrelRow, Qrels, QrelsSpec, QrelsVerification, QrelsVerificationError, build_qrels,
                           doc_id_md5, verify_qrels_topics, write_qrel_file)

RECORDS = [
    {"q": "t1", "doc": "Rio 2", "label": 2},
    {"q": "t1", "doc": "Up", "label": 0},
    {"q": "t2", "doc": "Rio 2", "label": 1},
]
SPEC = QrelsSpec(topic_id=lambda r: r["q"], doc_id=lambda r: r["doc"], grade=lambda r: r["label"])


def test_rows_are_frozen_and_validated():
    row = QrelRow("t1", "d1", 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.grade = 1
    for bad in [("t1", "d1", -1), ("t1", "d1", 1.5), ("t1", "d1", True), ("", "d1", 1), ("t1", 7, 1)]:
        with pytest.raises(ValueError):
            QrelRow(*bad)


def test_qrels_take_rows_as_seed_003s_dataclass_does():
    """``Qrels(rows=[...])``, the seed's dataclass form: the same judgments as the positional form, verified and
    written as the builder's are."""
    rows = [QrelRow("t1", "Rio 2", 2), QrelRow("t1", "Up", 0), QrelRow("t2", "Rio 2", 1)]
    q = Qrels(rows=rows)
    assert q.rows == tuple(rows) == Qrels(rows).rows == build_qrels(records=RECORDS, spec=SPEC).rows
    assert q.to_dict() == {"t1": {"Rio 2": 2, "Up": 0}, "t2": {"Rio 2": 1}}
    q.verify(expected_topic_ids=["t1", "t2"], warn=False)
    QrelsVerification(q, expected_topic_ids=["t1", "t2"], warn=False).complete_topics().no_extra_topics().no_duplicates()
    with pytest.raises(TypeError, match="rows must be QrelRow objects"):
        Qrels(rows=[("t1", "d1", 1)])
    with pytest.raises(TypeError, match="once"):
        Qrels(q.table, rows=rows)
    with pytest.raises(TypeError, match="once"):
        Qrels()


def test_build_keeps_first_appearance_order():
    q = build_qrels(records=RECORDS, spec=SPEC)
    assert [(r.topic_id, r.doc_id, r.grade) for r in q.rows] == [("t1", "Rio 2", 2), ("t1", "Up", 0), ("t2", "Rio 2", 1)]
    assert q.topic_ids == ["t1", "t2"]


def test_duplicates_fail_fast_naming_the_pair_and_records():
    recs = RECORDS + [{"q": "t1", "doc": "Up", "label": 3}]
    with pytest.raises(QrelsVerificationError, match=r"record 3: \(topic 't1', doc 'Up'\) was already judged by record 1"):
        build_qrels(records=recs, spec=SPEC)


@pytest.mark.parametrize("policy, grade", [("keep_max", 3), ("keep_last", 1)])
def test_duplicate_policies(policy, grade):
    recs = RECORDS + [{"q": "t1", "doc": "Up", "label": 3}, {"q": "t1", "doc": "Up", "label": 1}]
    spec = dataclasses.replace(SPEC, on_duplicate=policy)
    q = build_qrels(records=recs, spec=spec)
    assert len(q) == 3
    assert {(r.topic_id, r.doc_id): r.grade for r in q.rows}[("t1", "Up")] == grade


def test_bad_policy_and_bad_record_are_named():
    with pytest.raises(ValueError, match="on_duplicate"):
        QrelsSpec(topic_id=str, doc_id=str, grade=int, on_duplicate="keep-max")
    with pytest.raises(ValueError, match="record 1: QrelRow.grade"):
        build_qrels(records=[RECORDS[0], {"q": "t3", "doc": "x", "label": -2}], spec=SPEC)


def test_doc_id_md5_is_the_hex_md5_of_utf8():
    assert doc_id_md5("") == "d41d8cd98f00b204e9800998ecf8427e"
    assert doc_id_md5("Zoë") == hashlib.md5("Zoë".encode("utf-8")).hexdigest()


def test_verification_names_every_offender():
    q = Qrels([QrelRow("t1", "a", 1), QrelRow("t1", "a", 2), QrelRow("t9", "b", 1), QrelRow("t8", "c", 0)])
    with pytest.raises(QrelsVerificationError) as e:
        QrelsVerification(q, expected_topic_ids=["t1", "t2", "t3"]).complete_topics()
    assert e.value.problems == ["t2", "t3"]
    with pytest.raises(QrelsVerificationError) as e:
        QrelsVerification(q, expected_topic_ids=["t1"]).no_extra_topics()
    assert e.value.problems == ["t9", "t8"]
    with pytest.raises(QrelsVerificationError) as e:
        QrelsVerification(q, expected_topic_ids=["t1"]).no_duplicates()
    assert e.value.problems == ["t1/a"]
    with pytest.raises(QrelsVerificationError) as e:
        q.verify(expected_topic_ids=["t1", "t2"])
    assert e.value.problems == ["t2", "t9", "t8", "t1/a"]
    assert isinstance(e.value, ValueError)
    assert "1 expected topics have no judgments: t2" in str(e.value)


def test_verification_chains_and_warns():
    q = Qrels([QrelRow("t1", "a", 1), QrelRow("t2", "b", 1)])
    v = QrelsVerification(q, expected_topic_ids=["t1", "t2"])
    assert v.complete_topics().no_extra_topics().no_duplicates().all() is v
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        QrelsVerification(q, expected_topic_ids=["t1", "t3"], warn=True).all()
    assert len(caught) == 1 and "t3" in str(caught[0].message) and "t2" in str(caught[0].message)


def test_verify_qrels_topics_extras_optional():
    q = Qrels([QrelRow("t1", "a", 1), QrelRow("t2", "b", 1)])
    verify_qrels_topics(expected_topic_ids=["t1"], qrels=q, require_no_extras=False)
    with pytest.raises(QrelsVerificationError, match="t2"):
        verify_qrels_topics(expected_topic_ids=["t1"], qrels=q)
    with pytest.raises(QrelsVerificationError, match="t5"):
        verify_qrels_topics(expected_topic_ids=["t1", "t2", "t5"], qrels=q, require_no_extras=False)


def test_write_sorted_escaped_and_read_back(tmp_path):
    q = Qrels([QrelRow("t2", "b", 1), QrelRow("t1", "Rio 2", 2), QrelRow("t1", "A b", 0)])
    out = tmp_path / "q.qrels"
    write_qrel_file(qrel_out_file=out, qrels=q)
    assert out.read_text() == "t1 0 A%20b 0\nt1 0 Rio%202 2\nt2 0 b 1\n"
    from treckit import read_qrels
    back = Qrels.from_columnar(read_qrels(out))
    assert sorted(back.rows, key=lambda r: (r.topic_id, r.doc_id)) == sorted(q.rows, key=lambda r: (r.topic_id, r.doc_id))


def test_columnar_round_trip_and_evaluate_accepts_it():
    q = build_qrels(records=RECORDS, spec=SPEC)
    col = q.to_columnar()
    assert col.to_dict() == {"t1": {"Rio 2": 2, "Up": 0}, "t2": {"Rio 2": 1}}
    assert Qrels.from_columnar(col) == q
    from treckit import evaluate
    run = {"t1": {"Up": 2.0, "Rio 2": 1.0}, "t2": {"Rio 2": 5.0}}
    a = evaluate(q, run, ["recip_rank"])
    b = evaluate(col, run, ["recip_rank"])
    # t1: Up (not relevant) first, Rio 2 second -> 1/2; t2: 1/1; mean 0.75
    assert a["recip_rank"].tolist() == b["recip_rank"].tolist() == [0.5, 1.0, 0.75]


def test_negative_grades_do_not_convert_silently():
    from treckit.model import Qrels as Columnar
    from treckit.console.errors import InputError
    with pytest.raises(InputError, match="negative grade"):
        Qrels.from_columnar(Columnar.from_columns(["1"], ["d"], [-1]))


def test_qrels_made_in_code_have_one_builder():
    """treckit.qrels is the one builder (its duplicate policies, its verification): no second one with rules of
    its own is exported."""
    import importlib

    import treckit
    assert "QrelsBuilder" not in treckit.__all__ and not hasattr(treckit, "QrelsBuilder")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("treckit.builder")
