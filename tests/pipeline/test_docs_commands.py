"""Every command block of README.md, docs/*.md and tests/README.md runs as written, on a fresh copy of the sample
data, and prints the numbers the page shows; every relative link of those pages leads to a file and a heading that exist.

A page's fenced blocks are read in order:
- ``sh``: a bash script (``-e -o pipefail``) that must exit 0;
- ``console``: ``$ command`` lines (a line ending in ``\\`` continues on the next), each followed by the lines it
  prints; those lines must appear, in that order, in what the command prints (stdout and stderr), compared with
  runs of whitespace as one space and ``...`` standing for any text -- so every number shown is checked;
- ``python``: a script run by the virtualenv's Python; ``pycon``: a doctest session, its outputs checked;
- ``text``, ``yaml``, ``json``: what a file or a message looks like, never run.
A block preceded by ``<!-- not run: REASON -->`` is not run (a set-up step, a server, a synopsis with placeholders);
the reason must be given.  Indented code blocks and fences without a language are refused, so that no command can
hide from this test.

The blocks of one page run one after another in one folder laid out as a fresh clone after ``make demo``: a copy of
data/, code/ (linked), an empty outputs/ and .venv (the virtualenv running the tests), with the virtualenv's bin
first on PATH and nothing else a fresh clone lacks: no ``trec_eval`` (``make demo`` installs none), so a block
that needs one is marked "not run" with its reason, like any block a user could not run as written.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "tests" / "README.md"]
RUN = {"sh", "console", "python", "pycon"}
SHOWN = {"text", "yaml", "json"}
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.*?)\s*-->")


@dataclass
class Block:
    page: Path
    line: int           # the line of the opening fence, 1-based
    lang: str
    text: str
    not_run: str | None

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").split("\n")
    found, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            lang, start = lines[i][3:].strip(), i
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
            assert end is not None, f"{page.relative_to(ROOT)}:{i + 1}: a fence that is never closed"
            marker = NOT_RUN.fullmatch(lines[i - 1].strip()) if i > 0 else None
            found.append(Block(page, start + 1, lang, "\n".join(lines[i + 1:end]) + "\n",
                               marker.group(1) if marker else None))
            i = end
        i += 1
    return found


def indented_code_blocks(page: Path) -> list[int]:
    """Lines that open an indented code block: four spaces after a blank line, outside a list item."""
    lines, fenced, found = page.read_text(encoding="utf-8").split("\n"), False, []
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.startswith("    ") or i == 0 or lines[i - 1].strip():
            continue
        previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        if not re.match(r"( *[-*] | *\d+\. |  )", previous):
            found.append(i + 1)
    return found


def commands(console: str) -> list[tuple[str, list[str]]]:
    """(command, the lines it is shown to print) for each ``$`` line of a console block."""
    out: list[tuple[str, list[str]]] = []
    lines = console.rstrip("\n").split("\n")
    i = 0
    while i < len(lines):
        assert lines[i].startswith("$ "), f"console output before any command: {lines[i]!r}"
        command = lines[i][2:]
        while command.endswith("\\"):
            i += 1
            command = command[:-1] + lines[i]
        shown = []
        while i + 1 < len(lines) and not lines[i + 1].startswith("$ "):
            i += 1
            shown.append(lines[i])
        out.append((command, shown))
        i += 1
    return out


def shows(printed: list[str], shown: list[str]) -> str | None:
    """None when the shown lines appear in order among the printed ones; else the first shown line missing."""
    norm = [" ".join(line.split()) for line in printed]
    at = 0
    for line in shown:
        pattern = re.compile(".*".join(map(re.escape, " ".join(line.split()).split("..."))))
        at = next((k + 1 for k in range(at, len(norm)) if pattern.fullmatch(norm[k])), None)
        if at is None:
            return line
    return None


def workspace(tmp_path: Path) -> tuple[Path, dict]:
    if not (Path(sys.prefix) / "pyvenv.cfg").exists():
        pytest.skip("the tests do not run in a virtualenv: the documented commands use .venv")
    shutil.copytree(ROOT / "data", tmp_path / "data")
    (tmp_path / "code").symlink_to(ROOT / "code")
    (tmp_path / ".venv").symlink_to(sys.prefix)
    (tmp_path / "outputs").mkdir()
    env = dict(os.environ, PATH=f"{Path(sys.prefix) / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
               TRECKIT_CACHE_DIR=str(tmp_path / "cache"), COLUMNS="120", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    return tmp_path, env


def run_block(block: Block, cwd: Path, env: dict) -> None:
    def run(argv, **kw):
        return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, **kw)

    if block.lang == "sh":
        p = run(["bash", "-e", "-o", "pipefail", "-c", block.text])
        assert p.returncode == 0, f"{block.where()}: exit {p.returncode}\n{block.text}\n{p.stdout}\n{p.stderr}"
    elif block.lang == "python":
        p = run([sys.executable, "-c", block.text])
        assert p.returncode == 0, f"{block.where()}: exit {p.returncode}\n{p.stderr}"
    elif block.lang == "pycon":
        session = cwd / f"session-{block.line}.txt"
        session.write_text(block.text, encoding="utf-8")
        p = run([sys.executable, "-m", "doctest", "-o", "NORMALIZE_WHITESPACE", "-o", "ELLIPSIS", str(session)])
        assert p.returncode == 0, f"{block.where()}: the session prints otherwise\n{p.stdout}\n{p.stderr}"
    else:
        steps = commands(block.text)
        mark = f"@@{uuid.uuid4().hex}@@"
        script = "\n".join(f"echo {mark}\n{{ {command}\n}} 2>&1" for command, _ in steps)
        p = run(["bash", "-e", "-o", "pipefail", "-c", script])
        parts = p.stdout.split(mark + "\n")[1:]
        assert p.returncode == 0, (f"{block.where()}: `{steps[len(parts) - 1][0]}` exit {p.returncode}\n"
                                   f"{parts[-1] if parts else ''}{p.stderr}")
        for (command, shown), printed in zip(steps, parts):
            missing = shows(printed.splitlines(), shown)
            assert missing is None, (f"{block.where()}: `{command}` does not print the line shown\n  {missing}\n"
                                     f"it printed:\n{printed}")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_page_s_commands_run_as_written_and_print_what_it_shows(page, tmp_path):
    found = blocks(page)
    for block in found:
        assert block.lang in RUN | SHOWN, (f"{block.where()}: a code block needs a language: "
                                           f"one of {sorted(RUN)} (run) or {sorted(SHOWN)} (shown)")
        assert block.not_run is None or block.not_run, f"{block.where()}: 'not run' needs its reason"
    assert not indented_code_blocks(page), (f"{page.relative_to(ROOT)}: indented code blocks at lines "
                                            f"{indented_code_blocks(page)}: fence them with a language")
    to_run = [b for b in found if b.lang in RUN and b.not_run is None]
    if not to_run:
        return
    cwd, env = workspace(tmp_path)
    for block in to_run:
        run_block(block, cwd, env)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"(?ms)^```.*?^```", "", page.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"(?m)^#+ (.*)$", text)}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_a_heading(page):
    text = re.sub(r"(?ms)^```.*?^```", "", page.read_text(encoding="utf-8"))
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no file {file}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_block_reader_refuses_what_would_hide_a_command(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n    treckit eval q r\n\n- item\n\n    continued item\n\n<!-- not run: a server -->\n"
                    "```sh\nmake serve\n```\n\n```\nuntyped\n```\n", encoding="utf-8")
    assert indented_code_blocks(page) == [3]
    found = blocks(page)
    assert [(b.line, b.lang, b.not_run) for b in found] == [(10, "sh", "a server"), (14, "", None)]
    assert commands("$ a \\\n  b\nout 1\n$ c\n") == [("a   b", ["out 1"]), ("c", [])]
    assert shows(["map \tall\t0.2253", "x"], ["map all 0.2253"]) is None
    assert shows(["map all 0.2253"], ["map all 0.2254"]) == "map all 0.2254"
    assert shows(["b", "a"], ["a", "b"]) == "b"                     # in order
    assert shows(["p 0.0445; p adjusted 0.0890"], ["p 0.0445; ..."]) is None
    assert slug("Set up (fresh machine: only Python ≥ 3.10 and make)") == "set-up-fresh-machine-only-python--310-and-make"
    assert slug("Cross-check (`--cross-check`)") == "cross-check---cross-check"


def _on_a_terminal(argv: list[str]) -> str:
    """What a command prints to a terminal (a pseudo-terminal as stdout), with stderr apart."""
    import pty
    main, child = pty.openpty()
    try:
        p = subprocess.run(argv, stdout=child, stderr=subprocess.DEVNULL, cwd=ROOT, timeout=120,
                           env=dict(os.environ, COLUMNS="100"))
        os.close(child)
        child = None
        chunks = []
        while True:
            try:
                data = os.read(main, 65536)
            except OSError:            # the terminal's other end closed: all read
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(main)
        if child is not None:
            os.close(child)
    assert p.returncode == 0
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def test_the_readme_says_what_eval_prints_on_a_terminal(tmp_path):
    """README: piped, `treckit eval` prints trec_eval's lines (its example); on a terminal it draws the same numbers as
    a table, and --format trec_eval prints the lines there too."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "on a terminal it\n   draws the same numbers as a table (`--format trec_eval` prints the lines there too)" in readme
    treckit = [sys.executable, "-m", "treckit"]
    gold = "data/quest_sample/test.jsonl"
    run = tmp_path / "bm25.trec"
    subprocess.run([*treckit, "run", "data/quest_sample/bm25_predictions.jsonl", "--gold", gold, "--run-name", "bm25",
                    "-o", str(run)], cwd=ROOT, check=True, capture_output=True)
    args = ["eval", "-m", "map", "-m", "recip_rank", "-m", "ndcg_cut.10", gold, str(run)]
    lines = ["map                   \tall\t0.2253", "recip_rank            \tall\t0.3375", "ndcg_cut_10           \tall\t0.3824"]
    piped = subprocess.run([*treckit, *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert piped.splitlines() == lines
    table = _on_a_terminal([*treckit, *args])
    assert "\t" not in table and any(line.startswith("│ map ") and "0.2253" in line for line in table.splitlines())
    assert _on_a_terminal([*treckit, "eval", "--format", "trec_eval", *args[1:]]).splitlines() == lines


def test_measures_md_says_which_ir_measures_name_treckit_does_not_compute(capsys):
    """docs/measures.md's example of a name treckit does not compute is one it refuses, saying why; ERR@10, which the
    page computes further down (gdeval's ERR@k), is computed."""
    from helpers import run_cli
    page = (ROOT / "docs" / "measures.md").read_text(encoding="utf-8")
    assert "`Accuracy@10`: an ir_measures measure treckit does not compute" in page
    assert "`ERR@10`: an ir_measures measure treckit does not compute" not in page
    qrels, run = ROOT / "data" / "ties" / "qrels.test", ROOT / "data" / "ties" / "full.run"
    code, _, err = run_cli(["eval", "-m", "Accuracy@10", qrels, run], capsys)
    assert code == 2 and "Accuracy is an ir_measures measure that treckit does not compute" in err
    code, out, err = run_cli(["eval", "-m", "ERR@10", qrels, run], capsys)
    assert code == 0 and out.startswith("ERR@10"), err
