"""Comparing systems: paired statistics, the comparison itself, configs, and its reports.

The names of the tests and corrections are here, where the command line takes its choices without loading
the statistics."""

TESTS = ("t-test", "wilcoxon", "randomization", "bootstrap")     # the paired tests (stats.TESTS)
# which p decides "significant": the raw p (none), or the p adjusted for the multiple comparisons (stats.ADJUSTMENTS)
CORRECTIONS = ("none", "holm", "bonferroni")
