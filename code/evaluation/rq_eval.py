"""The old A/B evaluation command, kept working over `treckit compare`.

    python code/evaluation/rq_eval.py --queries Q.tsv --truth qrels.tsv --configA A.yaml --configB B.yaml \\
        --k 10 --out out.json --csv out.csv [--corpus corpus.jsonl]

queries: ``qid<TAB>text``; truth: ``qid<TAB>doc_id<TAB>rel`` (no headers). The measures are this tool's own:
``recall`` (recall@k), ``mrr`` (reciprocal rank within the top k) and ``ndcg`` (nDCG@k with gain 2^rel - 1),
with tied scores broken by doc id ascending, as the tool defined them.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from treckit.stages import run_script  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--configA", required=True)
    ap.add_argument("--configB", required=True)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--out", required=True)
    ap.add_argument("--csv", default=None)
    ap.add_argument("--corpus", default=None)
    a = ap.parse_args(argv)
    from treckit.compare import report
    from treckit.compare.compare import CompareOptions
    from treckit.convert import convert_run
    from treckit.stages import compare_stage, say

    def docid_ascending(run):
        return convert_run(run, order="desc", ties="docid-asc")[0]

    k = a.k

    def body():
        comp = compare_stage(a.truth, [], [f"R@{k}", f"RR@{k}", f"nDCG(dcg='exp-log2')@{k}"], configs=[a.configA, a.configB],
                             options=CompareOptions(k=k), corpus=a.corpus, queries=a.queries, prepare=docid_ascending)
        rename = {f"R@{k}": "recall", f"RR@{k}": "mrr", f"nDCG(dcg='exp-log2')@{k}": "ndcg"}
        comp.measures = [rename[m] for m in comp.measures]
        for t in comp.tests:
            t["measure"] = rename[t["measure"]]
        report.write_json(comp, a.out)
        if a.csv:
            report.write_csv(comp, a.csv)
        sys.stdout.write(report.table(comp))
        say(f"wrote {a.out}" + (f" and {a.csv}" if a.csv else ""))
    return run_script(body)


if __name__ == "__main__":
    from treckit.startup import exit_now
    exit_now(main())
