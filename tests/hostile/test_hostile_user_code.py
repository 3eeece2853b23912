"""Hostile user code: functions (and their modules' import-time code) that raise any BaseException with a secret of
the environment in its message, close the standard streams, fork, or end the process, through every way treckit
calls a user's function: ``testset eval --function`` (one at a time, in threads, as a batch), ``system eval``'s
components and rerankers, ``compare --config``, and the service's configured system.

What must hold (tests/hostile/README.md): exit 2 naming the function, the query and the exception's type, never its
message; the secret nowhere in stdout, stderr, the server's log or a file written; no results file when the
evaluation did not complete."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import ROOT, patience, run_cli

SAMPLE = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
RESULTS = ROOT / "data" / "test_sets" / "baseline_results.json"       # a real results file of `testset eval`
BOW_RUN = ROOT / "data" / "test_sets" / "baseline_bow.trec"
SECRET_ENV = "TRECKIT_TEST_SECRET"
SECRET = "s3cr3t-USERCODE-7f2a"

# Every exception a function may raise: (its name in the functions below, what the message says it did).
RAISED = {
    "BaseException": "raised BaseException",
    "SystemExit": "called sys.exit(...)",
    "GeneratorExit": "raised GeneratorExit",
    "KeyboardInterrupt": "raised KeyboardInterrupt",
    "Custom": "raised Custom",                      # a BaseException subclass of the user's own
    "ValueError": "raised ValueError",
}

FUNCTIONS = f'''
import os
import sys

SECRET = os.environ["{SECRET_ENV}"]


class Custom(BaseException):
    pass

''' + "".join(f'''
def search_{kind}(text):
    raise ({kind} if "{kind}" != "Custom" else Custom)("secret=" + SECRET)


def batch_{kind}(texts):
    raise ({kind} if "{kind}" != "Custom" else Custom)("secret=" + SECRET)


def rerank_{kind}(text, candidates):
    raise ({kind} if "{kind}" != "Custom" else Custom)("secret=" + SECRET)
''' for kind in RAISED) + '''

def good(text):
    return ["PMC2905704", "PMC3449609"]


def closes_stdout(text):
    sys.stdout.close()
    return ["PMC2905704"]


def closes_stderr(text):
    sys.stderr.close()
    return ["PMC2905704"]


class Evil(tuple):
    def __len__(self):
        raise BaseException("secret=" + SECRET)


class EvilScore(float):
    def __float__(self):
        raise SystemExit("secret=" + SECRET)


def evil_pair(text):
    return [Evil(("PMC2905704", 1.0))]


def evil_score(text):
    return [("PMC2905704", EvilScore(1.0))]


def endless(text):
    # an endless ranking (capped, so that a reader that reads it all ends: with an error, not memory)
    for i in range(10 ** 6):
        yield f"PMC{i}"
    raise RuntimeError("read past the depth")


def endless_batch(texts):
    for _ in range(10 ** 4):
        yield endless(None)
    raise RuntimeError("read past the queries")


def swaps_stdout(text):
    import io
    sys.stdout = io.StringIO()
    return ["PMC2905704"]


def moves_away(text):
    os.makedirs(os.path.join(os.path.dirname(os.path.abspath(__file__)), "elsewhere"), exist_ok=True)
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "elsewhere"))
    return ["PMC2905704"]


def closes_descriptor_1(text):
    os.close(1)
    return ["PMC2905704"]


def ends_the_process(text):
    os._exit(0)


def forks(text):
    # At most one fork in all, whatever treckit does: only the call that creates the marker (O_EXCL, atomic across
    # processes) forks; the forked process writes its pid, so the test can see it ended.
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        os.close(os.open(os.path.join(here, "forked.marker"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return ["PMC2905704"]
    if os.fork() == 0:
        with open(os.path.join(here, "child.pid"), "w") as f:
            f.write(str(os.getpid()))
    return ["PMC2905704"]
'''

FORKS_AT_IMPORT = '''import os
here = os.path.dirname(os.path.abspath(__file__))
try:                                    # at most one fork in all (see fns.py's forks)
    os.close(os.open(os.path.join(here, "forked.marker"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
except FileExistsError:
    pass
else:
    if os.fork() == 0:
        with open(os.path.join(here, "child.pid"), "w") as f:
            f.write(str(os.getpid()))


def search(text):
    return []
'''


def import_time_module(kind: str) -> str:
    """A module whose import raises ``kind`` with the secret."""
    return (f"import os\nclass Custom(BaseException):\n    pass\n\n"
            f"raise ({kind} if {kind!r} != 'Custom' else Custom)('secret=' + os.environ[{SECRET_ENV!r}])\n\n"
            "def search(text):\n    return []\n")


@pytest.fixture
def functions(tmp_path, monkeypatch) -> Path:
    """fns.py in the current directory, with the secret in the environment."""
    monkeypatch.setenv(SECRET_ENV, SECRET)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fns.py").write_text(FUNCTIONS)
    return tmp_path / "fns.py"


def assert_hidden(code: int, out: str, err: str, *says: str) -> None:
    """Exit 2, a treckit error naming what ``says``, and the secret nowhere."""
    assert code == 2, (code, err)
    assert err.startswith("treckit: error: ") and "\n  fix: " in err, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert SECRET not in out and SECRET not in err, err
    for s in says:
        assert s in err, (s, err)


def assert_nothing_written(folder: Path, *names: str) -> None:
    assert not any((folder / n).exists() for n in names)
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def _system_config(folder: Path, body: str) -> Path:
    p = folder / "sys.yaml"
    p.write_text(body)
    return p


# ------------------------------------------------------------------ every entry, every kind of exception
ENTRIES = {
    # entry: (argv given the function's spec's name part, what the message says besides the kind)
    "testset eval --function": (lambda f, kind: ["testset", "eval", SAMPLE, "--function", f"fns.py:search_{kind}",
                                                 "--no-cache", "--out", "res.json"],
                                "the retrieval function search_{kind}() {did} for query 'q01'"),
    "testset eval --workers 4": (lambda f, kind: ["testset", "eval", SAMPLE, "--function", f"fns.py:search_{kind}",
                                                  "--workers", "4", "--no-cache", "--out", "res.json"],
                                 "the retrieval function search_{kind}() {did} for query 'q"),
    "testset eval --batch": (lambda f, kind: ["testset", "eval", SAMPLE, "--function", f"fns.py:batch_{kind}",
                                              "--batch", "--no-cache", "--out", "res.json"],
                             "the batch function batch_{kind}() {did} for a batch of 50 queries"),
    "system eval component": (lambda f, kind: ["system", "eval", _system_config(
        f.parent, f"components:\n  mine: {{callable: fns.py:search_{kind}}}\n"), "--test-set", SAMPLE, "--no-cache",
        "--out", "res.json"], "the retrieval function search_{kind}() {did} for query 'q01'"),
    "system eval reranker": (lambda f, kind: ["system", "eval", _system_config(
        f.parent, f"components:\n  bow: {{run: {BOW_RUN}}}\nrerank: {{callable: fns.py:rerank_{kind}, depth: 5}}\n"),
        "--test-set", SAMPLE, "--no-cache", "--out", "res.json"], "the reranker rerank_{kind}() {did} for query 'q01'"),
    "compare --config": (lambda f, kind: ["compare", "--test-set", SAMPLE, "--config", _system_config(
        f.parent, f"components:\n  mine: {{callable: fns.py:search_{kind}}}\n"), "--config", f.parent / "sys.yaml",
        "--out", "res.json"], "the retrieval function search_{kind}() {did} for query 'q01'"),
}


@pytest.mark.parametrize("kind", list(RAISED))
@pytest.mark.parametrize("entry", list(ENTRIES))
def test_whatever_a_function_raises_is_its_error_and_its_message_is_hidden(functions, capsys, entry, kind):
    argv, says = ENTRIES[entry]
    code, out, err = run_cli(argv(functions, kind), capsys)
    assert_hidden(code, out, err, says.format(kind=kind, did=RAISED[kind]), "--debug shows it")
    assert_nothing_written(functions.parent, "res.json")


@pytest.mark.parametrize("kind", list(RAISED))
def test_whatever_a_module_raises_at_import_is_its_error(functions, capsys, kind):
    (functions.parent / "at_import.py").write_text(import_time_module(kind))
    did = "called sys.exit(...)" if kind == "SystemExit" else f"raised {kind}"
    code, out, err = run_cli(["testset", "eval", SAMPLE, "--function", "at_import.py:search", "--no-cache",
                              "--out", "res.json"], capsys)
    assert_hidden(code, out, err, f"at_import.py:5: the retrieval function at_import.py:search {did} while it was imported")
    cfg = _system_config(functions.parent, "components:\n  mine: {callable: at_import.py:search}\n")
    for argv in (["system", "eval", cfg, "--test-set", SAMPLE, "--no-cache"],
                 ["compare", "--test-set", SAMPLE, "--config", cfg, "--config", cfg]):
        code, out, err = run_cli(argv, capsys)
        assert_hidden(code, out, err, f"{did} while it was imported")
    assert_nothing_written(functions.parent, "res.json")


@pytest.mark.parametrize("name, did", [("evil_pair", "raised BaseException"), ("evil_score", "called sys.exit(...)")])
def test_what_the_items_a_function_returns_raise_is_its_error(functions, capsys, name, did):
    """The items of an answer are the function's code too (a tuple's __len__, a float's __float__)."""
    code, out, err = run_cli(["testset", "eval", SAMPLE, "--function", f"fns.py:{name}", "--no-cache"], capsys)
    assert_hidden(code, out, err, f"the retrieval function {name}() {did} for query 'q01'")
    cfg = _system_config(functions.parent, f"components:\n  mine: {{callable: fns.py:{name}}}\n")
    code, out, err = run_cli(["system", "eval", cfg, "--test-set", SAMPLE, "--no-cache"], capsys)
    assert_hidden(code, out, err, f"the retrieval function {name}() {did} for query 'q01'")


def test_an_endless_answer_is_read_to_the_depth_only(functions, capsys):
    """What is kept of a ranking is read (the top k), so a generator that never ends costs no more; a batch's
    answer is read to one past its queries, enough to tell it has too many (system eval warms up on 3
    queries)."""
    code, out, err = run_cli(["testset", "eval", SAMPLE, "--function", "fns.py:endless", "--no-cache"],
                             capsys)
    assert code == 0 and "recall_at_10" in out, err
    for spec in ("fns.py:endless", "fns.py:endless_batch"):
        cfg = _system_config(functions.parent, f"components:\n  mine: {{callable: {spec}, batch: {'batch' in spec}}}\n")
        code, out, err = run_cli(["system", "eval", cfg, "--test-set", SAMPLE, "--no-cache"], capsys)
        if spec.endswith("batch"):
            assert code == 2 and "endless_batch() returned more than 3 rankings for 3 queries" in err, err
        else:
            assert code == 0, err


@pytest.mark.parametrize("name", ["swaps_stdout", "moves_away"])
def test_what_a_function_changes_of_the_process_is_put_back(functions, capsys, name):
    """A standard stream replaced (and left open) and the working directory are put back after each call: the
    results are printed where the command prints, and written where --out named them."""
    code, out, err = run_cli(["testset", "eval", SAMPLE, "--function", f"fns.py:{name}", "--workers", "2",
                              "--no-cache", "--out", "res.json"], capsys)
    assert code == 0 and "recall_at_10" in out, err
    assert (functions.parent / "res.json").exists() and not (functions.parent / "elsewhere" / "res.json").exists()
    assert os.getcwd() == str(functions.parent)


def test_debug_shows_the_hidden_message(functions, capsys):
    code, _, err = run_cli(["testset", "eval", SAMPLE, "--function", "fns.py:search_BaseException", "--no-cache",
                            "--debug"], capsys)
    assert code == 2 and f"BaseException: secret={SECRET}" in err and "Traceback" in err


def test_the_python_api_reports_a_base_exception_alike(functions):
    """Through the API: the same error; a KeyboardInterrupt is passed on, since in the user's own Python session
    treckit cannot tell it from a real Ctrl-C (docs/testsets.md)."""
    from treckit.console.errors import InputError
    from treckit.testsets.runner import evaluate

    def search(text):
        raise GeneratorExit(SECRET)
    with pytest.raises(InputError) as got:
        evaluate(search, SAMPLE, cache=False)
    assert "search() raised GeneratorExit for query 'q01'" in str(got.value) and SECRET not in str(got.value)

    def interrupted(text):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        evaluate(interrupted, SAMPLE, cache=False)


def test_a_missing_function_in_a_config_is_named(functions, capsys):
    cfg = _system_config(functions.parent, "components:\n  mine: {callable: fns.py:no_such_function}\n")
    code, out, err = run_cli(["system", "eval", cfg, "--test-set", SAMPLE, "--no-cache"], capsys)
    assert code == 2 and "'fns.py' has no function 'no_such_function'" in err, err


# ------------------------------------------------------------------ what a function does to the process
def _treckit(argv, tmp_path: Path, shell_redirect: str = "") -> subprocess.CompletedProcess:
    """``treckit ARGV`` in a process of its own (with the secret in its environment), its standard streams
    redirected as a shell's ``shell_redirect`` says (``>&-``: closed)."""
    env = {**os.environ, SECRET_ENV: SECRET, "PYTHONPATH": str(ROOT / "code")}
    cmd = ["sh", "-c", f'exec "$@" {shell_redirect}', "sh", sys.executable, "-m", "treckit", *map(str, argv)]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=patience(120))


@pytest.mark.parametrize("name, stream, workers", [("closes_stdout", "sys.stdout", "1"),
                                                    ("closes_stderr", "sys.stderr", "1"),
                                                    ("closes_stdout", "sys.stdout", "4"),
                                                    ("closes_descriptor_1", "sys.stdout's descriptor (1)", "1")])
def test_a_function_that_closes_a_standard_stream_is_named(functions, name, stream, workers):
    p = _treckit(["testset", "eval", SAMPLE, "--function", f"fns.py:{name}", "--workers", workers, "--no-cache",
                  "--out", "res.json"], functions.parent)
    assert p.returncode == 2, p.stderr
    assert f"the retrieval function {name}() closed {stream} for query 'q" in p.stderr, p.stderr
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr
    assert_nothing_written(functions.parent, "res.json")


QRELS, RUN = ROOT / "data" / "ties" / "qrels.test", ROOT / "data" / "ties" / "rounded.run"


@pytest.mark.parametrize("redirect, argv, code, where, says", [
    (">&-", ["eval", QRELS, RUN], 2, "stderr", "<stdout>: cannot write: it is closed"),
    ("2>&-", ["eval", QRELS, RUN], 0, "stdout", "num_q"),
    ("2>&-", ["eval", QRELS, "missing.run"], 2, "stdout", "treckit: error: missing.run: cannot read: no such file"),
    (">&- 2>&-", ["eval", QRELS, RUN], 2, None, None),
    (">&-", ["run", RUN, "-o", "copy.trec"], 0, None, None),        # writes no stdout: nothing to refuse
])
def test_a_process_started_without_a_standard_stream(tmp_path, redirect, argv, code, where, says):
    p = _treckit(argv, tmp_path, redirect)
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    assert "internal error" not in p.stdout + p.stderr and "Traceback" not in p.stdout + p.stderr
    if where is not None:
        assert says in (p.stdout if where == "stdout" else p.stderr), (p.stdout, p.stderr)


def test_a_function_that_ends_the_process_leaves_no_results_and_the_gate_fails(functions):
    """os._exit cannot be caught in the process it ends: the command exits as the function said, having written
    nothing, so the gate that follows has no results to pass (docs/testsets.md)."""
    (functions.parent / "exits_at_import.py").write_text("import os\nos._exit(0)\n")
    for spec in ("fns.py:ends_the_process", "exits_at_import.py:search"):
        p = _treckit(["testset", "eval", SAMPLE, "--function", spec, "--no-cache", "--out", "res.json"],
                     functions.parent)
        assert p.returncode == 0 and p.stdout == "", (p.stdout, p.stderr)
        assert_nothing_written(functions.parent, "res.json")
        gate = _treckit(["gate", "--baseline", RESULTS, "--current", "res.json"], functions.parent)
        assert gate.returncode == 2 and "res.json" in gate.stderr, gate.stderr


def _ended_process(pid_file: Path) -> None:
    """The forked process (its pid in ``pid_file``) wrote its pid and ended, never reaching the results."""
    from service_server import alive
    deadline = time.monotonic() + patience(30)
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline, "the forked process never wrote its pid"
        time.sleep(0.05)
    pid = int(pid_file.read_text())
    while alive(pid):
        assert time.monotonic() < deadline, f"the forked process {pid} is still running"
        time.sleep(0.05)


@pytest.mark.parametrize("spec, workers, says", [
    ("fns.py:forks", "1", "the retrieval function forks() forked a process (os.fork) for query 'q01'"),
    ("fns.py:forks", "4", "the retrieval function forks() forked a process (os.fork) for query 'q"),
    ("forks_at_import.py:search", "1",
     "the retrieval function forks_at_import.py:search forked a process (os.fork) while it was imported"),
])
def test_a_function_that_forks_is_its_error_and_the_fork_ends(functions, spec, workers, says):
    """The forked process returns into treckit and ends there at once, writing nothing; the process treckit
    started reports the fork as the function's error (exit 2) and writes no results: never two evaluations.
    The function forks at most once (a marker file), so no fault of treckit's can multiply processes."""
    (functions.parent / "forks_at_import.py").write_text(FORKS_AT_IMPORT)
    p = _treckit(["testset", "eval", SAMPLE, "--function", spec, "--workers", workers, "--no-cache",
                  "--out", "res.json"], functions.parent)
    assert p.returncode == 2 and says in p.stderr, (p.returncode, p.stderr)
    assert "start other processes with subprocess" in p.stderr and p.stdout == "", p.stdout
    assert (functions.parent / "forked.marker").exists()
    _ended_process(functions.parent / "child.pid")
    assert_nothing_written(functions.parent, "res.json")


# ------------------------------------------------------------------ the service's configured system
SERVICE_COMPONENTS = [f"raise_{kind}" for kind in RAISED] + ["import_time", "closes_stdout", "forks"]


def test_the_services_system_failing_is_answered_and_the_server_goes_on(tmp_path, monkeypatch):
    """Each failure of the configured system's code is a 500 naming the function and the exception's type; the
    worker goes on (or is replaced: a good component answers next); the secret is in no answer and not in the
    server's log; a system's code that ends its worker is a 503 saying so, and the server still answers."""
    pytest.importorskip("httpx", reason="the service tests need the dev extra (httpx)")
    pytest.importorskip("fastapi", reason="the service tests need the service extra")
    from service_server import Server, sample_test_set
    monkeypatch.setenv(SECRET_ENV, SECRET)
    (tmp_path / "fns.py").write_text(FUNCTIONS)
    (tmp_path / "at_import.py").write_text(import_time_module("BaseException"))
    fns = tmp_path / "fns.py"
    system = ("components:\n  good: {callable: " + f"{fns}:good}}\n"
              + "".join(f"  raise_{kind}: {{callable: {fns}:search_{kind}}}\n" for kind in RAISED)
              + f"  import_time: {{callable: {tmp_path / 'at_import.py'}:search}}\n"
              + f"  closes_stdout: {{callable: {fns}:closes_stdout}}\n  ends: {{callable: {fns}:ends_the_process}}\n"
              + f"  forks: {{callable: {fns}:forks}}\n"
              + "fusion_method: rrf\n")
    s = Server(tmp_path, system=system, config="evaluation_workers: 1\ncache: false\n")
    try:
        for component in SERVICE_COMPONENTS + ["ends"]:
            r = s.post({"test_set": sample_test_set()}, params={"components": component}, timeout=patience(60))
            assert SECRET not in r.text, r.text
            if component == "ends":
                assert r.status_code == 503 and "without an answer" in r.json()["detail"], r.text
            else:
                kind = component.removeprefix("raise_")
                said = {"import_time": "raised BaseException while it was imported",
                        "closes_stdout": "closes_stdout() closed sys.stdout",
                        "forks": "forks() forked a process (os.fork)"}.get(component, RAISED.get(kind))
                assert r.status_code == 500 and said in r.json()["detail"], r.text
            good = s.post({"test_set": sample_test_set()}, params={"components": "good"}, timeout=patience(60))
            assert good.status_code == 200, good.text
    finally:
        s.stop()
    log = s.stderr_path.read_text()
    assert SECRET not in log and "Traceback" not in log, log
    assert "the system failed: the retrieval function search_BaseException() raised BaseException" in log
    _ended_process(tmp_path / "child.pid")
