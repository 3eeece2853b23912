"""Engines: ways of evaluating a run in parts (sets of whole queries) with the same bytes as in memory.

:mod:`.core` holds what every engine shares (partitioning by query, reading a block of a run file,
the per-part values and their merge); :mod:`.stream` evaluates runs larger than memory on one
machine; :mod:`.dask` spreads the work over a Dask cluster.

Nothing is imported here: the command line takes its choices from this module without loading an engine."""

MISSING = ("skip", "zero", "error")      # a judged query the run lacks: memory.EvalOptions.missing, --missing
