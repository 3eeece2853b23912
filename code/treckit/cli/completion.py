"""Shell completion of measure names after ``-m`` (typer's ``treckit --install-completion``): trec_eval's names and
nicknames, ir_measures' names and the test sets' readable names, from the one registry."""
from __future__ import annotations

from ..measures.readable import DEFAULT_MEASURES
from ..measures.registry import MEASURES, NICKNAMES, TREC_NAMES

READABLE = (*DEFAULT_MEASURES, "recall@10", "nDCG@10", "precision@10", "precision_at_10", "map")


def measure_names(incomplete: str) -> list[str]:
    """The measure names that start with what was typed so far."""
    names = [*TREC_NAMES, *NICKNAMES, *(n for m in MEASURES for irm in (m.irm or ()) for n in irm.names), *READABLE]
    return [n for n in dict.fromkeys(names) if n.startswith(incomplete)]
