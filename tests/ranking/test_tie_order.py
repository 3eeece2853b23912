"""trec_eval orders tied documents on the bytes of the file (docno descending, strcmp); treckit's one
ranking order (treckit.ranking.order) does the same on each id's written form -- the text of the TREC
file it was read from, or for ids built in memory their escape -- in evaluation, conversion and
comparison.  Every expectation here is trec_eval 10.0's own output on the same files, or the order
trec_eval's comparison gives, written out in Python on the bytes."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treckit import thresholds
from treckit.api import read_qrels, read_run, write_qrels, write_run
from treckit.ranking.convert import convert_run
from treckit.engines.memory import evaluate_requests
from treckit.ids import escape_id, unescape_id, written_ids
from treckit.measures.registry import resolve
from treckit.model import Qrels, Run
from treckit.output.trec_eval import format_trec_eval

from helpers import ROOT, run_cli

MEASURES = ["map", "recip_rank", "P.1,2,3,5", "ndcg_cut.1,2,3,5", "bpref", "Rprec", "num_rel_ret"]


def _trec_eval_path() -> Path | None:
    for p in (os.environ.get("TRECKIT_TREC_EVAL"), ROOT.parent / "shared" / "tools" / "trec_eval"):
        try:
            if p and Path(p).is_file():
                return Path(p)
        except OSError:                  # e.g. a symlink loop where ../shared should be
            pass
    return None


TREC_EVAL = _trec_eval_path()
needs_trec_eval = pytest.mark.skipif(TREC_EVAL is None, reason="trec_eval 10.0 not found (set TRECKIT_TREC_EVAL "
                                                                "or put it at ../shared/tools/trec_eval)")


def trec_eval(qrels: Path, run: Path, measures=MEASURES) -> str:
    args = [str(TREC_EVAL), "-q"] + [a for m in measures for a in ("-m", m)] + [str(qrels), str(run)]
    return subprocess.run(args, capture_output=True, check=True).stdout.decode()


def treckit(qrels: Qrels, run: Run, measures=MEASURES) -> str:
    return format_trec_eval(evaluate_requests(qrels, run, resolve(measures)), per_query=True)


def trec_eval_order(lines: list[bytes]) -> list[bytes]:
    """trec_eval's ranking of one query's run lines, written out: score descending, then docno
    descending by strcmp (unsigned bytes) -- Python's bytes comparison."""
    return sorted(lines, key=lambda line: (float(line.split()[4]), line.split()[2]), reverse=True)


# ---------------------------------------------------------------- escaped ids in ties, against trec_eval
@needs_trec_eval
def test_escaped_id_tie_is_ordered_on_the_text_in_the_file(tmp_path, capsys):
    (tmp_path / "m.qrels").write_text("1 0 a%20b 1\n")
    (tmp_path / "m.run").write_text("1 Q0 a%20b 1 1.0 t\n1 Q0 a! 2 1.0 t\n")
    expected = trec_eval(tmp_path / "m.qrels", tmp_path / "m.run", ["recip_rank"])
    assert expected.endswith("recip_rank            \tall\t1.0000\n")     # '%' (0x25) > '!' (0x21)
    code, out, _ = run_cli(["eval", "-q", "-m", "recip_rank", tmp_path / "m.qrels", tmp_path / "m.run"], capsys)
    assert code == 0 and out == expected
    # the same judgments and run in memory: the order of the written (escaped) form, 'a%20b' above 'a!'
    q, r = {"1": {"a b": 1}}, {"1": {"a b": 1.0, "a!": 1.0}}
    assert treckit(Qrels.from_dict(q), Run.from_dict(r), ["recip_rank"]) == expected


QUEST_GOLD = '{"query": "airplane films", "docs": ["Airplane II: The Sequel"]}\n'
QUEST_PRED = ('{"query": "airplane films", "docs": ["Top Gun", "Airplane!", "Airplane II: The Sequel"], '
              '"scores": [-3.2, 0.0, 0.0]}\n')


@needs_trec_eval
def test_quest_predictions_rank_as_trec_eval_reads_the_converted_file(tmp_path, capsys):
    """QUEST gold and predictions through `treckit qrels`/`treckit run --gold`: trec_eval gives map 0.5
    on the written files ('Airplane%20II...' ranks above 'Airplane!'), and so do `treckit eval`,
    evaluate.py and the rank column the conversion writes."""
    (tmp_path / "gold.jsonl").write_text(QUEST_GOLD)
    (tmp_path / "pred.jsonl").write_text(QUEST_PRED)
    qrels, run = tmp_path / "gold.qrels", tmp_path / "pred.trec"
    assert run_cli(["qrels", tmp_path / "gold.jsonl", "-o", qrels], capsys)[0] == 0
    assert run_cli(["run", tmp_path / "pred.jsonl", "--gold", tmp_path / "gold.jsonl", "-o", run], capsys)[0] == 0
    expected = trec_eval(qrels, run, ["map"])
    assert expected.endswith("map                   \tall\t0.5000\n")
    assert run_cli(["eval", "-q", "-m", "map", qrels, run], capsys)[1] == expected
    lines = run.read_bytes().splitlines()
    assert lines == trec_eval_order(lines)
    assert [ln.split()[2:4] for ln in lines] == [[b"Top%20Gun", b"1"], [b"Airplane%20II:%20The%20Sequel", b"2"],
                                                 [b"Airplane!", b"3"]]
    script = ROOT / "code" / "evaluation" / "evaluate.py"
    p = subprocess.run([sys.executable, str(script), "--run", str(run), "--qrels", str(qrels),
                        "--cutoffs", "10", "--output", str(tmp_path / "res.json")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    import json
    assert json.loads((tmp_path / "res.json").read_text())["map"] == 0.5


def test_compare_lists_hits_in_trec_eval_order():
    """compare's per-query hits come from the same order: 'a%20b' (written form) above 'a!'."""
    from treckit.compare.compare import score_run
    from treckit.measures.registry import resolve
    q = Qrels.from_dict({"1": {"a b": 1, "a!": 1}})
    r = Run.from_dict({"1": {"a!": 1.0, "a b": 1.0, "z": 2.0}})
    assert score_run(q, r, resolve(["map"]), 10, "run").hits == [["a b", "a!"]]


# ---------------------------------------------------------------- the written form
def test_written_form_is_the_file_text_or_the_escape(tmp_path):
    """Ids whose text is the escape of what they decode to need nothing kept; foreign escapes and
    lowercase hex keep their text, which ties are ordered on and writing writes back unchanged."""
    text = ["a%20b", "a%41b", "x%0a", "c%25", "%2541", "plain", "Ü"]
    (tmp_path / "r").write_text("".join(f"1 Q0 {t} {i} 1 t\n" for i, t in enumerate(text, 1)))
    run = read_run(tmp_path / "r")
    assert run.table.column("docid").to_pylist() == ["a b", "a%41b", "x\n", "c%", "%41", "plain", "Ü"]
    assert run.written == {("1", "a%41b"): "a%41b", ("1", "x\n"): "x%0a"}
    t = run.table
    assert written_ids(t.column("docid"), t.column("qid"), run.written).to_pylist() == text
    write_run(run, tmp_path / "w")
    assert [ln.split()[2] for ln in (tmp_path / "w").read_text().splitlines()] == text
    # without decoding, every id with '%' is its own text
    raw = read_run(tmp_path / "r", decode_ids=False)
    assert raw.table.column("docid").to_pylist() == text
    assert set(raw.written.values()) == {t for t in text if "%" in t}
    # qrels alike: written back as read
    (tmp_path / "q").write_text("".join(f"1 0 {t} 1\n" for t in text))
    qrels = read_qrels(tmp_path / "q")
    assert qrels.written == run.written
    write_qrels(qrels, tmp_path / "q2", sort=False)
    assert (tmp_path / "q2").read_text() == (tmp_path / "q").read_text()
    # in memory nothing is kept: the escape is the written form
    mem = Run.from_dict({"1": dict.fromkeys(["a b", "a%41b"], 1.0)})
    assert written_ids(mem.table.column("docid")).to_pylist() == ["a%20b", "a%2541b"]


def test_raw_ids_conversion_orders_on_the_ids_it_writes(tmp_path):
    """`treckit run --raw-ids` writes the decoded ids, and trec_eval then compares those."""
    run = Run.from_dict({"1": {"100%": 1.0, "100$": 1.0}})       # escaped '100%25' > '100$'; raw '100%' > '100$'
    out, _ = convert_run(run, order="desc")
    assert out.table.column("docid").to_pylist() == ["100%", "100$"]
    run = Run.from_dict({"1": {"a b": 1.0, "a!": 1.0}})          # escaped 'a%20b' > 'a!'; raw 'a b' < 'a!'
    assert convert_run(run, order="desc")[0].table.column("docid").to_pylist() == ["a b", "a!"]
    assert convert_run(run, order="desc", raw_ids=True)[0].table.column("docid").to_pylist() == ["a!", "a b"]


# ---------------------------------------------------------------- generated ids, against trec_eval
PIECES = ["a", "A", "z", "!", "$", " ", "%", "%20", "%2541", "%25", "#", "é", "Ü", "\u00a0", "0"]
id_text = st.lists(st.sampled_from(PIECES), min_size=1, max_size=4).map("".join)
SCORES = [0.0, -0.0, 1.0, 1.0, 2.5, -1.0]


@st.composite
def judged_runs(draw, ids=id_text):
    """{qid: {docid: score}} and {qid: {docid: grade}}: few distinct scores (many ties), each query
    judged, some judged docs not retrieved, some run queries not judged."""
    pool = draw(st.lists(ids, min_size=2, max_size=12, unique=True))
    run, qrels = {}, {}
    for q in ["1", "2", "10"][: draw(st.integers(1, 3))]:
        docs = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool), unique=True))
        run[q] = {d: draw(st.sampled_from(SCORES)) for d in docs}
        judged = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool), unique=True))
        qrels[q] = {d: draw(st.integers(0, 2)) for d in judged}
    if draw(st.booleans()):
        run["99"] = {pool[0]: 1.0}                          # a query with no judgments: ignored
    return qrels, run


def _rows(run: dict, rng: np.random.Generator, layout: str) -> list[tuple[str, str, float]]:
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    if layout == "listed":               # each query best first (ties in any order): ranks read off the file
        order = rng.permutation(len(rows))
        rows = sorted((rows[i] for i in order), key=lambda r: (list(run).index(r[0]), -r[2]))
    elif layout == "shuffled":           # queries together, lines in any order
        rows = sorted((rows[i] for i in rng.permutation(len(rows))), key=lambda r: list(run).index(r[0]))
    else:                                # queries interleaved
        rows = [rows[i] for i in rng.permutation(len(rows))]
    return rows


@pytest.fixture(params=["careful", "fast"])
def reader_path(request):
    """The line parser, or the vectorized readers (their size thresholds lowered to nothing)."""
    with pytest.MonkeyPatch.context() as mp:
        if request.param == "fast":
            mp.setattr(thresholds, "TREC_RUN_FAST_MIN_BYTES", 0)
            mp.setattr(thresholds, "TREC_QRELS_FAST_MIN_BYTES", 0)
        yield request.param


@needs_trec_eval
@pytest.mark.parametrize("layout", ["listed", "shuffled", "interleaved", "full-sort"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=judged_runs(), seed=st.integers(0, 2 ** 32 - 1))
def test_in_memory_equals_written_files_equals_trec_eval(tmp_path_factory, reader_path, layout, data, seed):
    """Ids with spaces, '%', '%20', '%2541', '#', non-ASCII, no-break spaces, many score ties: trec_eval
    on the files treckit writes == treckit on those files == treckit on the same data as dicts and as
    DataFrames; every ranking path (file order, score matrix, comparison, full sort) agrees."""
    import pandas as pd

    qrels, run = data
    rows = _rows(run, np.random.default_rng(seed), "interleaved" if layout == "full-sort" else layout)
    d = tmp_path_factory.mktemp("ties")
    q_mem = Qrels.from_dict(qrels)
    r_mem = Run.from_columns([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], tag="t")
    write_qrels(q_mem, d / "qrels")
    write_run(r_mem, d / "run")
    expected = trec_eval(d / "qrels", d / "run")
    with pytest.MonkeyPatch.context() as mp:
        if layout == "full-sort":
            mp.setattr(thresholds, "RANK_SORT_SLACK", -10 ** 12)
        assert treckit(read_qrels(d / "qrels"), read_run(d / "run")) == expected
        assert treckit(read_qrels(d / "qrels"), read_run(d / "run", lean=True)) == expected
        assert treckit(q_mem, r_mem) == expected
        assert treckit(Qrels.from_dict(qrels), Run.from_dict(run)) == expected
        frame = pd.DataFrame(rows, columns=["qid", "docno", "score"]).rename(columns={"docno": "docid"})
        assert treckit(Qrels.from_pandas(q_mem.to_pandas()), Run.from_pandas(frame)) == expected


foreign_text = st.lists(st.sampled_from(["a", "Z", "!", "%", "%20", "%25", "%41", "%0a", "%0A", "%2", "#", "Ü", "zz"]),
                        min_size=1, max_size=4).map("".join)


@needs_trec_eval
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=judged_runs(ids=foreign_text), seed=st.integers(0, 2 ** 32 - 1),
       ties=st.sampled_from(["keep", "break", "docid-asc"]))
def test_files_with_foreign_escapes_rank_on_their_text(tmp_path_factory, reader_path, data, seed, ties):
    """Files written by someone else, with '%' sequences treckit's escaping never writes ('a%41b',
    lowercase '%0a', a lone '%'): treckit evaluates them as trec_eval does, converting keeps every
    id's text, writes the lines in trec_eval's order with the rank column saying so, and trec_eval
    gives the converted file the numbers of the original."""
    qrels, run = data
    decoded = {unescape_id(t) for docs in run.values() for t in docs} | {unescape_id(t) for docs in qrels.values() for t in docs}
    texts = {t for docs in run.values() for t in docs} | {t for docs in qrels.values() for t in docs}
    if len(decoded) != len(texts):      # two texts for one id ('x%0a', 'x%0A'): one doc to treckit, two to trec_eval
        return
    rows = _rows(run, np.random.default_rng(seed), "shuffled")
    d = tmp_path_factory.mktemp("foreign")
    (d / "qrels").write_text("".join(f"{q} 0 {t} {g}\n" for q, docs in qrels.items() for t, g in docs.items()))
    (d / "run").write_text("".join(f"{q} Q0 {t} {i} {s!r} t\n" for i, (q, t, s) in enumerate(rows)))
    expected = trec_eval(d / "qrels", d / "run")
    assert treckit(read_qrels(d / "qrels"), read_run(d / "run")) == expected
    # conversion: ids kept byte for byte, trec_eval's order, ranks 1..n per query
    converted, report = convert_run(read_run(d / "run"), order="desc", ties=ties)
    write_run(converted, d / "out")
    out = (d / "out").read_bytes().splitlines()
    assert sorted(ln.split()[2] for ln in out) == sorted(t.encode() for _, t, _ in rows)
    for q in run:
        mine = [ln for ln in out if ln.split()[0] == q.encode()]
        assert mine == trec_eval_order(mine)
        assert [int(ln.split()[3]) for ln in mine] == list(range(1, len(mine) + 1))
        if ties == "keep":               # scores as given: trec_eval's own order of the input's lines
            given_lines = [f"{q} Q0 {t} 0 {s!r} t".encode() for qq, t, s in rows if qq == q]
            assert [ln.split()[2] for ln in mine] == [ln.split()[2] for ln in trec_eval_order(given_lines)]
    if ties == "keep":
        assert trec_eval(d / "qrels", d / "out") == expected
        write_qrels(read_qrels(d / "qrels"), d / "qrels.out")      # converted together, they still join
        assert trec_eval(d / "qrels.out", d / "out") == expected
    n_tied = sum(sum(1 for s in docs.values() if list(docs.values()).count(s) > 1) for docs in run.values())
    assert report.tied_docs == n_tied


@pytest.mark.parametrize("slice_bytes", [1 << 20, 3])
def test_escape_column_matches_escape_id_on_every_chunk(monkeypatch, slice_bytes):
    """The vectorized escape (byte scans, then only the ids that need it through Python) equals
    escape_id on each id, across chunk boundaries and the scan's slices."""
    import pyarrow as pa
    monkeypatch.setattr(thresholds, "PERCENT_SCAN_SLICE_BYTES", slice_bytes)
    values = ["plain", "a b", "100%", "é", "x\u00a0y", "tab\there", "", "#1", "\x1c", "z"]
    col = pa.chunked_array([pa.array(values[:3]), pa.array([], pa.string()), pa.array(values[3:])])
    assert written_ids(col).to_pylist() == [escape_id(v) for v in values]
    assert written_ids(col, rows=np.array([4, 1, 1])).to_pylist() == [escape_id(values[i]) for i in (4, 1, 1)]
    only_percent = pa.array(["abcdef", "ghijkl", "mno%pq", "rs"])        # '%' beyond the first slices
    assert written_ids(only_percent).to_pylist() == ["abcdef", "ghijkl", "mno%25pq", "rs"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "%", "%2", "%20", "%25", "%0a", "%0A", "%41", "%C2%A0", "%c2%a0",
                                          "%E2%80%80", "\u00a0", " ", "\t", "\x1c", "é", "0", "C"]),
                         min_size=1, max_size=5).map("".join), min_size=1, max_size=20),
       st.booleans())
def test_vectorized_keep_rule_equals_the_per_id_rule(texts, decoded):
    """The readers' vectorized test of which ids keep their text (escapes taken out by RE2) equals
    keeps_text on each id, decoded or not."""
    import pyarrow as pa
    from treckit.ids import keeps_text, keeps_texts
    expected = [keeps_text(t, unescape_id(t) if decoded else t) for t in texts]
    assert keeps_texts(pa.array(texts), decoded).tolist() == expected
