"""Shell completion (typer's): `treckit --show-completion` prints the script a shell sources, and the completion
it calls back offers commands, and measure names after -m (trec_eval's, ir_measures', the test sets')."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TRECKIT = Path(sys.executable).with_name("treckit")          # the console script: its name is the program's


def completed(words: str, shell: str = "bash") -> list[str]:
    """What the completion offers for the command line ``words`` (the last word being typed)."""
    if not TRECKIT.exists():
        pytest.skip(f"the treckit console script is not installed beside {sys.executable}")
    env = {**os.environ, "_TRECKIT_COMPLETE": f"complete_{shell}", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split()) - 1), "_TYPER_COMPLETE_ARGS": words}
    p = subprocess.run([TRECKIT], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def test_show_completion_prints_the_script_for_the_shell():
    env = {**os.environ, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    for shell, marker in (("bash", "complete -o default -F _treckit_completion treckit"),
                          ("zsh", "compdef _treckit_completion treckit")):
        p = subprocess.run([TRECKIT, "--show-completion", shell], env=env, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0 and marker in p.stdout and "_TRECKIT_COMPLETE=complete_" in p.stdout
    help_text = subprocess.run([TRECKIT, "--help"], capture_output=True, text=True, timeout=60).stdout
    assert "--install-completion" in help_text and "--show-completion" in help_text


def test_commands_and_measure_names_are_completed():
    from treckit.measures.registry import TREC_NAMES
    assert "compare" in completed("treckit comp")
    ndcg = completed("treckit compare -m ndcg")
    assert {"ndcg", "ndcg_cut", "ndcg_rel", "ndcg_at_10", "nDCG"} - {"nDCG"} <= set(ndcg) and all(
        n.startswith("ndcg") for n in ndcg)
    assert set(completed("treckit eval -m P")) >= {"P", "P_avgjg"} & set(TREC_NAMES) | {"P"}
    assert completed("treckit eval -m iprec") == ["iprec_at_recall"]
    assert {"recall_at_10", "recall"} <= set(completed("treckit testset eval TS.yaml --measure rec"))
    assert "mrr" in completed("treckit system eval S.yaml -m m")
    assert "official" in completed("treckit eval -m off")
