"""Start-up stays lean: which heavy modules a fresh ``treckit`` process loads (not timed: timings
live in bench/).  Help, treckit's and each command's, loads neither numpy nor pyarrow; evaluation loads
pyarrow but not pandas; the CLI still exits with the right code and prints every line.

numpy and pyarrow are bound at the top of the library's modules with treckit.dependencies.deferred: a stand-in of
treckit's until first use, never in sys.modules ("loaded" here is dependencies.loaded)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import run_cli

PROBE = """
import json, sys
from treckit.cli import main as cli
from treckit.dependencies import loaded
code = cli.main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps({m: loaded(m) for m in ("pyarrow", "pandas", "pyarrow.compute", "numpy")}), file=sys.stderr)
"""


def _probe(*argv) -> tuple[dict, str]:
    p = subprocess.run([sys.executable, "-c", PROBE, *map(str, argv)], capture_output=True, text=True, check=True)
    return json.loads(p.stderr.strip().splitlines()[-1]), p.stdout


def _files(tmp_path, queries: int, docs: int):
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("".join(f"{q} 0 d{q}_{d} {d % 3}\n" for q in range(queries) for d in range(0, docs, 7)))
    run.write_text("".join(f"{q} Q0 d{q}_{d} {d + 1} {docs - d}.5 tag\n" for q in range(queries) for d in range(docs)))
    return qrels, run


def test_help_loads_no_pyarrow():
    loaded, out = _probe("--help")
    assert "Usage" in out and not loaded["pyarrow"] and not loaded["numpy"]


# an option of each command, or a command of each group, that its help must show
SHOWN_IN_HELP = {
    "qrels": "--duplicates", "run": "--order", "serve": "--port", "alert-rules": "--threshold",
    "grafana-dashboard": "--prefix", "compare": "--test", "report": "--no-query-text", "rq": "--threshold", "gate": "--max-drop", "qrels-verify": "--no-extras", "retrieve": "--corpus",
    "fuse": "--method", "eval": "--Max_retrieved_per_topic", "measures": "--help", "detect": "--role",
    "gdeval": "--amean", "ndeval": "--alpha", "testset": "validate", "cache": "clear", "system": "eval",
}


def test_every_command_has_its_help_checked():
    from treckit.cli.main import COMMANDS
    assert list(SHOWN_IN_HELP) == list(COMMANDS)


@pytest.mark.parametrize("argv", [[name, "-h" if k % 2 else "--help"] for k, name in enumerate(SHOWN_IN_HELP)]
                         + [["testset", "eval", "--help"], ["system", "eval", "-h"]], ids=" ".join)
def test_a_commands_help_loads_neither_numpy_nor_pyarrow(argv):
    loaded, out = _probe(*argv)
    shown = SHOWN_IN_HELP.get(" ".join(argv[:-1]), "--help")
    assert "Usage" in out and shown in out, out
    assert not loaded["numpy"] and not loaded["pyarrow"] and not loaded["pandas"]


@pytest.mark.parametrize("size", ["small", "large"])     # large: over 1 MiB, the vectorized readers
def test_evaluation_loads_pyarrow_but_not_pandas(tmp_path, size):
    """pyarrow's first array is built with pandas hidden (the CLI's main sets it up as pyarrow loads); Arrow's
    compute functions come through the public pyarrow.compute."""
    qrels, run = _files(tmp_path, *((5, 40) if size == "small" else (300, 150)))
    assert (run.stat().st_size > 1 << 20) == (size == "large")
    loaded, out = _probe("eval", "-m", "map", "-m", "P.5", qrels, run)
    assert loaded == {"pyarrow": True, "pandas": False, "pyarrow.compute": True, "numpy": True}
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == ["map", "P_5"] and all(line.split()[1] == "all" for line in lines)


# what a plain evaluation does not use: the report's pages and plots, comparisons, test sets, the service's
# server, the cross-check, the CLI's typer and rich, and every optional extra
NOT_FOR_A_PLAIN_EVALUATION = (
    "pandas", "plotly", "matplotlib", "scipy", "sklearn", "yaml", "pydantic", "typer", "click", "rich", "ir_measures",
    "pytrec_eval", "bm25s", "Stemmer", "distributed", "fsspec", "ir_datasets", "fastapi", "starlette", "uvicorn",
    "prometheus_client", "treckit.report", "treckit.compare", "treckit.testsets", "treckit.retrieval", "treckit.api",
    "treckit.cli.eval_pages")
HEAVY = ("numpy", "pyarrow", "pyarrow.compute") + NOT_FOR_A_PLAIN_EVALUATION
LOADS_PROBE = """
import json, sys
from treckit.dependencies import loaded
if sys.argv[1:] == ["import"]:
    import treckit
else:
    from treckit.cli import main as cli
    cli.main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps(sorted(m for m in json.loads(%r) if loaded(m))), file=sys.stderr)
""" % json.dumps(HEAVY)


def _loads(*argv) -> tuple[list, str]:
    p = subprocess.run([sys.executable, "-c", LOADS_PROBE, *map(str, argv)], capture_output=True, text=True,
                       check=True, timeout=120)
    return json.loads(p.stderr.strip().splitlines()[-1]), p.stdout


def test_importing_treckit_loads_none_of_the_heavy_modules():
    """``import treckit`` runs neither numpy nor pyarrow, nor anything else of the list: the API loads on first use."""
    assert _loads("import") == ([], "")


@pytest.mark.parametrize("argv", [["-m", "map", "-m", "P.5"], ["-q", "-m", "all_trec"], ["-m", "ndcg_cut.10", "-c"]],
                         ids=" ".join)
def test_a_plain_evaluation_loads_only_the_columnar_core(tmp_path, argv):
    """A small `treckit eval` loads numpy, pyarrow and pyarrow.compute (Arrow's compute functions through its public
    API: the private pyarrow._compute saved its import but did not earn the 2x a private call must, docs/engines.md)
    and nothing of NOT_FOR_A_PLAIN_EVALUATION; --html loads the report's modules, and only then."""
    qrels, run = _files(tmp_path, 5, 40)
    loaded, out = _loads("eval", *argv, qrels, run)
    assert loaded == ["numpy", "pyarrow", "pyarrow.compute"] and out.splitlines()[-1].split()[1] == "all"
    page = tmp_path / "page.html"
    loaded, _ = _loads("eval", *argv, "--html", page, qrels, run)
    assert {"treckit.report", "treckit.compare", "treckit.cli.eval_pages", "plotly"} <= set(loaded)
    assert page.read_text().lstrip().lower().startswith("<!doctype html")


def test_console_script_exits_with_the_code_and_flushes_everything(tmp_path):
    """`treckit` ends without interpreter teardown: the exit code and every line must still arrive."""
    qrels, run = _files(tmp_path, 300, 150)
    exe = [sys.executable, "-c", "from treckit.cli.main import run; run()"]
    p = subprocess.run([*exe, "eval", "-q", "-m", "map", qrels, run], capture_output=True, text=True)
    assert p.returncode == 0 and len(p.stdout.splitlines()) == 301        # 300 queries + "all"
    p = subprocess.run([*exe, "eval", "-m", "map", qrels, tmp_path / "missing"], capture_output=True, text=True)
    assert p.returncode == 2 and "missing" in p.stderr


NATIVE_PROBE = """
import json, os, sys
from treckit.cli import main as cli
from treckit.dependencies import loaded
loaded_before = [m for m in ("numpy", "pyarrow") if loaded(m)]
cli.main(sys.argv[1:])
print(json.dumps({"loaded_before_main": loaded_before, "timeout": os.environ.get("OPENBLAS_THREAD_TIMEOUT")}),
      file=sys.stderr)
"""


@pytest.mark.parametrize("users", [None, "12"])
def test_openblas_idle_threads_told_to_sleep_before_numpy_loads_unless_the_user_says_otherwise(tmp_path, users):
    """numpy's OpenBLAS threads spin 0.1 s on a core after numpy's import unless told a short timeout; the CLI
    sets one before numpy is first imported (it is read once, when numpy loads), and a user's own value stands."""
    import os

    qrels, run = _files(tmp_path, 5, 40)
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if users:
        env["OPENBLAS_THREAD_TIMEOUT"] = users
    p = subprocess.run([sys.executable, "-c", NATIVE_PROBE, "eval", "-m", "map", qrels, run], capture_output=True,
                       text=True, env=env, check=True)
    got = json.loads(p.stderr.strip().splitlines()[-1])
    assert got == {"loaded_before_main": [], "timeout": users or "4"}


def test_ir_measures_is_loaded_only_for_a_cross_check(tmp_path):
    """ir_measures and pytrec_eval are dependencies, but only --cross-check imports them."""
    qrels, run = _files(tmp_path, 5, 40)
    probe = PROBE.replace('("pyarrow", "pandas", "pyarrow.compute", "numpy")', '("ir_measures", "pytrec_eval")')
    for flags, loaded in (([], False), (["--cross-check"], True)):
        p = subprocess.run([sys.executable, "-c", probe, "eval", *flags, "-m", "map", str(qrels), str(run)],
                           capture_output=True, text=True, check=True)
        assert json.loads(p.stderr.strip().splitlines()[-1]) == {"ir_measures": loaded, "pytrec_eval": loaded}
        assert ("numbers agree" in p.stderr or "number agrees" in p.stderr) == loaded


def test_the_command_table_lists_what_the_modules_register_with_their_help():
    """`treckit --help` lists the commands from treckit.cli.main.COMMANDS without loading them: the table holds
    exactly the commands each module registers, in the order typer lists them, each with the first paragraph of
    its own help."""
    import inspect

    import typer

    from treckit.cli.main import COMMANDS

    listed = []
    for module in dict.fromkeys(m for m, _ in COMMANDS.values()):
        app = typer.Typer()
        __import__(f"treckit.cli.{module}", fromlist=["register"]).register(app)
        for name, command in typer.main.get_group(app).commands.items():
            help_text = inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]
            listed.append((name, module, help_text))
    commands = [n for n, _, _ in listed if n not in {"testset", "cache", "system"}]
    groups = [n for n, _, _ in listed if n in {"testset", "cache", "system"}]
    assert list(COMMANDS) == commands + groups          # typer lists commands, then groups
    assert {n: (m, h) for n, m, h in listed} == COMMANDS


LOADED_PROBE = """
import json, sys
from treckit.cli import main as cli
cli.main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps(sorted(m for m in sys.modules if m.startswith("treckit.cli."))), file=sys.stderr)
"""


@pytest.mark.parametrize("argv, modules", [
    (["--help"], []),
    (["compare", "-h"], ["common", "compare", "completion"]),
    (["testset", "eval", "--help"], ["common", "completion", "testsets"]),
])
def test_a_command_loads_only_its_own_module(argv, modules):
    p = subprocess.run([sys.executable, "-c", LOADED_PROBE, *argv], capture_output=True, text=True, check=True)
    assert "Usage" in p.stdout
    assert json.loads(p.stderr.strip().splitlines()[-1]) == sorted(["treckit.cli.main"] +
                                                                   [f"treckit.cli.{m}" for m in modules])


WITHOUT_SERVICE_EXTRA = """
import sys
for name in ("fastapi", "uvicorn", "prometheus_client"):
    sys.modules[name] = None                      # import fails, as where the service extra is not installed
from treckit.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_command_needing_a_missing_extra_names_it_and_the_others_still_run(capsys):
    """Serving needs FastAPI and uvicorn: without them, exit 2 naming the extra and its install command (no
    traceback), while `serve -h` shows the command's help; `alert-rules` needs no extra and prints what it prints
    with the extra installed."""
    p = subprocess.run([sys.executable, "-c", WITHOUT_SERVICE_EXTRA, "serve", "-h"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and "serve [OPTIONS]" in p.stdout and "--log-level" in p.stdout, p.stderr
    p = subprocess.run([sys.executable, "-c", WITHOUT_SERVICE_EXTRA, "serve", "--port", "8000"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == "" and "Traceback" not in p.stderr, p.stderr
    assert "the service needs its extra (fastapi is missing)" in p.stderr
    assert f"install treckit's service extra: {sys.executable}" in p.stderr or \
           "install treckit's service extra: pip install -e '.[service]'" in p.stderr
    p = subprocess.run([sys.executable, "-c", WITHOUT_SERVICE_EXTRA, "alert-rules", "--prefix", "medicalkg"],
                       capture_output=True, text=True, timeout=60)
    code, rules, _ = run_cli(["alert-rules", "--prefix", "medicalkg"], capsys)
    assert p.returncode == code == 0 and p.stdout == rules and "medicalkg" in rules


DEFERRED_PROBE = """
import importlib, json, sys, threading, types
from treckit.dependencies import deferred, loaded
from treckit.fast import arrow                      # binds np and pa with deferred at its top
np, pa = deferred("numpy"), deferred("pyarrow")
before = {"numpy": loaded("numpy"), "pyarrow": loaded("pyarrow"),
          "registered": [m for m in ("numpy", "pyarrow") if m in sys.modules],
          "same": arrow.np is np and type(np) is not types.ModuleType}
barrier, sums, errors = threading.Barrier(8), [], []
def first_use():
    barrier.wait()                                  # the eight read numpy at once: one runs it, the others wait
    try:
        sums.append(int(np.arange(4).sum()))
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=first_use) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
import pyarrow.compute as pc                       # imported as any module is
print(json.dumps({"before": before, "sums": sums, "errors": errors, "numpy": loaded("numpy"),
                  "plain": type(arrow.np) is types.ModuleType and arrow.np is importlib.import_module("numpy"),
                  "through": int(np.arange(3).sum()), "pyarrow": loaded("pyarrow"), "sum": pc.sum(pa.array([1, 2])).as_py(),
                  "arrow": arrow.pa is sys.modules["pyarrow"], "again": deferred("numpy") is sys.modules["numpy"]}))
"""


def test_a_deferred_module_runs_once_on_first_use_then_is_the_module_itself():
    """Before its first use a deferred module is a stand-in of treckit's, not in sys.modules (a user's own import of
    it is untouched); the first use imports it once, whatever the threads, and treckit's modules then hold the
    module itself; a stand-in kept elsewhere still reads through."""
    p = subprocess.run([sys.executable, "-c", DEFERRED_PROBE], capture_output=True, text=True, check=True)
    got = json.loads(p.stdout)
    assert got == {"before": {"numpy": False, "pyarrow": False, "registered": [], "same": True}, "sums": [6] * 8,
                   "errors": [], "numpy": True, "plain": True, "through": 3, "pyarrow": True, "sum": 3,
                   "arrow": True, "again": True}


def test_only_the_listed_modules_are_deferred():
    from treckit.dependencies import deferred
    with pytest.raises(ValueError, match="pandas is not one of treckit.dependencies.DEFERRED"):
        deferred("pandas")


@pytest.mark.parametrize("argv", [["eval", "-h"], ["run", "-h"], ["compare", "-h"]])
@pytest.mark.parametrize("columns", ["40", "80", "200"])
def test_the_reading_options_heading_is_whole_at_any_width(argv, columns):
    """The reading options' box is headed "Reading runs" in full, at any width, in every command that takes them."""
    p = subprocess.run([sys.executable, "-m", "treckit", *argv], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, COLUMNS=columns))
    assert p.returncode == 0, p.stderr
    heads = [line for line in p.stdout.splitlines() if line.startswith("\u256d\u2500 Reading runs")]
    assert len(heads) == 1 and heads[0].startswith("\u256d\u2500 Reading runs \u2500") and heads[0].endswith("\u256e")
    assert len(heads[0]) == int(columns)
