"""Every trec_eval 10.0 measure that takes qrels + a run, declared once: name, meaning, parameters,
defaults, how it is summarised, and the kernel that computes it.

Parameters follow trec_eval's ``-m name.params`` syntax: integer cutoffs (``P.5,10``,
sorted, positive, no repeats), fractional cutoffs (``iprec_at_recall..1,.5``), plain numbers
(``utility.1,-1,0,0``) or ``level=gain`` pairs (``ndcg.1=3,2=9``).  The order of this list is
trec_eval's output order.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import InputError
from ..formats.common import atof as _atof, atol as _atol
from . import ap, counts, ndcg, precision, rbp, recall, relstring, rr

LONG_CUTS, DOUBLE_CUTS, DOUBLES, PAIRS, NONE = "long_cutoffs", "double_cutoffs", "doubles", "pairs", "none"
STD_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class TrecMeasure:
    name: str
    doc: str
    kernel: Callable | None
    params: str = NONE
    default: tuple = ()
    summary: str = "mean"        # mean | sum | gm | count | none
    value: str = "double"        # double | long | string | runid
    per_query: bool = True


def _m(name, doc, kernel, params=NONE, default=(), summary="mean", value="double", per_query=True):
    return TrecMeasure(name, doc, kernel, params, default, summary, value, per_query)


MEASURES: list[TrecMeasure] = [
    _m("runid", "Run id: the tag on the last line of the run.", None, value="runid", summary="none", per_query=False),
    _m("num_q", "Number of queries averaged over (with -c: every query in the qrels).", counts.num_q, summary="count", value="long", per_query=False),
    _m("num_ret", "Documents retrieved (after -M and -J). Summary is the sum.", counts.num_ret, summary="sum", value="long"),
    _m("num_rel", "Relevant documents (grade >= -l). Summary is the sum.", counts.num_rel, summary="sum", value="long"),
    _m("num_rel_ret", "Relevant documents retrieved. Summary is the sum.", counts.num_rel_ret_, summary="sum", value="long"),
    _m("map", "Mean average precision: precision after each relevant doc, averaged over all relevant docs "
              "(Buckley & Voorhees, 'Retrieval System Evaluation', 2005).", ap.map_),
    _m("gm_map", "Geometric mean over queries of average precision (floor 0.00001).", ap.gm_map, summary="gm", per_query=False),
    _m("Rprec", "Precision after R docs, R = number of relevant docs.", precision.Rprec),
    _m("bpref", "Binary preference (Buckley & Voorhees, SIGIR 2004).", ap.bpref),
    _m("recip_rank", "Reciprocal rank of the first relevant doc.", rr.recip_rank),
    _m("iprec_at_recall", "Interpolated precision at recall levels.", precision.iprec_at_recall, DOUBLE_CUTS,
       (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),
    _m("P", "Precision at cutoffs: relevant in the top k divided by k.", precision.P, LONG_CUTS, STD_CUTS),
    _m("relstring", "Grades of the first N docs as a string; per query only.", relstring.relstring, DOUBLES, (10.0,),
       summary="none", value="string"),
    _m("recall", "Recall at cutoffs: relevant in the top k divided by all relevant.", recall.recall, LONG_CUTS, STD_CUTS),
    _m("infAP", "Inferred AP (Yilmaz & Aslam, CIKM 2006).", ap.infAP),
    _m("gm_bpref", "Geometric mean of bpref.", ap.gm_bpref, summary="gm", per_query=False),
    _m("Rprec_mult", "Precision at multiples of R.", precision.Rprec_mult, DOUBLE_CUTS,
       (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    _m("utility", "Set utility a*relret + b*nonrelret + c*relnotret + d*nonrelnotret.", counts.utility, DOUBLES, (1.0, -1.0, 0.0, 0.0)),
    _m("11pt_avg", "Interpolated precision averaged over recall levels.", precision.eleven_pt_avg, DOUBLES,
       (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),
    _m("binG", "Binary G: mean over relevant docs of 1/log2(2 + nonrelevant docs above it).", ap.binG),
    _m("G", "Normalized gain with a user cost model (trec_eval's G).", ndcg.G, PAIRS),
    _m("ndcg", "Normalized discounted cumulative gain over the whole ranking (Jarvelin & Kekalainen, TOIS 2002); "
               "gain of grade g is g unless set with level=gain pairs.", ndcg.ndcg, PAIRS),
    _m("ndcg_rel", "nDCG averaged over the ranks of relevant docs.", ndcg.ndcg_rel, PAIRS),
    _m("Rndcg", "nDCG averaged at the ends of the ideal ranking's grade levels.", ndcg.Rndcg, PAIRS),
    _m("ndcg_cut", "nDCG at cutoffs, gain = grade.", ndcg.ndcg_cut, LONG_CUTS, STD_CUTS),
    _m("map_cut", "Average precision over the top k, divided by all relevant.", ap.map_cut, LONG_CUTS, STD_CUTS),
    _m("relative_P", "Precision at k divided by the best possible precision at k.", precision.relative_P, LONG_CUTS, STD_CUTS),
    _m("success", "1 if a relevant doc is in the top k, else 0.", precision.success, LONG_CUTS, (1, 5, 10)),
    _m("set_P", "Relevant retrieved / retrieved.", counts.set_P),
    _m("set_relative_P", "Set precision over the best possible for that set size.", counts.set_relative_P),
    _m("set_recall", "Relevant retrieved / relevant.", counts.set_recall),
    _m("set_map", "relret^2 / (retrieved * relevant).", counts.set_map),
    _m("set_F", "F-measure of set precision and recall, beta default 1.", counts.set_F, DOUBLES, (1.0,)),
    _m("num_nonrel_judged_ret", "Judged non-relevant docs retrieved. Summary is the sum.", counts.num_nonrel_judged_ret,
       summary="sum", value="long"),
    _m("rbp", "Rank-biased precision (Moffat & Zobel, TOIS 2008), p=0.9 unless rbp.p=X.", rbp.rbp, PAIRS),
    _m("rbp_resid", "Residual of rank-biased precision due to unjudged docs.", rbp.rbp_resid, PAIRS),
    _m("unj", "Share of the top k that is not judged.", precision.unj, LONG_CUTS, (5, 10, 20)),
]
BY_NAME = {m.name: m for m in MEASURES}

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
}


@dataclass(frozen=True)
class Request:
    """One measure with its parameters, and the column names it produces."""

    measure: TrecMeasure
    params: tuple
    raw: str | None

    @property
    def columns(self) -> list[str]:
        m = self.measure
        if m.params == LONG_CUTS:
            return [f"{m.name}_{c}" for c in self.params]
        if m.params == DOUBLE_CUTS:
            return [f"{m.name}_{c:3.2f}" for c in self.params]
        if m.params in (DOUBLES, PAIRS) and self.raw is not None:
            return [f"{m.name}_{self.raw}"]
        return [m.name]


def parse_params(m: TrecMeasure, raw: str) -> tuple:
    """trec_eval's own parameter parsing for each kind (atol/atof, sorted cutoffs, pairs)."""
    parts = raw.split(",")
    if m.params == LONG_CUTS:
        vals = sorted(_atol(p) for p in parts)
        if vals[0] <= 0:
            raise InputError(f"{m.name}.{raw}: cutoffs must be positive", fix=f"e.g. -m {m.name}.5,10")
        if len(set(vals)) != len(vals):
            raise InputError(f"{m.name}.{raw}: duplicate cutoffs", fix="list each cutoff once")
        return tuple(vals)
    if m.params == DOUBLE_CUTS:
        vals = sorted(_atof(p) for p in parts)
        if len(set(vals)) != len(vals):
            raise InputError(f"{m.name}.{raw}: duplicate cutoffs", fix="list each cutoff once")
        return tuple(vals)
    if m.params == DOUBLES:
        return tuple(_atof(p) for p in parts)
    if m.params == PAIRS:
        pairs = []
        for p in parts:
            if "=" not in p:
                raise InputError(f"{m.name}.{raw}: malformed pair parameters", fix=f"e.g. -m {m.name}.1=3,2=9")
            k, v = p.split("=", 1)
            pairs.append((k, _atof(v)))
        return tuple(pairs)
    raise InputError(f"measure {m.name} takes no parameters", fix=f"use -m {m.name}")


def resolve(args: list[str]) -> list[Request]:
    """``-m`` arguments (names, nicknames, name.params) to requests in trec_eval's order.

    As in trec_eval, the first parameters given for a measure win.
    """
    marked: set[str] = set()
    params: dict[str, str] = {}
    for arg in args or ["official"]:
        name, dot, raw = arg.partition(".")
        if dot and name not in params:
            params[name] = raw
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
        elif name in BY_NAME:
            marked.add(name)
        else:
            raise InputError(f"unknown trec_eval measure {arg!r}",
                             fix="see `treckit measures` for the names (trec_eval's, or ir_measures' like nDCG@10)")
    out = []
    for m in MEASURES:
        if m.name in marked:
            raw = params.get(m.name)
            out.append(Request(m, parse_params(m, raw) if raw is not None else m.default, raw))
    return out
