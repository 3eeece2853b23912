"""Baseline retrievers over a corpus (bag-of-words cosine; BM25 comes with the retrieval issue)."""
