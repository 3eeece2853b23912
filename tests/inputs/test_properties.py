"""Property tests: every reader/writer pair round-trips adversarial ids; escaping is reversible."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treckit.api import read_qrels, read_run, write_qrels, write_run
from treckit.ranking.convert import convert_run
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
    from treckit.fast.strings import hash64
    whole = hash64(pa.array(values)).tolist()
    cut = min(cut, len(values))
    parts = hash64(pa.chunked_array([pa.array(values[:cut], pa.string()), pa.array(values[cut:], pa.string())])).tolist()
    assert whole == parts
    for i, x in enumerate(values):
        for j, y in enumerate(values):
            assert (whole[i] == whole[j]) == (x == y)


def _chunked(values: list, cuts: list[int], dictionary: bool = False):
    """``values`` as a chunked Arrow column split at ``cuts`` (optionally dictionary-encoded)."""
    import pyarrow as pa
    bounds = sorted({0, len(values), *(min(c, len(values)) for c in cuts)})
    chunks = [pa.array(values[a:b], pa.string()) for a, b in zip(bounds[:-1], bounds[1:])]
    if dictionary:
        chunks = [c.dictionary_encode() for c in chunks]
    return pa.chunked_array(chunks, chunks[0].type if chunks else pa.string())


small_ids = st.sampled_from(["1", "2", "10", "q b", "Zürich", ""])


@settings(max_examples=80, deadline=None)
@given(st.lists(small_ids, min_size=1, max_size=60), st.lists(st.integers(0, 60), max_size=4), st.booleans(),
       st.booleans())
def test_id_runs_and_codes_describe_the_column(values, cuts, dictionary, grouped):
    """Whatever the chunking and encoding, codes number the ids by first appearance and map back to
    every row; runs start exactly where a value differs from the one before."""
    from treckit.fast.groups import id_codes, id_runs
    if grouped:
        values = sorted(values, key=values.index)        # each value's rows together
    col = _chunked(values, cuts, dictionary)
    codes, ids = id_codes(col)
    assert ids == list(dict.fromkeys(values))
    assert [ids[c] for c in codes.tolist()] == values
    starts, run_code, ids2 = id_runs(col)
    assert ids2 == ids
    assert starts.tolist() == [i for i in range(len(values)) if i == 0 or values[i] != values[i - 1]]
    assert [ids[c] for c in run_code.tolist()] == [values[i] for i in starts.tolist()]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(max_size=5), min_size=1, max_size=50), st.lists(st.integers(0, 50), max_size=4),
       st.lists(st.integers(0, 49), max_size=80))
def test_take_from_chunks_is_plain_indexing(values, cuts, idx):
    import numpy as np
    from treckit.fast.strings import take
    idx = [i % len(values) for i in idx]
    assert take(_chunked(values, cuts), np.array(idx, np.int64)).to_pylist() == [values[i] for i in idx]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["a", "b", "c", "dd", "a b"])), min_size=1, max_size=40),
       st.booleans())
def test_repeat_finder_finds_exactly_the_repeated_pairs(pairs, together):
    """A (query, doc) pair listed twice is always found, and nothing else is, whether the rows of each
    query are together (matrix path) or not (whole-run path), even when every key collides."""
    import numpy as np
    import pyarrow as pa
    from treckit.fast.repeats import first_repeat, pair_keys, suspects
    if together:
        pairs = sorted(pairs, key=lambda p: p[0])
    group = np.array([p[0] for p in pairs], np.int64)
    docid = pa.chunked_array([pa.array([p[1] for p in pairs])])
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]]) if together else None
    expected = len(set(pairs)) < len(pairs)
    for keys in (pair_keys(docid, group), np.zeros(len(pairs), np.uint32)):    # real keys, all colliding
        found = first_repeat(suspects(keys, starts), group, docid)
        assert (found is not None) == expected
        if found is not None:
            row, g, d = found
            assert (g, d) == pairs[row] and pairs[:row].count(pairs[row]) >= 1


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 4), st.sampled_from(["a", "b", "c", "d", "e", "f"])),
                         min_size=1, max_size=12, unique_by=lambda x: x[1]), min_size=1, max_size=6),
       st.data())
@pytest.mark.parametrize("listed", [True, False])
def test_ranks_of_queries_listed_together_equal_a_full_sort(listed, queries, data):
    """For a run listed query by query -- best score first (ranks read off the file order) or in any
    order (each judged row compared with its query's row of a padded score matrix) -- ranks equal
    those of a sort by (score desc, docid desc), trec_eval's order, for any judged rows."""
    import numpy as np
    import pyarrow as pa
    from treckit.ranking.order import ranks_in_listed_order, ranks_in_query_rows
    rows, starts = [], []
    for q in queries:
        starts.append(len(rows))
        rows += sorted(q, key=lambda x: -x[0]) if listed else q     # ties (and, unlisted, all) in any order
    key = np.array([float(s) for s, _ in rows])
    docid = pa.chunked_array([pa.array([d for _, d in rows])])
    jrows = np.array(sorted(data.draw(st.sets(st.integers(0, len(rows) - 1), min_size=1))), np.int64)
    got = (ranks_in_listed_order if listed else ranks_in_query_rows)(np.array(starts), key, docid, jrows)
    bounds = starts + [len(rows)]
    for j, r in zip(jrows.tolist(), got.tolist()):
        a = max(s for s in starts if s <= j)
        b = bounds[bounds.index(a) + 1]
        order = sorted(range(a, b), key=lambda i: (rows[i][0], rows[i][1]), reverse=True)
        assert r == order.index(j)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(max_size=8), min_size=1, max_size=30))
def test_hash64_of_short_strings_does_not_depend_on_their_neighbours_lengths(values):
    """Chunks whose strings all fit one word take a shorter path; it must hash exactly as the
    general one does (the same strings beside a long one)."""
    import pyarrow as pa
    from treckit.fast.strings import hash64
    alone = hash64(pa.array(values)).tolist()
    mixed = hash64(pa.array(values + ["a string much longer than sixteen bytes"])).tolist()[:-1]
    assert alone == mixed
