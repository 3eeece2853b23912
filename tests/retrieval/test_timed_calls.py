"""Timed calls run with Python's garbage collector quiet (treckit.console.timing): off inside every timed call of a
system (components, batch functions, the fusion, rerankers) and of a function evaluated on a test set, collected
before each call so that what the previous calls left is gone, and on again afterwards.  (The figure it buys, an
A/B of an allocating reranker that reads 2 ms when B sleeps 2 ms more: bench/latency_bench.py.)"""
from __future__ import annotations

import gc

import pytest

from helpers import ROOT

SAMPLE = ROOT / "data" / "test_sets" / "clinical_v1.yaml"

# each call records whether the collector is on and how many of the reference cycles earlier calls made are still
# in memory, then makes one more (a node that points at itself, as a reranker's records pointing back at their query)
PROBE = '''
import gc
import weakref

SEEN = []                    # (who, collector on?, cycles of earlier calls still in memory)
ALIVE = weakref.WeakSet()


class Node:
    pass


def _probe(who):
    SEEN.append((who, gc.isenabled(), len(ALIVE)))
    node = Node()
    node.me = node
    node.payload = [[i] for i in range(200)]
    ALIVE.add(node)


def search(text):
    _probe("search")
    return ["PMC2905704", "PMC1001"]


def search_all(texts):
    _probe("batch")
    return [["PMC1000"] for _ in texts]


def rerank(text, candidates):
    _probe("rerank")
    return [d for d, _ in reversed(candidates)]
'''


@pytest.fixture
def probe(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text(PROBE)
    return str(path)


def _seen(system, probe: str, function: str) -> list:
    """What the calls of one function recorded (each function named in a config is loaded on its own)."""
    return system.callable(f"{probe}:{function}").__globals__["SEEN"]


@pytest.mark.parametrize("enabled", [True, False])
def test_every_timed_call_of_a_system_runs_with_the_collector_off(probe, enabled):
    from treckit.retrieval.system import WARMUP_QUERIES, System

    queries = {f"q{i}": f"text {i}" for i in range(12)}
    system = System({"components": {"f": {"callable": f"{probe}:search"},
                                     "b": {"callable": f"{probe}:search_all", "batch": True}},
                     "fusion_method": "rrf", "rerank": {"callable": f"{probe}:rerank", "depth": 10}})
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        stages = system.run(queries, k=10)
        after = gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
    assert after is enabled                                          # as it was before the pass
    assert set(stages) == {"f", "b", "fusion", "fusion+rerank"}
    for function, untimed in (("search", WARMUP_QUERIES), ("search_all", 1), ("rerank", WARMUP_QUERIES)):
        seen = _seen(system, probe, function)
        timed = seen[untimed:]                                       # the warm-up's calls are not timed
        assert len(timed) == (1 if function == "search_all" else len(queries))
        assert not any(on for _, on, _ in timed), function           # every timed call: the collector off
        if enabled:       # collected before each call: the cycles the earlier calls made are gone (memory stays flat)
            assert all(left == 0 for _, _, left in timed), function


def test_the_fusion_is_timed_with_the_collector_off(probe, monkeypatch):
    from treckit.retrieval import system as module
    from treckit.retrieval.system import System

    during = []
    fuse = module.fuse

    def watched(*args, **kwargs):
        during.append(gc.isenabled())
        return fuse(*args, **kwargs)
    monkeypatch.setattr(module, "fuse", watched)
    system = System({"components": {"f": {"callable": f"{probe}:search"}, "g": {"callable": f"{probe}:search"}},
                     "fusion_method": "rrf"})
    system.run({f"q{i}": "x" for i in range(5)}, k=10)
    assert len(during) > 1 and not any(during) and gc.isenabled()


@pytest.mark.parametrize("workers", [1, 3])
def test_a_function_evaluated_on_a_test_set_is_timed_with_the_collector_off(probe, workers):
    import importlib.util

    from treckit.testsets import evaluate, load_test_set

    spec = importlib.util.spec_from_file_location("probe_module", probe)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ts = load_test_set(SAMPLE)
    res = evaluate(module.search, ts, cache=False, workers=workers)
    assert len(module.SEEN) == len(ts.queries) and res.latency_ms["p50"] >= 0
    assert not any(on for _, on, _ in module.SEEN) and gc.isenabled()
    if workers == 1:
        assert all(left == 0 for _, _, left in module.SEEN)


def test_calls_on_several_threads_share_one_quiet_spell():
    """The collector is off from the first call in to the last call out, and on again after."""
    import threading

    from treckit.console.timing import quiet_collector

    both_inside, done = threading.Barrier(3), threading.Barrier(3)
    states = []

    def call():
        with quiet_collector():
            both_inside.wait(5)
            states.append(gc.isenabled())
            done.wait(5)
    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
    both_inside.wait(5)
    off_while_inside = gc.isenabled()
    done.wait(5)
    for t in threads:
        t.join()
    assert states == [False, False] and off_while_inside is False and gc.isenabled()
