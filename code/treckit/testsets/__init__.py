"""Test sets: YAML-defined labelled queries, validated and versioned, and what is built on them."""
from __future__ import annotations

from .load import TestSet, TestSetError, load_test_set, parse_test_set, resolve_test_set

__all__ = ["TestSet", "TestSetError", "load_test_set", "parse_test_set", "resolve_test_set"]
