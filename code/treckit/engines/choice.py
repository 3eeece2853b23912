"""Which engine evaluates runs, chosen in one place (:func:`choose`), and the memory budget it works within, parsed
once into one value (:class:`treckit.engines.budget.MemoryLimit`).

The engines give the same numbers: :class:`Local` evaluates a run in memory (:mod:`.memory`), or, when it is a TREC
run file larger than the budget, streamed in bounded memory (:mod:`.stream`); :class:`Dask` reads and evaluates
runs on a Dask cluster (:mod:`.dask`); against preference judgments or judgment groups (trec_eval's -R other than
qrels), :class:`~treckit.engines.prefs.Preferences` evaluates in memory (:mod:`.prefs`).  Every caller (the Python API, ``treckit eval``, ``compare``, ``testset
eval``) asks the engine :func:`choose` gives it the same questions (:class:`treckit.engines.engine.Engine`).
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any, ContextManager

from ..console.errors import InputError
from ..inputs import irds
from ..inputs.objects import as_run, is_table_file
from ..inputs.reading import read_qrels
from ..measures.declaration import QRELS
from .budget import DEFAULT_MEMORY, MemoryLimit
from .engine import Engine, OneAfterAnother  # noqa: F401  (Engine: what choose gives, declared there)
from .memory import evaluate_requests
from .prefs import Preferences
from .stream import evaluate_path

DASK_MODULE = "dask"        # the Dask engine's module (and distributed's glue): loaded only when that engine is chosen


def dask_engine():
    """:mod:`treckit.engines.dask`, loaded on first use: a local evaluation never pays for its import."""
    return importlib.import_module(f"{__package__}.{DASK_MODULE}")


def is_run_file(run) -> bool:
    """Whether ``run`` is a run file the one reader reads (not irds:, not a table file the API reads itself)."""
    return isinstance(run, (str, os.PathLike)) and not irds.is_irds(run) and not is_table_file(run)


@dataclass(frozen=True)
class Local(OneAfterAnother):
    """Here: a run in memory, a TREC run file larger than ``memory_limit`` streamed."""

    memory_limit: MemoryLimit = DEFAULT_MEMORY
    name = "local"

    def evaluate(self, qrels, run, requests, options, reading, *, qrels_source=None, warn=None):
        if is_run_file(run):
            # a run file, read like `treckit eval` reads it: streamed when larger than the budget
            return evaluate_path(qrels, run, requests, options, reading, warn=warn, memory_limit=self.memory_limit,
                                 qrels_source=qrels_source if isinstance(qrels_source, (str, os.PathLike)) else None)
        return evaluate_requests(qrels, as_run(run, reading, qrels_source=qrels_source, warn=warn), requests, options,
                                 warn=warn)

    def read_judgments(self, path, qrels_format, reading):
        return read_judged_qrels(path, qrels_format, reading)


@dataclass(frozen=True)
class Dask:
    """On a Dask cluster: ``client``, else the scheduler at ``scheduler``, else a local cluster started for the job."""

    scheduler: str | None = None
    client: Any = None
    name = "dask"

    def evaluate(self, qrels, run, requests, options, reading, *, qrels_source=None, warn=None):
        return dask_engine().evaluate_api(qrels, run, requests, options, reading, qrels_source=qrels_source,
                            scheduler=self.scheduler, client=self.client)

    def evaluate_files(self, qrels, paths, requests, options, reading, *, qrels_source=None, warn=None) -> list:
        return dask_engine().evaluate_runs(qrels, paths, requests, options, reading, qrels_source=qrels_source,
                             scheduler=self.scheduler, warn=warn)

    def scorer(self) -> ContextManager:
        return dask_engine().compare_scorer(self.scheduler)

    def read_judgments(self, path, qrels_format, reading):
        return read_judged_qrels(path, qrels_format, reading)


def read_judged_qrels(path, qrels_format, reading):
    """Qrels as every qrels engine reads them: TREC qrels by the run's --layout and --skip-malformed, which their
    reader's messages name."""
    return read_qrels(path, qrels_format, layout=reading.layout, skip_malformed=reading.skip_malformed)


def choose(engine: str = "local", scheduler: str | None = None, client: Any = None,
           memory_limit: MemoryLimit = DEFAULT_MEMORY, rel_format: str = QRELS) -> Engine:
    """The engine the options name, checked (a scheduler or a client is for ``engine="dask"``, and Dask must be
    installed for it), for judgments of ``rel_format`` (trec_eval's -R): the one place an engine is chosen."""
    if engine == "local" and scheduler is None and client is None:
        return Local(MemoryLimit.parse(memory_limit)) if rel_format == QRELS else Preferences(rel_format)
    dask_engine().check_engine(engine, scheduler if client is None else "client")
    if rel_format != QRELS:
        raise InputError(f"-R {rel_format}: preference judgments are evaluated by the local engine only",
                         fix="leave out --engine dask")
    return Dask(scheduler, client)
