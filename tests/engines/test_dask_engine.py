"""The Dask engine (--engine dask) against the local engine on a real dask.distributed.LocalCluster of two
worker processes: the same bytes on many runs and on one partitioned run, a worker killed mid-job, runs read
from a local S3 endpoint (a moto server), malformed lines named by file and line, the extra missing.

One LocalCluster serves the whole module (starting one costs seconds); the commands connect to it with
--scheduler, as they would to a real cluster.  One test starts the command's own LocalCluster.
"""
from __future__ import annotations

import contextlib
import os
import random
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, patience, run_cli

distributed = pytest.importorskip("distributed", reason="Dask is not installed: treckit's dask extra (make test "
                                                        "installs it with the dev extra)")

from treckit import thresholds  # noqa: E402


# ---------------------------------------------------------------- data: seeded qrels and fuzzed runs
def write_qrels(path: Path, seed: int = 1, queries: int = 40) -> dict[str, dict[str, int]]:
    r = random.Random(seed)
    judged = {}
    lines = []
    for qn in range(1, queries + 1):
        if qn % 13 == 0:
            continue                                  # a query only the runs have
        q = f"q{qn}"
        docs = r.sample(range(200), r.randint(1, 25))
        judged[q] = {f"d{d}": r.choice([-1, 0, 0, 1, 1, 2, 3]) for d in docs}
        lines += [f"{q} 0 d{d} {g}" for d, g in ((k[1:], v) for k, v in judged[q].items())]
    r.shuffle(lines)
    path.write_text("".join(x + "\n" for x in lines))
    return judged


def write_run(path: Path, seed: int, queries: int = 40, interleave: bool | None = None, tag: str | None = None) -> None:
    """A run with ties, queries missing (for -c) and present only here, grouped by query or interleaved."""
    r = random.Random(seed)
    lines = []
    for qn in range(1, queries + 1):
        if r.random() < 0.15:
            continue
        depth = r.choice([1, 3, 10, 25, 60, 120])
        docs = r.sample(range(260), depth)
        ties = r.random() < 0.5
        for rank, d in enumerate(docs, 1):
            score = r.choice([0.5, 1.0, 1.5, 2.0]) if ties else round(r.uniform(-5, 20), r.choice([1, 4]))
            lines.append(f"q{qn} Q0 d{d} {rank} {score} {tag or f'run{seed}'}")
    if interleave if interleave is not None else r.random() < 0.5:
        r.shuffle(lines)
    path.write_text("".join(x + "\n" for x in lines))


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("dask_data")
    write_qrels(d / "qrels")
    runs = []
    for seed in range(10):
        write_run(d / f"run{seed}", seed)
        runs.append(str(d / f"run{seed}"))
    # -Z: means and deviations for some queries and measures, none for others
    r = random.Random(5)
    z = [f"q{q} {m} {r.uniform(0, 0.5):.4f} {r.choice([0, 0.1, 0.25])}" for q in range(1, 41) if q % 3
         for m in ("map", "P_5", "ndcg_cut_10", "recip_rank")]
    (d / "zscores").write_text("\n".join(z) + "\n")
    return {"dir": d, "qrels": str(d / "qrels"), "runs": runs, "zscores": str(d / "zscores")}


@contextlib.contextmanager
def local_cluster(workers: int = 2):
    """A real LocalCluster of ``workers`` worker processes (one thread each) and its client; a task may be tried
    three times (two failures allowed) before the job fails."""
    import dask
    with dask.config.set({"distributed.scheduler.allowed-failures": 2}):
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address="127.0.0.1:0", silence_logs=50) as c, distributed.Client(c) as client:
            client.wait_for_workers(workers, timeout=patience(60))
            yield client


@pytest.fixture(scope="module")
def cluster():
    """A real LocalCluster of two worker processes, for the whole module."""
    with local_cluster(2) as client:
        yield client


@pytest.fixture
def address(cluster) -> str:
    return cluster.scheduler.address


def both(argv: list[str], address: str, capsys) -> tuple[tuple, tuple]:
    local = run_cli(["eval", *argv], capsys)
    remote = run_cli(["eval", "--engine", "dask", "--scheduler", address, *argv], capsys)
    return local, remote


FLAG_SETS = [
    ["-q", "-m", "all_trec"],
    ["-q", "-c", "-m", "all_trec"],
    ["-q", "-J", "-M", "7", "-l", "2", "-m", "all_trec"],
    ["-q", "-c", "-Z", "@Z@", "-m", "map", "-m", "P.5", "-m", "ndcg_cut.10", "-m", "recip_rank"],
    ["-n", "-q", "--format", "json", "-m", "official"],
    ["-q", "-c", "-m", "gdeval.nDCG@20", "-m", "ERR@20", "-m", "nDCG@10", "-m", "INST(max_rel=3)", "-m", "RBP(rel=1)"],
]


# ---------------------------------------------------------------- many runs: one task per run
@pytest.mark.parametrize("flags", FLAG_SETS, ids=lambda f: " ".join(f))
def test_many_runs_are_byte_identical_to_the_local_engine(data, address, capsys, flags):
    argv = [data["zscores"] if f == "@Z@" else f for f in flags] + [data["qrels"], *data["runs"]]
    (code, out, err), (dcode, dout, derr) = both(argv, address, capsys)
    assert code == 0 and dcode == 0, derr
    assert len(out.splitlines()) > 10 * 38 or ("json" in flags and out.count('"qid"') > 10 * 30)    # every run, per query
    assert dout == out
    assert derr == err             # what the workers said (missing queries ...) is said again, run by run, in order


def test_a_run_on_stdin_is_read_by_the_command(data, address, capsys, monkeypatch):
    """stdin (and a pipe) is read here, not by a worker (whose stdin is not the command's), then evaluated there."""
    import io
    argv = ["-q", "-m", "all_trec", data["qrels"], data["runs"][0], "-", data["runs"][2]]
    text = Path(data["runs"][1]).read_text()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    code, out, err = run_cli(["eval", *argv], capsys)
    from treckit.inputs import sources as tio
    tio.forget_streams()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    dcode, dout, derr = run_cli(["eval", "--engine", "dask", "--scheduler", address, *argv], capsys)
    tio.forget_streams()          # this stdin is read once per process: later tests give their own
    assert code == dcode == 0, derr
    assert dout == out and "\trun1\n" in out


def test_cross_check_on_the_cluster_says_what_the_local_engine_says(data, address, capsys):
    """--cross-check with --engine dask: each run is read again here and checked as the local engine checks it."""
    argv = ["--cross-check", "-q", "-m", "map", "-m", "P.5", "-m", "ndcg_cut.10", "-m", "gm_map", data["qrels"],
            *data["runs"][:2]]
    (code, out, err), (dcode, dout, derr) = both(argv, address, capsys)
    assert code == dcode == 0, derr
    assert dout == out and derr == err
    assert err.count("numbers agree with ir_measures") == 2 and "not compared: gm_map" in err


def test_the_python_api_on_a_client(data, cluster):
    import pandas as pd

    from treckit import evaluate
    for run in data["runs"][:3]:
        local = evaluate(data["qrels"], run, ["map", "P.5", "nDCG@10"], complete=True)
        remote = evaluate(data["qrels"], run, ["map", "P.5", "nDCG@10"], complete=True, engine="dask", client=cluster)
        pd.testing.assert_frame_equal(local, remote)
        assert local["map"].notna().all() and len(local) == 38        # every judged query (-c) and "all"


def test_compare_on_the_cluster_writes_the_same_reports(data, address, capsys, tmp_path):
    runs = data["runs"][:4]
    argv = ["compare", data["qrels"], *runs, "-m", "map", "-m", "ndcg_cut.10", "--test", "t-test",
            "--test", "randomization", "--permutations", "200"]
    code, out, err = run_cli([*argv, "--csv", tmp_path / "local.csv"], capsys)
    dcode, dout, derr = run_cli([*argv, "--csv", tmp_path / "dask.csv", "--engine", "dask", "--scheduler", address], capsys)
    assert code == dcode == 0, derr
    assert dout == out and "map" in out
    assert (tmp_path / "dask.csv").read_bytes() == (tmp_path / "local.csv").read_bytes()


def test_testset_eval_on_the_cluster(address, capsys, tmp_path):
    ts = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
    run = ROOT / "data" / "test_sets" / "baseline_bow.trec"
    argv = ["testset", "eval", ts, "--run", run, "--out"]
    code, out, err = run_cli([*argv, tmp_path / "local.json"], capsys)
    dcode, dout, derr = run_cli([*argv, tmp_path / "dask.json", "--engine", "dask", "--scheduler", address], capsys)
    assert code == dcode == 0, derr
    assert dout == out
    assert (tmp_path / "dask.json").read_bytes() == (tmp_path / "local.json").read_bytes()


def test_a_malformed_line_is_named_by_file_and_line(data, address, capsys, tmp_path):
    bad = tmp_path / "bad_run"
    lines = Path(data["runs"][1]).read_text().splitlines(keepends=True)
    lines[17] = "q3 Q0 d1 1 not-a-score t\n"
    bad.write_text("".join(lines))
    argv = ["-m", "map", data["qrels"], data["runs"][0], str(bad), data["runs"][2]]
    (code, out, err), (dcode, dout, derr) = both(argv, address, capsys)
    assert code == dcode == 2
    assert f"{bad}:18:" in derr and "not-a-score" in derr
    assert derr == err and dout == out == ""


def test_an_unreachable_scheduler_is_a_clear_error(data, capsys, monkeypatch):
    from treckit.engines import dask as engine
    monkeypatch.setattr(engine, "SCHEDULER_TIMEOUT", "1s")
    with socket.socket() as s:                         # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out, err = run_cli(["eval", "--engine", "dask", "--scheduler", f"tcp://127.0.0.1:{port}", data["qrels"],
                              data["runs"][0]], capsys)
    assert code == 2 and f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}" in err and out == ""


def test_engine_options_are_checked(data, capsys):
    code, _, err = run_cli(["eval", "--engine", "spark", data["qrels"], data["runs"][0]], capsys)
    assert code == 2 and "--engine spark: not one of local, dask" in err
    code, _, err = run_cli(["eval", "--scheduler", "tcp://x:1", data["qrels"], data["runs"][0]], capsys)
    assert code == 2 and "--scheduler" in err and "--engine dask" in err
    code, out, err = run_cli(["eval", "--engine", "dask", "--scheduler", "", data["qrels"], data["runs"][0]], capsys)
    assert code == 2 and out == "" and "treckit: error: --scheduler is empty" in err      # not a local cluster


def test_without_dask_the_error_says_how_to_install_it(data, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)         # `import distributed` now fails
    code, out, err = run_cli(["eval", "--engine", "dask", data["qrels"], data["runs"][0]], capsys)
    assert code == 2 and out == ""
    assert f"install treckit's dask extra: {sys.executable} -m pip install 'dask[distributed]>=2024.1'" in err
    from treckit import evaluate
    from treckit.console.errors import InputError
    with pytest.raises(InputError, match=r"install treckit's dask extra: .* -m pip install 'dask\[distributed\]"):
        evaluate(data["qrels"], data["runs"][0], engine="dask")


def test_the_default_engine_imports_no_dask(tmp_path):
    """A whole evaluation with the default engine (the evaluation path loaded, not only the option parser)."""
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "treckit", "eval", "-m", "map",
                          str(tmp_path / "qrels"), str(tmp_path / "run")], capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "code")}, check=True)
    assert out.stdout.split() == ["map", "all", "1.0000"]
    imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if "|" in line}
    # the listing is real (pyarrow's own modules: pyarrow itself is bound by dependencies.deferred, outside the
    # import statement importtime lists)
    assert {"treckit.engines.stream", "treckit.engines.memory", "pyarrow._generated_version"} <= imported
    imported = {name.split(".")[0] for name in imported}
    assert not imported & {"dask", "distributed", "fsspec", "s3fs", "botocore"}


def test_the_command_starts_and_stops_its_own_local_cluster(data, tmp_path):
    """No --scheduler: a LocalCluster of worker processes is started for the job and closed afterwards."""
    argv = ["-q", "-m", "map", "-m", "P.10", data["qrels"], *data["runs"][:3]]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "code")}
    local = subprocess.run([sys.executable, "-m", "treckit", "eval", *argv], capture_output=True, env=env,
                           timeout=patience(120))
    remote = subprocess.run([sys.executable, "-m", "treckit", "eval", "--engine", "dask", *argv], capture_output=True,
                            env=env, timeout=patience(120))
    assert local.returncode == remote.returncode == 0, remote.stderr.decode()
    assert remote.stdout == local.stdout and b"map" in local.stdout
    assert remote.stderr.decode() == local.stderr.decode()          # nothing from Dask's start or shutdown on stderr


# ---------------------------------------------------------------- one huge run, partitioned by query
@pytest.fixture
def partitioned(monkeypatch):
    """Every TREC run is partitioned (DASK_PARTITION_MIN_BYTES lowered) in blocks of a few hundred bytes, which cut
    lines in the middle (DASK_BLOCK_BYTES lowered); the calls of the partitioned path are counted."""
    from treckit.engines import dask_partition
    monkeypatch.setattr(thresholds, "DASK_PARTITION_MIN_BYTES", 1)
    monkeypatch.setattr(thresholds, "DASK_BLOCK_BYTES", 733)
    calls = []
    collect = dask_partition.collect

    def counted(client, job, *args, **kwargs):
        calls.append(len(job.plan.ranges))
        return collect(client, job, *args, **kwargs)
    monkeypatch.setattr(dask_partition, "collect", counted)
    return calls


@pytest.fixture(scope="module")
def big(data) -> dict:
    d = data["dir"]
    write_run(d / "big_interleaved", 101, queries=40, interleave=True)
    write_run(d / "big_grouped", 102, queries=40, interleave=False)
    return {"interleaved": str(d / "big_interleaved"), "grouped": str(d / "big_grouped")}


@pytest.mark.parametrize("flags", FLAG_SETS, ids=lambda f: " ".join(f))
@pytest.mark.parametrize("layout", ["interleaved", "grouped"])
def test_a_partitioned_run_is_byte_identical_to_the_local_engine(data, big, address, capsys, partitioned, flags, layout):
    argv = [data["zscores"] if f == "@Z@" else f for f in flags] + [data["qrels"], big[layout]]
    (code, out, err), (dcode, dout, derr) = both(argv, address, capsys)
    assert code == dcode == 0, derr
    assert partitioned and partitioned[0] > 20          # really partitioned: tens of blocks
    assert dout == out and len(out) > 1000
    assert derr == err


def test_diversity_names_run_whole_on_a_worker_as_locally(data, big, address, capsys, partitioned):
    """The diversity names (and Compat) on the cluster: byte-identical to the local engine; a run the engine would
    partition is evaluated whole on one worker instead (the subtopics are numbered over the whole qrels)."""
    for run in (data["runs"][0], big["grouped"]):
        argv = ["-q", "-c", "-m", "alpha_nDCG@20", "-m", "NRBP(beta=0.8)", "-m", "AP_IA", "-m", "Compat", "-m", "map",
                data["qrels"], run]
        (code, out, err), (dcode, dout, derr) = both(argv, address, capsys)
        assert code == dcode == 0 and dout == out and derr == err and "alpha_nDCG@20" in out, derr
    assert partitioned == []


def test_a_malformed_line_in_a_partition_is_named_by_file_and_true_line(data, big, address, capsys, partitioned,
                                                                         tmp_path):
    lines = Path(big["interleaved"]).read_text().splitlines(keepends=True)
    assert len(lines) > 900
    for no, text in ((843, "q5 Q0 d7 1 2.5x t\n"), (844, "q5 Q0 d7\n")):
        bad = tmp_path / f"bad{no}"
        bad.write_text("".join(lines[:no - 1] + [text] + lines[no:]))
        (code, out, err), (dcode, dout, derr) = both(["-q", "-m", "map", data["qrels"], str(bad)], address, capsys)
        assert code == dcode == 2
        assert derr.startswith(f"treckit: error: {bad}:{no}: ") and derr == err
        assert dout == out == ""
    assert len(partitioned) == 2


def test_lines_read_by_a_layout_rule_are_said_once_with_true_lines(data, big, address, capsys, partitioned, tmp_path):
    """Doc ids with spaces in blocks far apart: the notice the local engine gives (count, first true line), once."""
    lines = Path(big["grouped"]).read_text().splitlines(keepends=True)
    for no in (611, 902):
        q, it, doc, *rest = lines[no - 1].split()
        lines[no - 1] = " ".join([q, it, doc, "x", *rest]) + "\n"
    spaced = tmp_path / "spaced"
    spaced.write_text("".join(lines))
    (code, out, err), (dcode, dout, derr) = both(["-q", "-m", "map", data["qrels"], str(spaced)], address, capsys)
    assert code == dcode == 0
    assert f"{spaced}: read 2 doc id(s) containing whitespace (first on line 611)" in err
    assert derr == err and dout == out and partitioned


def test_blocks_of_comments_only_are_skipped_as_locally(data, big, address, capsys, partitioned, tmp_path):
    """A comment header several blocks long, and comments midway: those blocks hold no run line, which is no error."""
    lines = Path(big["interleaved"]).read_text().splitlines(keepends=True)
    comments = [f"# a comment line written by some tool, number {i}\n" for i in range(60)]
    commented = tmp_path / "commented"
    commented.write_text("".join(comments + lines[:500] + comments + lines[500:]))
    (code, out, err), (dcode, dout, derr) = both(["-q", "-c", "-m", "all_trec", data["qrels"], str(commented)],
                                                 address, capsys)
    assert code == dcode == 0, derr
    assert dout == out and "P_10" in out and derr == err
    assert partitioned and partitioned[0] > 20


def test_a_doc_listed_twice_across_blocks_is_refused_as_locally(data, big, address, capsys, partitioned, tmp_path):
    lines = Path(big["grouped"]).read_text().splitlines(keepends=True)
    first = next(ln for ln in lines if ln.startswith("q2 "))
    bad = tmp_path / "repeated"
    bad.write_text("".join(lines + [first]))              # the same (query, doc) again, many blocks later
    (code, out, err), (dcode, dout, derr) = both(["-m", "map", data["qrels"], str(bad)], address, capsys)
    assert code == dcode == 2 and "more than once for query 'q2'" in err
    # the local engine says what reading found (here: queries whose ranks rise with their scores) before the error;
    # the cluster's job fails before its parts are merged, so only the error is said: the same error
    error = err[err.index("treckit: error:"):]
    assert derr == error and dout == out == ""


def test_the_python_api_partitions_a_huge_run(data, big, cluster, partitioned):
    import pandas as pd

    from treckit import evaluate
    local = evaluate(data["qrels"], big["interleaved"], ["map", "P.5", "nDCG@10"])
    remote = evaluate(data["qrels"], big["interleaved"], ["map", "P.5", "nDCG@10"], engine="dask", client=cluster)
    assert partitioned
    pd.testing.assert_frame_equal(local, remote)


@pytest.mark.parametrize("layout", ["interleaved", "grouped"])
@pytest.mark.parametrize("partition", [True, False])
def test_a_negated_run_is_said_once_as_locally(data, address, capsys, request, tmp_path, layout, partition):
    """A run whose rank column rises with its (negated) scores: the local engine's warning, once, with the whole
    file's counts -- the partitioned run's counted bucket by bucket --, and --order asc gives the numbers of the run
    written the agreed way."""
    calls = request.getfixturevalue("partitioned") if partition else []
    r = random.Random(3)
    neg, agreed = [], []
    for qn in range(1, 31):
        values = sorted((r.uniform(0, 20) for _ in range(30)), reverse=True)
        for rank, (d, v) in enumerate(zip(r.sample(range(200), 30), values), 1):
            neg.append(f"q{qn} Q0 d{d} {rank} {-v} negated\n")
            agreed.append(f"q{qn} Q0 d{d} {rank} {v} negated\n")
    if layout == "interleaved":
        order = list(range(len(neg)))
        r.shuffle(order)
        neg, agreed = [neg[i] for i in order], [agreed[i] for i in order]
    (tmp_path / "neg").write_text("".join(neg))
    (tmp_path / "agreed").write_text("".join(agreed))
    argv = ["-q", "-m", "map", "-m", "P.5", data["qrels"]]
    (code, out, err), (dcode, dout, derr) = both([*argv, tmp_path / "neg"], address, capsys)
    assert code == dcode == 0 and dout == out and derr == err
    assert err.count("rises as the score rises") == 1 and f"{tmp_path / 'neg'}: in 30 of its 30 queries" in err
    assert bool(calls) == partition and (not calls or calls[0] > 20)        # partitioned in tens of blocks, or not
    (code, out, err), (dcode, dout, derr) = both(["--order", "asc", *argv, tmp_path / "neg"], address, capsys)
    assert code == dcode == 0 and dout == out and "rises as" not in derr + err
    assert run_cli(["eval", *argv, tmp_path / "agreed"], capsys)[1] == out


# ---------------------------------------------------------------- a worker lost mid-job
class KillOnce(distributed.WorkerPlugin):
    """Kills its worker process when a treckit task starts there, once per marker file (or every time)."""

    name = "treckit-test-kill"

    def __init__(self, marker: str, every_time: bool = False):
        self.marker, self.every_time = marker, every_time

    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and str(key).startswith("treckit-"):
            if self.every_time or not os.path.exists(self.marker):
                Path(self.marker).write_text(str(os.getpid()))
                os._exit(1)


@contextlib.contextmanager
def killing(cluster, marker: Path):
    """A worker kills itself when the first treckit task starts inside the block; both workers are back
    afterwards (its nanny starts it again)."""
    cluster.register_plugin(KillOnce(str(marker)))
    try:
        yield
    finally:
        cluster.unregister_worker_plugin(KillOnce.name)
        cluster.wait_for_workers(2, timeout=patience(60))


def test_a_worker_killed_mid_job_the_job_completes_on_the_others(data, cluster, address, capsys, tmp_path):
    argv = ["-q", "-m", "all_trec", data["qrels"], *data["runs"]]
    code, out, err = run_cli(["eval", *argv], capsys)
    marker = tmp_path / "killed"
    with killing(cluster, marker):
        dcode, dout, derr = run_cli(["eval", "--engine", "dask", "--scheduler", address, *argv], capsys)
    assert marker.exists()                             # a worker did die during the job ...
    assert dcode == code == 0, derr                    # ... and Dask ran its task again on the other: complete
    assert dout == out


def test_a_worker_killed_mid_job_a_partitioned_run_completes(data, big, cluster, address, capsys, tmp_path,
                                                             partitioned):
    argv = ["-q", "-c", "-m", "all_trec", data["qrels"], big["interleaved"]]
    code, out, err = run_cli(["eval", *argv], capsys)
    marker = tmp_path / "killed"
    with killing(cluster, marker):
        dcode, dout, derr = run_cli(["eval", "--engine", "dask", "--scheduler", address, *argv], capsys)
    assert marker.exists() and partitioned
    assert dcode == code == 0, derr                    # the lost blocks were read again: complete and identical
    assert dout == out


def test_workers_dying_again_and_again_fail_the_job_clearly(data, tmp_path):
    """On a cluster of its own, closed afterwards: workers killed as they start a task, again and again, are
    never waited for to come back (a worker killed while its nanny still starts it is not started again)."""
    marker = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "code")}
    with local_cluster(2) as client:
        client.register_plugin(KillOnce(str(marker), every_time=True))
        p = subprocess.run([sys.executable, "-m", "treckit", "eval", "--engine", "dask", "--scheduler",
                            client.scheduler.address, "-q", "-m", "map", data["qrels"], *data["runs"][:2]],
                           capture_output=True, text=True, env=env, timeout=patience(300))
    assert marker.exists()
    assert p.returncode == 3 and p.stdout == ""         # nothing printed: no partial result
    assert "workers running" in p.stderr and "died" in p.stderr and "no result was printed" in p.stderr, p.stderr


# ---------------------------------------------------------------- runs read through fsspec from S3 (moto)
@pytest.fixture(scope="module")
def s3(data):
    """A moto S3 server on a free local port, a bucket holding the qrels and the runs; the endpoint is given as
    every process reads it: FSSPEC_S3_ENDPOINT_URL (and AWS_ENDPOINT_URL for boto3 in the test itself)."""
    pytest.importorskip("s3fs", reason="s3fs is not installed: treckit's dask extra")
    moto_server = pytest.importorskip("moto.server", reason="moto is not installed: pip install 'moto[server]'")
    import boto3
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    env = {"FSSPEC_S3_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "AWS_DEFAULT_REGION": "us-east-1"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
        client.create_bucket(Bucket="trec")
        client.upload_file(data["qrels"], "trec", "qrels")
        for i, run in enumerate(data["runs"][:4]):
            client.upload_file(run, "trec", f"runs/run{i}")
        yield {"endpoint": endpoint, "env": env, "runs": [f"s3://trec/runs/run{i}" for i in range(4)],
               "qrels": "s3://trec/qrels"}
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()


def _set_environment(env: dict) -> None:
    os.environ.update({k: v for k, v in env.items() if v is not None})
    for k in [k for k, v in env.items() if v is None]:
        os.environ.pop(k, None)


def test_runs_read_from_s3_by_the_workers(data, s3, address, capsys):
    """The workers (processes started before the endpoint was set) are given it in their environment."""
    import distributed as d
    client = d.Client(address)
    try:
        client.run(_set_environment, s3["env"])
        code, out, err = run_cli(["eval", "-q", "-m", "all_trec", data["qrels"], *data["runs"][:4]], capsys)
        dcode, dout, derr = run_cli(["eval", "--engine", "dask", "--scheduler", address, "-q", "-m", "all_trec",
                                     s3["qrels"], *s3["runs"]], capsys)
        assert code == dcode == 0, derr
        # the same numbers; only the paths differ where the output names them (none in trec_eval's format)
        assert dout == out and "P_10" in out
        missing = run_cli(["eval", "--engine", "dask", "--scheduler", address, "-m", "map", s3["qrels"],
                           "s3://trec/runs/nope"], capsys)
        assert missing[0] == 2 and "s3://trec/runs/nope: no such file or object" in missing[2]
    finally:
        client.run(_set_environment, dict.fromkeys(s3["env"]))
        client.close()


def test_a_partitioned_run_read_from_s3_in_byte_ranges(data, big, s3, address, capsys, partitioned):
    import boto3
    boto3.client("s3", endpoint_url=s3["endpoint"], region_name="us-east-1").upload_file(big["interleaved"], "trec", "big")
    import distributed as d
    client = d.Client(address)
    try:
        client.run(_set_environment, s3["env"])
        code, out, err = run_cli(["eval", "-q", "-m", "all_trec", data["qrels"], big["interleaved"]], capsys)
        dcode, dout, derr = run_cli(["eval", "--engine", "dask", "--scheduler", address, "-q", "-m", "all_trec",
                                     s3["qrels"], "s3://trec/big"], capsys)
    finally:
        client.run(_set_environment, dict.fromkeys(s3["env"]))
        client.close()
    assert code == dcode == 0, derr
    assert partitioned and partitioned[0] > 20
    assert dout == out


def test_a_url_without_credentials_is_a_clear_input_error(data, s3, capsys, monkeypatch):
    """botocore finds no credentials: a setting to fix (exit 2, saying which), not a runtime failure (exit 3)."""
    import s3fs
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    s3fs.S3FileSystem.clear_instance_cache()               # a cached file system keeps the credentials it found
    try:
        code, out, err = run_cli(["eval", "-m", "map", data["qrels"], s3["runs"][0]], capsys)
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
    assert code == 2 and out == ""
    assert err.startswith(f"treckit: error: {s3['runs'][0]}: no credentials to read it (Unable to locate credentials)")
    assert "fix: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" in err


def test_the_local_engine_reads_urls_too(data, s3, capsys):
    code, out, _ = run_cli(["eval", "-q", "-m", "map", data["qrels"], data["runs"][0]], capsys)
    ucode, uout, uerr = run_cli(["eval", "-q", "-m", "map", s3["qrels"], s3["runs"][0]], capsys)
    assert code == ucode == 0, uerr
    assert uout == out


def test_relative_run_paths_reach_workers_of_a_cluster_of_ones_own(tmp_path, monkeypatch):
    """With --scheduler (workers started elsewhere, from their own directory) eval sends a relative run path
    absolute; compare and testset eval refuse it with the absolute path as the fix."""
    from treckit.engines.dask import check_shared_paths, for_workers
    from treckit.console.errors import InputError

    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 1.0 t\n")
    assert for_workers("run.trec", remote=True) == str(tmp_path / "run.trec")
    assert for_workers("run.trec", remote=False) == "run.trec"          # the command's own LocalCluster
    assert for_workers("s3://bucket/run.trec", remote=True) == "s3://bucket/run.trec"
    check_shared_paths([str(tmp_path / "run.trec"), "s3://b/r", "-"], "tcp://h:8786")
    check_shared_paths(["run.trec"], None)
    with pytest.raises(InputError) as e:
        check_shared_paths(["run.trec"], "tcp://h:8786")
    assert str(tmp_path / "run.trec") in e.value.fix


def test_a_scheduler_without_workers_fails_clearly_instead_of_waiting_forever(monkeypatch, capsys):
    import distributed

    import treckit.engines.dask as engine
    from treckit.console.errors import TreckitError

    monkeypatch.setattr(engine, "WORKER_WAIT_SECONDS", 1)
    with distributed.LocalCluster(n_workers=0, dashboard_address="127.0.0.1:0", silence_logs=40) as cluster:
        with pytest.raises(TreckitError) as e:
            with engine.connect(cluster.scheduler_address):
                pass
    assert e.value.exit_code == 3 and "no worker joined" in str(e.value)
    assert "has no worker yet" in capsys.readouterr().err
