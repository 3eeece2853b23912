"""Tie-aware evaluation of a run file: trec_eval's measures with the documents of equal scores ordered
uniformly at random (``expected``), or in their best or worst order (``best``, ``worst``); all of them next
to trec_eval's value (``range``); or a summary of what the ties did (``report``).

The values themselves are :mod:`treckit.measures.ties`'; here they are wired into the engine: each part
of the run the engine evaluates (the whole run in memory, or query group by query group when it is
streamed) gets its tie-aware values beside the plain ones, and the rows, -c's placeholders and the summary
follow the plain evaluation's rules (:func:`treckit.engines.memory.summarise_result`).  -Z, the Dask engine,
--cross-check and preference judgments are refused (:func:`refuse`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..dependencies import deferred
from ..console.errors import InputError
from ..fast.groups import id_runs, spread
from ..measures.registry import resolve
from ..measures.ties import NotTieAware, REFUSED, SPECS, combine_sources, covered, tie_sources, tie_values, tied_ranking
from ..ranking.order import numbers
from .budget import DEFAULT_MEMORY
from .core import QrelsByQuery
from .memory import EvalOptions, EvalResult, evaluate_part, merge_parts, placeholder, summarise_result

from ..model import Qrels, Run
from .stream import evaluate_path

np = deferred("numpy")

TIE_AWARE = ("expected", "best", "worst", "range", "report")
VALUE_MODES = ("expected", "best", "worst")
COMPARE_MODES = ("range", "expected")      # compare: ranges beside trec_eval's values, or the tests on expected values
ENGINES_FIX = "--engine local (the in-memory and streaming engines compute tie-aware values)"


def check_mode(mode: str) -> str:
    if mode not in TIE_AWARE:
        raise InputError(f"--tie-aware {mode}: not one of {', '.join(TIE_AWARE)}", fix="e.g. --tie-aware expected")
    return mode


def check_compare_mode(mode: str) -> str:
    if mode not in COMPARE_MODES:
        raise InputError(f"--tie-aware {mode}: compare takes {' or '.join(COMPARE_MODES)}",
                         fix="--tie-aware range (tests on trec_eval's values) or --tie-aware expected")
    return mode


def modes_of(mode: str) -> tuple[str, ...]:
    """The value modes a --tie-aware choice computes."""
    return (mode,) if mode in VALUE_MODES else VALUE_MODES


def named_measures(measures: list[str]) -> set[str]:
    """The measures (trec_eval family names) asked for by name in ``measures``, not through a nickname
    (``official``, ``all_trec``) or the default set."""
    named = set()
    for text in measures:
        families = {r.measure.name for r in resolve([text])}
        if len(families) == 1:
            named |= families
    return named


def check_requests(requests, mode: str, *, named: set[str] | None = None, warn=None) -> list:
    """The requests a tie-aware ``mode`` computes.  A measure without tie-aware values is refused (exit 2,
    naming the covered ones) when it was asked for by name (``named``: those; None: every one); one that
    came in through a nickname or the default set is left out with a warning."""
    kept, left_out = [], []
    for req in requests:
        m = req.measure
        if m.value == "runid":
            kept.append(req)
            continue
        spec = SPECS.get(m.name)
        for value_mode in modes_of(mode):
            if spec is None:
                why = REFUSED.get(m.name, "it is not among the measures computed over tie orders")
            elif value_mode == "expected" and spec.expected is None:
                why = spec.no_expected
            else:
                continue
            if named is None or m.name in named:
                raise NotTieAware(req.text, value_mode, why)
            left_out.append((req.text, value_mode, why))
            break
        else:
            kept.append(req)
    if left_out and warn is not None:
        for text, value_mode, why in left_out:
            warn(f"{text} left out of the tie-aware {value_mode} values: {why}")
        covering = sorted({vm for _, vm, _ in left_out})
        for value_mode in covering:
            warn(f"tie-aware {value_mode} values cover: {' '.join(covered(value_mode))}")
    return kept


@dataclass
class TieAwareEvaluation:
    """The plain result of a run and, per value mode, its tie-aware result; for a report, ``sources``: where
    its ties come from, and ``per_query_groups``: each judged query's tie groups that hold a judged doc."""

    plain: EvalResult
    values: dict[str, EvalResult]
    sources: object = None
    per_query_groups: dict[str, int] = field(default_factory=dict)


def part_values(tied, part, requests, options: EvalOptions, modes) -> dict[str, np.ndarray]:
    """{mode: (Q, C) tie-aware values} of one part of a run (``tied``: its :class:`TiedRanking`; ``part``: its
    plain :class:`PartValues`, whose queries and columns they follow), -c's placeholder rules applied as to
    plain values."""
    if tied.qids != part.qids:
        raise RuntimeError("the tie groups and the plain values do not hold the same queries")
    out = {}
    for mode in modes:
        blocks = []
        for req in requests:
            m = req.measure
            if m.value == "runid":
                blocks.append(np.full((tied.Q, 1), np.nan))
                continue
            judged = options.judged_only if req.judged_only is None else req.judged_only
            level = options.level if req.level is None else req.level
            block = tie_values(tied.judged_only(judged).at_level(level), m.name, req.params, mode, kernel=m.kernel,
                               **dict(req.options)).reshape(tied.Q, len(req.columns))
            if tied.missing.any():
                placeholder(req, block, None, tied.missing)
            blocks.append(block)
        out[mode] = np.concatenate(blocks, axis=1) if blocks else np.zeros((tied.Q, 0))
    return out


def _judged_groups(tied) -> dict[str, int]:
    """Per query, its tie groups of two docs or more that hold a judged doc (a grade of 0 or more)."""
    keep = (tied.size > 1) & (tied.rel >= 0)
    if not keep.any():
        return {}
    pairs = np.unique(np.stack([tied.q[keep], tied.start[keep]], axis=1), axis=0)
    counts = np.bincount(pairs[:, 0], minlength=tied.Q)
    return {q: int(c) for q, c in zip(tied.qids, counts.tolist()) if c}


def run_sources(run):
    """Where a run's ties come from (:func:`treckit.measures.ties.tie_sources` of its lines)."""
    t = run.table
    if not t.num_rows:
        return tie_sources(np.zeros(0, np.int64), np.zeros(0))
    starts, code, _ = id_runs(t.column("qid"))
    return tie_sources(spread(code, starts, t.num_rows), numbers(t.column("score")).astype(np.float64))


def path_sources(path, reading, *, memory_limit=DEFAULT_MEMORY, warn=None):
    """Where the ties of the run file ``path`` come from (:func:`run_sources`), the run read as ``treckit eval``
    reads it: whole, or beyond ``memory_limit`` part by part of whole queries (the engine's streaming)."""
    parts = []

    def on_part(part, run) -> None:
        parts.append((set(id_runs(run.table.column("qid"))[2]), run_sources(run)))

    evaluate_path(Qrels.from_columns([], [], []), path, [], EvalOptions(), reading, memory_limit=memory_limit,
                  warn=warn, on_part=on_part, merge=False)
    return combine_sources(_last_pass(parts))


def evaluate_tie_aware(qrels, path, requests, options: EvalOptions, reading, mode: str, *, memory_limit=DEFAULT_MEMORY,
                       warn=None, qrels_source=None, on_part=None) -> TieAwareEvaluation:
    """The run file ``path`` evaluated as ``treckit eval`` evaluates it (in memory, or streamed beyond
    ``memory_limit``), or a :class:`Run` already read, with the tie-aware values of ``mode`` beside the
    plain ones.  ``on_part(values, run_part)``: also called on each part (see
    :func:`~treckit.engines.stream.evaluate_path`)."""
    also = on_part
    modes = modes_of(mode)
    index = QrelsByQuery(qrels)
    rows: dict[str, tuple[int, int]] = {}
    stored: list[dict[str, np.ndarray]] = []
    sources, groups = [], {}

    def on_part(part, run) -> None:
        if also is not None:
            also(part, run)
        if mode == "report":                    # every line of the run, judged or not
            sources.append((set(id_runs(run.table.column("qid"))[2]), run_sources(run)))
        if not part.qids:                       # a part without judged queries (a shard of unjudged ones)
            return
        tied = tied_ranking(index.take(part.qids), run, options, source=str(path))
        stored.append(part_values(tied, part, requests, options, modes))
        rows.update({qid: (len(stored) - 1, i) for i, qid in enumerate(part.qids)})
        if mode == "report":
            groups.update(_judged_groups(tied))

    if isinstance(path, Run):               # a run already read (the Python API): one part, in memory
        part = evaluate_part(qrels, path, requests, options, "run", sanity=warn is not None, keep_view=True)
        on_part(part, path)
        plain = merge_parts([part], qrels, requests, options, runid=path.tag, warn=warn)
    else:
        plain = evaluate_path(qrels, path, requests, options, reading, memory_limit=memory_limit, warn=warn,
                              qrels_source=qrels_source, on_part=on_part)
    values = {}
    for m in modes:
        v = plain.values.copy()
        for i, qid in enumerate(plain.qids):
            if qid in rows:                     # a judged query in no part: -c's placeholder, no ties
                p, r = rows[qid]
                v[i] = stored[p][m][r]
        values[m] = _result(plain, v, requests, options, qrels)
    return TieAwareEvaluation(plain, values, combine_sources(_last_pass(sources)) if mode == "report" else None,
                              groups)


def _last_pass(parts: list[tuple[set, object]]) -> list:
    """The sources of the parts of the engine's last pass over the run: a streamed run found interleaved is
    read again, shard by shard, and every query of the first pass comes again in a later part."""
    seen: set = set()
    kept = []
    for qids, src in reversed(parts):
        if not qids & seen:
            kept.append(src)
            seen |= qids
    return kept[::-1]


def _result(plain: EvalResult, values: np.ndarray, requests, options: EvalOptions, qrels) -> EvalResult:
    kinds = dict(plain.kinds)
    res = dataclasses.replace(plain, values=values, kinds=kinds, summary={})
    res.summary = summarise_result(res, requests, options.complete or options.missing == "zero", qrels)
    for j, c in enumerate(res.columns):           # a count whose expectation is fractional prints as a double
        if kinds[c] == "long":
            col = np.append(values[:, j], res.summary.get(c, 0.0))
            if not np.all(np.isnan(col) | (col == np.round(col))):
                kinds[c] = "double"
    return res


def refuse(engine: str = "local", *, zscores: bool = False, cross_check: bool = False, rel_format: str = "qrels") -> None:
    """What tie-aware values do not combine with, refused before anything is read."""
    if engine != "local":
        raise InputError(f"--tie-aware: the {engine} engine does not compute tie-aware values", fix=f"use {ENGINES_FIX}")
    if zscores:
        raise InputError("--tie-aware with -Z: z-scores of tie-aware values are not computed",
                         fix="leave out -Z, or --tie-aware")
    if cross_check:
        raise InputError("--tie-aware with --cross-check: ir_measures computes one order's values only",
                         fix="leave out --cross-check, or --tie-aware")
    if rel_format != "qrels":
        raise InputError(f"--tie-aware with -R {rel_format}: preference measures have no tie-aware values",
                         fix="leave out -R, or --tie-aware")
