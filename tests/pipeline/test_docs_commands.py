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

import json
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


# ---------------------------------------------------------------- README: where treckit reads the seeds differently
def _seed_rows() -> dict[str, list[str]]:
    """{what: [the seed, treckit and why, the seed's form]} of README's table of deviations from the seeds."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Where treckit reads the seeds differently\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| what ")]
    return {cells[0]: cells[1:] for cells in ([c.strip() for c in row.strip("|").split(" | ")] for row in rows)}


def _cli(*argv, capsys, code=0):
    from helpers import run_cli
    got = run_cli(list(map(str, argv)), capsys)
    assert got[0] == code, got[2]
    return got


def _script(name, *argv, check=True):
    p = subprocess.run([sys.executable, str(ROOT / "code" / "evaluation" / name), *map(str, argv)], capture_output=True,
                       text=True, timeout=120)
    assert not check or p.returncode == 0, p.stderr
    return p


SEED_GOLD = '{"query": "films of 2009", "docs": ["District 9", "Up"]}\n'


def _raw_ids(tmp_path, capsys):
    import treckit
    gold = tmp_path / "gold.jsonl"
    gold.write_text(SEED_GOLD)
    _script("preprocess_qrels.py", "--input", gold, "--output", tmp_path / "q1", "--raw_ids")
    _cli("qrels", gold, "-o", tmp_path / "q2", "--raw-ids", capsys=capsys)
    for q in ("q1", "q2"):
        assert (tmp_path / q).read_text().splitlines() == ["1 0 District 9 1", "1 0 Up 1"]
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"id": "1", "docs": ["District 9", "Up"], "scores": [2.0, 1.0]}\n')
    _script("preprocess_run.py", "--input", preds, "--output", tmp_path / "r1", "--raw_ids")
    _cli("run", preds, "-o", tmp_path / "r2", "--raw-ids", capsys=capsys)
    treckit.write_run(treckit.read_run(preds), tmp_path / "r3", escape_ids=False)
    treckit.write_qrels(treckit.read_qrels(tmp_path / "q1", layout="docid-spaces"), tmp_path / "q3", escape_ids=False)
    for r in ("r1", "r2", "r3"):
        assert (tmp_path / r).read_text().splitlines()[0].startswith("1 Q0 District 9 1 2"), r
    assert (tmp_path / "q3").read_text().splitlines()[0] == "1 0 District 9 1"


# the seed's form of a negated run: scores as given, most negative ranked first; judged: d1 (the best) relevant
NEGATED_RUN = "1 Q0 d1 1 -9.5 neg\n1 Q0 d2 2 -3.0 neg\n1 Q0 d3 3 -1.0 neg\n"


def _negated_read_with_order_asc(tmp_path, capsys):
    (tmp_path / "qrels").write_text("1 0 d1 1\n")
    (tmp_path / "run").write_text(NEGATED_RUN)
    _, out, err = _cli("eval", "-m", "recip_rank", tmp_path / "qrels", tmp_path / "run", capsys=capsys)
    assert out.split()[-1] == "0.3333" and "rank column rises as the score rises" in err      # d1 last, warned
    _, out, _ = _cli("eval", "--order", "asc", "-m", "recip_rank", tmp_path / "qrels", tmp_path / "run", capsys=capsys)
    assert out.split()[-1] == "1.0000"                                                          # d1 first, as meant
    p = _script("evaluate.py", "--run", tmp_path / "run", "--qrels", tmp_path / "qrels", "--order", "asc")
    assert "MRR 1.0000" in p.stdout
    _, out, _ = _cli("compare", tmp_path / "qrels", tmp_path / "run", tmp_path / "run", "--name", "a", "--name", "b",
                     "--order", "asc", "-m", "recip_rank", capsys=capsys)
    assert any(line.startswith("│ a ") and "1.0000" in line for line in out.splitlines())


def _all_negative_order_asc(tmp_path, capsys):
    """Log-probabilities: higher (-0.1) is better and ranked first, as trec_eval does; --order asc: the seed's rule."""
    (tmp_path / "qrels").write_text("1 0 d1 1\n")
    (tmp_path / "logp.trec").write_text("1 Q0 d1 1 -0.1 lm\n1 Q0 d2 2 -2.3 lm\n1 Q0 d3 3 -4.6 lm\n")
    _, out, _ = _cli("eval", "-m", "recip_rank", tmp_path / "qrels", tmp_path / "logp.trec", capsys=capsys)
    assert out.split()[-1] == "1.0000"
    _, out, _ = _cli("eval", "--order", "asc", "-m", "recip_rank", tmp_path / "qrels", tmp_path / "logp.trec",
                     capsys=capsys)
    assert out.split()[-1] == "0.3333"                      # the seed's ascending order puts d1 last


def _rq_eval_in_code_evaluation(tmp_path, capsys):
    p = _script("rq_eval.py", "--help")
    assert "--configA" in p.stdout and not (ROOT / "scripts").exists()


def _rq_eval_run_configs(tmp_path, capsys):
    (tmp_path / "q.tsv").write_text("1\tfirst\n")
    (tmp_path / "truth.tsv").write_text("1\td1\t1\n")
    (tmp_path / "a.trec").write_text("1 Q0 d1 1 1.0 a\n")
    for name in ("A", "B"):
        (tmp_path / f"{name}.yaml").write_text("run: a.trec\n")
    _script("rq_eval.py", "--queries", tmp_path / "q.tsv", "--truth", tmp_path / "truth.tsv", "--configA",
            tmp_path / "A.yaml", "--configB", tmp_path / "B.yaml", "--out", tmp_path / "o.json")
    assert json.loads((tmp_path / "o.json").read_text())["systems"]["A"]["metrics"]["macro"]["mrr"] == 1.0


def _medicalkg_prefix(tmp_path, capsys):
    _, rules, _ = _cli("alert-rules", "--prefix", "medicalkg", capsys=capsys)
    assert 'medicalkg_retrieval_recall_at_k{k="10"} < 0.75' in rules
    (tmp_path / "qrels").write_text("1 0 d1 1\n")
    (tmp_path / "run").write_text("1 Q0 d1 1 1.0 r\n")
    _cli("eval", "-m", "recall.10", "--prometheus-textfile", tmp_path / "m.prom", "--metrics-prefix", "medicalkg",
         tmp_path / "qrels", tmp_path / "run", capsys=capsys)
    assert 'medicalkg_retrieval_recall_at_k{component="all",k="10"' in (tmp_path / "m.prom").read_text()
    (tmp_path / "server.yaml").write_text("metrics_prefix: medicalkg\n")
    pytest.importorskip("fastapi")
    from treckit.service.app import load_settings
    assert load_settings(tmp_path / "server.yaml").metrics_prefix == "medicalkg"


def _treckit_qrels_module(tmp_path, capsys):
    """Seed 003's typical usage, as it is written there, from treckit.qrels."""
    from treckit.qrels import (QrelRow, Qrels, QrelsSpec, QrelsVerification, build_qrels, doc_id_md5,  # noqa: F401
                               verify_qrels_topics, write_qrel_file)
    spec = QrelsSpec(topic_id=lambda r: r["q"], doc_id=lambda r: f"md5:{doc_id_md5(r['text'])}", grade=lambda r: r["g"])
    qrels = build_qrels(records=[{"q": "t1", "text": "a passage", "g": 2}], spec=spec)
    verify_qrels_topics(expected_topic_ids=["t1"], qrels=qrels, require_no_extras=True)
    QrelsVerification(qrels, expected_topic_ids=["t1"], warn=False).all()
    write_qrel_file(qrel_out_file=tmp_path / "run.qrels", qrels=Qrels(rows=[QrelRow("t1", "d1", 1)]))
    assert (tmp_path / "run.qrels").read_text() == "t1 0 d1 1\n"


def _gain_linear(tmp_path, capsys):
    _cli("testset", "eval", ROOT / "data" / "test_sets" / "clinical_v1.yaml", "--run",
         ROOT / "data" / "test_sets" / "baseline_bow.trec", "--gain", "linear", "--out", tmp_path / "r.json", capsys=capsys)
    definitions = json.loads((tmp_path / "r.json").read_text())["definitions"]
    assert definitions["ndcg_cut_10"]["gain"] == "linear"


def _no_cache(tmp_path, capsys):
    _cli("testset", "eval", ROOT / "data" / "test_sets" / "clinical_v1.yaml", "--function",
         ROOT / "data" / "test_sets" / "sample_retriever.py:search", "--no-cache", "--out", tmp_path / "r.json",
         capsys=capsys)
    assert json.loads((tmp_path / "r.json").read_text())["aggregates"]["recall_at_10"]["mean"] > 0


def _rq_bag_of_words(tmp_path, capsys):
    data = ROOT / "data" / "test_sets"
    _, out, _ = _cli("rq", "--test-set", data / "clinical_v1.yaml", "--baseline", "bow", "--corpus",
                     data / "documents.jsonl", capsys=capsys)
    assert "RQ (MRR@5) = 0.8817" in out
    _cli("rq", "--test-set", data / "clinical_v1.yaml", "--run", data / "baseline_bow.trec", capsys=capsys)


SEED_FORMS = {"doc ids with spaces": _raw_ids, "negated scores": _negated_read_with_order_asc,
              "all-negative TREC runs": _all_negative_order_asc, "the A/B script's folder": _rq_eval_in_code_evaluation,
              "the A/B configs": _rq_eval_run_configs, "the metrics' prefix": _medicalkg_prefix,
              "the qrels module": _treckit_qrels_module, "the nDCG gain": _gain_linear, "the cache key": _no_cache,
              "the RQ embedding": _rq_bag_of_words}


def test_readme_lists_each_deviation_from_the_seeds_with_its_reason_and_option():
    rows = _seed_rows()
    assert set(rows) == set(SEED_FORMS), "each row of README's table has its check in SEED_FORMS, and no other"
    for what, (seed, why, form) in rows.items():
        assert re.match(r"00[0-4]\b", seed), f"{what}: name the seed (000 to 004)"
        assert ": " in why, f"{what}: say what treckit does, then why"
        assert form, f"{what}: name the option that gives the seed's form (or say none, and why)"


@pytest.mark.parametrize("what", sorted(SEED_FORMS))
def test_each_option_that_gives_a_seeds_form_runs(what, tmp_path, capsys):
    """Each row's option (or, where there is none, the way the row names) run as the row says, with its result."""
    assert what in _seed_rows()
    SEED_FORMS[what](tmp_path, capsys)
