"""A retrieval function for the sample test set (used by `make demo`): the bag-of-words baseline
over documents.jsonl, as any user function would be plugged in:

    treckit testset eval data/test_sets/sample_v1.yaml --function data/test_sets/sample_retriever.py:search
"""
from pathlib import Path

from treckit.retrieval.bow import BowRetriever
from treckit.retrieval.corpus import read_corpus

_INDEX = BowRetriever(read_corpus(Path(__file__).with_name("documents.jsonl")))


def search(query: str) -> list[tuple[str, float]]:
    return _INDEX.retrieve(query, k=100)
