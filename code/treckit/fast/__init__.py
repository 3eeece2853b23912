"""Speed code, behind one boundary: the tricks that make the same work cheaper (hashing strings eight bytes at a
time, grouping runs of equal ids, per-query matrices, Arrow calls by name, shared-buffer columns, work spread
over the cores).  Every size at which a trick switches on is named in :mod:`treckit.thresholds`; results
never depend on them.  Nothing here knows what a qrels file or a measure is."""
