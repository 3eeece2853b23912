"""Hostile files and text: names and ids with unusual characters (quotes, markup), written by every writer the same
way, whichever of its paths writes them.

What must hold (tests/hostile/README.md): exit 0 with the bytes trec_eval reads back, or exit 2 naming the value;
never an internal error; a file written to disk is byte-identical to the same output written to stdout."""
from __future__ import annotations

import pytest

from helpers import run_cli

# a double quote is legal in a TREC field (trec_eval splits on whitespace only); Arrow's unquoted CSV writer,
# the fast path for plain files, refuses it in any column
QUOTED = {
    "query id": ('q"1 Q0 d1 1 2.0 t\nq"1 Q0 d2 2 1.0 t\n', 'q"1 Q0 d1 1 2 t\nq"1 Q0 d2 2 1 t\n'),
    "run tag": ('q1 Q0 d1 1 2.0 t"x\nq1 Q0 d2 2 1.0 t"x\n', 'q1 Q0 d1 1 2 t"x\nq1 Q0 d2 2 1 t"x\n'),
    "markup": ('</script><img/src=x/onerror=alert(1)> Q0 d"1 1 2.0 sys</script>\n'
               '</script><img/src=x/onerror=alert(1)> Q0 d2 2 1.0 sys</script>\n',
               '</script><img/src=x/onerror=alert(1)> Q0 d"1 1 2 sys</script>\n'
               '</script><img/src=x/onerror=alert(1)> Q0 d2 2 1 sys</script>\n'),
}


@pytest.mark.parametrize("what", list(QUOTED))
def test_a_double_quote_in_any_field_is_written_to_a_file_as_to_stdout(what, tmp_path, capsys):
    given, canonical = QUOTED[what]
    (tmp_path / "in.run").write_text(given)
    code, out, err = run_cli(["run", tmp_path / "in.run", "-o", tmp_path / "out.run"], capsys)
    assert (code, err) == (0, "treckit: 1 queries, 2 docs written\n")
    assert (tmp_path / "out.run").read_text() == canonical
    code, out, _ = run_cli(["run", tmp_path / "in.run", "-o", "-"], capsys)
    assert (code, out) == (0, canonical)


def test_fuse_writes_a_quoted_query_id_to_a_file(tmp_path):
    (tmp_path / "a.run").write_text('q"1 Q0 d1 1 2.0 a\nq"1 Q0 d2 2 1.0 a\n')
    (tmp_path / "b.run").write_text('q"1 Q0 d2 1 2.0 b\n')
    code, _, err = run_cli(["fuse", tmp_path / "a.run", tmp_path / "b.run", "-o", tmp_path / "f.run"])
    assert code == 0, err
    # RRF with k=60: d2 = 1/62 + 1/61, d1 = 1/61
    assert (tmp_path / "f.run").read_text() == (f'q"1 Q0 d2 1 {1 / 62 + 1 / 61!r} fused-rrf\n'
                                                 f'q"1 Q0 d1 2 {1 / 61!r} fused-rrf\n')
