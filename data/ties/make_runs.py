"""Writes the runs of docs/ties.md's worked example (run once; the outputs are committed), from trec_eval
10.0's own test data (github.com/usnistgov/trec_eval, test/qrels.test and test/results.test, commit
f4253652c8efd0d86ddffd0d163cc0a0f813111a), read from ../shared/data/trec_eval or the folder given:

* ``qrels.test``: trec_eval's judgments, as they are.
* ``full.run``: the 100 best documents of each of results.test's three queries, in trec_eval's order, their
  scores as written (six decimals), run tag ``full``.
* ``rounded.run``: the same documents with their scores rounded to one decimal, as a run published with
  rounded scores carries them, run tag ``rounded``.

Deterministic; no network.  ``.venv/bin/python data/ties/make_runs.py [TREC_EVAL_TEST_DIR]``.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEPTH = 100


def main() -> None:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[2] / "shared" / "data" / "trec_eval"
    shutil.copyfile(src / "qrels.test", HERE / "qrels.test")
    rows = []
    for line in (src / "results.test").read_text().splitlines():
        qid, _, docno, _, score, _ = line.split()
        rows.append((qid, docno, score))
    # trec_eval's order: score descending, then docno descending (on the bytes): two stable sorts
    rows.sort(key=lambda r: r[1].encode(), reverse=True)
    rows.sort(key=lambda r: (r[0], -float(r[2])))
    rank: dict[str, int] = {}
    with open(HERE / "full.run", "w") as full, open(HERE / "rounded.run", "w") as rounded:
        for qid, docno, score in rows:
            rank[qid] = rank.get(qid, 0) + 1
            if rank[qid] <= DEPTH:
                full.write(f"{qid} Q0 {docno} {rank[qid]} {score} full\n")
                rounded.write(f"{qid} Q0 {docno} {rank[qid]} {float(score):.1f} rounded\n")

if __name__ == "__main__":
    main()
