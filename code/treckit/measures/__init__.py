"""Measures: declarative definitions (:mod:`.registry`, :mod:`.definitions`, :mod:`.readable`) and one module of
vectorized kernels per family; they read the ranked-and-judged view of :mod:`treckit.ranking.judged`.

The names of the gains and of kappa's weightings are here, where the command line takes its choices without
loading a measure."""

GAINS = ("exp", "linear")                           # nDCG's gain in readable names: 2^grade - 1, or the grade
KAPPA_WEIGHTINGS = ("none", "linear", "quadratic")  # Cohen's kappa between two judges (testsets.lifecycle.agreement)
