"""Every measure, declared once: its trec_eval name, parameter kind and defaults, its ir_measures
names with their typed parameters, how it is summarised over queries, what a query missing from
the run contributes under ``-c``, the kernel that computes it, and the reference tool whose numbers
it gives (trec_eval 10.0, gdeval.pl, cwl-eval as ir_measures sets it up, ir_measures itself).

Both syntaxes parse into one :class:`Request` type here (``resolve``); :mod:`treckit.engines.memory`
runs every request through one path.  Adding a measure = one kernel + one entry in ``MEASURES``.

The measures of preference judgments and judgment groups (``prefs_*``, ``*_avgjg``: declared beside their kernels
in :mod:`.prefs`) are listed here too, last, as trec_eval lists them; each measure names the judgment formats
(trec_eval's -R) it is measured against (``Measure.formats``), and ``resolve(..., rel_format=...)`` is the one way
from ``-m`` names to requests for every format (:mod:`treckit.engines.prefs` evaluates the other formats).

trec_eval syntax (``-m name.params``): integer cutoffs (``P.5,10``: sorted, positive, no repeats),
fractional cutoffs (``iprec_at_recall..1,.5``), plain numbers (``utility.1,-1,0,0``) or
``level=gain`` pairs (``ndcg.1=3,2=9``).  The order of ``MEASURES`` is trec_eval's output order.

ir_measures syntax (``nDCG@10``, ``P(rel=2)@5``, ``nDCG(dcg='exp-log2')@10``): parsed as ir_measures
parses it (a Python expression: ``Name(key=literal, ...)@literal``) and every parameter checked
against the schema ir_measures declares for that name (type, allowed values, required), so a name
means here what it means there.  ``rel`` defaults to ``-l`` (1) and ``judged_only`` to ``-J`` (off).
"""
from __future__ import annotations

import ast
import math
import re
from typing import Any, Callable

from ..console.errors import InputError, shown as quoted, shown_number
from ..inputs.formats.common import atof as _atof, atol as _atol
from . import ap, compat, counts, cwl, gdeval, ndcg, precision, prefs, rbp, recall, relstring, rr, subtopics
from .declaration import (DOUBLE_CUTS, DOUBLES, EMPTY_IF_BARE, LONG_CUTS, NONE, PAIRS, PLACEHOLDER, QRELS,  # noqa: F401
                          QRELS_JG, RECALL_LEVELS, REL_FORMATS, STD_CUTS, UNIT, ZERO, ZERO_IF_BARE, Irm, Measure,
                          Param, Request, trec_columns, trec_request)

_ATOF_PREFIX = re.compile(r"\s*[+-]?(?:\d|\.\d)")      # a number starts here, as C's atof reads one

# the reference tools besides trec_eval: the numbers of each measure are those of one of them
GDEVAL = "gdeval.pl 1.2a"
CWL = "cwl-eval 1.0.12, as ir_measures 0.4 sets it up"
IR_MEASURES = "ir_measures 0.4"

CUTOFF, CUTOFF_REQUIRED = Param(int), Param(int, required=True)
REL, JUDGED_ONLY = Param(int, default=1), Param(bool, default=False)


def _m(name, doc, kernel, params=NONE, default=(), **kw):
    return Measure(name, doc, kernel, params, default, **kw)


def _cut(p: dict) -> tuple:
    return (p["cutoff"],) if "cutoff" in p else ()


def _to(name: str, params: Callable[[dict], tuple] = lambda p: (), options: Callable[[dict], dict] = lambda p: {}):
    return lambda p: (name, params(p), options(p))


def _bind_ndcg(p: dict):
    gains = p.get("gains")
    exp = p.get("dcg", "log2") == "exp-log2"
    if gains is not None:
        for k, g in gains.items():
            if isinstance(k, bool) or not isinstance(k, int) or k < 0 or isinstance(g, bool) or not isinstance(g, (int, float)):
                raise InputError(f"nDCG gains={gains!r}: each key must be a grade (an integer >= 0) and each value a number",
                                 fix="e.g. nDCG(gains={0:0,1:1,2:3})@10")
    if "cutoff" not in p and not exp:
        pairs = tuple((str(k), float(g)) for k, g in sorted((gains or {}).items()))
        return "ndcg", pairs, {}
    return "ndcg_cut", _cut(p), {"exponential": exp, "gains": tuple(sorted((gains or {}).items()))}


_RANKED = {"cutoff": CUTOFF, "rel": REL, "judged_only": JUDGED_ONLY}
_AT_K = {"cutoff": CUTOFF_REQUIRED, "rel": REL, "judged_only": JUDGED_ONLY}
_SETP = {"rel": REL, "relative": Param(bool, default=False), "judged_only": JUDGED_ONLY}
_NUMRET = {"rel": Param(int)}


def _bind_err(p: dict):
    """ir_measures declares ERR's cutoff optional, but its one provider (gdeval) computes ERR@k only."""
    if "cutoff" not in p:
        raise InputError("ERR without a cutoff: ir_measures computes ERR with gdeval.pl, which needs a depth k",
                         fix="write ERR@k, e.g. ERR@20")
    return "gdeval.ERR", (), {"cutoff": p["cutoff"]}


_MIN_REL, _MAX_REL = Param(int, default=0), Param(int, required=True)
_T = Param(float, default=1.0)
# ir_measures' parameters of each C/W/L measure, as it declares them
_CWL_PARAMS = {
    "INST": {"T": _T, "min_rel": _MIN_REL, "max_rel": _MAX_REL},
    "INSQ": {"T": _T, "min_rel": _MIN_REL, "max_rel": _MAX_REL},
    "RBP": {"cutoff": CUTOFF, "p": Param(float, default=0.8), "rel": Param(int)},
    "BPM": {"cutoff": CUTOFF_REQUIRED, "T": _T, "min_rel": _MIN_REL, "max_rel": _MAX_REL},
    "SDCG": {"cutoff": CUTOFF_REQUIRED, "dcg": Param(str, choices=("log2",), default="log2"), "min_rel": _MIN_REL,
             "max_rel": _MAX_REL},
    "NERR8": {"cutoff": CUTOFF_REQUIRED, "min_rel": _MIN_REL, "max_rel": _MAX_REL},
    "NERR9": {"cutoff": CUTOFF_REQUIRED, "min_rel": _MIN_REL, "max_rel": _MAX_REL},
    "NERR10": {"p": Param(float, default=0.9), "min_rel": _MIN_REL, "max_rel": _MAX_REL},
    "NERR11": {"T": _T, "min_rel": _MIN_REL, "max_rel": _MAX_REL},
}
_CWL_DOCS = {
    "INST": "INST: adaptive, target T relevant documents (Moffat et al., ADCS 2015; C/W/L, Azzopardi et al., SIGIR 2019).",
    "INSQ": "INSQ: INST without the adaptation (Moffat et al., ADCS 2012).",
    "RBP": "Rank-biased precision of the C/W/L framework, binary at rel, persistence p (Moffat & Zobel, TOIS 2008); "
           "trec_eval's rbp is another measure of that name.",
    "BPM": "Bejeweled player model: stop at T gain or k documents (Zhang et al., SIGIR 2017).",
    "SDCG": "Scaled DCG@k: DCG@k over the sum of its discounts (C/W/L).",
    "NERR8": "ERR variant (Azzopardi et al., ICTIR 2021, eq. 8), cut at k.",
    "NERR9": "ERR variant (Azzopardi et al., ICTIR 2021, eq. 9), cut at k.",
    "NERR10": "ERR variant with persistence p (Azzopardi et al., ICTIR 2021, eq. 10).",
    "NERR11": "ERR variant with target T (Azzopardi et al., ICTIR 2021, eq. 11).",
}


def _cwl_bind(name: str):
    spec = _CWL_PARAMS[name]

    def bind(p: dict):
        settings = {k: (p[k] if k in p else prm.default) for k, prm in spec.items() if k in p or prm.default is not None}
        settings.pop("dcg", None)
        if name == "RBP" and ("rel" not in p or "cutoff" in p):
            raise InputError(f"{'RBP@k' if 'cutoff' in p else 'RBP without rel'}: ir_measures computes RBP with "
                             "cwl-eval, which takes a relevance level and no cutoff",
                             fix="write RBP(rel=1) (or RBP(rel=1, p=0.9)); trec_eval's rank-biased precision is rbp")
        if name != "RBP" and settings["min_rel"] >= settings["max_rel"]:
            raise InputError(f"{name}: min_rel={settings['min_rel']} must be below max_rel={settings['max_rel']} "
                             "(judgments are scaled from min_rel..max_rel to 0..1)",
                             fix=f"e.g. {_example(name)}")
        return f"cwl.{name}", (), {"measure": name, **settings}
    return bind


_DIV = {"rel": REL, "judged_only": JUDGED_ONLY}
_ALPHA, _BETA = Param(float, default=0.5), Param(float, default=0.5)
# ir_measures' diversity names: (ndeval's name, the parameters ir_measures declares, citation)
_DIVERSITY = {
    "ERR_IA": ("ERR-IA", {"cutoff": CUTOFF, **_DIV}, "Intent-aware ERR@k (Chapelle et al., CIKM 2009), alpha 0.5"),
    "nERR_IA": ("nERR-IA", {"cutoff": CUTOFF, **_DIV}, "ERR-IA@k over the ideal ranking's"),
    "alpha_DCG": ("alpha-DCG", {"cutoff": CUTOFF, "alpha": _ALPHA, **_DIV},
                  "alpha-DCG@k over the ideal-ideal gains (Clarke et al., SIGIR 2008)"),
    "alpha_nDCG": ("alpha-nDCG", {"cutoff": CUTOFF, "alpha": _ALPHA, **_DIV},
                   "alpha-nDCG@k: alpha-DCG@k over the greedy ideal ranking's (Clarke et al., SIGIR 2008)"),
    "NRBP": ("NRBP", {"rel": REL, "alpha": _ALPHA, "beta": _BETA},
             "Novelty- and rank-biased precision (Clarke et al., ICTIR 2009)"),
    "nNRBP": ("nNRBP", {"rel": REL, "alpha": _ALPHA, "beta": _BETA}, "NRBP over the ideal ranking's"),
    "AP_IA": ("MAP-IA", _DIV, "Intent-aware AP: AP per subtopic, averaged over the subtopics (Agrawal et al., WSDM 2009)"),
    "P_IA": ("P-IA", {"cutoff": CUTOFF, **_DIV}, "Intent-aware precision@k (Agrawal et al., WSDM 2009)"),
    "StRecall": ("strec", {"cutoff": CUTOFF, "rel": REL}, "Subtopic recall@k (Zhai et al., SIGIR 2003)"),
}
_DIVERSITY_ALIASES = {"alpha_DCG": ("α_DCG",), "alpha_nDCG": ("α_nDCG",), "AP_IA": ("MAP_IA",)}


def _diversity_bind(name: str):
    ndeval_name, spec, _ = _DIVERSITY[name]

    def bind(p: dict):
        if "cutoff" in spec and "cutoff" not in p:
            raise InputError(f"{name} without a cutoff: ir_measures computes {name} with ndeval (pyndeval), which "
                             "needs a depth k", fix=f"write {name}@k, e.g. {name}@20")
        for key in ("alpha", "beta"):
            if key in p and not 0 <= p[key] <= 1:
                raise InputError(f"{name}: {key}={p[key]!r} must be from 0 to 1", fix=f"e.g. {_example(name, {key: 0.5})}")
        options = {"measure": ndeval_name, **{k: p[k] for k in ("cutoff", "alpha", "beta") if k in p}}
        if "judged_only" not in spec:              # ir_measures never filters these: -J leaves them alone
            options["judged_only"] = False
        return f"ndeval.{ndeval_name}", (), options
    return bind


def _bind_numret(p: dict):
    return ("num_rel_ret", (), {}) if "rel" in p else ("num_ret", (), {})


def _bind_setp(p: dict):
    return ("set_relative_P", (), {}) if p.get("relative") else ("set_P", (), {})


MEASURES: list[Measure] = [
    _m("runid", "Run id: the tag on the last line of the run.", None, value="runid", summary="none", per_query=False,
       formats=REL_FORMATS),
    _m("num_q", "Number of queries averaged over (with -c: every query in the qrels).", counts.num_q, summary="count",
       value="long", per_query=False, formats=REL_FORMATS,
       irm=(Irm(("NumQ",), {}, _to("num_q"), aggregate="sum"),)),
    _m("num_ret", "Documents retrieved (after -M and -J). Summary is the sum.", counts.num_ret, summary="sum",
       value="long", placeholder=ZERO,
       irm=(Irm(("NumRet",), _NUMRET, _bind_numret, aggregate="sum"),)),
    _m("num_rel", "Relevant documents (grade >= -l). Summary is the sum.", counts.num_rel, summary="sum", value="long",
       complete_sum_from_qrels=True,
       irm=(Irm(("NumRel",), {"rel": REL}, _to("num_rel"), aggregate="sum"),)),
    # NumRelRet is NumRet(rel=1): declared here, the measure it computes (`treckit measures` lists it on this row)
    _m("num_rel_ret", "Relevant documents retrieved. Summary is the sum.", counts.num_rel_ret_, summary="sum",
       value="long", irm=(Irm(("NumRelRet",), _NUMRET, _bind_numret, aggregate="sum", preset=(("rel", 1),)),)),
    _m("map", "Mean average precision: precision after each relevant doc, averaged over all relevant docs "
              "(Buckley & Voorhees, 'Retrieval System Evaluation', 2005).", ap.map_, bounds=UNIT,
       irm=(Irm(("AP", "MAP"), _RANKED, lambda p: ("map_cut", _cut(p), {}) if "cutoff" in p else ("map", (), {})),)),
    _m("gm_map", "Geometric mean over queries of average precision (floor 0.00001).", ap.gm_map, summary="gm",
       per_query=False),
    _m("Rprec", "Precision after R docs, R = number of relevant docs.", precision.Rprec, bounds=UNIT,
       irm=(Irm(("Rprec", "RPrec"), {"rel": REL, "judged_only": JUDGED_ONLY}, _to("Rprec")),)),
    _m("bpref", "Binary preference (Buckley & Voorhees, SIGIR 2004).", ap.bpref, bounds=UNIT,
       irm=(Irm(("Bpref", "BPref"), {"rel": REL}, _to("bpref")),)),
    _m("recip_rank", "Reciprocal rank of the first relevant doc.", rr.recip_rank, bounds=UNIT,
       irm=(Irm(("RR", "MRR"), _RANKED, _to("recip_rank", options=lambda p: {"cutoff": p.get("cutoff")})),)),
    _m("iprec_at_recall", "Interpolated precision at recall levels.", precision.iprec_at_recall, DOUBLE_CUTS,
       RECALL_LEVELS, bounds=UNIT,
       irm=(Irm(("IPrec",), {"recall": Param(float, required=True), "rel": REL, "judged_only": JUDGED_ONLY},
                _to("iprec_at_recall", lambda p: (p["recall"],)), at="recall"),)),
    _m("P", "Precision at cutoffs: relevant in the top k divided by k.", precision.P, LONG_CUTS, STD_CUTS, bounds=UNIT,
       irm=(Irm(("P", "Precision"), _AT_K, _to("P", _cut)),)),
    _m("relstring", "Grades of the first N docs as a string; per query only.", relstring.relstring, DOUBLES, (10.0,),
       summary="none", value="string", placeholder=EMPTY_IF_BARE),
    _m("recall", "Recall at cutoffs: relevant in the top k divided by all relevant.", recall.recall, LONG_CUTS,
       STD_CUTS, bounds=UNIT, irm=(Irm(("R", "Recall"), _AT_K, _to("recall", _cut)),)),
    _m("infAP", "Inferred AP (Yilmaz & Aslam, CIKM 2006).", ap.infAP,
       irm=(Irm(("infAP",), {"rel": REL}, _to("infAP")),)),
    _m("gm_bpref", "Geometric mean of bpref.", ap.gm_bpref, summary="gm", per_query=False),
    _m("Rprec_mult", "Precision at multiples of R.", precision.Rprec_mult, DOUBLE_CUTS,
       (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    _m("utility", "Set utility a*relret + b*nonrelret + c*relnotret + d*nonrelnotret.", counts.utility, DOUBLES,
       (1.0, -1.0, 0.0, 0.0), placeholder=ZERO_IF_BARE),
    _m("11pt_avg", "Interpolated precision averaged over recall levels.", precision.eleven_pt_avg, DOUBLES,
       RECALL_LEVELS, bounds=UNIT),
    _m("binG", "Binary G: mean over relevant docs of 1/log2(2 + nonrelevant docs above it).", ap.binG),
    _m("G", "Normalized gain with a user cost model (trec_eval's G).", ndcg.G, PAIRS),
    _m("ndcg", "Normalized discounted cumulative gain over the whole ranking (Jarvelin & Kekalainen, TOIS 2002); "
               "gain of grade g is g unless set with level=gain pairs.", ndcg.ndcg, PAIRS, bounds=UNIT,
       irm=(Irm(("nDCG",), {"cutoff": CUTOFF, "dcg": Param(str, choices=("log2", "exp-log2"), default="log2"),
                                   "gains": Param(dict), "judged_only": JUDGED_ONLY}, _bind_ndcg),)),
    _m("ndcg_rel", "nDCG averaged over the ranks of relevant docs.", ndcg.ndcg_rel, PAIRS),
    _m("Rndcg", "nDCG averaged at the ends of the ideal ranking's grade levels.", ndcg.Rndcg, PAIRS),
    _m("ndcg_cut", "nDCG at cutoffs, gain = grade.", ndcg.ndcg_cut, LONG_CUTS, STD_CUTS, bounds=UNIT),
    _m("map_cut", "Average precision over the top k, divided by all relevant.", ap.map_cut, LONG_CUTS, STD_CUTS, bounds=UNIT),
    _m("relative_P", "Precision at k divided by the best possible precision at k.", precision.relative_P, LONG_CUTS,
       STD_CUTS, bounds=UNIT),
    _m("success", "1 if a relevant doc is in the top k, else 0.", precision.success, LONG_CUTS, (1, 5, 10), bounds=UNIT,
       irm=(Irm(("Success",), _AT_K, _to("success", _cut)),)),
    _m("set_P", "Relevant retrieved / retrieved.", counts.set_P, bounds=UNIT,
       irm=(Irm(("SetP",), _SETP, _bind_setp),)),
    _m("set_relative_P", "Set precision over the best possible for that set size.", counts.set_relative_P,
       irm=(Irm(("SetRelP",), _SETP, _bind_setp, preset=(("relative", True),)),)),      # SetP(relative=True)
    _m("set_recall", "Relevant retrieved / relevant.", counts.set_recall, bounds=UNIT,
       irm=(Irm(("SetR",), {"rel": REL}, _to("set_recall")),)),
    _m("set_map", "relret^2 / (retrieved * relevant).", counts.set_map, bounds=UNIT,
       irm=(Irm(("SetAP",), {"rel": REL, "judged_only": JUDGED_ONLY}, _to("set_map")),)),
    _m("set_F", "F-measure of set precision and recall, beta default 1.", counts.set_F, DOUBLES, (1.0,),
       irm=(Irm(("SetF",), {"rel": REL, "beta": Param(float, default=1.0), "judged_only": JUDGED_ONLY},
                _to("set_F", lambda p: (p.get("beta", 1.0),))),)),
    _m("num_nonrel_judged_ret", "Judged non-relevant docs retrieved. Summary is the sum.", counts.num_nonrel_judged_ret,
       summary="sum", value="long"),
    _m("rbp", "Rank-biased precision (Moffat & Zobel, TOIS 2008), p=0.9 unless rbp.p=X.", rbp.rbp, PAIRS),
    _m("rbp_resid", "Residual of rank-biased precision due to unjudged docs.", rbp.rbp_resid, PAIRS,
       placeholder=ZERO_IF_BARE),
    _m("unj", "Share of the top k that is not judged.", precision.unj, LONG_CUTS, (5, 10, 20), placeholder=ZERO,
       bounds=UNIT),
    _m("Judged", "Share of the top k (all retrieved without @k) that is in the qrels, as ir_measures' Judged.",
       counts.judged_at, trec=False, bounds=UNIT, irm=(Irm(("Judged",), {"cutoff": CUTOFF},
                                              _to("Judged", options=lambda p: {"cutoff": p.get("cutoff")})),),
       reference=IR_MEASURES + " (its judged provider)"),
    _m("gdeval.nDCG", "nDCG@k of the TREC Web track's gdeval.pl: gain 2^g - 1 (judgments 0..4) over a natural-log "
                      "discount, ideal from every judgment above 0 (Jarvelin & Kekalainen, TOIS 2002).",
       gdeval.ndcg_at, trec=False, reference=GDEVAL,
       irm=(Irm(("gdeval.nDCG",), {"cutoff": CUTOFF_REQUIRED}, _to("gdeval.nDCG", options=lambda p: dict(p))),)),
    _m("gdeval.ERR", "Expected reciprocal rank at k as gdeval.pl computes it: stop probability (2^g - 1) / 16 "
                     "(Chapelle et al., CIKM 2009); ERR@k is ir_measures' name for it (its gdeval provider).",
       gdeval.err_at, trec=False, reference=GDEVAL,
       irm=(Irm(("gdeval.ERR",), {"cutoff": CUTOFF_REQUIRED}, _to("gdeval.ERR", options=lambda p: dict(p))),
            Irm(("ERR",), {"cutoff": CUTOFF}, _bind_err))),
    *[_m(f"cwl.{name}", _CWL_DOCS[name], cwl.by_name, trec=False, reference=CWL, ties="listed",
         irm=(Irm((name,), _CWL_PARAMS[name], _cwl_bind(name)),)) for name in cwl.NAMES],
    *[_m(f"ndeval.{nd}", f"{doc}, binary per subtopic over subtopic qrels (the iteration field is the subtopic).",
         None, trec=False, reference=subtopics.NDEVAL, ties="ascending", placeholder=ZERO,
         irm=(Irm((name, *_DIVERSITY_ALIASES.get(name, ())), spec, _diversity_bind(name)),))
      for name, (nd, spec, doc) in _DIVERSITY.items()],
    _m("Compat", "Compatibility: rank-biased overlap of the run with the ideal ranking, persistence p, normalised by "
                 "the ideal's (Clarke, Vtyurina & Smucker, TOIS 2021).", None, trec=False, reference=compat.REFERENCE,
       ties="ascending", placeholder=ZERO,
       irm=(Irm(("Compat",), {"p": Param(float, default=0.95), "normalize": Param(bool, default=True)},
                _to("Compat", options=lambda p: {k: p[k] for k in ("p", "normalize") if k in p})),)),
    *prefs.MEASURES,          # against preference judgments or judgment groups (-R): trec_eval lists them last
]
BY_NAME = {m.name: m for m in MEASURES}
TREC_NAMES = {m.name: m for m in MEASURES if m.trec}
IRM_NAMES: dict[str, tuple[Measure, Irm]] = {n: (m, i) for m in MEASURES for i in m.irm for n in i.names}
ORDER = {m.name: k for k, m in enumerate(MEASURES)}

NICKNAMES = {
    "official": ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"],
    "all_trec": ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP",
                 "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
                 "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map",
                 "set_F", "num_nonrel_judged_ret"],
    "set": ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"],
    **prefs.NICKNAMES,
}


LONG_MAX = (1 << 63) - 1         # trec_eval's largest cutoff (a C long)
# the ranges of the numeric parameters whose meaning has one: (lowest, highest, whether the ends are allowed)
PARAM_RANGES = {"iprec_at_recall": (0.0, 1.0, True), "11pt_avg": (0.0, 1.0, True), "relstring": (0.0, LONG_MAX, True),
                "Rprec_mult": (0.0, 1e9, True), "Rprec_mult_avgjg": (0.0, 1e9, True), "set_F": (0.0, math.inf, True)}
PERSISTENCE = ("rbp", "rbp_resid")     # p=X: the persistence, from 0 up to (not including) 1


def _param_number(m: Measure, raw: str, text: str) -> float:
    """A numeric parameter read as trec_eval's atof reads it (its number prefix), refused when it has no number
    at all or is beyond a double's range, or outside the range the measure gives it a meaning in."""
    if not _ATOF_PREFIX.match(text):
        raise InputError(f"{m.name}.{raw}: {text!r} is not a number", fix=f"e.g. -m {_param_example(m)}")
    value = _atof(text)
    if not math.isfinite(value):
        raise InputError(f"{m.name}.{raw}: {text!r} is beyond a double's range", fix=f"e.g. -m {_param_example(m)}")
    low, high, ends = PARAM_RANGES.get(m.name, (-math.inf, math.inf, True))
    if not (low <= value <= high if ends else low < value <= high):
        where = f"from {low:g} to {high:g}" if ends else f"above {low:g}, at most {high:g}"
        raise InputError(f"{m.name}.{raw}: {text} is outside the range of {m.name}'s parameters ({where})",
                         fix=f"e.g. -m {_param_example(m)}")
    return value


def _param_example(m: Measure) -> str:
    if m.name in PERSISTENCE:
        return f"{m.name}.p=0.8"
    if m.params == PAIRS:
        return f"{m.name}.1=1,2=3"
    shown = m.default if m.name == "utility" else m.default[:3]        # utility takes exactly its 4 coefficients
    return f"{m.name}." + ",".join(f"{v:g}" for v in shown) if m.default else m.name


def parse_params(m: Measure, raw: str) -> tuple:
    """trec_eval's own parameter parsing for each kind (atol/atof, sorted cutoffs, pairs), with bounds: a
    cutoff fits a C long, every number is finite and within the range its measure gives it a meaning in."""
    if raw == "":
        raise InputError(f"{m.name}.: empty parameters", fix=f"give parameters after the dot, or use -m {m.name}")
    parse = _PARAM_PARSERS.get(m.params)
    if parse is None:
        raise InputError(f"measure {m.name} takes no parameters", fix=f"use -m {m.name}")
    return parse(m, raw, raw.split(","))


def _long_cutoffs(m: Measure, raw: str, parts: list[str]) -> tuple:
    vals = sorted(_atol(p) for p in parts)
    if vals[0] <= 0:
        raise InputError(f"{m.name}.{raw}: cutoffs must be positive", fix=f"e.g. -m {m.name}.5,10")
    if vals[-1] > LONG_MAX:
        raise InputError(f"{m.name}.{raw}: a cutoff above {LONG_MAX} (the largest trec_eval reads; it would read "
                         "a larger one as that)", fix=f"e.g. -m {m.name}.1000 (a cutoff beyond a run's depth "
                                                       "counts every doc it retrieved)")
    return _distinct_cutoffs(m, raw, vals)


def _double_cutoffs(m: Measure, raw: str, parts: list[str]) -> tuple:
    return _distinct_cutoffs(m, raw, sorted(_param_number(m, raw, p) for p in parts))


def _distinct_cutoffs(m: Measure, raw: str, vals: list) -> tuple:
    if len(set(vals)) != len(vals):
        raise InputError(f"{m.name}.{raw}: duplicate cutoffs", fix="list each cutoff once")
    return tuple(vals)


def _doubles(m: Measure, raw: str, parts: list[str]) -> tuple:
    vals = tuple(_param_number(m, raw, p) for p in parts)
    if len(vals) != len(m.default) and m.name == "utility":
        raise InputError(f"{m.name}.{raw}: utility takes exactly 4 coefficients", fix="e.g. -m utility.1,-1,0,0")
    return vals


def _pairs(m: Measure, raw: str, parts: list[str]) -> tuple:
    pairs = []
    for p in parts:
        if "=" not in p or not p.partition("=")[0]:
            raise InputError(f"{m.name}.{raw}: malformed pair parameters", fix=f"e.g. -m {m.name}.1=3,2=9")
        k, v = p.split("=", 1)
        value = _param_number(m, raw, v)
        if k == "p" and m.name in PERSISTENCE and not 0 <= value < 1:
            raise InputError(f"{m.name}.{raw}: the persistence p must be from 0 up to (not including) 1",
                             fix=f"e.g. -m {m.name}.p=0.8")
        pairs.append((k, value))
    return tuple(pairs)


_PARAM_PARSERS = {LONG_CUTS: _long_cutoffs, DOUBLE_CUTS: _double_cutoffs, DOUBLES: _doubles, PAIRS: _pairs}


# ------------------------------------------------------------------ resolving -m arguments
def applies(m: Measure, rel_format: str) -> bool:
    """Whether ``m`` is measured against judgments of ``rel_format`` (trec_eval's -R)."""
    return rel_format in m.formats


def nickname_formats(nickname: str) -> tuple[str, ...]:
    """The judgment formats every measure of ``nickname`` is measured against."""
    members = [BY_NAME[n].formats for n in NICKNAMES[nickname]]
    return tuple(f for f in REL_FORMATS if all(f in formats for formats in members))


def names_for(rel_format: str) -> tuple[dict[str, Measure], dict[str, list[str]]]:
    """(trec_eval names, nicknames) that can be asked for against judgments of ``rel_format``."""
    return ({n: m for n, m in TREC_NAMES.items() if applies(m, rel_format)},
            {n: v for n, v in NICKNAMES.items() if rel_format in nickname_formats(n)})


def resolve(args, *, first_params_win: bool = True, warn: Callable[[str], None] | None = None,
            rel_format: str = QRELS) -> list[Request]:
    """Measure names (trec_eval's, with nicknames and ``.params``, or ir_measures') to requests, for judgments
    of ``rel_format`` (trec_eval's -R; a measure of another format is refused, naming the -R it needs).

    trec_eval's names come out in trec_eval's order, then ir_measures' names in the order given;
    a name asked for twice is computed once.  ``first_params_win``: trec_eval's rule, the first
    parameters given for a measure are used and later ones ignored (``warn`` says so); otherwise
    (the Python API, like pytrec_eval) every parameter set asked for is computed.
    """
    if rel_format != QRELS:
        return _resolve_beside_qrels(list(args) if args else [DEFAULT_NICKNAME[rel_format]], rel_format)
    args = list(args) if args else [DEFAULT_NICKNAME[QRELS]]
    try:
        marked, given, irm = _read_names(args)
    except InputError:
        _refuse_other_formats(args)          # a measure of other judgments: name the -R it needs
        raise
    out: list[Request] = []
    for m in MEASURES:
        if m.name in marked:
            out.extend(_trec_requests(m, given.get(m.name, []), args, first_params_win, warn))
    seen_names: set = set()
    for req in irm:          # each spelling asked for is a column of its own (MAP and AP alike), once
        if req.columns not in seen_names:
            seen_names.add(req.columns)
            out.append(req)
    return out


def column_of(requests: list[Request], measure) -> str:
    """The column an evaluation of ``requests`` gives ``measure``'s values under: ``measure`` is one measure, a name
    in either syntax (``P.10``, ``P@10``, ``recall.100``, ``nDCG(dcg='exp-log2')@10``) or a Request, and the column
    is that of the request computing the same thing (the same kernel, options, level and -J; for a cutoff measure,
    the same cutoff among the request's).  Spellings of one definition (``AP`` and ``map``) share a column."""
    want = measure if isinstance(measure, Request) else _one_request(measure)
    if len(want.columns) != 1:
        raise InputError(f"{measure if isinstance(measure, str) else want.text}: {len(want.columns)} columns ({', '.join(want.columns)}), not one",
                         fix="name one cutoff or parameter set, e.g. P.10 or nDCG@10")
    cutoffs = want.measure.params in (LONG_CUTS, DOUBLE_CUTS)
    # -c's placeholder value of these depends on the printed name (bare or with parameters)
    by_name = want.measure.placeholder in (ZERO_IF_BARE, EMPTY_IF_BARE)
    for r in requests:
        if (r.measure, _given(r.options), r.level, r.judged_only) != \
                (want.measure, _given(want.options), want.level, want.judged_only):
            continue
        if cutoffs and want.params[0] in r.params:
            return r.columns[r.params.index(want.params[0])]
        if not cutoffs and r.params == want.params and len(r.columns) == 1 and (r.bare == want.bare or not by_name):
            return r.columns[0]
    asked = measure if isinstance(measure, str) else want.text
    raise InputError(f"{asked} is not among the measures evaluated", fix=f"evaluate with {asked} among them")


def value_bounds(req: Request) -> tuple[float, float] | None:
    """The closed range every per-query value of ``req`` lies in (its measure's ``bounds``); None when none is
    declared, or when the request sets the gains itself (a gain of its choosing can take nDCG anywhere)."""
    m = req.measure
    if m.bounds is None or (m.params == PAIRS and req.params) or dict(req.options).get("gains"):
        return None
    return m.bounds


def _given(options: tuple) -> tuple:
    """Kernel options without those left unset (RR's cutoff=None computes recip_rank)."""
    return tuple((k, v) for k, v in options if v is not None)


def _one_request(name) -> Request:
    requests = resolve([name], first_params_win=False)
    if len(requests) != 1:
        raise InputError(f"{name}: a group of {len(requests)} measures, not one", fix="name one measure, e.g. map")
    return requests[0]


# the measures printed when none is asked for, for each judgment format
DEFAULT_NICKNAME = {"qrels": "official", "prefs": "prefs", "qrels_prefs": "prefs", "qrels_jg": "qrels_jg"}


def _read_names(args: list) -> tuple[set[str], dict[str, list[str]], list[Request]]:
    """(trec_eval measures asked for, {trec name: the parameter strings given, in order}, ir_measures requests)."""
    trec_names, nicknames = names_for(QRELS)
    marked: set[str] = set()
    given: dict[str, list[str]] = {}
    irm: list[Request] = []
    for arg in args:
        if not isinstance(arg, str):
            raise InputError(f"measure names are strings, got {arg!r}", fix="e.g. 'map' or 'nDCG@10'")
        name, dot, raw = arg.partition(".")
        if name in nicknames or name in trec_names:
            if dot:
                _check_trec_params(arg, name, raw, nicknames)
                given.setdefault(name, []).append(raw)
            marked.update(nicknames.get(name, [name]))
            continue
        req = parse_irm(arg)
        if req is None:
            raise unknown_measure(arg)
        irm.append(req)
    return marked, given, irm


def _check_trec_params(arg: str, name: str, raw: str, nicknames: dict) -> None:
    if name in nicknames:
        raise InputError(f"-m {arg}: {name} is a group of measures and takes no parameters",
                         fix=f"use -m {name}, and give parameters to single measures")
    if not raw:                        # trec_eval checks every -m, even after earlier parameters
        m = TREC_NAMES[name]
        raise InputError(f"-m {arg}: empty parameters",
                         fix=f"use -m {name} ({name} takes no parameters)" if m.params == NONE else
                         f"give parameters (e.g. -m {_param_example(m)}) or none (-m {name})")


def _trec_requests(m: Measure, raws: list[str], args: list, first_params_win: bool, warn) -> list[Request]:
    """The requests of one trec_eval measure given with the parameter strings ``raws`` (none: its defaults)."""
    if not raws:
        return [trec_request(m, m.default, None)]
    distinct = list(dict.fromkeys(raws))
    if first_params_win:
        if warn is not None and (len(distinct) > 1 or _bare_asked(m.name, args)):
            ignored = ", ".join(f"{m.name}.{r}" for r in distinct[1:]) or f"the default parameters of {m.name}"
            warn(f"-m {m.name}.{distinct[0]} is used and {ignored} ignored: as trec_eval, the first parameters "
                 f"given for a measure win (ask for each in a separate treckit eval, or use the Python API)")
        return [trec_request(m, parse_params(m, distinct[0]), distinct[0])]
    parsed = [(parse_params(m, r), r) for r in distinct]
    if _bare_asked(m.name, args):
        parsed.insert(0, (m.default, None))
    if m.params in (LONG_CUTS, DOUBLE_CUTS):       # cutoffs merge into one sorted list, as pytrec_eval does
        return [trec_request(m, tuple(sorted({c for p, _ in parsed for c in p})), None)]
    out, seen = [], set()
    for p, r in parsed:
        col = trec_columns(m, p, r)
        if col not in seen:
            seen.add(col)
            out.append(trec_request(m, p, r))
    return out


def _bare_asked(name: str, args: list[str]) -> bool:
    """Whether ``name`` was also asked for without parameters (alone or through a nickname)."""
    return any(a == name or name in NICKNAMES.get(a, ()) for a in args)


def _needed_formats(name: str) -> tuple[str, ...] | None:
    """The judgment formats a measure or nickname of other judgments than qrels needs (None: it is no such name)."""
    if name in NICKNAMES:
        formats = nickname_formats(name)
    elif name in BY_NAME:
        formats = BY_NAME[name].formats
    else:
        return None
    return None if QRELS in formats else formats


def _needs(formats: tuple[str, ...]) -> str:
    return " or ".join(f"-R {f}" for f in formats)


def _refuse_other_formats(args: list) -> None:
    """With qrels, a measure of preference judgments or judgment groups is refused naming the -R it needs."""
    for arg in args:
        formats = _needed_formats(arg.partition(".")[0]) if isinstance(arg, str) else None
        if formats is not None:
            need = _needs(formats)
            raise InputError(f"measure {arg!r} needs {need}",
                             fix=f"pass {need.split(' or ')[0]} and a matching judgments file")


def _resolve_beside_qrels(args: list[str], rel_format: str) -> list[Request]:
    """``-m`` arguments for preference judgments or judgment groups, in trec_eval's order; every measure must be
    measured against ``rel_format``.  As in trec_eval, the first parameters given for a measure win."""
    nicknames = {n: v for n, v in NICKNAMES.items() if QRELS not in nickname_formats(n)}
    marked: set[str] = set()
    params: dict[str, str] = {}
    for arg in args:
        name, dot, raw = arg.partition(".")
        if dot and name not in params:
            params[name] = raw
        for n in nicknames.get(name, [name]):
            _check_beside_qrels(arg, n, rel_format)
            marked.add(n)
    out = []
    for m in MEASURES:
        if m.name in marked:
            raw = params.get(m.name)
            out.append(trec_request(m, parse_params(m, raw) if raw is not None else m.default, raw))
    return out


def _check_beside_qrels(arg: str, name: str, rel_format: str) -> None:
    m = BY_NAME.get(name)
    if m is None or m.formats == (QRELS,):
        raise InputError(f"-R {rel_format}: measure {arg!r} " + ("needs -R qrels" if m is not None else "is unknown"),
                         fix=_fix_beside_qrels(rel_format))
    if not applies(m, rel_format):
        raise InputError(f"-R {rel_format}: measure {arg!r} needs {_needs(m.formats)}", fix=_fix_beside_qrels(rel_format))


def _fix_beside_qrels(rel_format: str) -> str:
    if rel_format == QRELS_JG:
        return "with -R qrels_jg use -m qrels_jg, map_avgjg, P_avgjg, Rprec_mult_avgjg, runid or num_q"
    return "with -R prefs / qrels_prefs use -m all_prefs, -m prefs or prefs_* names (see `treckit measures`)"


# ------------------------------------------------------------------ the ir_measures syntax
class _NotIrm(Exception):
    pass


def _literal(node):
    """A parameter value, accepted as ir_measures accepts it (a literal number, string, bool or dict)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float):
        return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value    # -0.5, as Python reads it
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values)}
    raise _NotIrm("values must be literal numbers, strings, booleans or dicts (as ir_measures requires)")


def _parse_irm_syntax(text: str) -> tuple[str, dict, Any]:
    """``Name(k=v, ...)@x`` -> (name, params, x or None), by ir_measures' grammar."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise _NotIrm(f"not a measure expression ({e.msg})")
    at = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        at = _literal(node.right)
        node = node.left
    args: dict = {}
    if isinstance(node, ast.Call):
        if node.args or any(k.arg is None for k in node.keywords):
            raise _NotIrm("parameters must be named, as in P(rel=2)@5")
        for k in node.keywords:
            args[k.arg] = _literal(k.value)
        node = node.func
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):     # a tool's own name: gdeval.nDCG
        return f"{node.value.id}.{node.attr}", args, at
    if not isinstance(node, ast.Name):
        raise _NotIrm("not a measure expression")
    return node.id, args, at


def parse_irm(text: str) -> Request | None:
    """An ir_measures name to a request; None when ``text`` is no measure name known to ir_measures here.
    Raises InputError for a known name with bad parameters."""
    try:
        name, args, at = _parse_irm_syntax(text)
    except _NotIrm as e:
        if "(" in text or "@" in text:
            base = text.split("(")[0].split("@")[0].strip()
            if base in IRM_NAMES:
                raise InputError(f"measure {text!r}: {e}", fix="e.g. P(rel=2)@5 or nDCG(dcg='exp-log2')@10")
        return None
    if name not in IRM_NAMES:
        return None
    m, spec = IRM_NAMES[name]
    params = dict(spec.preset)
    params.update(args)
    if at is not None:
        params[spec.at] = at
    _validate(text, name, spec, params)
    target, kparams, kopts = spec.bind(params)
    tm = BY_NAME[target]
    if spec.at == "cutoff" and "cutoff" in params and params["cutoff"] < 1:
        raise InputError(f"{text}: the cutoff must be at least 1", fix=f"e.g. {_example(name)}")
    return Request(tm, tuple(kparams), (text.strip(),), text.strip(), options=tuple(sorted(kopts.items())),
                   level=params.get("rel") if "rel" in spec.params else None,
                   judged_only=params.get("judged_only") if "judged_only" in spec.params else None,
                   summary=spec.aggregate, per_query=True, bare=False)


def _validate(text: str, name: str, spec: Irm, params: dict) -> None:
    """ir_measures' own checks (Measure.validate_params): known names, types (isinstance, so 5.0 is not an
    int), allowed values, required parameters."""
    unknown = sorted(set(params) - set(spec.params))
    if unknown:
        raise InputError(f"{text}: {name} has no parameter {', '.join(unknown)}",
                         fix=f"{name} takes {', '.join(spec.params) or 'no parameters'}")
    for pname, p in spec.params.items():
        if pname in params:
            _check_value(text, name, spec, pname, p, params[pname], params)
        elif p.required:
            shown = f"{name}@X" if pname == spec.at else f"{name}({pname}=...)"
            raise InputError(f"{text}: {name} needs {pname}", fix=f"write {shown}, e.g. {_example(name)}")


def _check_value(text: str, name: str, spec: Irm, pname: str, p: Param, v, params: dict) -> None:
    """One given parameter: of its declared type and among its allowed values, then within range (``params``: all
    those given, for the example the fix offers)."""
    ok = isinstance(v, p.dtype) and not (p.dtype is int and isinstance(v, bool))
    if not ok or (p.choices is not None and v not in p.choices):
        want = f"one of {', '.join(map(repr, p.choices))}" if p.choices else f"a {p.dtype.__name__}"
        raise InputError(f"{text}: {pname}={_brief(v)} is not valid for {name}: it must be {want} (as in ir_measures)",
                         fix=f"e.g. {_example_with(name, spec, pname, p, params)}")
    values = [x for pair in v.items() for x in pair] if isinstance(v, dict) else [v]
    if not all(_in_bounds(x) for x in values) or (name == "IPrec" and pname == "recall" and not 0 <= v <= 1) \
            or (pname == "beta" and v < 0):
        raise InputError(f"{text}: {pname}={_brief(v)} is out of range for {name}: "
                         + ("a recall level from 0 to 1" if pname == "recall" else
                            "numbers must be finite, and integers at most 2^63 - 1 in size"),
                         fix=f"e.g. {_example_with(name, spec, pname, p, params)}")


def _example_with(name: str, spec: Irm, pname: str, p: Param, params: dict) -> str:
    """An example of ``name`` with a valid ``pname`` and the other parameters asked for (a bad @ value: the usual)."""
    others = None if pname == spec.at else {k: x for k, x in params.items() if k != pname}
    return _example(name, {pname: _valid_value(p)}, others)


def _in_bounds(x) -> bool:
    """A parameter value a computation can take: integers that fit a C long, finite floats."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return True
    if isinstance(x, int):
        return -LONG_MAX <= x <= LONG_MAX
    return math.isfinite(x)


def _brief(v) -> str:
    return f"<{shown_number(v)}>" if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 64 \
        else repr(v)[:200]


_EXAMPLE_VALUES = {"max_rel": 3, "rel": 1, "recall": 0.5, "alpha": 0.5, "beta": 0.5}
_checking_example: list[str] = []          # the examples being checked (their own errors need no example)


def _valid_value(p: Param):
    """A value ``p`` takes: its default, else one of its choices, else an ordinary value of its type."""
    if p.default is not None:
        return p.default
    if p.choices:
        return p.choices[0]
    return {int: 1, float: 0.5, bool: True, str: "x", dict: {1: 1}}.get(p.dtype, 1)


def _example_candidates(name: str, spec: Irm, given: dict, asked: dict | None) -> list[str]:
    """Spellings of ``name`` to offer, best first (see :func:`_example`)."""
    needed = {p: _EXAMPLE_VALUES.get(p, 1) for p, prm in spec.params.items() if prm.required and p != spec.at}
    ats = []
    if spec.at in spec.params:
        if asked and spec.at in asked:
            ats.append(f"@{asked[spec.at]!r}")
        elif asked is not None and not spec.params[spec.at].required:
            ats.append("")
        ats.append(f"@{_EXAMPLE_VALUES.get(spec.at, 10)}")
    ats.append("")
    given = {k: v for k, v in given.items() if k != spec.at}
    candidates = []
    for params in ({**needed, **given}, {**needed, "rel": 1, **given}):
        if "rel" in params and "rel" not in spec.params:
            continue
        inside = f"({', '.join(f'{k}={v!r}' for k, v in params.items())})" if params else ""
        candidates += [name + inside + at for at in ats]
    return candidates


def _example(name: str, given: dict | None = None, asked: dict | None = None) -> str:
    """A spelling of the ir_measures name ``name`` that treckit accepts (each candidate is parsed before it is
    offered), with ``given`` parameters and the required ones, e.g. ``SDCG(max_rel=3)@10``, ``RBP(rel=1, p=0.8)``;
    the ``@`` value of ``asked`` (the parameters as asked for) is kept where it is valid, and none is added to a
    name that takes it optionally and was asked for without one (``AP(rel=1)``, not ``AP(rel=1)@10``)."""
    candidates = _example_candidates(name, IRM_NAMES[name][1], given or {}, asked)
    if _checking_example:
        return candidates[0]
    _checking_example.append(name)
    try:
        for text in dict.fromkeys(candidates):
            try:
                if parse_irm(text) is not None:
                    return text
            except InputError:
                continue
    finally:
        _checking_example.pop()
    return candidates[0]


# ------------------------------------------------------------------ unknown names
# the ir_measures names treckit does not compute: why, and the closest measure it does
NOT_COMPUTED = {
    "Accuracy": ("its mean is over the queries with a relevant document retrieved only, other queries than every "
                 "other measure's (and ir_measures 0.4 fails on a query whose retrieved documents are all relevant)",
                 "bpref (relevant documents ranked above judged non-relevant ones)"),
}


class TwoMeanings(InputError):
    """A measure name that could mean two definitions (nDCG at a cutoff, either gain): refused, naming both."""


_NDCG_AT = re.compile(r"ndcg(?:@|_at_)(\d+)", re.IGNORECASE)


def ndcg_spelling_error(name: str, exp_name: str | None = None) -> TwoMeanings | None:
    """The error for nDCG at a cutoff spelled neither as ir_measures spells it (``nDCG@10``: linear gain, as
    trec_eval's ndcg_cut.10) nor as the readable name (``ndcg_at_10``: exp gain 2^grade - 1): ``ndcg@10``,
    ``NDCG@10``, ``Ndcg_At_10`` could mean either gain, so none is guessed at.  ``exp_name``: how the caller
    writes the exp-gain choice (``ndcg_at_10`` where readable names are taken; by default the engine's
    ``nDCG(dcg='exp-log2')@10``).  None for any other name."""
    text = name.strip() if isinstance(name, str) else ""
    m = _NDCG_AT.fullmatch(text)
    if m is None or text == f"nDCG@{m.group(1)}":
        return None
    k = m.group(1)
    exp = exp_name or f"nDCG(dcg='exp-log2')@{k} (exp gain; ndcg_at_{k} in test sets, compare and the service)"
    if text == f"ndcg_at_{k}" and exp_name is None:
        reason = f"{text!r} is the test sets' name of nDCG@{k} with exp gain, not a name of this command"
    else:
        reason = f"{quoted(text)} is not a measure name: it could mean nDCG@{k} with either gain"
    return TwoMeanings(reason, fix=f"write nDCG@{k} (ir_measures: linear gain) or {exp}")


def unknown_measure(arg: str) -> InputError:
    """An error naming the nearest known names, in either syntax (nDCG at a cutoff, of two gains:
    :func:`ndcg_spelling_error`)."""
    two_gains = ndcg_spelling_error(arg)
    if two_gains is not None:
        return two_gains
    base = arg.split("(")[0].split("@")[0].strip()
    tail = arg.strip()[len(base):]
    at = tail.rpartition("@")[2] if "@" in tail else None
    note = ""
    hints = [h for h in [_printed_trec_form(arg)] if h]
    if base == "NDCG":          # ir_measures' alias of nDCG: a spelling of nDCG@K that could mean either gain
        return InputError(f"unknown measure {arg!r}: treckit takes ir_measures' nDCG as ir_measures spells it",
                          fix=f"write nDCG{tail} (linear gain unless dcg='exp-log2' is given)")
    if base in NOT_COMPUTED:
        why, closest = NOT_COMPUTED[base]
        return InputError(f"unknown measure {arg!r} ({base} is an ir_measures measure that treckit does not compute: "
                          f"{why})", fix=f"the closest it computes is {closest}; `treckit measures` lists every name")
    if base in _ir_measures_registry() and base not in IRM_NAMES:
        note = f" ({base} is an ir_measures measure that treckit does not compute)"
    trec_names, nicknames = names_for(QRELS)
    names = list(trec_names) + list(nicknames) + list(IRM_NAMES)
    folded: dict[str, list[str]] = {}
    for n in names:
        folded.setdefault(n.lower(), []).append(n)
    import difflib                      # only to explain an unknown name (off the start-up path)

    close = folded.get(base.lower(), []) + difflib.get_close_matches(base, names, n=3, cutoff=0.5)
    close += [n for f in difflib.get_close_matches(base.lower(), list(folded), n=3, cutoff=0.5) for n in folded[f]]
    hints += [_with_tail(n, tail, at) for n in close]
    hints = list(dict.fromkeys(h for h in hints if h != arg))[:4]
    fix = ("did you mean " + " or ".join(hints) + "? " if hints else "") + "`treckit measures` lists every name"
    return InputError(f"unknown measure {arg!r}{note}", fix=fix)


def _with_tail(name: str, tail: str, at: str | None) -> str:
    """A suggested name carrying the user's parameters over: ``@10`` stays on an ir_measures name and becomes
    trec_eval's ``.10`` cutoff (``ndcg@10`` -> ``ndcg_cut.10``)."""
    if name in IRM_NAMES:
        spec = IRM_NAMES[name][1]
        return name + tail if spec.at in spec.params or "@" not in tail else name
    if at is None or name in NICKNAMES:
        return name
    if f"{name}_cut" in TREC_NAMES:
        return f"{name}_cut.{at}"
    return f"{name}.{at}" if TREC_NAMES[name].params == LONG_CUTS else name


def _printed_trec_form(arg: str) -> str | None:
    """``P_10`` -> ``P.10``, ``ndcg_cut_10`` -> ``ndcg_cut.10``: the -m form of a name as trec_eval prints it."""
    if "@" in arg or "(" in arg:           # ir_measures' syntax: ndcg_cut@10 is not ndcg with parameters cut@10
        return None
    fits = [m.name for m in MEASURES if m.trec and applies(m, QRELS) and m.params != NONE and arg.startswith(m.name + "_")
            and len(arg) > len(m.name) + 1]
    if not fits:
        return None
    name = max(fits, key=len)
    return f"{name}.{arg[len(name) + 1:]}"


def _ir_measures_registry() -> set[str]:
    try:
        import ir_measures
        return set(ir_measures.measures.registry)
    except Exception:                   # ir_measures is only consulted for a friendlier message
        return set()


def describe() -> list[tuple[str, str, str, str]]:
    """(trec_eval name with defaults, ir_measures names, meaning, reference tool) for each measure, for
    `treckit measures`; a measure of other judgments than qrels says so."""
    rows = []
    for m in MEASURES:
        default = ",".join(str(x) for x in m.default)
        trec = (m.name + (f".{default}" if default else "")) if m.trec else "-"
        irm = ", ".join(n + _at_hint(i) for i in m.irm for n in i.names)
        rows.append((trec, irm, m.doc + ("" if applies(m, QRELS) else f" (-R {_BESIDE_QRELS})"), m.reference))
    return rows


_BESIDE_QRELS = ", ".join(REL_FORMATS[1:-1]) + f" or {REL_FORMATS[-1]}"     # prefs, qrels_prefs or qrels_jg


def _at_hint(spec: Irm) -> str:
    p = spec.params.get(spec.at)
    if p is None:
        return ""
    at = "@r" if spec.at == "recall" else "@k"
    return at if p.required else f"[{at}]"
