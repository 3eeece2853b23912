"""ir_measures' names and syntax (``nDCG@10``, ``P(rel=2)@5``, ``RR@10``, ``nDCG(dcg='exp-log2')@10``),
mapped onto the same kernels as trec_eval's names.

=====================  =====================================================
name                   meaning
=====================  =====================================================
``nDCG[@k]``           trec_eval's ndcg / ndcg_cut.k (linear gain)
``nDCG(dcg='exp-log2')[@k]``  gain 2^grade - 1 (scikit-learn / older evaluators)
``P[(rel=g)]@k``       precision at k, relevant = grade >= g
``R[(rel=g)]@k``       recall at k
``AP[(rel=g)][@k]``    average precision (map / map_cut)
``RR[(rel=g)][@k]``    reciprocal rank; with @k only the top k count (MRR@k)
``Judged@k``           share of the top k that is judged
``Rprec``, ``Bpref``, ``infAP``, ``Success@k``, ``NumRet``, ``NumRel``, ``NumRelRet``
=====================  =====================================================
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from . import ap, counts, ndcg, precision, recall, rr

_NAME = re.compile(r"(?P<name>[A-Za-z]+)(?:\((?P<args>[^)]*)\))?(?:@(?P<k>\d+))?")


def _kernel(name: str, args: dict, k: int | None):
    cut = [k] if k is not None else None
    if name == "nDCG":
        exp = args.get("dcg", "log2") == "exp-log2"
        if k is None:
            return (lambda v: ndcg.ndcg_exp(v, None)) if exp else (lambda v: ndcg.ndcg(v, ()))
        return lambda v: ndcg.ndcg_cut(v, cut, exponential=exp)[:, 0]
    if name == "P" and k is not None:
        return lambda v: precision.P(v, cut)[:, 0]
    if name == "R" and k is not None:
        return lambda v: recall.recall(v, cut)[:, 0]
    if name == "AP":
        return (lambda v: ap.map_(v, ())) if k is None else (lambda v: ap.map_cut(v, cut)[:, 0])
    if name == "RR":
        return (lambda v: rr.recip_rank(v, ())) if k is None else (lambda v: rr.recip_rank_at(v, cut)[:, 0])
    if name == "Judged" and k is not None:
        return lambda v: counts.judged_at(v, cut)[:, 0]
    if name == "Success" and k is not None:
        return lambda v: precision.success(v, cut)[:, 0]
    simple = {"Rprec": precision.Rprec, "Bpref": ap.bpref, "infAP": ap.infAP, "NumRet": counts.num_ret,
              "NumRel": counts.num_rel, "NumRelRet": counts.num_rel_ret_, "SetP": counts.set_P, "SetR": counts.set_recall}
    if name in simple and k is None:
        f = simple[name]
        return lambda v: f(v, ())
    return None


@dataclass
class IrmMeasure:
    text: str
    level: int
    kernel: object


def parse(text: str) -> IrmMeasure | None:
    m = _NAME.fullmatch(text.strip())
    if not m:
        return None
    args = {}
    if m.group("args"):
        for part in m.group("args").split(","):
            if "=" not in part:
                return None
            a, b = part.split("=", 1)
            args[a.strip()] = b.strip().strip("'\"")
    k = int(m.group("k")) if m.group("k") else None
    if k is not None and k < 1:
        raise InputError(f"{text}: the cutoff must be at least 1", fix="e.g. nDCG@10")
    level = int(args.pop("rel", 1))
    kern = _kernel(m.group("name"), args, k)
    if kern is None or (args and set(args) - {"dcg"}):
        return None
    return IrmMeasure(text.strip(), level, kern)


def is_irm(text: str) -> bool:
    return ("@" in text or "(" in text or text in ("AP", "RR", "nDCG", "Rprec", "Bpref", "NumRet", "NumRel",
                                                   "NumRelRet", "SetP", "SetR")) and parse(text) is not None


@dataclass
class IrmGroup:
    """ir_measures-named measures sharing one relevance level, so they share one view."""

    level: int
    measures: list[IrmMeasure]

    def evaluate(self, qrels, run, options, source: str = "run", warn=None):
        from ..evaluation import EvalResult, mean
        from .ranking import build_view

        v = build_view(qrels, run, options, level=self.level, source=source, warn=warn)
        cols = [m.text for m in self.measures]
        values = np.stack([np.asarray(m.kernel(v), np.float64) for m in self.measures], axis=1)
        res = EvalResult(v, [], cols, values, {}, {}, {c: "double" for c in cols}, set(cols))
        res.summary = {c: mean(values[:, j]) for j, c in enumerate(cols)}
        return res


def split_measures(args: list[str]) -> tuple[list[str], list[IrmGroup]]:
    trec_args, groups = [], {}
    for a in args:
        if is_irm(a):
            m = parse(a)
            groups.setdefault(m.level, []).append(m)
        else:
            trec_args.append(a)
    return trec_args, [IrmGroup(lv, ms) for lv, ms in sorted(groups.items())]
