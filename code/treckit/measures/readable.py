"""Readable measure names (the test-set document's) over the engine's measures, one definition per name.

=====================  ===============================================  ==========================
name                   definition                                       engine measure
=====================  ===============================================  ==========================
``recall_at_K``        relevant (grade > 0) in the top K / all relevant  trec_eval ``recall.K``
``ndcg_at_K``          nDCG@K, gain 2^grade - 1, discount log2(rank+1)   ``nDCG(dcg='exp-log2')@K``
``nDCG@K``             ir_measures' nDCG@K, gain = grade                 ``nDCG@K`` (``ndcg_cut.K``)
``ndcg_cut_K``         nDCG@K, gain = grade (trec_eval's)                ``ndcg_cut.K``
``mrr`` / ``mrr_at_K`` 1 / rank of the first relevant doc (within K)     ``recip_rank`` / ``RR@K``
``precision_at_K``     relevant in the top K / K                         ``P.K``
``map``                average precision                                 ``map``
=====================  ===============================================  ==========================

``recall@10``, ``R@10``, ``MRR@5``, ``P@5`` are accepted spellings (each has one definition).  nDCG has
two gains, so its name says which: ``ndcg_at_K`` is the test-set document's nDCG (exponential gain) and
``nDCG@K``, spelled as ir_measures spells it, is ir_measures' (linear gain), in every command; any other
spelling (``ndcg@10``, ``NDCG@10``, ``Ndcg_At_10``) is refused, naming both.  With ``gain="linear"``,
``ndcg_at_K`` is printed under trec_eval's name ``ndcg_cut_K``, so the two gains never share a name
(``compare`` and the service take these names too).  Which queries a value averages and how the run is
ranked complete a name's definition (:mod:`treckit.measures.definitions`); every result records them.
"""
from __future__ import annotations

import re

from ..console.errors import InputError, shown
from . import GAINS
from .definitions import Definition, GAINS as GAIN_MEANINGS, definitions_of
from .registry import (IRM_NAMES, QRELS, TwoMeanings, column_of, names_for, ndcg_spelling_error, resolve,
                       value_bounds)

DEFAULT_MEASURES = ("recall_at_5", "recall_at_10", "recall_at_20", "ndcg_at_10", "mrr")
AB_MEASURES = ("ndcg_at_10", "recall_at_10", "mrr")      # an A/B on a test set: its paired t-test is on ndcg_at_10
GAIN_CHOICES = GAINS
_NAME = re.compile(r"(recall|ndcg|ndcg_cut|mrr|precision|map)(?:_at_(\d+)|_(\d+))?")
_IRM_NDCG = re.compile(r"nDCG@(\d+)")    # ir_measures' spelling: linear gain
_GAIN_NAMES = {"ndcg_at_": "ndcg_at_K", "ndcg_cut_": "ndcg_cut_K", "nDCG@": "nDCG@K"}     # as a header says them
MAX_CUTOFF = 2**31 - 1        # far beyond any run's length (a cutoff past a ranking's end counts every document)


def canonical_name(name: str, gain: str = "exp") -> str:
    """``recall@10`` / ``Recall@10`` / ``recall_at_10`` -> ``recall_at_10``; ``P@5`` -> ``precision_at_5``;
    ``ndcg_at_10`` -> ``ndcg_at_10`` (gain ``exp``) or ``ndcg_cut_10`` (gain ``linear``); ``nDCG@10`` stays
    ir_measures' (linear gain, whatever ``gain``); ``ndcg@10``, ``NDCG@10`` ... are refused (either gain)."""
    if gain not in GAIN_CHOICES:
        raise InputError(f"unknown nDCG gain {gain!r}", fix="use exp (2^grade - 1) or linear (trec_eval)")
    n = name.strip().lower().replace("@", "_at_").replace("ndcg_cut.", "ndcg_cut_")
    n = re.sub(r"^(p|prec)(?=_at_)", "precision", n)
    n = re.sub(r"^(r)(?=_at_)", "recall", n)
    m = _NAME.fullmatch(n)
    kind, k = (m.group(1), m.group(2) or m.group(3)) if m else (None, None)
    if k is not None and (len(k.lstrip("0")) > len(str(MAX_CUTOFF)) or int(k) > MAX_CUTOFF):
        raise InputError(f"the cutoff of {shown(name)} is larger than {MAX_CUTOFF}",
                         fix=f"use a cutoff of at most {MAX_CUTOFF} (a cutoff past a ranking's end counts every document)")
    if name.strip() != n:
        two_gains = ndcg_spelling_error(name, exp_name=f"ndcg_at_{k} (exp gain)")
        if two_gains is not None:
            raise two_gains
    if not _well_formed(m):
        raise InputError(f"unknown test-set measure {name!r}",
                         fix="use recall_at_K, ndcg_at_K, nDCG@K, ndcg_cut_K, mrr, mrr_at_K, precision_at_K or map "
                             "(e.g. recall@10)")
    if _IRM_NDCG.fullmatch(name.strip()):
        return name.strip()
    if kind == "ndcg" and gain == "linear":
        return f"ndcg_cut_{k}"
    return n


def _well_formed(m: re.Match | None) -> bool:
    """Whether a match of :data:`_NAME` is a measure: a cutoff of at least 1 where the kind needs one, none for map,
    ndcg_cut's written ``ndcg_cut_K``."""
    if m is None:
        return False
    kind, k = m.group(1), m.group(2) or m.group(3)
    needs_cutoff = kind in ("recall", "ndcg", "precision")
    return (kind == "ndcg_cut") == (m.group(3) is not None) and not (needs_cutoff and k is None) \
        and not (kind == "map" and k) and (k is None or int(k) >= 1)


def cutoff_of(name: str) -> int | None:
    """The cutoff K of a canonical test-set measure (``recall_at_10``, ``nDCG@10``, ``ndcg_cut_10``: 10), None for
    ``mrr`` and ``map``."""
    k = re.search(r"\d+$", name)
    return int(k.group()) if k else None


def engine_measure(name: str) -> str:
    """The engine's name for a canonical test-set measure."""
    if _IRM_NDCG.fullmatch(name):
        return name
    kind, _, k = name.partition("_at_")
    if kind.startswith("ndcg_cut_"):
        return f"ndcg_cut.{kind[len('ndcg_cut_'):]}"
    if kind == "recall":
        return f"recall.{k}"
    if kind == "ndcg":
        return f"nDCG(dcg='exp-log2')@{k}"
    if kind == "mrr":
        return f"RR@{k}" if k else "recip_rank"
    if kind == "precision":
        return f"P.{k}"
    return "map"


def bounds(name: str) -> tuple[float, float] | None:
    """The range every value of the canonical test-set measure ``name`` lies in, as the registry declares it."""
    request, = resolve([engine_measure(name)], first_params_win=False)
    return value_bounds(request)


def engine_column(name: str) -> str:
    """The column the engine's DataFrame gives the measure under."""
    m = engine_measure(name)
    return m.replace(".", "_") if not m.startswith(("nDCG", "RR")) else m


def definitions(names, *, query_set: str = "judged", ranking: str = "trec_eval") -> dict[str, Definition]:
    """{name: Definition} of canonical test-set measures, as :func:`per_query_values` computes them
    (``query_set`` and ``ranking``: see :mod:`treckit.measures.definitions`)."""
    requests = resolve([engine_measure(n) for n in names], first_params_win=False)
    by_column = definitions_of(requests, query_set=query_set, ranking=ranking)
    return {n: by_column[column_of(requests, engine_measure(n))].with_name(n) for n in names}


def gains_note(defs: dict[str, Definition]) -> str:
    """What the nDCG names of a result mean, for its header ("" when it has none)."""
    named: dict[str, set[str]] = {}
    for d in defs.values():
        if d.gain:
            named.setdefault(d.gain, set()).add(_GAIN_NAMES.get(re.sub(r"\d+$", "", d.name), d.name))
    return "; ".join(f"{', '.join(sorted(named[g]))}: {GAIN_MEANINGS[g].split(' (')[0]}" for g in sorted(named))


def to_engine(names) -> tuple[list[str], dict[str, str]]:
    """Measure names as a command that takes engine names (trec_eval's, ir_measures') receives them,
    readable names among them in their printed spelling (``ndcg_at_10``, ``recall_at_10``, ``mrr``,
    ``ndcg_cut_10``): the engine names to resolve, and {engine column: readable name} to print
    them under.  A name the engine knows keeps its engine meaning (``map``, ``P@5``, ``nDCG@10``:
    trec_eval's linear gain); a spelling of nDCG that could mean either gain (``ndcg@10``) is refused, naming
    both; other spellings of readable names are not guessed at."""
    trec_names, nicknames = names_for(QRELS)
    engine, printed = [], {}
    for name in names:
        readable = None
        if isinstance(name, str) and name.partition(".")[0] not in trec_names and name not in nicknames \
                and name.partition("@")[0].partition("(")[0] not in IRM_NAMES:
            try:
                readable = canonical_name(name)
            except TwoMeanings:
                raise
            except InputError:
                readable = None
        if readable is not None and readable == name:
            engine.append(engine_measure(name))
            printed[engine_column(name)] = name
        else:
            engine.append(name)
    return engine, printed

