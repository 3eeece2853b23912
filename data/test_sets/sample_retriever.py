"""A retrieval function for the clinical test set (used by `make demo`): the sample system of system.yaml
(BM25 and the bag-of-words baseline over documents.jsonl, fused with RRF), plugged in as any user function would be:

    treckit testset eval data/test_sets/clinical_v1.yaml --function data/test_sets/sample_retriever.py:search

Written by data/make_sample.py.
"""
from pathlib import Path

from treckit.retrieval.system import load_system

_SYSTEM = load_system(Path(__file__).with_name("system.yaml"))


def search(query: str) -> list[tuple[str, float]]:
    return _SYSTEM.run({"query": query}, k=100)[_SYSTEM.final_stage()].rankings["query"]
