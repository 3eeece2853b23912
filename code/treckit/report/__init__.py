"""Self-contained HTML reports: one page per evaluation (compare, eval, testset eval, system eval, gate, and
results files read back by ``treckit report``), with plotly's own plotly.js, the data and the page's scripts
inside, so that it opens offline from disk.

What a page shows is a :class:`treckit.report.page.Page`, built from the same per-query values the command
printed or wrote (:mod:`treckit.report.sources`); :mod:`treckit.report.html` draws it.  This module is light:
the command line reads the extra's name here without loading plotly."""

EXTRA = "report"                       # pyproject.toml's extra that installs plotly
