"""docs/ties.md: every command of its console blocks prints, byte for byte, what the page shows, and every
number of four decimals its text quotes is one of those outputs'."""
from __future__ import annotations

import re
import shlex

from helpers import ROOT, run_cli

PAGE = ROOT / "docs" / "ties.md"


def _blocks(text: str) -> list[tuple[list[str], str]]:
    """(argv after `treckit`, the output shown) of each `$ treckit ...` line in the page's console blocks."""
    out = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        for part in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, _, shown = part.partition("\n")
            argv = shlex.split(command)
            assert argv[0] == "treckit", command
            out.append((argv[1:], shown))
    return out


def test_the_page_shows_what_the_commands_print(monkeypatch):
    text = PAGE.read_text()
    blocks = _blocks(text)
    assert len(blocks) >= 5
    monkeypatch.chdir(ROOT)  # the page's commands run from the repository's root, as every docs page's do
    printed = []
    for argv, shown in blocks:
        code, out, err = run_cli(argv)
        assert code == 0, (argv, err)
        assert out == shown, argv
        printed.append(out)
    prose = re.sub(r"```console\n.*?```", "", text, flags=re.S)
    numbers = set(re.findall(r"\b\d\.\d{4}\b", "".join(printed)))
    quoted = set(re.findall(r"(?<![+\d.])\d\.\d{4}\b", prose))
    assert quoted and quoted <= numbers
    # each difference the text draws, "+D ... (A to B)": A and B printed, D = B - A
    drawn = re.findall(r"\+(\d\.\d{4})[^()+]*\((\d\.\d{4}) to (\d\.\d{4})\)", prose)
    assert len(drawn) == len(re.findall(r"\+\d\.\d{4}", prose)) >= 2
    for diff, a, b in drawn:
        assert {a, b} <= numbers and f"{float(b) - float(a):.4f}" == diff
    assert "286 of the 300 lines" in prose and "286 of 300 lines" in "".join(printed)
