"""Seeded generator of large TREC qrels + run files for the benchmarks.

Scores are rounded to two decimals so that ties are common (the case where
tie-breaking conventions differ); each query has 1-4 relevant docs graded 1-3
plus a few judged non-relevant ones.

Modes (``--mode``):
  classic  the 7M-line data of bench/run_bench.py (run, qrels and a JSONL copy), built in memory, and subtopic
           qrels made from the qrels (each judged document on one of 6 subtopics: ``subtopic_qrels``).
  large    the same shape at any size with bounded memory (the scale benchmark's 100,000 x 1,000 = 100M lines,
           about 4 GB): ``run.trec`` and ``qrels``, and with ``--interleave P`` also
           ``run_interleaved.trec``, the same lines in P sweeps over all queries (each query's lines
           spread across the whole file, the case a query-grouped stream cannot take).
  many     ``--runs N`` runs of ``queries x docs`` lines (``run_000.trec`` ...) sharing one ``qrels``:
           every run retrieves half of one per-query pool of judged and unjudged docs.
  ties     a tied run and its untied twin: ``run.tied.QxD.trec`` (every score equal), ``run.distinct.QxD.trec``
           (the same lines, scores distinct and falling), and ``qrels.half.QxD.trec`` judging a random half of
           each query's docs (a third of those relevant, graded 1-3).
The large and many modes generate and write blocks of whole queries (BLOCK_LINES lines) with a random
stream of their own per block (their data depends on the seed and the sizes only) and format lines with
pyarrow, never one Python string per line; files appear atomically (written as ``*.part``, then renamed).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
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


def subtopic_qrels(qrels_path: Path, out: Path, *, subtopics: int = 6, most: int = 1, seed: int = 7) -> Path:
    """Subtopic qrels (the iteration field is the subtopic) made from ``qrels``: each judged document judged on 1 to
    ``most`` of ``subtopics`` subtopics, seeded, with its grade on each (a relevant document is relevant to each of
    its subtopics).  With ``most`` 1 (the default) each document is judged once, so the same file also serves
    trec_eval's and gdeval's measures in one treckit eval (``ERR@20 alpha_nDCG@20 nDCG@10``)."""
    if out.exists():
        return out
    rng = np.random.default_rng(seed)
    lines = []
    for line in qrels_path.read_text().splitlines():
        q, _, d, g = line.split()
        for s in rng.choice(subtopics, int(rng.integers(1, most + 1)), replace=False) + 1:
            lines.append(f"{q} {s} {d} {g}\n")
    tmp = out.with_name(out.name + ".part")
    tmp.write_text("".join(lines))
    tmp.replace(out)
    return out


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


# ------------------------------------------------------------------ large and many modes, in blocks

BLOCK_LINES = 1_000_000       # run lines generated, formatted and written at once (~100 MB of memory)
DOC_RANGE = 5_000_000         # doc numbers drawn below this, times the pool width: 10-digit ids ("D" + 10 = 11 chars)
MAX_SCORE_CENTS = 2000        # scores 0.00-20.00 in steps of 0.01, as in the classic mode: ties are common
JUDGED_MAX = 9                # 1-4 relevant + 0-5 judged non-relevant per query
# stream keys: each mode and each part draws from its own seeded stream, so adding one never moves another
_LARGE, _POOL, _RUN = 1, 2, 3


def _rng(seed: int, *key: int) -> np.random.Generator:
    return np.random.default_rng([seed, *key])


def _strings(values: np.ndarray):
    import pyarrow as pa
    import pyarrow.compute as pc
    return pc.cast(pa.array(values), pa.string())


def _run_lines(qids: np.ndarray, doc_numbers: np.ndarray, cents: np.ndarray, run_name: str, first_rank: int = 1):
    """One arrow string per line, ``"<qid> Q0 D<doc> <rank> <score> <name>\\n"``, for a (queries, k) block
    of doc numbers and scores in hundredths (each row in rank order, from ``first_rank``)."""
    import pyarrow.compute as pc
    nq, k = doc_numbers.shape
    qid = _strings(np.repeat(qids, k))
    rank = _strings(np.tile(np.arange(first_rank, first_rank + k), nq))
    whole = _strings((cents // 100).ravel())
    hundredths = pc.utf8_lpad(_strings((cents % 100).ravel()), 2, "0")
    return pc.binary_join_element_wise(qid, " Q0 D", _strings(doc_numbers.ravel()), " ", rank, " ", whole, ".",
                                       hundredths, f" {run_name}\n", "")


def _write_strings(fh, lines) -> None:
    """Write the bytes of an arrow string array (each element a whole line) without a copy per line."""
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32)[lines.offset:lines.offset + len(lines) + 1]
    fh.write(memoryview(lines.buffers()[2])[offsets[0]:offsets[-1]])


def _judged(rng: np.random.Generator, nq: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Per query, JUDGED_MAX distinct positions in [0, width) in random order and their grades:
    the first 1-4 graded 1-3, the next 0-5 graded 0, the rest -1 (not judged)."""
    n_rel = rng.integers(1, 5, nq)
    n_non = rng.integers(0, 6, nq)
    keys = rng.random((nq, width))
    smallest = np.argpartition(keys, JUDGED_MAX - 1, axis=1)[:, :JUDGED_MAX]
    picks = np.take_along_axis(smallest, np.argsort(np.take_along_axis(keys, smallest, axis=1), axis=1), axis=1)
    col = np.arange(JUDGED_MAX)[None, :]
    grades = np.where(col < n_rel[:, None], rng.integers(1, 4, (nq, JUDGED_MAX)),
                      np.where(col < (n_rel + n_non)[:, None], 0, -1))
    return picks, grades


def _write_qrels(fh, qids: np.ndarray, picks: np.ndarray, grades: np.ndarray, doc_id) -> None:
    # at most JUDGED_MAX lines a query: plain Python strings are fine here
    rows, cols = np.nonzero(grades >= 0)
    fh.write("".join(f"{qids[r]} 0 {doc_id(r, picks[r, c])} {grades[r, c]}\n"
                     for r, c in zip(rows.tolist(), cols.tolist())).encode("ascii"))


def _large_block(seed: int, block: int, qids: np.ndarray, docs: int):
    """The run part of one block of the large mode: doc numbers (unique inside a query) and scores in
    hundredths, best first; the generator is returned too, positioned for the block's qrels."""
    rng = _rng(seed, _LARGE, block)
    doc_numbers = rng.integers(0, DOC_RANGE, (qids.size, docs)) * docs + np.arange(docs)[None, :]
    cents = -np.sort(-rng.integers(0, MAX_SCORE_CENTS + 1, (qids.size, docs)), axis=1)
    return doc_numbers, cents, rng


class _Atomic:
    """A binary file written as ``<name>.part`` and renamed into place only when complete."""

    def __init__(self, path: Path):
        self.path, self.part = path, path.with_name(path.name + ".part")

    def __enter__(self):
        self.fh = open(self.part, "wb")
        return self.fh

    def __exit__(self, kind, *_):
        self.fh.close()
        if kind is None:
            os.replace(self.part, self.path)
        else:
            self.part.unlink(missing_ok=True)


def _blocks(queries: int, block_queries: int):
    for block, start in enumerate(range(0, queries, block_queries)):
        yield block, np.arange(start + 1, min(start + block_queries, queries) + 1)


def _progress(what: str, done: int, total: int, started: float, unit: str = "blocks") -> None:
    if done == total or done % 10 == 0:
        print(f"\r{what}: {done}/{total} {unit}, {time.perf_counter() - started:.0f} s",
              end="\n" if done == total else "", file=sys.stderr, flush=True)


def generate_large(out_dir: Path, queries: int = 100_000, docs: int = 1000, seed: int = 13, interleave: int = 0,
                   block_queries: int | None = None) -> dict[str, Path]:
    """``run.trec`` (``queries x docs`` lines, grouped by query, best first, 11-character doc ids of each
    query's own, ranks 1..docs, run name ``bench``) and ``qrels`` (1-4 relevant graded 1-3 and 0-5
    judged non-relevant per query, picked from 2 x docs positions: about half are retrieved, the others
    are ``X<query index>_<position>``), as in the classic mode. With ``interleave`` P > 1 also
    ``run_interleaved.trec``: the same lines, written in P sweeps over all queries, sweep j holding the
    j-th of P slices of every query's ranking."""
    if docs < JUDGED_MAX:
        raise ValueError(f"docs must be at least {JUDGED_MAX} (the judged docs are drawn from 2 x docs)")
    if interleave and not 1 < interleave <= docs:
        raise ValueError(f"--interleave must be between 2 and docs ({docs})")
    block_queries = block_queries or max(1, BLOCK_LINES // docs)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"run": out_dir / "run.trec", "qrels": out_dir / "qrels"}
    n_blocks = -(-queries // block_queries)
    started = time.perf_counter()
    with _Atomic(paths["run"]) as run, _Atomic(paths["qrels"]) as qrels:
        for block, qids in _blocks(queries, block_queries):
            doc_numbers, cents, rng = _large_block(seed, block, qids, docs)
            _write_strings(run, _run_lines(qids, doc_numbers, cents, "bench"))
            picks, grades = _judged(rng, qids.size, 2 * docs)
            _write_qrels(qrels, qids, picks, grades,
                         lambda r, p: f"D{doc_numbers[r, p]}" if p < docs else f"X{qids[r] - 1}_{p}")
            _progress(f"{paths['run']}", block + 1, n_blocks, started)
    if interleave:
        paths["interleaved"] = out_dir / "run_interleaved.trec"
        bounds = np.linspace(0, docs, interleave + 1).astype(int)
        started = time.perf_counter()
        with _Atomic(paths["interleaved"]) as fh:
            for sweep in range(interleave):
                lo, hi = bounds[sweep], bounds[sweep + 1]
                for block, qids in _blocks(queries, block_queries):
                    # regenerating a block costs less than holding the whole run or reading it back
                    doc_numbers, cents, _ = _large_block(seed, block, qids, docs)
                    # ranks lo+1..hi of every query: each line is the very line of run.trec
                    _write_strings(fh, _run_lines(qids, doc_numbers[:, lo:hi], cents[:, lo:hi], "bench", lo + 1))
                    _progress(f"{paths['interleaved']} sweep {sweep + 1}/{interleave}", block + 1, n_blocks, started)
    return paths


def generate_many(out_dir: Path, runs: int, queries: int = 1000, docs: int = 1000, seed: int = 13,
                  block_queries: int | None = None) -> dict[str, Path]:
    """``runs`` runs ``run_000.trec`` ... (``queries x docs`` lines each, run names ``r000`` ...) and one
    ``qrels``: each query has a pool of 2 x docs doc ids; the qrels judge 1-9 of the pool as in the
    large mode and each run retrieves a random half of the pool with its own scores, so about half of
    the judged docs are in any one run and the runs' measures differ."""
    if docs < JUDGED_MAX:
        raise ValueError(f"docs must be at least {JUDGED_MAX} (the judged docs are drawn from the pool)")
    block_queries = block_queries or max(1, BLOCK_LINES // docs)
    out_dir.mkdir(parents=True, exist_ok=True)
    width = 2 * docs
    blocks = list(_blocks(queries, block_queries))
    pools = []
    paths = {"qrels": out_dir / "qrels"}
    with _Atomic(paths["qrels"]) as qrels:
        for block, qids in blocks:
            rng = _rng(seed, _POOL, block)
            # DOC_RANGE // 2 keeps the ids at 11 characters with the doubled pool width
            pool = rng.integers(0, DOC_RANGE // 2, (qids.size, width)) * width + np.arange(width)[None, :]
            picks, grades = _judged(rng, qids.size, width)
            _write_qrels(qrels, qids, picks, grades, lambda r, p: f"D{pool[r, p]}")
            pools.append(pool)
    started = time.perf_counter()
    for i in range(runs):
        path = out_dir / f"run_{i:03d}.trec"
        with _Atomic(path) as fh:
            for (block, qids), pool in zip(blocks, pools):
                rng = _rng(seed, _RUN, i, block)
                chosen = np.argpartition(rng.random((qids.size, width)), docs - 1, axis=1)[:, :docs]
                cents = -np.sort(-rng.integers(0, MAX_SCORE_CENTS + 1, (qids.size, docs)), axis=1)
                _write_strings(fh, _run_lines(qids, np.take_along_axis(pool, chosen, axis=1), cents, f"r{i:03d}"))
        paths[f"run_{i:03d}"] = path
        _progress(f"{out_dir}/run_*.trec", i + 1, runs, started, "runs")
    return paths


def generate_ties(out_dir: Path, queries: int = 7000, docs: int = 1000, seed: int = 13,
                  block_queries: int | None = None) -> dict[str, Path]:
    """The ties mode's three files (see the module's doc), written a block of queries at a time: the doc ids
    are the large mode's (11 characters, each query's own), listed in the same order in both runs."""
    import pyarrow.compute as pc

    block_queries = block_queries or max(1, BLOCK_LINES // docs)
    out_dir.mkdir(parents=True, exist_ok=True)
    size = f"{queries}x{docs}"
    paths = {"tied": out_dir / f"run.tied.{size}.trec", "distinct": out_dir / f"run.distinct.{size}.trec",
             "qrels": out_dir / f"qrels.half.{size}.trec"}
    n_blocks = -(-queries // block_queries)
    started = time.perf_counter()
    with _Atomic(paths["tied"]) as tied, _Atomic(paths["distinct"]) as distinct, _Atomic(paths["qrels"]) as qrels:
        for block, qids in _blocks(queries, block_queries):
            doc_numbers, _, rng = _large_block(seed, block, qids, docs)
            falling = np.broadcast_to(100 * np.arange(docs, 0, -1)[None, :], doc_numbers.shape)
            _write_strings(distinct, _run_lines(qids, doc_numbers, falling, "bench"))
            _write_strings(tied, _run_lines(qids, doc_numbers, np.zeros_like(doc_numbers), "bench"))
            judged = np.argsort(rng.random(doc_numbers.shape), axis=1)[:, :docs // 2]
            grades = np.where(rng.random(judged.shape) < 1 / 3, rng.integers(1, 4, judged.shape), 0)
            lines = pc.binary_join_element_wise(
                _strings(np.repeat(qids, judged.shape[1])), " 0 D",
                _strings(np.take_along_axis(doc_numbers, judged, axis=1).ravel()), " ", _strings(grades.ravel()),
                "\n", "")
            _write_strings(qrels, lines)
            _progress(f"{paths['tied']}", block + 1, n_blocks, started)
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=("classic", "large", "many", "ties"), default="classic")
    ap.add_argument("--queries", type=int, default=None,
                    help="default 7000 (classic, ties), 100000 (large), 1000 (many)")
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--shape", choices=SHAPES, default="bench", help="classic mode only")
    ap.add_argument("--interleave", type=int, default=0, metavar="P",
                    help="large mode: also write run_interleaved.trec in P sweeps over all queries (e.g. 10)")
    ap.add_argument("--runs", type=int, default=200, help="many mode: how many runs")
    ap.add_argument("--out", type=Path, default=Path("outputs/bench"))
    a = ap.parse_args()
    if a.mode == "large":
        paths = generate_large(a.out, a.queries or 100_000, a.docs, a.seed, a.interleave)
    elif a.mode == "ties":
        paths = generate_ties(a.out, a.queries or 7000, a.docs, a.seed)
    elif a.mode == "many":
        paths = generate_many(a.out, a.runs, a.queries or 1000, a.docs, a.seed)
        paths = {k: v for k, v in paths.items() if k in ("qrels", "run_000", f"run_{a.runs - 1:03d}")}
    else:
        paths = generate(a.out, a.queries or 7000, a.docs, a.seed, a.shape)
        paths["subtopic_qrels"] = subtopic_qrels(paths["qrels"], paths["qrels"].with_suffix(".subtopics"))
    for k, v in paths.items():
        print(k, v)


if __name__ == "__main__":
    main()
