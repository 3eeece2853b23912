"""``treckit eval --html`` and ``--plot``: the HTML report and the precision-recall picture of the values eval
computed.  A module of its own, loaded by :mod:`treckit.cli.evaluate` through :func:`treckit.cli.main.command_module`
only when one of the two is asked for: the report's modules (plotly's pages, compare's plots) are no part of a
plain evaluation's start-up."""
from __future__ import annotations

from ..compare.report import plot_format
from ..console.errors import InputError
from ..console.messages import say
from ..measures.definitions import definitions_of
from ..output.files import atomic_output, outputs
from ..report.html import render as render_page, require_plotly
from ..report.picture import curve_bytes
from ..report.sources import NO_CURVE_EVAL, eval_curves, eval_page


def check(html: str | None, plot: str | None) -> None:
    """The extras the drawings need installed, and the plot's format known; before any file is read."""
    if html is not None:
        require_plotly()
    if plot is not None:
        plot_format(plot)


def draw(a, results, requests) -> None:
    """The HTML report and the picture of the precision-recall curves of ``a`` (treckit.cli.evaluate.EvalArgs),
    from the values eval computed; both rendered before either is written, and both written or neither."""
    defs = definitions_of(requests, query_set="judged" if a.complete else "retrieved", ranking=a.reading.ranking,
                          level=a.level)
    drawn = []
    if a.plot is not None:
        levels, curves = eval_curves(results, defs)
        if not curves:
            raise InputError(f"--plot {a.plot}: {NO_CURVE_EVAL}", fix="add -m iprec_at_recall")
        drawn.append((a.plot, "wb", curve_bytes(levels, curves, plot_format(a.plot))))
    if a.html is not None:
        inputs = [("qrels", a.files[0], None)] + [(f"run {tag}", str(path), None) for path, tag, _ in results]
        drawn.append((a.html, "w", render_page(eval_page(results, defs, complete=a.complete, inputs=inputs))))
    with outputs(a.html, a.plot):
        for path, mode, data in drawn:
            with atomic_output(path, mode) as fh:
                fh.write(data)
        say("wrote " + " and ".join(str(p) for p, _, _ in drawn))
