"""Bounded-memory evaluation of a run file on one machine (``--memory-limit``).

A TREC run larger than the budget (its file size times ``thresholds.IN_MEMORY_BYTES_PER_FILE_BYTE``)
is read a block of whole lines at a time by the one reader (:func:`treckit.engines.core.read_run_block`,
errors naming the file's true line):

* **grouped** (each query's lines together, the usual run): evaluated chunk by chunk of whole queries as
  it is read; the last query of a block is carried over to the next block, since its lines may go on.
* **interleaved** (a query seen again after another one): found out while streaming (a qid reappears),
  the evaluation starts over: the file is partitioned by a hash of the qid into temporary Arrow IPC shards
  in a private temporary folder (removed afterwards, also on an error or Ctrl-C), then evaluated shard by shard.

Either way the parts go through :func:`treckit.engines.memory.merge_parts`, the code of the in-memory path, so
the output is the same bytes.  Only TREC 6-column runs read as trec_eval reads them are streamed (not with
--skip-malformed, whose count of skipped lines is reported once for the whole file); any other run, and
stdin, pipes and .gz files, are read whole, with a one-line note when the budget would have asked for streaming.

The reader's evidence of queries whose rank column rises with the score (:mod:`treckit.inputs.formats.rising_ranks`)
is settled as queries end -- after each block, but for the carried-over query; when interleaved, shard by
shard, from a rank shard written beside each shard -- and the warning is said once for the file, as the
in-memory reading says it.
"""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Iterator

from ..dependencies import deferred
from .. import thresholds
from ..console.errors import InputError, os_error
from ..console.messages import say
from ..console.progress import Meter
from ..inputs.options import RunReading
from ..measures import subtopics
from .budget import DEFAULT_MEMORY, MemoryLimit, parse_memory_limit  # noqa: F401  (parse_memory_limit: the option's sizes)
from ..inputs.limits import GZIP_MAGIC
from ..inputs.sources import Source
from .memory import EvalOptions, EvalResult, PartValues, empty_run, evaluate_part, evaluate_requests, merge_parts
from ..inputs.formats.rising_ranks import NOTE as RISING_RANKS, RisingRanks
from ..model import Qrels, Run
from ..ranking import TIES_SETTLED
from ..fast.groups import id_runs
from ..fast.arrow import repeated_column
from ..console.process import memory_freed
from .core import QrelsByQuery, block_readings, bucket_order, check_qrels, query_buckets, read_run_block
from ..inputs.reading import detect_run_format, read_with, rising_ranks_warning

np = deferred("numpy")
pa = deferred("pyarrow")


@dataclass
class StreamPlan:
    """Whether and how a run file is streamed (``why``: the note when it is not, though it is large)."""

    stream: bool
    size: int = 0               # the file's size (of gzip data: compressed)
    block_bytes: int = 0
    why: str = ""
    gzip: bool = False          # a .gz run, inflated as it is read


def plan(path, reading, memory_limit: int | None) -> StreamPlan:
    """Stream when the budget is set and the file would not fit it whole (see the module's rules); a .gz run, whose
    content's size is known only once inflated, is streamed whenever it can be."""
    if memory_limit is None or str(path) == "-":
        return StreamPlan(False)
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return StreamPlan(False)
        with open(path, "rb") as fh:
            gz = fh.read(2) == GZIP_MAGIC
    except OSError:
        return StreamPlan(False)                 # the in-memory reader names the problem
    if not gz and st.st_size * thresholds.IN_MEMORY_BYTES_PER_FILE_BYTE <= memory_limit:
        return StreamPlan(False)
    fmt = reading.format or detect_run_format(path)
    if fmt != "trec" or not reading.evaluated_as_read(fmt):
        why = "only TREC 6-column runs ranked by score as written are streamed"
    elif reading.skip_malformed:
        why = "--skip-malformed reads the run whole"
    else:
        block = max(memory_limit // thresholds.STREAM_BLOCK_SHARE, thresholds.STREAM_BLOCK_MIN_BYTES)
        return StreamPlan(True, st.st_size, block, gzip=gz)
    return StreamPlan(False, st.st_size, 0, why if not gz or st.st_size * thresholds.IN_MEMORY_BYTES_PER_FILE_BYTE
                      > memory_limit else "")


def evaluate_path(qrels: Qrels, path, requests, options: EvalOptions | None = None, reading=None, *,
                  memory_limit: MemoryLimit | int | None = DEFAULT_MEMORY, warn=None, qrels_source=None,
                  on_part: Callable[[PartValues, Run], None] | None = None, order_option: bool = True,
                  merge: bool = True) -> EvalResult | None:
    """Evaluate the run file ``path`` as ``treckit eval`` does: in memory, or streamed when it is larger
    than ``memory_limit`` (a :class:`MemoryLimit`, or bytes; None: always in memory).  ``on_part(values, run_part)`` is called on each
    part's values with the view kept (compare reads its hits there).  ``order_option``: see
    :func:`treckit.inputs.reading.read_with` (a caller that takes no ``--order``).  Without ``merge``, the parts
    only go to ``on_part`` and no result is made (None; what looks at the run's parts, judged or not)."""
    reading = reading or RunReading()
    memory_limit = MemoryLimit.parse(memory_limit).bytes
    p = plan(path, reading, memory_limit)
    if p.stream and p.gzip and subtopics.asked(requests):
        p = StreamPlan(False)                   # computed in memory only; the .gz is still inflated as it is read
    if not p.stream:
        if p.why:
            (warn or say)(f"{path}: read whole into memory, beyond --memory-limit ({p.why})")
        run = read_with(reading, path, lean=True, warn=warn, qrels_source=qrels_source, order_option=order_option).run
        if on_part is None:
            return evaluate_requests(qrels, run, requests, options, source=str(path), warn=warn)
        part = evaluate_part(qrels, run, requests, options, str(path), sanity=warn is not None, keep_view=True)
        on_part(part, run)
        return merge_parts([part], qrels, requests, options, runid=run.tag, source=str(path), warn=warn) if merge else None
    import dataclasses

    subtopics.refuse_streamed(requests, path)
    reading = dataclasses.replace(reading, format="trec")
    return StreamEvaluation(qrels, str(path), requests, options or EvalOptions(), reading, p, memory_limit,
                            warn, on_part, order_option=order_option, merge=merge).run()


class _Interleaved(Exception):
    """A query's lines are not together: start over with shards."""


@dataclass
class StreamEvaluation:
    qrels: Qrels
    path: str
    requests: list
    options: EvalOptions
    reading: object
    plan: StreamPlan
    memory_limit: int
    warn: Callable[[str], None] | None = None
    on_part: Callable | None = None
    parts: list[PartValues] = field(default_factory=list)
    runid: str = "treckit"
    shard_dir: str | None = None
    rising: RisingRanks = field(default_factory=RisingRanks)     # queries whose ranks rise with the score
    order_option: bool = True          # whether the warning of rising ranks may name --order
    block_notes: dict = field(default_factory=dict)               # what the shards' runs keep of the blocks' notes
    merge: bool = True                 # whether the parts are merged into a result (else they only go to on_part)

    def run(self) -> EvalResult:
        check_qrels(self.qrels)
        self.index = QrelsByQuery(self.qrels)
        with Meter(f"evaluating {self.path}", None if self.plan.gzip else self.plan.size) as self.meter:
            try:
                self._grouped()
            except _Interleaved:
                self.parts, self.rising = [], RisingRanks()
                self.meter.restart(f"partitioning {self.path} (queries interleaved)")
                self._sharded()
        if self.rising.flagged:
            (self.warn or say)(rising_ranks_warning(self.path, self.rising.flagged, self.rising.queries,
                                                    order_option=self.order_option))
        if not self.merge:
            return None
        return merge_parts(self.parts, self.qrels, self.requests, self.options, runid=self.runid,
                           source=self.path, warn=self.warn)

    # ------------------------------------------------------------ reading
    def _blocks(self) -> Iterator[tuple[Run, int, RisingRanks | None]]:
        """(the run of each block of whole lines, the block's first row in the whole run, the reader's evidence
        of ranks rising with the score in it, not settled).  The next block is read and parsed on a second
        thread while the caller evaluates this one."""
        from concurrent.futures import ThreadPoolExecutor

        source = Source(self.path).blocks(self.plan.block_bytes)
        readings = block_readings(self.path)

        def read_next():
            for data, first_line in source:
                try:
                    return read_run_block(data, self.path, first_line, self.reading, readings=readings), len(data)
                except InputError as exc:
                    if not exc.reason.startswith("no run lines found"):
                        raise
                    self.meter.advance(len(data))           # a block of comments and blank lines only
            return None

        rows = 0
        pool = ThreadPoolExecutor(max_workers=1)
        try:
            pending = pool.submit(read_next)
            while (got := pending.result()) is not None:
                pending = pool.submit(read_next)
                run, size = got
                del got
                self.meter.advance(size)
                self.runid = run.tag                 # trec_eval's run tag: the last line's
                n = len(run)
                yield _lean(run), rows, run.notes.get(RISING_RANKS)
                rows += n
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            source.close()
        if rows == 0:
            raise InputError("no run lines found (the file is empty or holds only comments)", path=self.path,
                             fix="check that the right file was given")
        readings.report()

    def _evaluate(self, run: Run, qrels: Qrels, row_offset) -> None:
        part = evaluate_part(qrels, run, self.requests, self.options, self.path, row_offset=row_offset,
                             sanity=self.warn is not None, keep_view=self.on_part is not None)
        if self.on_part is not None:
            self.on_part(part, run)
            part.view = None
        self.parts.append(part)
        del run
        memory_freed()                     # else the resident size creeps up by a part's worth of arrays

    # ------------------------------------------------------------ grouped runs
    def _grouped(self) -> None:
        finished: set[str] = set()
        carry: Run | None = None
        carry_row = 0
        for run, row, rising in self._blocks():
            if carry is not None:
                run = _concat(carry, run)
                row = carry_row
            starts, run_code, ids = id_runs(run.table.column("qid"))
            if run_code.size != len(ids) or not finished.isdisjoint(ids):
                raise _Interleaved()
            self.rising.add(rising)
            self.rising.settle(keep=ids[-1:])          # every query but the carried one has ended
            last = int(starts[-1])
            if last:
                done = _slice(run, 0, last)
                self._evaluate(done, self.index.take(ids[:-1]), row)
                finished.update(ids[:-1])
            carry, carry_row = _slice(run, last, len(run)), row + last
            self._check_carried(carry, ids[-1])
        if carry is not None:
            self._evaluate(carry, self.index.take(id_runs(carry.table.column("qid"))[2]), carry_row)
        self.rising.settle()

    def _check_carried(self, carry: Run, qid: str) -> None:
        """A query's lines are carried from block to block until it ends: one query larger than the budget is
        refused (its values need all its lines at once), never held beyond it."""
        held = carry.table.nbytes * thresholds.IN_MEMORY_BYTES_PER_FILE_BYTE
        budget = max(self.memory_limit, thresholds.MEMORY_LIMIT_MIN)
        if held > budget:
            raise InputError(f"query {qid!r} alone takes about {held:,} bytes to evaluate, more than the memory "
                             f"budget of {budget:,} bytes (--memory-limit): its values need all its lines at once",
                             path=self.path,
                             fix="give a larger --memory-limit (or --memory-limit 0: no limit)")

    # ------------------------------------------------------------ interleaved runs: shards by query hash
    def _sharded(self) -> None:
        estimate = (self.plan.size * (thresholds.GZIP_SHARD_EXPANSION if self.plan.gzip else 1)
                    * thresholds.IN_MEMORY_BYTES_PER_FILE_BYTE)
        # a shard may have a rank shard beside it: two files open for writing each
        n = int(min(thresholds.SHARDS_MAX, max(2, files_we_may_open() // 2),
                    max(2, -(-estimate * thresholds.SHARD_SHARE // self.memory_limit))))
        judged = self.index.qids
        bucket_of = dict(zip(judged, query_buckets(judged, n).tolist()))
        by_shard: list[list[str]] = [[] for _ in range(n)]
        for q, b in bucket_of.items():
            by_shard[b].append(q)
        base = os.environ.get("TMPDIR") or tempfile.gettempdir()
        try:
            self.shard_dir = tempfile.mkdtemp(prefix="treckit-shards-", dir=base)
        except OSError as exc:
            raise _shard_error(exc, base) from None
        try:
            written, cleared = self._write_shards(n, bucket_of)
            self.meter.restart(f"evaluating {self.path} shard by shard", n)
            for i in range(n):
                self._settle_rank_shard(i, cleared[i])
                shard = os.path.join(self.shard_dir, f"{i}.arrow")
                if os.path.exists(shard):
                    with pa.OSFile(shard) as src:
                        t = pa.ipc.open_stream(src).read_all()
                    os.remove(shard)
                    run = Run(_lean_table(t.column("qid"), t.column("docid"), t.column("score")),
                              notes=dict(self.block_notes), written=written[i])
                    row = t.column("row").to_numpy()
                    del t
                else:
                    run, row = empty_run(), 0
                self._evaluate(run, self.index.take(by_shard[i]), row)
                self.meter.advance(1)
        except OSError as exc:
            raise _shard_error(exc, self.shard_dir) from None
        finally:
            shutil.rmtree(self.shard_dir, ignore_errors=True)

    def _write_shards(self, n: int, bucket_of: dict[str, int]) -> tuple[list[dict], list[list[pa.Array]]]:
        """Every line into the shard of its query; the lines whose ranks are still to be checked (few but in a
        run with negated scores) into the shard's rank shard, and the queries cleared of rising ranks kept by
        shard.  (the ids' written texts by shard, the cleared queries by shard)"""
        schema = pa.schema([("qid", pa.string()), ("docid", pa.string()), ("score", pa.float64()), ("row", pa.int64())])
        sinks: dict[str, tuple] = {}
        written: list[dict] = [{} for _ in range(n)]
        cleared: list[list[pa.Array]] = [[] for _ in range(n)]
        cache = bucket_of                            # grows with the queries the qrels do not judge

        def write(name: str, table: pa.Table, schema: pa.Schema) -> None:
            if name not in sinks:
                f = pa.OSFile(os.path.join(self.shard_dir, name), "wb")
                sinks[name] = (f, pa.ipc.new_stream(f, schema))
            sinks[name][1].write_table(table)

        try:
            for run, row, rising in self._blocks():
                self.block_notes.update(_kept_notes(run))
                t = run.table
                order, bounds = bucket_order(t.column("qid"), n, cache)
                piece = pa.table({"qid": t.column("qid"), "docid": t.column("docid"), "score": t.column("score"),
                                  "row": pa.array(np.arange(row, row + t.num_rows), pa.int64())})
                piece = piece.take(pa.array(order, pa.int64()))
                for i in np.flatnonzero(np.diff(bounds)).tolist():
                    write(f"{i}.arrow", piece.slice(bounds[i], bounds[i + 1] - bounds[i]), schema)
                for (q, d), text in run.written.items():
                    written[cache[q]][(q, d)] = text
                if rising is not None:
                    for i, part in enumerate(rising.split(lambda qid: bucket_order(qid, n, cache), n)):
                        cleared[i] += part.cleared
                        for lines in part.pending:
                            write(f"{i}.ranks.arrow", lines, lines.schema)
        finally:
            for f, w in sinks.values():
                w.close()
                f.close()
        return written, cleared

    def _settle_rank_shard(self, i: int, cleared: list[pa.Array]) -> None:
        """The queries of shard ``i`` (every line of each) settled for rising ranks: those cleared, and the lines
        of its rank shard, if it has one."""
        shard = os.path.join(self.shard_dir, f"{i}.ranks.arrow")
        pending = []
        if os.path.exists(shard):
            with pa.OSFile(shard) as src:
                pending.append(pa.ipc.open_stream(src).read_all())
            os.remove(shard)
        self.rising.add(RisingRanks(cleared, pending))
        self.rising.settle()


def files_we_may_open() -> int:
    """How many shards may be open for writing at once: the process's limit on open files (``ulimit -n``,
    often 1024) less a margin for everything else it has open.  Fewer shards than the budget asks hold
    more each (a huge interleaved run under a small budget then takes more memory) rather than failing
    with "too many open files"."""
    try:
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):           # no such limit here (Windows)
        return thresholds.SHARDS_MAX
    return thresholds.SHARDS_MAX if soft == resource.RLIM_INFINITY else max(2, soft - 64)


def _shard_error(exc: OSError, folder: str):
    """A failure writing the temporary shards, saying where they go (TMPDIR) and how to move them."""
    err = os_error(exc, folder, "write the temporary shards of a run whose queries are interleaved")
    if not isinstance(err, InputError):
        return err
    return InputError(err.reason, path=err.path, fix="set TMPDIR to a writable folder with free space (about the run "
                      "file's size), or give the run sorted by query (it is then read without shards)")


# ---------------------------------------------------------------- run tables as the streams keep them
def _lean_table(qid, docid, score) -> pa.Table:
    n = len(qid)
    return pa.table({"qid": qid, "docid": docid, "score": score, "rank": repeated_column(n, None, pa.int64()),
                     "tag": repeated_column(n, None)})


def _lean(run: Run) -> Run:
    """The columns evaluation reads (the run tag is taken per block), and the note a tie-aware evaluation reads."""
    t = run.table
    return Run(_lean_table(t.column("qid"), t.column("docid"), t.column("score")), notes=_kept_notes(run),
               written=run.written)


def _kept_notes(*runs: Run) -> dict:
    """What the parts of a run keep of its blocks' notes: whether the reading settled its ties."""
    return {TIES_SETTLED: True} if any(r.notes.get(TIES_SETTLED) for r in runs) else {}


def _slice(run: Run, a: int, b: int) -> Run:
    t = run.table.slice(a, b - a)
    if not run.written:
        return Run(t, notes=_kept_notes(run))
    qids = set(id_runs(t.column("qid"))[2])
    return Run(t, notes=_kept_notes(run), written={k: v for k, v in run.written.items() if k[0] in qids})


def _concat(a: Run, b: Run) -> Run:
    t = pa.concat_tables([a.table, b.table]) if len(a) else b.table
    return Run(t, notes=_kept_notes(a, b), written={**a.written, **b.written})

