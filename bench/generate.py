"""Seeded generator of large TREC qrels + run files for the benchmarks.

Scores are rounded to two decimals so that ties are common (the case where
tie-breaking conventions differ); each query has 1-4 relevant docs graded 1-3
plus a few judged non-relevant ones.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


SHAPES = ("bench", "short-ids")


def generate(out_dir: Path, queries: int, docs: int, seed: int = 13, shape: str = "bench") -> dict[str, Path]:
    """``bench``: every query retrieves ``docs`` docs with 11-character ids of its own.
    ``short-ids`` (MS MARCO-like): numeric ids of 1-6 digits from a pool shared by all queries, and
    depths from a fifth of ``docs`` to ``docs``."""
    rng = np.random.default_rng(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    qids = np.arange(1, queries + 1)
    if shape == "short-ids":
        pool = 200_000
        doc_numbers = np.stack([rng.choice(pool, docs, replace=False) for _ in range(queries)])
        depth = rng.integers(docs // 5, docs + 1, queries)
        prefix, tag = "", f"{shape}."
    else:
        doc_numbers = rng.integers(0, 5_000_000, size=(queries, docs))
        # make docids unique inside a query: add the column index scaled past the random range
        doc_numbers = doc_numbers * docs + np.arange(docs)[None, :]
        depth = np.full(queries, docs)
        prefix, tag = "D", ""
    # real runs list each query's docs best first: sort scores descending (ties stay in arbitrary docid order)
    scores = -np.sort(-np.round(rng.random((queries, docs)) * 20.0, 2), axis=1)
    run_path = out_dir / f"run.{tag}{queries}x{docs}.trec"
    qrels_path = out_dir / f"qrels.{tag}{queries}x{docs}.trec"
    jsonl_path = out_dir / f"run.{tag}{queries}x{docs}.jsonl"
    kept = np.arange(docs)[None, :] < depth[:, None]
    q_col = np.repeat(qids, depth)
    d_col = doc_numbers[kept]
    ranks = np.tile(np.arange(1, docs + 1), queries)[kept.ravel()]
    s_col = scores[kept]
    with open(run_path, "w", encoding="ascii") as fh:
        for start in range(0, q_col.size, 1_000_000):
            sl = slice(start, start + 1_000_000)
            lines = [f"{q} Q0 {prefix}{d} {r} {s:.2f} bench\n" for q, d, r, s in zip(q_col[sl].tolist(), d_col[sl].tolist(), ranks[sl].tolist(), s_col[sl].tolist())]
            fh.write("".join(lines))
    with open(jsonl_path, "w", encoding="ascii") as fh:
        for qi in range(queries):
            fh.write(json.dumps({"qid": str(qids[qi]), "docs": [f"{prefix}{d}" for d in doc_numbers[qi, :depth[qi]].tolist()],
                                 "scores": [round(s, 2) for s in scores[qi, :depth[qi]].tolist()]}) + "\n")
    with open(qrels_path, "w", encoding="ascii") as fh:
        for qi in range(queries):
            n_rel = int(rng.integers(1, 5))
            n_non = int(rng.integers(0, 6))
            picks = rng.choice(docs * 2, size=n_rel + n_non, replace=False)
            for j, p in enumerate(picks.tolist()):
                # about half of the judged docs are in the run, the rest are not retrieved
                doc = f"{prefix}{doc_numbers[qi, p]}" if p < depth[qi] else f"X{qi}_{p}"
                grade = int(rng.integers(1, 4)) if j < n_rel else 0
                fh.write(f"{qids[qi]} 0 {doc} {grade}\n")
    return {"run": run_path, "qrels": qrels_path, "jsonl": jsonl_path}


def shuffled_copy(run_path: Path, seed: int = 1) -> Path:
    """The same run with each query's lines in a seeded random order (queries still together): the
    case where a run cannot be ranked by reading its order."""
    out = run_path.with_name(run_path.name.replace(".trec", ".shuffled.trec"))
    if out.exists():
        return out
    lines = run_path.read_bytes().splitlines(keepends=True)
    qid = np.array([line[: line.index(b" ")] for line in lines])
    rng = np.random.default_rng(seed)
    order = np.lexsort((rng.random(len(lines)), np.r_[0, np.cumsum(qid[1:] != qid[:-1])]))
    out.write_bytes(b"".join(lines[i] for i in order.tolist()))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--shape", choices=SHAPES, default="bench")
    ap.add_argument("--out", type=Path, default=Path("outputs/bench"))
    a = ap.parse_args()
    for k, v in generate(a.out, a.queries, a.docs, a.seed, a.shape).items():
        print(k, v)


if __name__ == "__main__":
    main()
