"""Every command that writes a file takes -o for its output option, and -o writes where the long name does."""
from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import ROOT, run_cli

# the command -> the long name -o stands for
OUTPUT_OPTION = {
    "qrels": "--output", "run": "--output", "retrieve": "--output", "fuse": "--output", "compare": "--out",
    "rq": "--out", "gate": "--markdown", "system eval": "--out", "testset export": "--qrels",
    "testset import": "--output", "testset eval": "--out", "testset split": "--out-dir", "testset refresh": "--out",
    "report": "--output",
}
# options that name a file a command writes
WRITES = {"--out", "--output", "--out-dir", "--markdown", "--csv", "--latex", "--plot", "--train-out",
          "--holdout-out", "--queries", "--types", "--prometheus-textfile", "--id-added", "--html"}
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


# ------------------------------------------------------------------ several outputs: all or none
TEST_SET = ("name: t\nversion: '1'\nqueries:\n- {query_id: q1, query_text: a b, query_type: x, "
            "relevant_docs: [{doc_id: d1, grade: 2}]}\n- {query_id: q2, query_text: a c, query_type: x, "
            "relevant_docs: [{doc_id: d1, grade: 1}]}\n")
CANNOT = "/proc/treckit-cannot-write-here"          # no file can be made there, not even by root
REFUSED = "http://127.0.0.1:9"                       # the discard port: nothing listens, the push fails

# (the command's arguments, its first output, what fails after it); {d}: the folder of the test's files
SEVERAL_OUTPUTS = {
    "testset split": (["testset", "split", "{d}/ts.yaml", "--holdout", "0.5", "--train-out", "{d}/first", "--holdout-out", CANNOT]),
    "testset export --queries": (["testset", "export", "{d}/ts.yaml", "--qrels", "{d}/first", "--queries", CANNOT]),
    "testset export --types": (["testset", "export", "{d}/ts.yaml", "--qrels", "{d}/first", "--queries", "{d}/q.tsv",
                                "--types", CANNOT]),
    "testset eval --markdown": (["testset", "eval", "{d}/ts.yaml", "--run", "{d}/run.trec", "--out", "{d}/first",
                                 "--markdown", CANNOT]),
    "testset eval --prometheus-textfile": (["testset", "eval", "{d}/ts.yaml", "--run", "{d}/run.trec", "--out",
                                            "{d}/first", "--prometheus-textfile", CANNOT]),
    "testset eval --pushgateway": (["testset", "eval", "{d}/ts.yaml", "--run", "{d}/run.trec", "--out", "{d}/first",
                                    "--markdown", "{d}/m.md", "--pushgateway", REFUSED]),
    "gate --prometheus-textfile": (["gate", "--baseline", "{d}/results.json", "--current", "{d}/results.json",
                                    "--markdown", "{d}/first", "--prometheus-textfile", CANNOT]),
    "gate --pushgateway": (["gate", "--baseline", "{d}/results.json", "--current", "{d}/results.json",
                            "--markdown", "{d}/first", "--prometheus-textfile", "{d}/p.prom", "--pushgateway", REFUSED]),
    "eval --pushgateway": (["eval", "{d}/qrels", "{d}/run.trec", "--prometheus-textfile", "{d}/first",
                            "--pushgateway", REFUSED]),
}


@pytest.mark.parametrize("old", [None, "old content\n"], ids=["new", "existing"])
@pytest.mark.parametrize("name", list(SEVERAL_OUTPUTS))
def test_a_command_whose_later_output_fails_writes_none(tmp_path, capsys, name, old):
    """An output that cannot be written (or a push that fails) after another: exit 2 naming it, and the first
    output is not written (absent, or as it was), nor any other file."""
    (tmp_path / "ts.yaml").write_text(TEST_SET)
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 r\nq2 Q0 d2 1 2.0 r\n")
    (tmp_path / "qrels").write_text("q1 0 d1 2\nq2 0 d1 1\n")
    assert run_cli(["testset", "eval", tmp_path / "ts.yaml", "--run", tmp_path / "run.trec", "--out",
                    tmp_path / "results.json"], capsys)[0] == 0
    if old is not None:
        (tmp_path / "first").write_text(old)
    before = sorted(p.name for p in tmp_path.iterdir())
    code, _, err = run_cli([a.replace("{d}", str(tmp_path)) for a in SEVERAL_OUTPUTS[name]], capsys)
    assert code == 2 and (CANNOT in err or "cannot push to the Pushgateway" in err), err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "first").read_text() == old if old is not None else not (tmp_path / "first").exists()
