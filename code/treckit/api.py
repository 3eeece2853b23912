"""treckit's public Python API, in one module: everything ``import treckit`` offers is defined or named here
(``treckit/__init__.py`` loads it on first use, so ``import treckit`` stays fast)::

    from treckit import read_qrels, read_run, convert_run, write_run, evaluate

``read_run`` and ``evaluate`` read runs with :class:`RunReading`, the reader configuration every command
shares; ``evaluate`` also takes DataFrames, dicts, ranx and ir_measures objects
(:mod:`treckit.inputs.objects`) and ``irds:<dataset-id>`` qrels.  Warnings are :class:`InputWarning`.
The typed qrels builder and its checks are :mod:`treckit.qrels`; test sets :mod:`treckit.testsets`.
"""
from __future__ import annotations

import os

from .console.errors import InputError
from .console.messages import InputWarning, warn_python
from .engines.budget import DEFAULT_MEMORY, MemoryLimit
from .engines.choice import choose, is_run_file
from .engines.memory import EvalOptions
from .engines.tie_aware import check_mode, check_requests, evaluate_tie_aware, named_measures, refuse
from .inputs.objects import as_measures, as_qrels, as_run, split_options
from .inputs.options import RunReading
from .inputs.reading import read_qrels, read_run
from .measures.registry import resolve
from .model import Qrels, Run
from .output.records import frame
from .output.tie_aware import api_frame
from .output.trec import write_trec_qrels as write_qrels, write_trec_run as write_run
from .ranking.convert import convert_run

__all__ = ["EvalOptions", "InputError", "InputWarning", "Qrels", "Run", "RunReading", "convert_run",
           "evaluate", "read_qrels", "read_run", "write_qrels", "write_run"]


def evaluate(qrels, run, measures=("map", "ndcg_cut.10", "recall.100", "recip_rank"), *, per_query: bool = True,
             engine: str = "local", client=None, scheduler: str | None = None, warn=None, tie_aware: str | None = None,
             **options):
    """Evaluate ``run`` against ``qrels``.  Both may be paths (any format, CSV, Parquet, ranx JSON; qrels also
    ``irds:<dataset-id>``), DataFrames (PyTerrier's or ir_measures' columns), ``{qid: {docid: value}}`` dicts,
    ranx objects, ir_measures namedtuples, ``(qid, docid, value)`` tuples or model objects (see
    :mod:`treckit.inputs`).  ``measures`` takes trec_eval names (``ndcg_cut.10``), ir_measures names
    (``nDCG@10``) and ir_measures measure objects.  ``options`` are :class:`EvalOptions`' and the reading
    options of :class:`treckit.inputs.options.RunReading` (``order``, ``gold``, ``tsv_third`` ...), as on the
    command line; warnings are :class:`treckit.InputWarning` (the :mod:`warnings` module), or go to ``warn`` (a
    function taking the message) when given.
    Every measure asked for is returned (``["P.5", "P.10"]`` gives P_5 and P_10, as pytrec_eval does).
    ``memory_limit`` (bytes, or a size such as ``"512M"``; ``0``/``None``: none; default 2 GiB): a TREC run file
    (plain or ``.gz``) over a third of it (read whole, a run takes about 3x its file size) is evaluated in bounded
    memory, as ``treckit eval --memory-limit`` does, with the same numbers; a budget given also bounds what is read
    whole (refused past it, as the commands refuse it: docs/engines.md, "Memory budget").
    ``engine="dask"`` evaluates on a Dask cluster (``client``: a ``distributed.Client``; else ``scheduler``'s
    address; else a LocalCluster started for the call), the run read by a worker (paths may be fsspec URLs)
    and a huge TREC run partitioned by query: the same numbers (:mod:`treckit.engines.dask`).  A script that
    starts a LocalCluster so needs the ``if __name__ == "__main__":`` guard (its workers are new processes).

    ``tie_aware`` (:mod:`treckit.engines.tie_aware`, docs/ties.md): ``"expected"``, ``"best"`` or ``"worst"`` give the
    values over the orders of documents with equal scores in the same DataFrame; ``"range"`` a DataFrame of
    (qid, measure, trec_eval, expected, best, worst); ``"report"`` a dict of what the ties did.

    Returns a DataFrame: one row per query (``qid``) and a final row ``qid == "all"`` with the summary.
    """
    # the budget is checked whatever the engine and the run's kind, as the commands check it
    limit = MemoryLimit.parse(options.pop("memory_limit", DEFAULT_MEMORY))
    warn = warn or warn_python
    reading, options = split_options(options)
    opts = EvalOptions(**options)
    requests = resolve(as_measures(measures), first_params_win=False)
    with limit.governing():                  # a budget given bounds what is read, as the commands' --memory-limit
        if tie_aware is not None:
            return _tie_aware(qrels, run, measures, requests, opts, reading, tie_aware, per_query=per_query,
                              limit=limit, warn=warn,
                              dask=engine != "local" or client is not None or scheduler is not None)
        chosen = choose(engine, scheduler, client, limit)
        res = chosen.evaluate(as_qrels(qrels), run, requests, opts, reading, qrels_source=qrels, warn=warn)
        return frame(res, per_query)


def _tie_aware(qrels, run, measures, requests, opts, reading, mode: str, *, per_query: bool, limit, warn, dask: bool):
    """``evaluate(..., tie_aware=mode)``: checked as ``treckit eval --tie-aware`` checks it, on the local engine."""
    check_mode(mode)
    refuse("dask" if dask else "local", zscores=opts.zscores is not None)
    requests = check_requests(requests, mode, named=named_measures(as_measures(measures)), warn=warn)
    judged = as_qrels(qrels)
    source = run if is_run_file(run) else as_run(run, reading, qrels_source=qrels, warn=warn)
    ev = evaluate_tie_aware(judged, source, requests, opts, reading, mode, memory_limit=limit, warn=warn,
                            qrels_source=qrels if isinstance(qrels, (str, os.PathLike)) else None)
    return api_frame(ev, mode, per_query)
