"""One huge TREC run partitioned by query across the workers of a Dask cluster.

The file (a local path or an fsspec URL) is cut into byte ranges of about
:data:`treckit.thresholds.DASK_BLOCK_BYTES`; each worker reads its own range (the whole lines that start in it)
and parses it with the one reader (:func:`treckit.engines.core.read_run_block`).  A shuffle follows, with
futures: each *map* task splits its block's lines into ``n`` buckets by a stable hash of the qid
(:func:`treckit.engines.core.split_by_query`), each *reduce* task ``k`` concatenates bucket ``k`` of every block
(in file order) -- every line of its queries -- and evaluates it against those queries' judgments
(:func:`treckit.engines.memory.evaluate_part`); it also settles the reader's evidence of queries whose rank
column rises with the score (:mod:`treckit.inputs.formats.rising_ranks`), which the map tasks split by bucket beside
the lines.  The per-query values and those counts come back to the client, where
:func:`treckit.engines.memory.merge_parts` applies what looks at the whole run (trec_eval's query order, -c,
--missing, the sanity warnings, -Z, the summary, the run tag), exactly as for a run evaluated in one piece, and
the counts are added up and said once.

Line numbers: a block is first parsed as if it began at line 1 (a block does not know how many lines come
before it); every block reports its line count, and a block whose parse failed is parsed again on a worker
with its true first line, so that the error names the file and the line the local engine names.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from .. import thresholds
from ..console import spelling
from ..console.errors import InputError, TreckitError
from ..console.messages import say
from ..inputs.formats.detect import detect_run
from ..inputs.formats.rising_ranks import NOTE, RisingRanks
from ..inputs.reading import rising_ranks_warning
from ..inputs.sources import check_input, read_as
from ..inputs.urls import is_url, read_range, url_size
from .core import (QrelsByQuery, block_readings, bucket_order, check_qrels, query_buckets, read_run_block,
                   split_by_query, split_rows)
from .dask_tasks import Outcome, captured, cluster_failure, unwrap
from .memory import empty_run, evaluate_part, merge_parts


@dataclass
class Plan:
    path: str
    size: int
    ranges: list[tuple[int, int]]


@dataclass
class Job:
    """A partitioned run under way: its plan, its map tasks and (after :func:`collect`) its reduce tasks."""

    plan: Plan
    buckets: int
    maps: list = field(default_factory=list)
    metas: list = field(default_factory=list)
    futures: list = field(default_factory=list)     # every future of the job (cancelled on failure)
    key: str = ""
    reading: Any = None


def plan(path, reading, options) -> Plan | None:
    """How to partition ``path``, or None when it is evaluated by one task: a file or URL of at least
    :data:`~treckit.thresholds.DASK_PARTITION_MIN_BYTES`, holding a TREC run that is evaluated as read
    (trec_eval's reading: no conversion), plain (not gzip), without --skip-malformed (its count of skipped lines
    is the whole file's).  Anything unusual -- a missing file, a folder -- is left to the one-task path, which
    reports it as the local engine does."""
    if not isinstance(path, (str, os.PathLike)) or str(path) == "-" or reading.skip_malformed:
        return None
    if reading.format not in (None, "trec") or not reading.evaluated_as_read("trec"):
        return None
    path = str(path)
    try:
        size = _size(path)
        if size < thresholds.DASK_PARTITION_MIN_BYTES:
            return None
        head = _read_range(path, 0, min(size, thresholds.SOURCE_END_BYTES))
        if head[:2] == b"\x1f\x8b" or (reading.format is None and _detected(path, head) != "trec"):
            return None
    except (TreckitError, OSError):
        return None
    n = max(1, math.ceil(size / thresholds.DASK_BLOCK_BYTES))
    bounds = [size * i // n for i in range(n + 1)]
    return Plan(path, size, list(zip(bounds[:-1], bounds[1:])))


def _size(path: str) -> int:
    if is_url(path):
        return url_size(path)
    st = check_input(path)
    return st.st_size if st is not None and os.path.isfile(path) else -1


def _read_range(path: str, start: int, end: int) -> bytes:
    return read_range(path, start, end)


def _detected(path: str, head: bytes) -> str | None:
    """The run format the one detector sees in ``head`` (the file's first bytes: enough for its first lines)."""
    if not is_url(path):
        return detect_run(path).format
    with read_as(path, head[:head.rfind(b"\n") + 1] or head):     # whole lines only, for the detector's eyes
        return detect_run(path).format


# ---------------------------------------------------------------- on the workers
def owned_lines(path: str, start: int, end: int, size: int) -> bytes:
    """The whole lines of ``path`` that start at a byte in ``start`` .. ``end`` (the last one read on to its end)."""
    lo = max(start - 1, 0)                 # the byte before: a line starts at ``start`` when it is a newline
    data = _read_range(path, lo, end)
    pos = end
    while pos < size and not data.endswith(b"\n"):
        chunk = _read_range(path, pos, min(pos + thresholds.DASK_TAIL_READ_BYTES, size))
        i = chunk.find(b"\n")
        data += chunk if i < 0 else chunk[:i + 1]
        pos += len(chunk)
        if i >= 0:
            break
    if start > 0:
        i = data.find(b"\n")
        data = data[i + 1:] if i >= 0 else b""
    return data


def _line_count(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


@dataclass
class Block:
    """A map task's output: its line and row counts, the run tag of its last line, and its lines in buckets
    (each a Run of whole queries, with each row's index in the block) -- or the error its parse met."""

    lines: int
    rows: int = 0
    tag: str | None = None
    pieces: list = field(default_factory=list)      # (Run, rows in the block, RisingRanks or None) per bucket
    error: tuple | None = None
    readings: tuple = ()        # (counts, first line in the block) of lines read by an explicit rule (ids with spaces)


def map_block(path: str, start: int, end: int, size: int, buckets: int, reading) -> Block:
    data = owned_lines(path, start, end, size)
    lines = _line_count(data)
    if not data:
        return Block(0)
    readings = block_readings(path)         # said once by the client, with the file's true lines
    try:
        run = read_run_block(data, path, 1, reading, lean=True, readings=readings)
    except InputError as exc:
        if exc.reason.startswith("no run lines found"):      # a block of comments and blank lines only
            return Block(lines)
        return Block(lines, error=("input", exc.reason, exc.path, exc.line, exc.text, exc.fix))
    except TreckitError as exc:
        return Block(lines, error=("runtime", str(exc), exc.exit_code))
    rising = run.notes.pop(NOTE, None)
    n = run.table.num_rows
    rows = split_rows(run, buckets) if n else []
    evidence = rising.split(lambda qid: bucket_order(qid, buckets), buckets) if rising is not None else [None] * buckets
    pieces = list(zip(split_by_query(run, buckets, rows), rows, evidence)) if n else []
    return Block(lines, n, run.tag if n else None, pieces, readings=(readings.counts, readings.first))


def block_meta(block: Block) -> Block:
    """What the client needs of a map's output (its counts, tag, error and readings), without its lines."""
    return Block(block.lines, block.rows, block.tag, [], block.error, block.readings)


def report_readings(path: str, metas: list[Block]) -> None:
    """The blocks' lines read by an explicit rule, said once for the file as the local engine says it."""
    total = block_readings(path)
    first_line = 1
    for m in metas:
        if m.readings:
            counts, first = m.readings
            for kind, count in counts.items():
                total.counts[kind] = total.counts.get(kind, 0) + count
                total.first.setdefault(kind, first[kind] + first_line - 1)
        first_line += m.lines
    total.report()


def piece(block: Block, k: int):
    return block.pieces[k] if block.pieces else None


def reparse(path: str, start: int, end: int, size: int, reading, first_line: int) -> None:
    """A failed block parsed again knowing its first line: raises the error with the file's true line."""
    read_run_block(owned_lines(path, start, end, size), path, first_line, reading, lean=True)


def reduce_bucket(pieces: list, row_offsets: list[int], qrels, requests, options, source: str):
    """Bucket ``k`` of every block, concatenated in file order (every line of its queries), evaluated against
    those queries' judgments: (its PartValues, its queries' ranks rising with the score, settled)."""
    from dataclasses import replace

    import numpy as np
    import pyarrow as pa


    rising = RisingRanks()
    for p in pieces:
        if p is not None:
            rising.add(p[2])

    got = [(p, off) for p, off in zip(pieces, row_offsets) if p is not None and p[0].table.num_rows]
    if not got:
        run, rows = empty_run(), np.zeros(0, np.int64)
    else:
        runs = [p[0] for p, _ in got]
        written = {}
        for r in runs:
            written.update(r.written)
        run = replace(runs[0], table=pa.concat_tables([r.table for r in runs]), written=written)
        rows = np.concatenate([np.asarray(p[1], np.int64) + off for p, off in got])
    rising.settle()
    return evaluate_part(qrels, run, requests, options, source, row_offset=rows), rising


# ---------------------------------------------------------------- on the client
def submit(client, plan: Plan, qrels_future, qrels, requests, options, warn, *, key: str, reading=None) -> Job:
    """Start the map tasks of ``plan`` (the reduce tasks follow in :func:`collect`, once the blocks' counts
    are known)."""
    buckets = max(1, sum(client.nthreads().values()))
    job = Job(plan, buckets, key=key, reading=reading)
    for b, (start, end) in enumerate(plan.ranges):
        m = client.submit(map_block, plan.path, start, end, plan.size, buckets, reading, key=f"{key}-map-{b}",
                          pure=False)
        job.maps.append(m)
        job.metas.append(client.submit(block_meta, m, key=f"{key}-meta-{b}", pure=False))
    job.futures += job.maps + job.metas
    return job


def collect(client, job: Job, qrels, requests, options, warn):
    """(run tag, EvalResult) of a partitioned run: the blocks' counts, the reduce tasks, the merge."""
    import numpy as np


    plan = job.plan
    metas = _wait(client, job, job.metas, f"{plan.path} (reading its blocks)")
    bad = next((i for i, m in enumerate(metas) if m.error is not None), None)
    if bad is not None:
        first_line = 1 + sum(m.lines for m in metas[:bad])
        start, end = plan.ranges[bad]
        again = client.submit(captured, reparse, plan.path, start, end, plan.size, job.reading, first_line,
                              speaking=spelling.current(), key=f"{job.key}-reparse-{bad}", pure=False)
        job.futures.append(again)
        unwrap(_wait(client, job, [again], plan.path)[0])
        unwrap(_moved(metas[bad].error, first_line))       # the parse passed this time: the first error, moved
    if not any(m.rows for m in metas):
        raise InputError("no run lines found (the file is empty or holds only comments)", path=plan.path,
                         fix="check that the right file was given")
    report_readings(plan.path, metas)
    check_qrels(qrels)                                    # the checks that see every judgment, once
    by_query = QrelsByQuery(qrels)
    judged = by_query.qids
    owner = query_buckets(judged, job.buckets) if judged else np.zeros(0, np.int64)
    offsets = np.concatenate(([0], np.cumsum([m.rows for m in metas])[:-1])).tolist()
    reduces = []
    for k in range(job.buckets):
        pieces = [client.submit(piece, m, k, key=f"{job.key}-piece-{b}-{k}", pure=False) for b, m in enumerate(job.maps)]
        qrels_k = by_query.take([q for q, o in zip(judged, owner.tolist()) if o == k])
        reduces.append(client.submit(captured, reduce_bucket, pieces, offsets, qrels_k, requests, options, plan.path,
                                     speaking=spelling.current(), key=f"{job.key}-reduce-{k}", pure=False))
    # only the reduce tasks are held from here on: Dask frees each block and piece once what needs it has run
    # (and makes it again from its task, should a worker holding it be lost before)
    job.maps, job.metas, job.futures = [], [], reduces
    parts, buckets = zip(*[unwrap(o) for o in _wait(client, job, reduces, plan.path)])
    client.cancel(reduces)
    rising = RisingRanks()
    for settled in buckets:
        rising.add(settled)
    if rising.flagged:
        (warn or say)(rising_ranks_warning(plan.path, rising.flagged, rising.queries))
    tag = next((m.tag for m in reversed(metas) if m.tag is not None), "treckit")
    return tag, merge_parts(list(parts), qrels, requests, options, runid=tag, source=plan.path, warn=warn)


def _moved(error: tuple, first_line: int):
    if error[0] == "input" and error[3] is not None:
        kind, reason, path, line, text, fix = error
        error = (kind, reason, path, line + first_line - 1, text, fix)
    return Outcome(error=error)


def _wait(client, job: Job, futures: list, name: str) -> list:
    """The futures' values in order; a failure of the cluster as a clear error, the job cancelled."""
    try:
        return [f.result() for f in futures]
    except BaseException as exc:
        client.cancel(job.futures)
        failure = cluster_failure(exc, [name] * len(futures), futures)
        if failure is None:
            raise
        raise failure from None
