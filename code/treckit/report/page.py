"""What an HTML report shows (:class:`Page`), independent of how it is drawn.

A page holds the per-query values of each system (queries x measures, NaN where a system has no value for a
query), the means as the command printed them, each mean's 95% interval (the seeded percentile bootstrap of
:func:`treckit.compare.stats.mean_intervals`, compare's interval, here of a mean), the significance mark of each
system against the baseline (the test that decides, from compare's own tests: :class:`Mark`), the definitions,
the per-type means, the precision-recall curves (or why there are none), tie ranges, a gate's checks, a trend,
and the inputs with their digests.  Every number comes from the values the command computed: nothing here
measures anything again.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from ..compare.compare import CompareOptions, Comparison, compare_values, deciding_test
from ..compare.stats import mean_intervals
from ..dependencies import deferred
from ..measures.definitions import GAINS, QUERY_SETS, RANKINGS, Definition

np = deferred("numpy")

PLOTTED_MEASURES = 6           # per-query figures for at most this many measures (the table holds every one)
NO_TYPE = "(no type)"


@dataclass(frozen=True)
class Mark:
    """The significance of one system's difference from the baseline on one measure: the test that decides (the
    first selected test that gives a verdict, as compare's reports mark it) and its corrected p."""

    significant: bool
    test: str
    p_adjusted: float
    correction: str
    alpha: float

    def text(self) -> str:
        verdict = "significant" if self.significant else "not significant"
        return f"{verdict}: {self.test}, p = {_p(self.p_adjusted)} ({self.correction}-adjusted; alpha {self.alpha:g})"


def _p(x: float) -> str:
    return f"{x:.2e}" if 0 < x < 1e-4 else f"{x:.4f}"


@dataclass
class Interval:
    """How the intervals were drawn (said on the page)."""

    resamples: int = 10000
    seed: int = 42
    alpha: float = 0.05

    def text(self) -> str:
        return (f"{1 - self.alpha:.0%} interval of each mean: percentile bootstrap over the queries, "
                f"{self.resamples:,} resamples, seed {self.seed}")


@dataclass
class Page:
    kind: str                                   # compare | eval | testset | system | gate | trend
    title: str
    systems: list[str]                          # the first is the baseline
    measures: list[str]
    qids: list[str]
    values: dict[str, Any]                      # system -> (Q, M) floats, NaN: no value
    means: dict[str, dict[str, float | None]]   # system -> measure -> the mean as the command printed it
    intervals: dict[str, dict[str, tuple[float, float] | None]] = field(default_factory=dict)
    marks: dict[str, dict[str, Mark | None]] = field(default_factory=dict)
    definitions: dict[str, str] = field(default_factory=dict)        # measure -> one line
    notes: list[str] = field(default_factory=list)                  # what the numbers are, in sentences
    texts: list[str | None] | None = None
    types: list[str | None] | None = None
    type_means: dict[str, dict[str, Any]] | None = None             # type -> {"queries": n, system: {measure: mean}}
    curves: dict[str, list[float | None]] | None = None             # system -> mean iprec at the levels
    curve_levels: list[float] = field(default_factory=list)
    no_curves: str | None = None                                    # why there is no curve
    tests: tuple[list[str], list[list[str]]] | None = None          # compare's table of every test
    ties: dict[str, Any] | None = None                              # statement, header, cells, movers
    gate: dict[str, Any] | None = None
    trend: dict[str, Any] | None = None
    inputs: list[tuple[str, str, str | None]] = field(default_factory=list)    # (role, name, digest)
    version: str = __version__
    plotted: list[str] = field(default_factory=list)

    @property
    def baseline(self) -> str:
        return self.systems[0]

    def column(self, system: str, measure: str):
        return self.values[system][:, self.measures.index(measure)]


# ---------------------------------------------------------------- shared steps of the builders
def with_intervals(page: Page, interval: Interval) -> Page:
    """Each system's interval of each mean.  The columns (of any system) that have values for the same queries are
    drawn together: one set of seeded resamples, the numbers each column would get alone."""
    page.notes.append(interval.text() + ".")
    groups: dict[bytes, list[tuple[str, int]]] = {}
    for s in page.systems:
        page.intervals[s] = {m: None for m in page.measures}
        for j in range(len(page.measures)):
            groups.setdefault(np.isfinite(page.values[s][:, j]).tobytes(), []).append((s, j))
    for mask, cols in groups.items():
        rows = np.frombuffer(mask, dtype=bool)
        block = np.column_stack([page.values[s][rows, j] for s, j in cols])
        found = mean_intervals(block, resamples=interval.resamples, seed=interval.seed, alpha=interval.alpha)
        for (s, j), ci in zip(cols, found):
            page.intervals[s][page.measures[j]] = ci
    return page


def marks_of(comp: Comparison) -> dict[str, dict[str, Mark | None]]:
    """system -> measure -> its :class:`Mark` against the baseline (None: no test gave a verdict)."""
    o = comp.options
    out: dict[str, dict[str, Mark | None]] = {}
    for s in comp.systems[1:]:
        out[s.name] = {}
        for m in comp.measures:
            row = deciding_test(comp, m, s.name)
            out[s.name][m] = None if row is None else Mark(row["significant"], row["test"], row["p_adjusted"],
                                                          o.correction, o.alpha)
    return out


def with_tests(page: Page, options: CompareOptions | None = None, rows=None, reason: str | None = None) -> Page:
    """The paired tests of compare on the page's values over ``rows`` (default: the queries where every system has
    a value), the first system the baseline; ``reason`` says why the page tests over those queries."""
    if len(page.systems) < 2:
        return page
    if rows is None:
        rows = np.all([np.all(np.isfinite(page.values[s]), axis=1) for s in page.systems], axis=0)
    if rows.sum() < 2:
        page.notes.append("No significance test: fewer than 2 queries have a value for every system.")
        return page
    comp = compare_values(page.systems, page.measures, [q for q, r in zip(page.qids, rows) if r],
                          {s: page.values[s][rows] for s in page.systems}, options)
    page.marks = marks_of(comp)
    page.notes.append(test_note(comp) + (f" {reason}" if reason else ""))
    return page


def test_note(comp: Comparison) -> str:
    o = comp.options
    return (f"Marks: each system against {comp.baseline} by the first of the paired tests run ({', '.join(o.tests)}) "
            f"that gives a verdict; p adjusted by {o.correction} within each test over the {len(comp.measures)} "
            f"measure(s) x {len(comp.systems) - 1} system(s); significant = adjusted p < {o.alpha:g}; "
            f"over {len(comp.qids)} queries.")


def definition_notes(definitions: dict[str, Definition]) -> list[str]:
    """The gain, query set and tie rule (ranking) of the page's measures, each said once."""
    notes = []
    gains = sorted({d.gain for d in definitions.values() if d.gain})
    for g in gains:
        named = [m for m, d in definitions.items() if d.gain == g]
        notes.append(f"Gain ({', '.join(named)}): {GAINS[g]}.")
    for qs in sorted({d.query_set for d in definitions.values()}):
        notes.append(f"Query set: {QUERY_SETS[qs]}.")
    for r in sorted({d.ranking for d in definitions.values()}):
        notes.append(f"Ties and order: {RANKINGS[r]}.")
    return notes


def type_means_of(page: Page) -> dict[str, dict[str, Any]] | None:
    """Each query type's mean of every system and measure, over the queries of that type with a value."""
    if page.types is None:
        return None
    order = list(dict.fromkeys(t if t is not None else NO_TYPE for t in page.types))
    types = np.array([t if t is not None else NO_TYPE for t in page.types], dtype=object)
    out: dict[str, dict[str, Any]] = {}
    for t in order:
        sel = types == t
        row: dict[str, Any] = {"queries": int(sel.sum())}
        for s in page.systems:
            v = page.values[s][sel]
            row[s] = {m: _mean(v[:, j]) for j, m in enumerate(page.measures)}
        out[t] = row
    return out


def _mean(x) -> float | None:
    x = x[np.isfinite(x)]
    return float(x.mean()) if x.size else None


def curve_columns(definitions: dict[str, Definition]) -> list[tuple[str, float]]:
    """(column, recall level) of the iprec_at_recall columns among ``definitions``, by level."""
    found = [(m, float(d.cutoff)) for m, d in definitions.items()
             if d.measure == "iprec_at_recall" and d.cutoff is not None]
    return sorted(found, key=lambda x: x[1])


def with_curves(page: Page, columns: list[tuple[str, float]], values: dict[str, Any], absent: str) -> Page:
    """The precision-recall curve of each system: the mean of its per-query iprec_at_recall values at each level
    (``values``: system -> (Q, levels), the columns in ``columns``' order); ``absent`` says why there is none."""
    if not columns:
        page.no_curves = absent
        return page
    page.curve_levels = [level for _, level in columns]
    page.curves = {s: [_mean(values[s][:, j]) for j in range(len(columns))] for s in page.systems}
    return page


def plotted(page: Page) -> Page:
    """The measures drawn per query: the first :data:`PLOTTED_MEASURES`."""
    shown = page.measures
    page.plotted = shown[:PLOTTED_MEASURES]
    if len(shown) > PLOTTED_MEASURES:
        page.notes.append(f"Per-query figures show the first {PLOTTED_MEASURES} of the {len(shown)} measures; the "
                          "per-query table holds every one.")
    return page
