"""``irds:<dataset-id>`` wherever qrels (or gold queries) are read, through ir_datasets.

The datasets are registered from local files (ir_datasets' LocalDownload): nothing is downloaded."""
from __future__ import annotations

import itertools
import json
import sys

import pytest

import treckit
from helpers import run_cli

ir_datasets = pytest.importorskip("ir_datasets")

QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n2 0 d4 1\n2 0 d5 1\n"
QUERIES = "1\tanimated sequels\n2\tbirds endemic to Hawaii\n"
RUN = "1 Q0 d2 1 3.0 t\n1 Q0 d3 2 2.0 t\n1 Q0 d9 3 1.0 t\n2 Q0 d5 1 1.5 t\n2 Q0 d8 2 1.0 t\n"
_names = itertools.count()


@pytest.fixture
def dataset(tmp_path, monkeypatch):
    """A dataset registered from local files: ``(irds id, qrels path, run path)``."""
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds_home"))      # nothing lands in ~/.ir_datasets
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "queries.tsv").write_text(QUERIES)
    (tmp_path / "run").write_text(RUN)
    name = f"treckit-test/local-{next(_names)}"
    ds = ir_datasets.create_dataset(queries_tsv=str(tmp_path / "queries.tsv"), qrels_trec=str(tmp_path / "qrels"))
    ir_datasets.registry.register(name, ds)
    return f"irds:{name}", tmp_path / "qrels", tmp_path / "run"


def test_eval_reads_irds_qrels(dataset, capsys):
    spec, qrels, run = dataset
    code, from_irds, err = run_cli(["eval", "-q", "-m", "all_trec", spec, run], capsys)
    assert code == 0, err
    _, from_file, _ = run_cli(["eval", "-q", "-m", "all_trec", qrels, run], capsys)
    assert from_irds == from_file
    # by hand: query 1 judges d1, d3 relevant and ranks d2, d3, d9: AP = (1/2) / 2 = 0.25; query 2 judges
    # d4, d5 relevant and ranks d5, d8: AP = (1/1) / 2 = 0.5; MAP = (0.25 + 0.5) / 2 = 0.375
    assert "map                   \tall\t0.3750" in from_irds


def test_api_reads_irds_qrels(dataset):
    import pytrec_eval
    spec, qrels, run = dataset
    got = treckit.evaluate(spec, run, ["map", "ndcg_cut.10"])
    assert got.equals(treckit.evaluate(qrels, run, ["map", "ndcg_cut.10"]))
    q = treckit.read_qrels(spec).to_dict()
    assert q == {"1": {"d1": 1, "d2": 0, "d3": 2}, "2": {"d4": 1, "d5": 1}}
    r = treckit.read_run(run).to_dict()
    ev = pytrec_eval.RelevanceEvaluator(q, {"map"}).evaluate(r)
    assert got.set_index("qid").loc["1", "map"] == pytest.approx(ev["1"]["map"], abs=1e-12)


def test_gold_queries_from_irds_join_predictions(dataset, tmp_path, capsys):
    spec, qrels, _ = dataset
    pred = tmp_path / "pred.jsonl"        # no ids, in another order than the dataset's queries
    pred.write_text('{"query": "birds endemic to Hawaii", "docs": ["d5", "d8"], "scores": [-3.0, -1.0]}\n'
                    '{"query": "animated sequels", "docs": ["d2", "d3", "d9"], "scores": [-9.0, -5.0, 0.0]}\n')
    code, joined, err = run_cli(["eval", "-m", "map", "--gold", spec, spec, pred], capsys)
    assert code == 0, err
    _, expected, _ = run_cli(["eval", "-m", "map", qrels, RUN_FILE(tmp_path)], capsys)
    assert joined == expected


def RUN_FILE(tmp_path):
    """The predictions above as the TREC run they mean (negated scores: most negative first)."""
    p = tmp_path / "meant.trec"
    p.write_text("2 Q0 d5 1 3.0 t\n2 Q0 d8 2 1.0 t\n1 Q0 d2 1 9.0 t\n1 Q0 d3 2 5.0 t\n1 Q0 d9 3 0.0 t\n")
    return p


def test_qrels_command_and_compare_take_irds(dataset, tmp_path, capsys):
    spec, qrels, run = dataset
    out = tmp_path / "out.qrels"
    code, _, err = run_cli(["qrels", spec, "-o", out], capsys)
    assert code == 0, err
    assert treckit.read_qrels(out).to_dict() == treckit.read_qrels(qrels).to_dict()
    out = tmp_path / "c.json"
    code, table, err = run_cli(["compare", spec, run, run, "-m", "map", "--name", "a", "--name", "b",
                                "--queries", spec, "--out", out], capsys)
    assert code == 0, err
    rec = json.loads(out.read_text())
    assert rec["systems"]["a"]["metrics"]["macro"]["map"] == 0.375          # by hand: see test_eval_reads_irds_qrels
    assert len(rec["qrels_digest"]) == len(rec["queries_digest"]) == 64


def test_unknown_dataset_is_a_clear_error(capsys, tmp_path):
    (tmp_path / "run").write_text(RUN)
    code, _, err = run_cli(["eval", "irds:treckit-test/no-such-dataset", tmp_path / "run"], capsys)
    assert code == 2 and "no dataset 'treckit-test/no-such-dataset'" in err


def test_without_ir_datasets_installed(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "ir_datasets", None)          # import ir_datasets now fails
    (tmp_path / "run").write_text(RUN)
    code, _, err = run_cli(["eval", "irds:beir/scifact/test", tmp_path / "run"], capsys)
    assert code == 2 and "not installed" in err and f"install treckit's irds extra: {sys.executable} -m pip install" in err
    with pytest.raises(treckit.InputError, match="not installed"):
        treckit.evaluate("irds:beir/scifact/test", {"1": {"d": 1.0}}, "map")


def test_retrieve_and_the_test_set_tools_read_irds_queries(dataset, tmp_path, capsys):
    from treckit.testsets.topics import read_queries
    spec, _, _ = dataset
    assert read_queries(spec) == {"1": "animated sequels", "2": "birds endemic to Hawaii"}
    (tmp_path / "docs.jsonl").write_text('{"_id": "d1", "text": "animated sequels galore"}\n'
                                         '{"_id": "d2", "text": "birds of Hawaii"}\n')
    code, _, err = run_cli(["retrieve", "--corpus", tmp_path / "docs.jsonl", "--queries", spec, "--method", "bow",
                            "-o", tmp_path / "r.trec"], capsys)
    assert code == 0, err
    assert [line.split()[:3] for line in (tmp_path / "r.trec").read_text().splitlines()] == \
        [["1", "Q0", "d1"], ["2", "Q0", "d2"]]


def _registered(**files) -> str:
    name = f"treckit-test/local-{next(_names)}"
    ir_datasets.registry.register(name, ir_datasets.create_dataset(**{k: str(v) for k, v in files.items()}))
    return f"irds:{name}"


def test_a_dataset_without_what_is_asked_is_a_clear_error(tmp_path, monkeypatch, capsys):
    """Each refusal names the dataset and what it lacks: no id, no qrels, no queries, empty qrels, and files
    ir_datasets cannot read."""
    from treckit.testsets.topics import read_queries
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds_home"))
    (tmp_path / "run").write_text(RUN)
    (tmp_path / "queries.tsv").write_text(QUERIES)
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "empty").write_text("")

    def eval_error(spec):
        code, out, err = run_cli(["eval", spec, tmp_path / "run"], capsys)
        assert code == 2 and out == ""
        return err

    assert "'irds:' names no dataset" in eval_error("irds:") and "write irds:<dataset-id>" in eval_error("irds:")
    queries_only = _registered(queries_tsv=tmp_path / "queries.tsv")
    assert f"{queries_only}: the dataset has no qrels" in eval_error(queries_only)
    empty = _registered(qrels_trec=tmp_path / "empty")
    assert f"{empty}: the dataset's qrels are empty" in eval_error(empty)
    gone = _registered(qrels_trec=tmp_path / "no-such-qrels")
    assert f"{gone}: ir_datasets could not provide the qrels" in eval_error(gone)
    qrels_only = _registered(qrels_trec=tmp_path / "qrels")
    with pytest.raises(treckit.InputError, match="the dataset has no queries"):
        read_queries(qrels_only)
    with pytest.raises(treckit.InputError, match="ir_datasets could not provide the queries"):
        read_queries(_registered(queries_tsv=tmp_path / "no-such-queries.tsv"))
