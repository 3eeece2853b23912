"""Test sets: YAML-defined labelled queries, validated and versioned, and what is built on them:
the runner over retrieval functions (:func:`evaluate`), the RQ acceptance metric (:func:`rq`), the
regression gate (:func:`gate`) and the life cycle (:mod:`treckit.testsets.lifecycle`)."""
from __future__ import annotations

from .cache import CacheWarning
from .gate import gate
from .load import TestSet, TestSetError, load_test_set, parse_test_set, resolve_test_set
from .rq import rq
from .results import TestSetResult
from .runner import evaluate, evaluate_run

__all__ = ["CacheWarning", "TestSet", "TestSetError", "TestSetResult", "evaluate", "evaluate_run", "gate", "load_test_set",
           "parse_test_set", "resolve_test_set", "rq"]
