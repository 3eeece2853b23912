"""Property tests: every reader/writer pair round-trips adversarial ids; escaping is reversible."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from treckit.api import read_qrels, read_run, write_qrels, write_run
from treckit.convert import convert_run
from treckit.ids import escape_id, unescape_id
from treckit.model import Qrels, Run

adversarial = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=12)
docids = st.one_of(adversarial, st.sampled_from(["a b", "a\tb", "100%", "%20", "#x", "Oʻahu", "Rio 2", "a%41b"]))
qids = st.from_regex(r"[A-Za-z0-9_\-]{1,6}", fullmatch=True)


@given(docids)
def test_escape_roundtrip_and_is_one_field(d):
    e = escape_id(d)
    assert unescape_id(e) == d
    assert len(e.split()) == 1 and e.strip() == e


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.tuples(qids, docids), st.integers(-2, 4), min_size=1, max_size=20))
def test_trec_qrels_roundtrip(tmp_path_factory, judgments):
    p = tmp_path_factory.mktemp("q") / "qrels"
    q = Qrels.from_columns([k[0] for k in judgments], [k[1] for k in judgments], list(judgments.values()))
    write_qrels(q, p)
    assert read_qrels(p, "trec").to_dict() == q.to_dict()
    write_qrels(q, p)
    first = p.read_bytes()
    write_qrels(read_qrels(p, "trec"), p)
    assert p.read_bytes() == first          # deterministic bytes


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.tuples(qids, docids), st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=20))
def test_trec_run_roundtrip(tmp_path_factory, rows):
    p = tmp_path_factory.mktemp("r") / "run"
    r = Run.from_columns([k[0] for k in rows], [k[1] for k in rows], list(rows.values()))
    out, _ = convert_run(r, order="desc")
    write_run(out, p)
    back = read_run(p, "trec")
    assert back.to_dict() == {q: {d: s + 0.0 for d, s in docs.items()} for q, docs in r.to_dict().items()}


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(qids, st.lists(docids, min_size=1, max_size=6, unique=True), min_size=1, max_size=5))
def test_jsonl_run_roundtrip(tmp_path_factory, data):
    p = tmp_path_factory.mktemp("j") / "run.jsonl"
    p.write_text("".join(json.dumps({"qid": q, "docs": d, "scores": [float(len(d) - i) for i in range(len(d))]}) + "\n"
                         for q, d in data.items()), encoding="utf-8")
    r = read_run(p)
    assert r.to_dict() == {q: {x: float(len(d) - i) for i, x in enumerate(d)} for q, d in data.items()}


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.tuples(qids, docids.filter(lambda s: "\t" not in s and "\n" not in s and "\r" not in s
                                                     and s.strip() == s and "\x0b" not in s and "\x0c" not in s
                                                     and "\x1c" not in s and "\x1d" not in s and "\x1e" not in s
                                                     and "\x1f" not in s and "\x85" not in s and "\u2028" not in s
                                                     and "\u2029" not in s)),
                       st.integers(0, 3), min_size=1, max_size=15))
def test_beir_tsv_reader(tmp_path_factory, judgments):
    p = tmp_path_factory.mktemp("b") / "qrels.tsv"
    p.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for (q, d), g in judgments.items()),
                 encoding="utf-8")
    got = read_qrels(p)
    assert got.to_dict() == Qrels.from_columns([k[0] for k in judgments], [k[1] for k in judgments],
                                               list(judgments.values())).to_dict()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(max_size=30), min_size=1, max_size=40), st.integers(0, 39))
def test_hash64_is_a_function_of_the_string_alone(values, cut):
    import pyarrow as pa
    from treckit.strings import hash64
    whole = hash64(pa.array(values)).tolist()
    cut = min(cut, len(values))
    parts = hash64(pa.chunked_array([pa.array(values[:cut], pa.string()), pa.array(values[cut:], pa.string())])).tolist()
    assert whole == parts
    for i, x in enumerate(values):
        for j, y in enumerate(values):
            assert (whole[i] == whole[j]) == (x == y)
