"""Latency of an A/B of two retrieval systems, run again and again: do the figures hold still?

    .venv/bin/python -m bench.latency_bench [--repeat 3] [--code code] [--out outputs/latency_bench]

A is the QUEST sample's hybrid (data/quest_corpus: BM25 and bag-of-words fused by RRF); B is A with a
reranker over its top 100 (each candidate's title scored by its word overlap with the query, in Python).
Each repeat runs ``treckit compare QRELS --queries Q --config A --config B`` and then the same with B
first, each a fresh process (``python -m treckit`` with ``PYTHONPATH`` set to ``--code``, so an older
checkout's code can be timed the same way), and prints every system's latency p50, p95 and IQR and the
mean difference B - A from the JSON.  The p50s should agree from repeat to repeat and between the two
orders within the machine's noise, and the difference should keep its sign when the order is swapped.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "quest_corpus"

RERANK = '''
import re

def rerank(query, candidates):
    """Candidates by the share of the query's words in their title (doc id), then by their score."""
    words = set(re.findall(r"\\w+", query.lower()))
    def key(pair):
        title = set(re.findall(r"\\w+", pair[0].lower()))
        return (len(words & title) / (len(title) or 1), pair[1])
    return [doc for doc, _ in sorted(candidates, key=key, reverse=True)]
'''

SYSTEM = f"""corpus: {DATA / 'documents.jsonl'}
components:
  bm25: {{method: bm25, k1: 0.9, b: 0.4}}
  bow: {{method: bow}}
fusion_method: rrf
rrf_k: 60
"""


def treckit(code: Path, *args) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(code)}
    return subprocess.run([sys.executable, "-m", "treckit", *map(str, args)], env=env, capture_output=True, text=True,
                          check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--code", type=Path, default=ROOT / "code", help="the code/ folder of the checkout to time")
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "latency_bench")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "latency_rerank.py").write_text(RERANK)
    (a.out / "A.yaml").write_text("name: fusion\n" + SYSTEM)
    (a.out / "B.yaml").write_text("name: fusion+rerank\n" + SYSTEM
                                  + f"rerank: {{callable: {a.out / 'latency_rerank.py'}:rerank, depth: 100}}\n")
    qrels = a.out / "qrels"
    if not qrels.exists():
        treckit(a.code, "qrels", DATA / "test.jsonl", "-o", qrels, "--id-added", a.out / "ids.jsonl")
    print(f"{'repeat':>6}  {'order':<6}" + "".join(f"{h:>12}" for h in
          ("A p50", "A p95", "A IQR", "B p50", "B p95", "B IQR", "B - A mean")))
    p50s: dict[str, list[float]] = {"fusion": [], "fusion+rerank": []}
    deltas: dict[str, list[float]] = {"AB": [], "BA": []}
    for r in range(1, a.repeat + 1):
        for order in ("AB", "BA"):
            configs = [a.out / f"{c}.yaml" for c in order]
            out = a.out / f"compare_{r}_{order}.json"
            treckit(a.code, "compare", qrels, "--queries", DATA / "test.jsonl", "--config", configs[0], "--config", configs[1],
                    "-m", "ndcg_cut.10", "--test", "t-test", "--out", out)
            d = json.loads(out.read_text())
            lat = {s: d["systems"][s]["latency_ms"] for s in p50s}
            delta = lat["fusion+rerank"]["mean"] - lat["fusion"]["mean"]
            for s in p50s:
                p50s[s].append(lat[s]["p50"])
            deltas[order].append(delta)
            cells = [lat[s].get(k, float("nan")) for s in p50s for k in ("p50", "p95", "iqr")] + [delta]
            print(f"{r:>6}  {order:<6}" + "".join(f"{c:>12.3f}" for c in cells), flush=True)
    for s, v in p50s.items():
        print(f"{s}: p50 from {min(v):.3f} to {max(v):.3f} ms over {len(v)} runs")
    for order, v in deltas.items():
        print(f"B - A, order {order}: " + ", ".join(f"{x:+.3f}" for x in v) + " ms")


if __name__ == "__main__":
    main()
