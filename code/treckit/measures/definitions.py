"""What a printed number means: a measure's full definition, recorded beside the number.

A number is only comparable with another of the same definition: the same measure and cutoff,
the same gain, the same relevance level, the same query set (which queries are averaged) and the
same ranking rule (how a run's docs are put in order).  Result files record one
:class:`Definition` per measure they print, so a gate or a comparison of stored results can refuse
to compare numbers of different definitions instead of reporting a difference that only the
definitions make.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from ..console.errors import InputError
from .registry import DOUBLE_CUTS, LONG_CUTS

# gain of a judged doc of grade g in the DCG family
GAINS = {
    "linear": "gain = grade (trec_eval's ndcg and ndcg_cut)",
    "exp": "gain = 2^grade - 1 (Burges et al. 2005; the test-set document's nDCG)",
}
# which queries a mean is taken over
QUERY_SETS = {
    "judged": "every judged query (every query of a test set); a query the run does not answer scores 0 (trec_eval -c)",
    "retrieved": "the judged queries the run retrieves docs for (trec_eval's default)",
    "labelled": "the queries with a relevant doc; unlabelled queries are listed and skipped (the RQ document)",
    "listed": "every query of the queries file; one without judgments or without an answer scores 0 (rq_eval.py)",
}
# the same, as a report's title says it
QUERY_SET_PHRASES = {
    "judged": "every judged query (one a run misses scores 0)",
    "retrieved": "the judged queries the run answers",
    "labelled": "the labelled queries",
    "listed": "every listed query (one unjudged or missed scores 0)",
}
# how a run's docs are put in order before they are measured
RANKINGS = {
    "trec_eval": "score descending, then doc id descending as written (trec_eval); a retrieval function's "
                 "list order is turned into scores n, n-1, ..., 1 first",
    "trec_eval-float32": "as trec_eval, on scores rounded to float32 (trec_eval 9, pytrec_eval)",
    "rank": "the run's rank column, lower first",
    "bow-corpus-order": "bag-of-words cosine descending, ties in corpus file order (the RQ document's baseline)",
    "lex-id": "score descending, ties by doc id ascending (the A/B evaluator rq_eval.py; --ties docid-asc)",
    "input-order": "score descending, ties in the order the run lists them (--ties break)",
}
# measure families whose value depends on the gain of a grade
GAIN_FAMILIES = ("ndcg", "ndcg_cut", "ndcg_rel", "Rndcg")
_COMPARED = ("measure", "cutoff", "gain", "relevance", "params", "query_set", "ranking")


@dataclass(frozen=True)
class Definition:
    """One measure as computed: what its name stands for, in full."""

    name: str                      # as printed
    measure: str                   # trec_eval's family name (recall, ndcg_cut, recip_rank, P, map, ...)
    cutoff: float | int | None     # the k of @k (or the level of iprec_at_recall); None: the whole ranking
    gain: str | None               # a key of GAINS for the DCG family, None for measures without gain
    relevance: int                 # a doc is relevant when its grade is at least this
    params: str                    # other parameters as asked (judged only, gains per grade, ...): "" if none
    query_set: str                 # a key of QUERY_SETS
    ranking: str                   # a key of RANKINGS

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """One line a reader understands without the documentation."""
        parts = [self.measure + (f"@{self.cutoff:g}" if self.cutoff is not None else "")]
        if self.gain:
            parts.append(GAINS[self.gain].split(" (")[0])
        parts.append(f"relevant: grade >= {self.relevance}")
        if self.params:
            parts.append(self.params)
        parts.append(f"queries: {self.query_set}")
        parts.append(f"ranking: {self.ranking}")
        return "; ".join(parts)

    def differences(self, other: "Definition") -> list[str]:
        """The fields (name aside) in which two definitions differ."""
        return [f for f in _COMPARED if getattr(self, f) != getattr(other, f)]

    def with_name(self, name: str) -> "Definition":
        return Definition(name, *(getattr(self, f.name) for f in fields(self)[1:]))

    @classmethod
    def from_dict(cls, data: Any, where: str, name: str | None = None) -> "Definition":
        """A definition read back from a result file (``where`` names it in errors, ``name`` the measure
        whose definition it is), every field of its type."""
        names = [f.name for f in fields(cls)]
        field_of = f"definitions.{name}" if name is not None else "a measure definition"
        fix = "write the results again with this treckit version"
        if not isinstance(data, dict) or set(data) != set(names):
            raise InputError(f"{field_of}: a measure definition must have exactly the fields {', '.join(names)}",
                             path=where, fix=fix)
        kinds = {"name": "text", "measure": "text", "params": "text", "relevance": "an integer",
                 "cutoff": "a number or null", "gain": f"null or one of {', '.join(GAINS)}",
                 "query_set": f"one of {', '.join(QUERY_SETS)}", "ranking": f"one of {', '.join(RANKINGS)}"}
        for key, want in kinds.items():
            v = data[key]
            ok = {"name": isinstance(v, str), "measure": isinstance(v, str), "params": isinstance(v, str),
                  "relevance": isinstance(v, int) and not isinstance(v, bool),
                  "cutoff": v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)),
                  "gain": v is None or (isinstance(v, str) and v in GAINS),
                  "query_set": isinstance(v, str) and v in QUERY_SETS,
                  "ranking": isinstance(v, str) and v in RANKINGS}[key]
            if not ok:
                raise InputError(f"{field_of}.{key}: must be {want}", path=where, fix=fix)
        return cls(**{n: data[n] for n in names})


def definitions_of(requests, *, query_set: str, ranking: str, level: int = 1) -> dict[str, Definition]:
    """{printed column: Definition} of resolved engine requests (:func:`treckit.measures.registry.resolve`)
    measured over ``query_set`` with ``ranking``; ``level`` is the relevance level (``-l``) where a
    request does not set its own."""
    if query_set not in QUERY_SETS or ranking not in RANKINGS:
        raise ValueError(f"unknown query set {query_set!r} or ranking {ranking!r}")
    out: dict[str, Definition] = {}
    for req in requests:
        m = req.measure
        options = dict(req.options)
        cut = options.pop("cutoff", None)
        exponential = options.pop("exponential", False)
        extra = [f"{k}={v}" for k, v in sorted(options.items()) if v not in (None, ())]
        if req.judged_only:
            extra.append("judged docs only")
        for j, column in enumerate(req.columns):
            cutoff, params = cut, list(extra)
            if m.params in (LONG_CUTS, DOUBLE_CUTS):
                cutoff = req.params[j]
            elif req.params:
                params.insert(0, ",".join(map(_text, req.params)))
            gain = ("exp" if exponential else "linear") if m.name in GAIN_FAMILIES else None
            out[column] = Definition(column, m.name, cutoff, gain, req.level if req.level is not None else level,
                                     "; ".join(params), query_set, ranking)
    return out


def _text(p) -> str:
    if isinstance(p, tuple):
        return "=".join(map(_text, p))
    return f"{p:g}" if isinstance(p, float) else str(p)


def check_same(baseline: dict[str, Definition], current: dict[str, Definition], names, what: str) -> None:
    """Refuse (exit 2) to compare ``names`` when ``baseline`` and ``current`` define one of them
    differently, naming both definitions."""
    for name in names:
        b, c = baseline.get(name), current.get(name)
        if b is None or c is None:
            side = "baseline" if b is None else "current"
            raise InputError(f"{what}: the {side} results record no definition of {name}",
                             fix="evaluate both with this treckit version (re-run the baseline)")
        diff = b.differences(c)
        if diff:
            verb = "differs" if len(diff) == 1 else "differ"
            raise InputError(f"{what}: {name} has different definitions ({', '.join(diff)} {verb}), so its numbers "
                             f"cannot be compared:\n  baseline: {b.describe()}\n  current:  {c.describe()}",
                             fix="evaluate both the same way (same measures, gain, query set and ranking), "
                                 "e.g. re-run the baseline with the current options")


def read_definitions(data: Any, where: str) -> dict[str, Definition]:
    """The ``definitions`` block of a result file; exit 2 with the fix when there is none."""
    block = data.get("definitions") if isinstance(data, dict) else None
    if block is None:
        raise InputError("the file records no measure definitions (it was written before treckit recorded them), "
                         "so what its numbers mean is unknown", path=where,
                         fix="re-run the baseline with this treckit version (e.g. treckit testset eval TEST_SET "
                             "--run BASELINE_RUN --out BASELINE.json)")
    if not isinstance(block, dict):
        raise InputError("'definitions' must be a mapping of measure names to definitions", path=where,
                         fix="write the results again with this treckit version")
    return {str(name): Definition.from_dict(d, where, str(name)) for name, d in block.items()}
