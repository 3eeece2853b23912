"""The test-set measures: readable names over the one evaluation engine.

=====================  ===============================================  ==========================
name                   definition                                       engine measure
=====================  ===============================================  ==========================
``recall_at_K``        relevant (grade > 0) in the top K / all relevant  trec_eval ``recall.K``
``ndcg_at_K``          nDCG@K, gain 2^grade - 1, discount log2(rank+1)   ``nDCG(dcg='exp-log2')@K``
                       (``gain="linear"``: trec_eval's gain = grade)     (``ndcg_cut.K``)
``mrr`` / ``mrr_at_K`` 1 / rank of the first relevant doc (within K)     ``recip_rank`` / ``RR@K``
``precision_at_K``     relevant in the top K / K                         ``P.K``
``map``                average precision                                 ``map``
=====================  ===============================================  ==========================

``recall@10``, ``nDCG@10``, ``MRR@5`` are accepted spellings of the same names.
"""
from __future__ import annotations

import re

from ..errors import InputError

DEFAULT_MEASURES = ("recall_at_5", "recall_at_10", "recall_at_20", "ndcg_at_10", "mrr")
GAINS = {"exp": "gain 2^grade - 1, discount log2(rank + 1) (Burges et al. 2005; scikit-learn's ndcg_score)",
         "linear": "gain = grade, discount log2(rank + 1) (trec_eval's ndcg_cut)"}
_NAME = re.compile(r"(recall|ndcg|mrr|precision|map)(?:_at_(\d+))?")


def canonical_name(name: str) -> str:
    """``recall@10`` / ``Recall@10`` / ``recall_at_10`` -> ``recall_at_10``; ``P@5`` -> ``precision_at_5``."""
    n = name.strip().lower().replace("@", "_at_")
    n = re.sub(r"^(p|prec)(?=_at_)", "precision", n)
    n = re.sub(r"^(r)(?=_at_)", "recall", n)
    m = _NAME.fullmatch(n)
    if not m or (m.group(1) in ("recall", "ndcg", "precision") and m.group(2) is None) \
            or (m.group(1) == "map" and m.group(2)) or (m.group(2) is not None and int(m.group(2)) < 1):
        raise InputError(f"unknown test-set measure {name!r}",
                         fix="use recall_at_K, ndcg_at_K, mrr, mrr_at_K, precision_at_K or map (e.g. recall@10)")
    return n


def engine_measure(name: str, gain: str = "exp") -> str:
    """The engine's name for a canonical test-set measure."""
    if gain not in GAINS:
        raise InputError(f"unknown nDCG gain {gain!r}", fix="use exp (2^grade - 1) or linear (trec_eval)")
    kind, _, k = name.partition("_at_")
    if kind == "recall":
        return f"recall.{k}"
    if kind == "ndcg":
        return f"nDCG(dcg='exp-log2')@{k}" if gain == "exp" else f"ndcg_cut.{k}"
    if kind == "mrr":
        return f"RR@{k}" if k else "recip_rank"
    if kind == "precision":
        return f"P.{k}"
    return "map"


def engine_column(name: str, gain: str = "exp") -> str:
    """The column the engine's DataFrame gives the measure under."""
    m = engine_measure(name, gain)
    return m.replace(".", "_") if not m.startswith(("nDCG", "RR")) else m


def per_query_values(qrels, run, names: list[str], gain: str = "exp", warn=None) -> dict[str, dict[str, float]]:
    """{measure: {qid: value}} for every query in ``qrels`` (a query the run misses scores 0, as
    with trec_eval -c), computed by the engine; its warnings go to ``warn`` (None: InputWarning)."""
    from ..evaluation import evaluate

    qids = sorted(set(qrels.table.column("qid").to_pylist()))
    if len(run) == 0:
        return {n: {q: 0.0 for q in qids} for n in names}
    df = evaluate(qrels, run, [engine_measure(n, gain) for n in names], complete=True, order="desc", warn=warn)
    df = df[df["qid"] != "all"].set_index("qid")
    return {n: {q: float(df.at[q, engine_column(n, gain)]) for q in qids} for n in names}
