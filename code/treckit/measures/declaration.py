"""What a measure declaration is: :class:`Measure` (with its parameter kind and the judgment formats it
applies to), the ir_measures names of one (:class:`Irm`, :class:`Param`) and :class:`Request`, one measure
to compute with the columns it prints.

The declarations themselves are in the measure modules (one per family, beside their kernels) and are
gathered in one list by :mod:`.registry`; this module is below both, so that a family module declares its
measures without importing the registry that lists them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

# the judgment formats of trec_eval's -R: graded qrels; preferences (prefs lines, or qrels read as
# preferences); qrels whose second column names a judgment group
QRELS, PREFS, QRELS_PREFS, QRELS_JG = "qrels", "prefs", "qrels_prefs", "qrels_jg"
REL_FORMATS = (QRELS, PREFS, QRELS_PREFS, QRELS_JG)

LONG_CUTS, DOUBLE_CUTS, DOUBLES, PAIRS, NONE = "long_cutoffs", "double_cutoffs", "doubles", "pairs", "none"
STD_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
UNIT = (0.0, 1.0)                # the range of a share, a precision or a normalised gain

# What a judged query missing from the run contributes under -c.  trec_eval scores it on a one-doc
# placeholder ranking, then resets a few values by their printed name (trec_eval.c's cleanup loop).
PLACEHOLDER = "placeholder"      # the kernel's value on the placeholder (1 doc, not in the pool)
ZERO = "zero"                    # reset to 0 whatever the parameters (num_ret; unj_*: a prefix match)
ZERO_IF_BARE = "zero_if_bare"    # reset only when printed under the bare name, i.e. without parameters
EMPTY_IF_BARE = "empty_if_bare"  # relstring: cleared, again only under its bare name


@dataclass(frozen=True)
class Param:
    """One ir_measures parameter as ir_measures declares it (``ParamInfo``)."""

    dtype: type
    required: bool = False
    choices: tuple | None = None
    default: Any = None          # None: no default (ir_measures' NOT_PROVIDED)


@dataclass(frozen=True)
class Irm:
    """The ir_measures names of a measure.  ``bind`` turns the typed parameters (those given, plus
    ``preset``) into (trec measure name, kernel parameters, kernel options)."""

    names: tuple[str, ...]                  # the registered name first, then aliases
    params: dict[str, Param]
    bind: Callable[[dict], tuple[str, tuple, dict]]
    aggregate: str = "mean"                 # as ir_measures' aggregator(): mean | sum
    preset: tuple = ()                      # (name, value) pairs the name fixes (NumRelRet = NumRet(rel=1))
    at: str = "cutoff"                      # the parameter that ``name@X`` sets


@dataclass(frozen=True)
class Measure:
    name: str
    doc: str
    kernel: Callable | None
    params: str = NONE
    default: tuple = ()
    summary: str = "mean"        # mean | sum | gm | count | none
    value: str = "double"        # double | long | string | runid
    per_query: bool = True
    placeholder: str = PLACEHOLDER
    complete_sum_from_qrels: bool = False   # -c summary: every judgment with grade > 0 in the qrels
    trec: bool = True            # reachable by its trec_eval name (False: ir_measures names only)
    irm: tuple[Irm, ...] = ()
    reference: str = "trec_eval 10.0"   # the tool whose numbers it gives
    ties: str = "trec"           # trec: score ties by docno descending; listed: in the run's line order;
                                 # ascending: by docno ascending (pyndeval's)
    formats: tuple[str, ...] = (QRELS,)     # the judgment formats (-R) it is measured against
    bounds: tuple[float, float] | None = None   # every per-query value lies in [low, high] (None: not declared);
                                                # registry.value_bounds says when a request's own gains lift it


@dataclass(frozen=True)
class Request:
    """One measure to compute: the declaration, its kernel parameters, and the columns it prints."""

    measure: Measure
    params: tuple
    columns: tuple[str, ...]
    text: str                                   # as asked for (``P.5,10``, ``nDCG@10``)
    options: tuple = ()                         # kernel keyword options, as sorted (key, value) pairs
    level: int | None = None                    # relevance level; None: -l
    judged_only: bool | None = None             # None: -J
    summary: str = "mean"
    per_query: bool = True
    bare: bool = True                           # trec_eval name printed without parameters

    @property
    def key(self) -> tuple:
        """What is computed: two requests with equal keys give equal columns."""
        return (self.measure.name, self.params, self.options, self.level, self.judged_only, self.summary)


TREC_PARAM_NAME_CHARS = 8


def trec_columns(m: Measure, params: tuple, raw: str | None) -> tuple[str, ...]:
    if m.params == LONG_CUTS:
        return tuple(f"{m.name}_{c}" for c in params)
    if m.params == DOUBLE_CUTS:      # trec_eval keeps 8 characters of a parameter's "%3.2f" in the name
        return tuple(f"{m.name}_{f'{c:3.2f}'[:TREC_PARAM_NAME_CHARS]}" for c in params)
    if m.params in (DOUBLES, PAIRS) and raw is not None:
        return (f"{m.name}_{raw}",)
    return (m.name,)


def trec_request(m: Measure, params: tuple, raw: str | None) -> Request:
    return Request(m, params, trec_columns(m, params, raw), m.name if raw is None else f"{m.name}.{raw}",
                   summary=m.summary, per_query=m.per_query, bare=raw is None)
