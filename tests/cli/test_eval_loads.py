"""A local evaluation loads only what it uses (not timed: the figures are bench/track_bench.py's): ``treckit eval``
and ``treckit.evaluate`` in a fresh interpreter load none of the Dask engine's modules, scipy, the CLI's typer and
rich, or the plotting libraries, and the command line no pandas; ``--engine dask`` does load the Dask engine (the
probe sees a module that is loaded).  The output checked is trec_eval 10.0's, byte for byte."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

TREC_EVAL = ROOT.parent / "shared" / "tools" / "trec_eval"

# never used by a local evaluation of qrels and a run
DASK_ENGINE = ("treckit.engines.dask", "treckit.engines.dask_partition", "treckit.engines.dask_tasks", "distributed",
               "dask")
NOT_FOR_A_LOCAL_EVALUATION = DASK_ENGINE + ("scipy", "sklearn", "matplotlib", "plotly", "typer", "click", "rich",
                                            "ir_measures", "pytrec_eval", "yaml", "fastapi", "uvicorn")

PROBE = """
import json, sys
kind, args = sys.argv[1], sys.argv[2:]
if kind == "cli":
    from treckit.cli import main as cli
    cli.main(args)
elif kind == "api":
    import treckit
    values = treckit.evaluate({"1": {"a": 1, "c": 2}}, {"1": {"a": 2.5, "b": 1.5, "c": 0.5}}, ["map"])
    print(values.to_csv(index=False), end="")
else:
    from treckit.engines.choice import choose
    print(choose("dask").name)
sys.stdout.flush()
print(json.dumps(sorted(m for m in sys.modules if m in %r)), file=sys.stderr)
""" % (list(NOT_FOR_A_LOCAL_EVALUATION) + ["pandas"])


def _loads(kind: str, *argv) -> tuple[set[str], str]:
    p = subprocess.run([sys.executable, "-c", PROBE, kind, *map(str, argv)], capture_output=True, text=True,
                       check=True, timeout=120)
    return set(json.loads(p.stderr.strip().splitlines()[-1])), p.stdout


def _files(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"{q} 0 d{q}_{d} {d % 3}\n" for q in range(1, 6) for d in range(0, 40, 7)))
    run.write_text("".join(f"{q} Q0 d{q}_{d} {d + 1} {(40 - d) / 4:.2f} tag\n" for q in range(1, 6) for d in range(40)))
    return qrels, run


@pytest.mark.skipif(not TREC_EVAL.exists(), reason="needs ../shared/tools/trec_eval")
def test_a_local_eval_loads_neither_the_dask_engine_nor_pandas(tmp_path):
    qrels, run = _files(tmp_path)
    flags = ["-m", "map", "-m", "ndcg_cut.10", "-m", "recall.1000"]
    loaded, out = _loads("cli", "eval", *flags, qrels, run)
    assert loaded == set()
    expected = subprocess.run([str(TREC_EVAL), *flags, str(qrels), str(run)], capture_output=True, text=True,
                              check=True, timeout=60).stdout
    assert out == expected and out.splitlines()[0].split()[:2] == ["map", "all"]


def test_the_api_loads_no_dask_engine():
    loaded, out = _loads("api")
    # AP of a (rank 1, relevant) and c (rank 3, relevant), over 2 relevant: (1/1 + 2/3) / 2
    assert out.splitlines() == ["qid,map", "1,0.8333333333333333", "all,0.8333333333333333"]
    assert "pandas" in loaded                      # the API's answer is a DataFrame
    assert not loaded & set(NOT_FOR_A_LOCAL_EVALUATION)


def test_the_dask_engine_is_loaded_when_chosen():
    pytest.importorskip("distributed")
    loaded, out = _loads("dask")
    assert out.strip() == "dask" and "treckit.engines.dask" in loaded
