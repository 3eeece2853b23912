"""Latency of an A/B of two retrieval systems, run again and again: does the difference mean what it says?

    .venv/bin/python -m bench.latency_bench [--repeat 20] [--copies 5] [--code code] [--out outputs/latency_bench]

A and B are the same system, a BM25 component over the QUEST-shaped sample (data/quest_corpus) reranked by a
Python function over its top 100 that allocates as a reranker does: per query, a few thousand small objects
(token lists, feature dicts, candidate records that point back at their query's record: reference cycles), and a
cache of each title's words that lives as long as the process.  B's reranker does the same work and then sleeps
2 ms, so B - A is 2 ms per query, exactly, by construction.  The sample's 39 queries are asked ``--copies``
times under new ids (195 queries by default).

Each repeat runs ``treckit compare QRELS --queries Q --config A --config B`` and then the same with B first,
each a fresh process (``python -m treckit`` with ``PYTHONPATH`` set to ``--code``, so an older checkout's code
can be timed the same way), and prints each system's p50 and mean latency and the difference B - A of the
means and the median of the per-query differences, from the JSON.  The last lines count the runs whose
difference reads 2 +/- 0.5 ms, for each order, and give the load average before and after.
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
EXPECTED_MS, TOLERANCE_MS = 2.0, 0.5

RERANK = '''
import os
import re
import time

WORDS = {}          # each title's words, kept for the life of the process (a reranker's feature cache)
# how long each sleep of rerank_and_wait took (ms), as the reranker itself timed it: one line a call (a write of
# a few microseconds; the process ends without running exit handlers)
LOG = os.open(os.environ["LATENCY_BENCH_SLEEPS"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND)


def _words(doc):
    words = WORDS.get(doc)
    if words is None:
        words = WORDS[doc] = re.findall(r"\\w+", doc.lower())
    return words


def _rerank(query, candidates):
    """Candidates by the share of the query's words in their title, then their score; on the way, the objects
    a reranker makes: records per candidate, features, token pairs, and records pointing back at the query's."""
    asked = {"query": query, "words": set(re.findall(r"\\w+", query.lower())), "candidates": []}
    for doc, score in candidates:
        words = _words(doc)
        record = {"doc": doc, "score": score, "query": asked,                   # a cycle: query -> candidate -> query
                  "tokens": [[w, len(w), i] for i, w in enumerate(words)],
                  "pairs": [(a, b) for a, b in zip(words, words[1:])],
                  "features": {"overlap": len(asked["words"].intersection(words)), "length": len(words)}}
        asked["candidates"].append(record)
    ranked = sorted(asked["candidates"], key=lambda r: (r["features"]["overlap"] / (r["features"]["length"] or 1),
                                                        r["score"]), reverse=True)
    return [r["doc"] for r in ranked]


def rerank(query, candidates):
    return _rerank(query, candidates)


def rerank_and_wait(query, candidates):
    ranked = _rerank(query, candidates)
    t0 = time.perf_counter()
    time.sleep(0.002)
    os.write(LOG, b"%.6f\\n" % ((time.perf_counter() - t0) * 1000))
    return ranked
'''

SYSTEM = f"""corpus: {DATA / 'documents.jsonl'}
components:
  bm25: {{method: bm25, k1: 0.9, b: 0.4}}
"""


def treckit(code: Path, *args, sleeps: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(code), "LATENCY_BENCH_SLEEPS": str(sleeps or os.devnull)}
    return subprocess.run([sys.executable, "-m", "treckit", *map(str, args)], env=env, capture_output=True, text=True,
                          check=True)


def inputs(code: Path, out: Path, copies: int) -> tuple[Path, Path]:
    """The sample's queries asked ``copies`` times under new ids (``c<copy>-<qid>``), and their qrels."""
    qrels, once = out / "qrels", out / "qrels_once"
    treckit(code, "qrels", DATA / "test.jsonl", "-o", once, "--id-added", out / "ids.jsonl")
    texts = [json.loads(line)["query"] for line in (DATA / "test.jsonl").read_text().splitlines()]
    judged = once.read_text().splitlines()
    queries = out / "queries.tsv"
    queries.write_text("".join(f"c{c}-{i}\t{t}\n" for c in range(copies) for i, t in enumerate(texts, 1)))
    qrels.write_text("".join(f"c{c}-{line}\n" for c in range(copies) for line in judged))
    return qrels, queries


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--copies", type=int, default=5, help="how many times the 39 sample queries are asked")
    ap.add_argument("--code", type=Path, default=ROOT / "code", help="the code/ folder of the checkout to time")
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "latency_bench")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "latency_rerank.py").write_text(RERANK)
    for name, function in (("A", "rerank"), ("B", "rerank_and_wait")):
        (a.out / f"{name}.yaml").write_text(f"name: {name}\n" + SYSTEM
                                            + f"rerank: {{callable: {a.out / 'latency_rerank.py'}:{function}, depth: 100}}\n")
    qrels, queries = inputs(a.code, a.out, a.copies)
    n = sum(1 for _ in queries.open())
    print(f"load average before: {load()}")
    print(f"{'repeat':>6}  {'order':<6}" + "".join(f"{h:>11}" for h in
          ("A p50", "A mean", "B p50", "B mean", "B-A mean", "B-A median", "slept mean", "slept p50")))
    within = {o: {k: 0 for k in ("mean", "median", "mean-slept", "median-slept")} for o in ("AB", "BA")}
    for r in range(1, a.repeat + 1):
        for order in ("AB", "BA"):
            configs = [a.out / f"{c}.yaml" for c in order]
            out, sleeps = a.out / f"compare_{r}_{order}.json", a.out / f"sleeps_{r}_{order}.txt"
            treckit(a.code, "compare", qrels, "--queries", queries, "--config", configs[0], "--config", configs[1],
                    "-m", "ndcg_cut.10", "--out", out, sleeps=sleeps)
            d = json.loads(out.read_text())
            lat = {s: d["systems"][s]["latency_ms"] for s in ("A", "B")}
            mean = lat["B"]["mean"] - lat["A"]["mean"]
            median = _median_difference(d, order)
            slept = sorted(float(x) for x in sleeps.read_text().split()[-n:])       # the timed pass's (not the warm-up's)
            slept_mean, slept_median = sum(slept) / n, (slept[(n - 1) // 2] + slept[n // 2]) / 2
            for key, value, truth in (("mean", mean, EXPECTED_MS), ("median", median, EXPECTED_MS),
                                      ("mean-slept", mean, slept_mean), ("median-slept", median, slept_median)):
                within[order][key] += abs(value - truth) <= TOLERANCE_MS
            cells = [lat["A"]["p50"], lat["A"]["mean"], lat["B"]["p50"], lat["B"]["mean"], mean, median, slept_mean,
                     slept_median]
            print(f"{r:>6}  {order:<6}" + "".join(f"{c:>11.3f}" for c in cells), flush=True)
    for order, counts in within.items():
        print(f"order {order}: B - A within {EXPECTED_MS:g} +/- {TOLERANCE_MS:g} ms in {counts['mean']} of {a.repeat} "
              f"runs (mean), {counts['median']} of {a.repeat} (median); within {TOLERANCE_MS:g} ms of what the sleeps "
              f"took in {counts['mean-slept']} (mean), {counts['median-slept']} (median)")
    print(f"load average after: {load()}")


def _median_difference(d: dict, order: str) -> float:
    """The median of the per-query differences B - A (older checkouts: the difference of the p50s)."""
    medians = d["delta"].get("latency_median_ms")
    if medians is None:
        return d["systems"]["B"]["latency_ms"]["p50"] - d["systems"]["A"]["latency_ms"]["p50"]
    return medians["B"] if order == "AB" else -medians["A"]


if __name__ == "__main__":
    main()
