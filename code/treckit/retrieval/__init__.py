"""Baseline retrievers over a corpus (BM25, bag-of-words cosine), dense retrieval, fusion, and systems built from
configs.

The names of the methods are here, where the command line takes its choices without loading a retriever."""

METHODS = ("bm25", "bow")                                          # the built-in retrievers (system.method_search)
FUSION_METHODS = ("rrf", "weighted", "combsum", "combmnz", "max")   # fusion.fuse
NORMS = ("minmax", "zscore", "sum", "none")                         # fusion's score normalisations
