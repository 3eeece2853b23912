"""Every command that writes a file takes -o for its output option, and -o writes where the long name does."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT, run_cli

# the command -> the long name -o stands for
OUTPUT_OPTION = {
    "qrels": "--output", "run": "--output", "retrieve": "--output", "fuse": "--output", "compare": "--out",
    "rq": "--out", "gate": "--markdown", "system eval": "--out", "testset export": "--qrels",
    "testset import": "--output", "testset eval": "--out", "testset split": "--out-dir", "testset refresh": "--out",
}
# options that name a file a command writes
WRITES = {"--out", "--output", "--out-dir", "--markdown", "--csv", "--latex", "--plot", "--train-out",
          "--holdout-out", "--queries", "--types", "--prometheus-textfile", "--id-added"}
# commands whose --queries/--types name files they read, not write
READ_ONLY_NAMES = {"compare": {"--queries"}, "system eval": {"--queries"}, "retrieve": {"--queries"}}


def commands():
    import typer

    from treckit.cli.main import get_app
    root = typer.main.get_command(get_app())

    def walk(cmd, prefix):
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                yield from walk(sub, f"{prefix} {name}".strip())
        else:
            yield prefix, cmd
    return dict(walk(root, ""))


def test_every_command_that_writes_a_file_takes_o():
    found = {}
    for name, cmd in commands().items():
        opts = {o: p for p in cmd.params for o in p.opts}
        writes = {o for o in opts if o in WRITES} - READ_ONLY_NAMES.get(name, set())
        if writes and name not in ("testset workflow",):
            found[name] = opts["-o"].opts if "-o" in opts else None
    assert set(found) == set(OUTPUT_OPTION), sorted(set(found) ^ set(OUTPUT_OPTION))
    for name, long in OUTPUT_OPTION.items():
        assert found[name] is not None and long in found[name], (name, found[name])


@pytest.mark.parametrize("script", ["preprocess_qrels.py", "preprocess_run.py", "evaluate.py", "rq_eval.py"])
def test_the_staged_scripts_take_o(script):
    out = subprocess.run([sys.executable, str(ROOT / "code" / "evaluation" / script), "--help"],
                         capture_output=True, text=True, check=True).stdout
    assert "--output OUTPUT, -o OUTPUT" in out or "--out OUT, -o OUT" in out


def test_o_writes_where_the_long_option_does(tmp_path, capsys):
    (tmp_path / "ts.yaml").write_text(
        "name: t\nversion: '1'\nqueries:\n- {query_id: q1, query_text: a b, query_type: x, "
        "relevant_docs: [{doc_id: d1, grade: 2}]}\n- {query_id: q2, query_text: a c, query_type: x, "
        "relevant_docs: [{doc_id: d1, grade: 1}]}\n")
    code, _, _ = run_cli(["testset", "export", tmp_path / "ts.yaml", "-o", tmp_path / "q.qrels"], capsys)
    assert code == 0 and (tmp_path / "q.qrels").read_text() == "q1 0 d1 2\nq2 0 d1 1\n"
    code, _, _ = run_cli(["testset", "split", tmp_path / "ts.yaml", "--holdout", "0.5", "-o", tmp_path / "parts"], capsys)
    assert code == 0 and (tmp_path / "parts" / "ts.train.yaml").is_file() and (tmp_path / "parts" / "ts.holdout.yaml").is_file()
