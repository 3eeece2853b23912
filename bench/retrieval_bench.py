"""BM25 on a generated corpus of QUEST's size: treckit (bm25s underneath) against rank_bm25.

    .venv/bin/python -m bench.retrieval_bench [--docs 325000] [--queries 1000] [--rank-bm25-queries 20]

The corpus is seeded synthetic text (Zipf-distributed words over a 50,000-word vocabulary, 40-160
words a document, about QUEST's documents' length); queries are 3-8 words drawn the same way.
Each system runs in a fresh process: wall time of indexing, queries per second (top 100), peak RSS.
rank_bm25 scores every document in Python for each query, so it is timed on fewer queries.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

GENERATE = """
import json, sys
import numpy as np
n, nq, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(325)
vocab = np.array([f"w{i}" for i in range(50_000)])
p = 1 / np.arange(1, vocab.size + 1) ** 1.1
p /= p.sum()
lengths = rng.integers(40, 161, n)
words = rng.choice(vocab.size, size=int(lengths.sum()), p=p)
with open(out + "/docs.jsonl", "w") as fh:
    at = 0
    for i, k in enumerate(lengths):
        fh.write(json.dumps({"_id": f"doc{i}", "title": f"Page {i}", "text": " ".join(vocab[words[at:at + k]])}) + "\\n")
        at += k
with open(out + "/queries.tsv", "w") as fh:
    for i in range(nq):
        fh.write(f"q{i}\\t" + " ".join(vocab[rng.choice(vocab.size, size=rng.integers(3, 9), p=p)]) + "\\n")
"""

TRECKIT = """
import json, resource, sys, time
from treckit.retrieval.bm25 import BM25Params, BM25Retriever
from treckit.retrieval.corpus import read_corpus
from treckit.testsets.topics import read_queries
t0 = time.perf_counter(); corpus = read_corpus(sys.argv[1]); t_read = time.perf_counter() - t0
t0 = time.perf_counter(); r = BM25Retriever(corpus, BM25Params(stopwords=None, stemmer=None)); t_index = time.perf_counter() - t0
qs = list(read_queries(sys.argv[2]).values())
t0 = time.perf_counter(); r.retrieve(qs, 100); t_q = time.perf_counter() - t0
print(json.dumps({"read_s": t_read, "index_s": t_index, "qps": len(qs) / t_q, "queries": len(qs),
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

RANK_BM25 = r"""
import json, re, resource, sys, time
import numpy as np
from rank_bm25 import BM25Okapi
docs = [json.loads(l) for l in open(sys.argv[1])]
TOKEN = re.compile(r"(?u)\b\w\w+\b")      # bm25s' default token pattern
tok = lambda s: TOKEN.findall(s.lower())
t0 = time.perf_counter(); bm = BM25Okapi([tok(d["title"] + " " + d["text"]) for d in docs]); t_index = time.perf_counter() - t0
qs = [l.split("\t", 1)[1] for l in open(sys.argv[2])][: int(sys.argv[3])]
t0 = time.perf_counter()
for q in qs:
    np.argsort(-bm.get_scores(tok(q)))[:100]
t_q = time.perf_counter() - t0
print(json.dumps({"index_s": t_index, "qps": len(qs) / t_q, "queries": len(qs),
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run(code: str, *args) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=325_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--rank-bm25-queries", type=int, default=20)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-c", GENERATE, str(a.docs), str(a.queries), tmp], check=True)
        ours = run(TRECKIT, f"{tmp}/docs.jsonl", f"{tmp}/queries.tsv")
        print(json.dumps({"treckit (bm25s)": ours}))
        theirs = run(RANK_BM25, f"{tmp}/docs.jsonl", f"{tmp}/queries.tsv", a.rank_bm25_queries)
        print(json.dumps({"rank_bm25": theirs}))


if __name__ == "__main__":
    main()
