"""The test-set measures: readable names (:mod:`treckit.measures.readable`) computed by the one
evaluation engine over every query of a test set."""
from __future__ import annotations

from ..engines.memory import evaluate_objects
from ..measures.readable import (DEFAULT_MEASURES, GAIN_CHOICES, canonical_name, cutoff_of, definitions,  # noqa: F401
                                 engine_measure, gains_note)
from ..measures.registry import TwoMeanings  # noqa: F401


def per_query_values(qrels, run, names: list[str], warn=None) -> dict[str, dict[str, float]]:
    """{measure: {qid: value}} for every query in ``qrels`` (a query the run misses scores 0, as
    with trec_eval -c), computed by the engine, the run ranked by trec_eval's rule; its warnings go to
    ``warn`` (None: InputWarning)."""
    qids = sorted(set(qrels.table.column("qid").to_pylist()))
    if len(run) == 0:
        return {n: {q: 0.0 for q in qids} for n in names}
    result = evaluate_objects(qrels, run, [engine_measure(n) for n in names], complete=True, order="desc", warn=warn)
    out = {}
    for n in names:
        value_of = result.per_query(engine_measure(n))
        out[n] = {q: value_of[q] for q in qids}
    return out
