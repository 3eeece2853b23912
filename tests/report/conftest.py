"""The sample's reports, built once for the report tests: the compare page of the two sample systems (with their
query types and texts), the test-set page of the stored baseline run, and a failing gate's page."""
from __future__ import annotations

from pathlib import Path

import pytest

from helpers import ROOT, run_cli

QUEST = ROOT / "data" / "quest_sample"
TEST_SET = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
BASELINE = ROOT / "data" / "test_sets" / "baseline_results.json"
BASELINE_RUN = ROOT / "data" / "test_sets" / "baseline_bow.trec"


def weaker_run(path: Path, out: Path) -> None:
    """The baseline run with the first document of every third query's ranking moved to the end: a system that
    drops on some queries (for a failing gate)."""
    by_query: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        by_query.setdefault(line.split()[0], []).append(line)
    lines = []
    for i, (q, rows) in enumerate(by_query.items()):
        if i % 3 == 0:
            rows = rows[1:] + rows[:1]
        for rank, row in enumerate(rows):
            qid, it, doc, _, _, tag = row.split()
            lines.append(f"{qid} {it} {doc} {rank + 1} {len(rows) - rank} {tag}\n")
    out.write_text("".join(lines))


@pytest.fixture(scope="session")
def sample_reports(tmp_path_factory):
    pytest.importorskip("plotly", reason="the HTML reports need treckit's report extra (plotly)")
    d = tmp_path_factory.mktemp("reports")
    steps = [
        ["qrels", QUEST / "test.jsonl", "-o", d / "qrels", "--id-added", d / "id.jsonl"],
        ["run", QUEST / "bm25_predictions.jsonl", "--gold", QUEST / "test.jsonl", "--run-name", "bm25", "-o", d / "bm25.trec"],
        ["run", QUEST / "dense_predictions.jsonl", "--gold", QUEST / "test.jsonl", "--run-name", "dense", "-o", d / "dense.trec"],
        ["compare", d / "qrels", d / "bm25.trec", d / "dense.trec", "-m", "ndcg_cut.10", "-m", "recall.10", "-m",
         "recip_rank", "-m", "map", "--query-types", d / "id.jsonl", "--out", d / "compare.json", "--html", d / "compare.html"],
        ["testset", "eval", TEST_SET, "--run", BASELINE_RUN, "--out", d / "testset.json", "--html", d / "testset.html"],
    ]
    for argv in steps:
        code, _, err = run_cli(argv)
        assert code == 0, (argv, err)
    weaker_run(BASELINE_RUN, d / "weaker.trec")
    code, _, err = run_cli(["testset", "eval", TEST_SET, "--run", d / "weaker.trec", "--out", d / "weaker.json"])
    assert code == 0, err
    code, _, err = run_cli(["gate", "--baseline", d / "testset.json", "--current", d / "weaker.json", "--max-drop",
                            "1%", "--html", d / "gate.html"])
    assert code == 1, err                       # the weaker run fails the gate
    return d
