from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import FAKE_CLOCK, shared_data


@pytest.fixture
def shared() -> Path:
    return shared_data()


@pytest.fixture(scope="module")
def trec_eval_files() -> Path:
    """trec_eval's conformance files, for module-wide fixtures (skipped, or failed, as :func:`shared`)."""
    return shared_data() / "trec_eval"


@pytest.fixture(scope="session")
def trec_eval() -> Path:
    """The trec_eval 10.0 binary the differential tests compare with."""
    from fuzz_cases import trec_eval_path
    path = trec_eval_path()
    if path is None:
        if os.environ.get("TRECKIT_TREC_EVAL"):
            pytest.fail(f"TRECKIT_TREC_EVAL={os.environ['TRECKIT_TREC_EVAL']} is not an executable file")
        pytest.skip("trec_eval 10.0 not found at ../shared/tools/trec_eval (set TRECKIT_TREC_EVAL to its path)")
    return path


@pytest.fixture(scope="session")
def gdeval_pl() -> Path:
    """gdeval.pl 1.2a (run with perl), the reference of gdeval's measures."""
    from fuzz_reference import gdeval_path
    path = gdeval_path()
    if path is None:
        if os.environ.get("TRECKIT_GDEVAL"):
            pytest.fail(f"TRECKIT_GDEVAL={os.environ['TRECKIT_GDEVAL']} is not a file, or perl is not on PATH")
        pytest.skip("gdeval.pl not found at ../shared/tools/gdeval.pl, or perl not on PATH (Debian: apt-get install "
                    "perl; set TRECKIT_GDEVAL to the script)")
    return path


@pytest.fixture(scope="session")
def ndeval_binary() -> Path:
    """An ndeval 4.5 binary (built from the pyndeval source package's src/ndeval.c), named by TRECKIT_NDEVAL."""
    from fuzz_reference import ndeval_path
    path = ndeval_path()
    if path is None:
        pytest.skip("no ndeval binary: set TRECKIT_NDEVAL to one built with gcc -O2 -o ndeval src/ndeval.c -lm from "
                    "the pyndeval source package")
    return path




@pytest.fixture
def fake_clock(tmp_path, monkeypatch):
    """The module above, importable as ``fakeclock`` (its functions name it in configs), installed as
    the clock that times retrieval systems, with a first full-size fusion that costs a second."""
    import importlib
    import sys

    from treckit.retrieval import fusion, system
    (tmp_path / "fakeclock.py").write_text(FAKE_CLOCK)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("fakeclock", None)
    importlib.invalidate_caches()
    mod = importlib.import_module("fakeclock")
    monkeypatch.setattr(system, "perf_counter", mod.clock)
    monkeypatch.setattr(fusion, "fuse", mod.costly_first_full_fusion(fusion.fuse, system.WARMUP_QUERIES))
    yield mod
    sys.modules.pop("fakeclock", None)


@pytest.fixture
def fresh_streams():
    """stdin, pipes and URLs read anew in this test, and what it read forgotten after it (a process reads each once,
    and the test process runs many commands)."""
    from treckit.inputs.sources import forget_streams
    forget_streams()
    yield
    forget_streams()
