"""The one bounded reader of YAML and JSON documents (treckit.inputs.bounded): every entry point refuses alias
bombs, deep nesting, huge numbers and oversized content (after decompression, on stdin) at once, with
the file, the line and the fix (exit 2); YAML's events come from libyaml's parser or PyYAML's pure one, which
read alike."""
from __future__ import annotations

import io
import json
import sys
import time
import tracemalloc
import zlib

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from helpers import ROOT, run_cli
from treckit import thresholds
from treckit.inputs import bounded
from treckit.inputs.bounded import parse_json, yaml_tree
from treckit.inputs.yaml_events import Scalars
from treckit.console.errors import InputError

SAMPLE = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
RETRIEVER = ROOT / "data" / "test_sets" / "sample_retriever.py"

def _alias_bomb(levels: int) -> str:
    """The "billion laughs": each level nine aliases of the one before (9 ** levels values from 300 bytes)."""
    names = "abcdefghij"[:levels]
    return "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n" for p, c in zip(names, names[1:]))


@pytest.fixture
def files(tmp_path):
    q, r = tmp_path / "qrels", tmp_path / "run.trec"
    q.write_text("1 0 d1 1\n")
    r.write_text("1 Q0 d1 1 1.0 t\n")
    return q, r


# every command reading a YAML document, given the document's path
YAML_ENTRIES = {
    "test set": lambda p, f: ["testset", "validate", p],
    "system config": lambda p, f: ["system", "eval", p, "--test-set", SAMPLE],
    "server config": lambda p, f: ["serve", "--config", p],
    "compare config": lambda p, f: ["compare", f[0], "--config", p, f[1], "-m", "map"],
    "testset eval --config": lambda p, f: ["testset", "eval", SAMPLE, "--function", f"{RETRIEVER}:search", "--config", p],
}


def _refused(argv, capsys, *expected):
    code, _, err = run_cli(argv, capsys)
    assert code == 2, err
    assert "internal error" not in err and "Traceback" not in err
    for e in expected:
        assert e in err, err
    return err


def _at(err: str, path, line: int, message: str) -> None:
    """``message`` is said of ``path`` at ``line``: as ``path:line: message``, or, in a test set's list of
    problems, ``path: ... line N: message``."""
    assert f"{path}:{line}: {message}" in err or (f"{path}: " in err and f"line {line}: {message}" in err), err


@pytest.mark.parametrize("entry", YAML_ENTRIES)
def test_an_alias_bomb_is_refused_by_every_yaml_reader(entry, files, tmp_path, capsys):
    """Every reader refuses aliases outright (a bomb of nine levels expands to gigabytes; this one has four,
    6,561 values, small enough that a reader expanding aliases answers instead of hanging)."""
    p = tmp_path / "bomb.yaml"
    p.write_text(_alias_bomb(4))
    err = _refused(YAML_ENTRIES[entry](p, files), capsys, "fix:")
    _at(err, p, 1, "YAML anchors and aliases (&, *) are not allowed")


def test_the_342_byte_bomb_is_refused_at_once():
    bomb = _alias_bomb(9)                        # 387,420,489 values
    assert len(bomb) < 350
    t0 = time.process_time()                 # CPU time: other work on the machine does not count
    data, _, problems = yaml_tree(bomb, what="config")
    assert time.process_time() - t0 < 1
    assert data is None and problems.listed() == [
        (1, "YAML anchors and aliases (&, *) are not allowed in a config; write the values out")]


def test_one_alias_is_refused_too(tmp_path, files, capsys):
    p = tmp_path / "c.yaml"
    p.write_text("base: &b {k1: 1.2}\nrun: run.trec\nother: *b\n")
    _refused(YAML_ENTRIES["compare config"](p, files), capsys, "anchors and aliases")


def _nested(depth: int, style: str) -> str:
    if style == "flow":
        return "x: " + "[" * depth + "]" * depth + "\n"
    return '{"x": ' + "[" * depth + "]" * depth + "}"


@pytest.mark.parametrize("depth", [1_000, 100_000])
@pytest.mark.parametrize("style", ["flow", "json"])
def test_deep_nesting_is_refused_while_parsing(depth, style):
    """Depth is counted event by event, nothing recursing: 1,000 levels raise no RecursionError, and
    100,000 are not read past the first level too many."""
    text = _nested(depth, style)
    t0 = time.process_time()
    data, _, problems = yaml_tree(text, what="config")
    assert time.process_time() - t0 < 1
    assert data is None and problems.listed() == [(1, f"nested more than {thresholds.MAX_DEPTH} levels deep")]
    if style == "json":
        t0 = time.process_time()
        with pytest.raises(InputError) as e:
            parse_json(text, "deep.json", fix="f")
        assert time.process_time() - t0 < 1
        assert e.value.line == 1 and "deep.json:1:" in str(e.value)


def test_deep_block_nesting_names_the_line_at_once():
    text = "x:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 1_000))     # 1,000 levels, each on its line
    t0 = time.process_time()
    data, _, problems = yaml_tree(text, what="config")
    assert time.process_time() - t0 < 1
    too_deep = f"nested more than {thresholds.MAX_DEPTH} levels deep"
    assert data is None and problems.listed() == [(thresholds.MAX_DEPTH + 1, too_deep)]
    assert yaml_tree("- " * 100_000 + "x\n")[2].listed() == [(1, too_deep)]


@pytest.mark.parametrize("entry", YAML_ENTRIES)
def test_deep_nesting_exits_2_from_every_yaml_reader(entry, files, tmp_path, capsys):
    p = tmp_path / "deep.yaml"
    p.write_text("name: x\n" + _nested(1_000, "flow"))
    _at(_refused(YAML_ENTRIES[entry](p, files), capsys, "fix:"), p, 2,
        f"nested more than {thresholds.MAX_DEPTH} levels deep")


@pytest.mark.parametrize("entry", YAML_ENTRIES)
def test_a_5000_digit_integer_exits_2_with_its_line(entry, files, tmp_path, capsys):
    """Python refuses to parse integers of more than 4,300 digits (ValueError deep inside the loader)."""
    p = tmp_path / "big.yaml"
    p.write_text("name: x\nlimit: " + "7" * 5000 + "\n")
    _at(_refused(YAML_ENTRIES[entry](p, files), capsys, "quote it"), p, 2, "a number of 5,000 characters")


def test_big_numbers_in_yaml_values():
    _, _, problems = yaml_tree("a: " + "1" * 401 + "\nb: 1.0e+400\nc: -.inf\nd: '" + "9" * 5000 + "'\n")
    assert problems.listed() == [(1, "a number of 401 characters: no number is that long; quote it to make it text"),
                                 (2, "the number 1.0e+400 is beyond the range of a double; write .inf for infinity")]
    data, _, _ = yaml_tree("c: -.inf\nd: '" + "9" * 5000 + "'\ne: " + "1" * 400 + "\n")
    assert data["c"] == float("-inf") and data["d"] == "9" * 5000 and data["e"] == int("1" * 400)


def _results(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_gate_results_files_are_bounded_json(tmp_path, capsys):
    good = _results(tmp_path, "ok.json", "{}")
    big = _results(tmp_path, "big.json", '{\n"schema": ' + "7" * 5000 + "}")
    _refused(["gate", "--baseline", big, "--current", good], capsys, f"{big}:2: not JSON (a number of 5000 characters)")
    deep = _results(tmp_path, "deep.json", "{\n" + '"a": ' + "[" * 1000 + "]" * 1000 + "}")
    _refused(["gate", "--baseline", deep, "--current", good], capsys, f"{deep}:2: not JSON (nested too deeply)")
    deep40 = _results(tmp_path, "deep40.json", '{"a":\n' + "[" * 40 + "]" * 40 + "}")
    _refused(["gate", "--baseline", deep40, "--current", good], capsys,
             f"{deep40}:2: nested more than {thresholds.MAX_DEPTH} levels")


@pytest.mark.parametrize("what, make_argv", [
    ("config", lambda p, f: ["compare", f[0], "--config", p, f[1], "-m", "map"]),
    ("server config", lambda p, f: ["serve", "--config", p]),
    ("test set", lambda p, f: ["testset", "validate", p]),
    ("results file", lambda p, f: ["gate", "--baseline", p, "--current", p]),
])
def test_a_gzip_bomb_stops_at_the_bound(what, make_argv, files, tmp_path, capsys, monkeypatch):
    """The bound holds after decompression: a small .gz (built here) that inflates far beyond it is cut
    at the bound, in bounded memory."""
    limit = 1 << 20
    monkeypatch.setattr(thresholds, "CONFIG_READ_LIMIT", limit)
    monkeypatch.setattr(thresholds, "DOCUMENT_READ_LIMIT", limit)
    pack = zlib.compressobj(9, zlib.DEFLATED, 31)           # wbits 31: the gzip format
    block = b"# " + b"x" * (1 << 20) + b"\n"
    bomb = b"".join(pack.compress(block) for _ in range(64)) + pack.flush()     # inflates to 64 MiB
    assert len(bomb) < 200_000
    p = tmp_path / "bomb.yaml.gz"
    p.write_bytes(bomb)
    tracemalloc.start()
    _refused(make_argv(p, files), capsys, f"{p}: more than {limit:,} bytes", f"a {what} holds at most {limit:,} bytes")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 40 << 20


def test_the_real_config_bound_holds_on_a_gzip_bomb(files, tmp_path, capsys):
    pack = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = b"".join(pack.compress(b" " * (1 << 20)) for _ in range(100)) + pack.flush()     # 100 MiB of spaces
    p = tmp_path / "server.yaml"
    p.write_bytes(bomb)
    _refused(["serve", "--config", p], capsys, f"{p}: more than {thresholds.CONFIG_READ_LIMIT:,} bytes")


class _Endless(io.RawIOBase):
    """A stdin that never ends, counting what was read."""

    def __init__(self) -> None:
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        chunk = b"name: x\n" * (len(buf) // 8)
        buf[:len(chunk)] = chunk
        self.read_bytes += len(chunk)
        return len(chunk)


def test_stdin_is_bounded(tmp_path, capsys, monkeypatch, fresh_streams):
    limit = 1 << 20
    monkeypatch.setattr(thresholds, "DOCUMENT_READ_LIMIT", limit)
    endless = _Endless()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(endless)))
    _refused(["testset", "validate", "-"], capsys, f"<stdin>: more than {limit:,} bytes", "a test set holds at most")
    assert endless.read_bytes < limit + (1 << 17)


def test_memory_grows_linearly_within_the_stated_factor():
    """A generated test set and a generated results file: what reading builds (Python objects, and the
    test set's Arrow columns) stays within the stated factor of the input's size (its bytes and text
    counted apart), at two sizes."""
    import pyarrow as pa
    from bench import testset_bench
    from treckit.testsets import parse_test_set

    parse_test_set("".join(testset_bench.test_set_yaml(10)), "warm-up.yaml")     # what is imported on first use
    for n in (2_000, 8_000):
        text = "".join(testset_bench.test_set_yaml(n))
        arrow = pa.total_allocated_bytes()
        tracemalloc.start()
        ts = parse_test_set(text, "generated.yaml")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        columns = pa.total_allocated_bytes() - arrow          # the columns are built block by block, never copied
        assert len(ts.queries) == n
        assert peak + columns < (thresholds.MEMORY_FACTOR - 2) * len(text)
        results = json.dumps({"per_query": [{"qid": q.query_id, "recall_at_10": 0.25, "mrr": 1 / (i + 1)}
                                            for i, q in enumerate(ts.queries)]}, indent=2)
        tracemalloc.start()
        parse_json(results, "r.json", fix="f")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < (thresholds.MEMORY_FACTOR - 2) * len(results)


def test_a_streamed_document_builds_nothing_outside_its_list():
    """A test set's other fields are text: a collection there is reported, never built."""
    from treckit.testsets import TestSetError, parse_test_set
    wide = "[" + ",".join(["[]"] * 50_000) + "]"
    text = f"name: {wide}\nversion: '1'\nextra: {{a: [1, 2]}}\nqueries: {{a: 1}}\n"
    tracemalloc.start()
    with pytest.raises(TestSetError) as e:
        parse_test_set(text)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert e.value.problems == [(1, "name: Input should be a valid string"),
                                (3, "extra: unknown field (allowed: see the schema)"),
                                (4, "queries: Input should be a valid list")]
    assert peak < 2 * len(text)          # the text once more (the event parser reads it as UTF-8); 50,000 lists: 3 MB


# ------------------------------------------------------------------ libyaml's events and PyYAML's pure reader's
_SCALARS = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30),
    st.sampled_from(["007", "1.5", "yes", "no", "on", "null", "~", "2024-01-31", "1e3", "0x1f", "-3", "+4",
                     "a: b", "a #b", "#c", "- x", "'q'", '"d"', "[x]", "{y}", "x,y", "&a", "*b", "!t", "|", ">",
                     "%", "@", "`", "1_000", "1:30", ".inf", "-.NaN", "", " lead", "trail ", "multi\nline",
                     "9" * 401, "1.0e+400"]),
    st.integers(-10**6, 10**6), st.booleans(), st.none(), st.floats(allow_nan=False, allow_infinity=False))
_KEYS = st.one_of(st.sampled_from(["query_id", "doc_id", "grade", "name", "a", "on", "x_1", "1", "null"]),
                  st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(_KEYS, inner, max_size=4)), max_leaves=25)


def _read(text, libyaml: bool, raw=("query_id", "doc_id"), stream=None):
    """What yaml_tree gives with libyaml's events or PyYAML's pure reader's: (data, lines, problems), with BAD and
    NaN spelled out, and each streamed item as (index, value, line, its lines)."""
    def norm(v):
        if v is bounded.BAD:
            return "<BAD>"
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [norm(x) for x in v]
        if isinstance(v, float) and v != v:
            return "nan"
        return v

    def start(problems):
        def take(i, v, lines, line):
            if lines is None and line is not None:
                raise bounded.LinesNeeded
            return (i, norm(v), line, dict(lines or {}))
        return take

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(thresholds, "YAML_LIBYAML", libyaml)
        data, lines, problems = yaml_tree(text, raw, what="file", stream=(stream, start) if stream else None)
    return norm(data), lines, problems.listed()


def test_pyyaml_is_built_with_libyaml_here():
    """The figures of bench/README.md are libyaml's: the other reader is the fallback where PyYAML has no libyaml."""
    assert yaml.__with_libyaml__


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=5), _VALUES), st.sampled_from([20, 40, 80, 1000]),
       st.integers(1, 4), st.sampled_from(["block", "flow", "json"]), st.sampled_from([None, "a", "queries"]))
def test_both_event_readers_read_a_document_alike(data, width, indent, style, stream):
    """safe_dump's block style at any width and indentation (wrapped plain scalars, quoted ones, flow collections)
    and JSON: the same values, lines and problems from libyaml's events as from PyYAML's pure reader, streamed or
    not."""
    if style == "json":
        text = json.dumps(data, indent=indent, ensure_ascii=False)     # escaped, an astral character: see below
    else:
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=width, indent=indent + 1,
                              default_flow_style=None if style == "flow" else False)
    assert _read(text, True, stream=stream) == _read(text, False, stream=stream)


_SOUP = [
    "a: 1", "b: x y", "  c: z", "- p", "  - q: 1", "- {doc_id: 007, grade: 3}", "d: [1, two, '3']", "e:",
    "  f: g", "    h", "# note", "", "  ", "i: 'it''s'", 'j: "k"', "l: m # n", "- - r", "o: p: q", "  t:", "- ",
    "u: {}", "v: []", "w: ~", "x: yes", "q_1: 2024-01-31", "query_id: 12", "  - doc_id: d", "    grade: 2",
    "y: [a, b", "-", "---", "...", "a: &x 1", "b: *x", "c: !!str 1", "k: 1.0e+400", "k2: " + "9" * 401,
    "  - x", "    - y", "      z", "m:  spaced  ", "n: 'a' # c", "p: -", "q: -1", "r: [ ]", "s: { }", "t: [a,b]",
    "- a # c", "  more", "  # c2", "      w #", "g: [x] # c", "h: {a: b} #c", "- 'q'", "-  x: 1", "   y: 2",
    "? [a]", ": b", "<<: {a: 1}", "t: !!binary aGk=", "x: !foo bar", "k: |", "  lit", "k: >-", "- !!int '12'",
    "- !!float x", "on: 1", "2: x", "k: 0o17", "k: 1_0", "%YAML 1.1", "--- !!map",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_SOUP), min_size=1, max_size=14), st.sampled_from(["\n", "\r\n"]),
       st.sampled_from([None, "queries"]))
def test_both_event_readers_take_or_refuse_any_line_soup_alike(lines, newline, stream):
    """Hand-written and broken documents: the same values, lines and problems from either reader; where the text
    is not YAML, each parser says why in its own words, on the same line."""
    text = newline.join(lines) + newline

    def worded(read):
        data, lines, problems = read
        return data, lines, [(n, "not valid YAML" if m.startswith("not valid YAML: ") else m) for n, m in problems]
    assert worded(_read(text, True, stream=stream)) == worded(_read(text, False, stream=stream))


@pytest.mark.parametrize("text, libyaml, pure", [
    ("a:\t1\n", ({"a": 1}, {(): 1, ("a",): 1}, []),
     (None, {(): 1}, [(1, "not valid YAML: found character '\\t' that cannot start any token")])),
    ('a: "\\ud800"\n', (None, {(): 1}, [(1, "not valid YAML: found invalid Unicode character escape code")]),
     ({"a": "<BAD>"}, {(): 1, ("a",): 1},
      [(1, "a lone UTF-16 surrogate escape (\\ud800-\\udfff), which UTF-8 text cannot hold")])),
    ("a: 1\n\ufeffb: 2\n", (None, {(): 1, ("a",): 1}, [(2, "not valid YAML: did not find expected key")]),
     ({"a": 1, "\ufeffb": 2}, {(): 1, ("a",): 1, ("\ufeffb",): 2}, [])),
])
def test_where_the_two_readers_differ(text, libyaml, pure):
    """What only the fallback reads otherwise (docs/testsets.md): a tab after a key's colon, which PyYAML's pure
    scanner refuses; a surrogate escape (JSON's escaped astral characters are two), which libyaml refuses as an
    escape; a byte order mark inside the text, which the pure reader keeps as a character."""
    assert _read(text, True) == libyaml and _read(text, False) == pure


def test_the_project_s_files_read_alike_by_both_readers():
    for path in [SAMPLE, *sorted((ROOT / "data").rglob("*.y*ml"))]:
        text = path.read_text(encoding="utf-8")
        assert _read(text, True) == _read(text, False), path
        assert _read(text, True, stream="queries") == _read(text, False, stream="queries"), path


def test_problems_keep_the_first_by_line_and_count_the_rest():
    p = bounded.Problems(keep=3)
    for line in (9, 4, 7, 1, 8, 4):
        p.add(line, f"at {line}")
    p.add(None, "no line")
    assert p.listed() == [(None, "no line"), (1, "at 1"), (4, "at 4")]
    assert p.total == 7 and p.unlisted == 4
    assert p.lines_text().splitlines()[-1] == "  ... and 4 more (the first 3 are listed)"


def test_a_json_document_too_dense_for_bounded_memory_is_refused(tmp_path, capsys):
    """A file of empty lists would take 45 times its size once read; a results file takes about 3."""
    p = tmp_path / "dense.json"
    p.write_text("[" + ",".join(["[]"] * 600_000) + "]")
    _refused(["gate", "--baseline", p, "--current", p], capsys,
             f"{p}: 600,001 lists and objects in 1,800,001 characters: more than one per 16 characters")
    brackets_in_text = json.dumps({"per_query": [{"qid": "[[[[{{{{" * 8, "mrr": 0.5}] * 20_000})
    assert len(parse_json(brackets_in_text, "r.json", fix="f")["per_query"]) == 20_000


# ------------------------------------------------------------------ the bounds of thresholds.py, lowered
@pytest.mark.parametrize("within, beyond, line", [
    ("a:\n  b:\n    c: 1\n", "a:\n  b:\n    c:\n      d: 1\n", 4),      # block style
    ("a: [[1]]\n", "a: [[[1]]]\n", 1),                                   # flow style
    ("- - - 1\n", "- - - - 1\n", 1),
])
def test_max_depth_decides_what_nesting_is_refused(monkeypatch, within, beyond, line):
    """thresholds.MAX_DEPTH: 4 levels are read by default; lowered to 3, 3 levels still are and 4 are refused,
    naming the line where the fourth begins."""
    assert yaml_tree(beyond, what="config")[2].listed() == []
    monkeypatch.setattr(thresholds, "MAX_DEPTH", 3)
    data, _, problems = yaml_tree(within, what="config")
    assert problems.listed() == [] and data == yaml.safe_load(within)
    data, _, problems = yaml_tree(beyond, what="config")
    assert data is None and problems.listed() == [(line, "nested more than 3 levels deep")]


def test_max_depth_bounds_json_documents(monkeypatch):
    assert parse_json('{"a":\n[[[1]]]}', "f.json", fix="f") == {"a": [[[1]]]}
    monkeypatch.setattr(thresholds, "MAX_DEPTH", 3)
    assert parse_json('{"a":\n[[1]]}', "f.json", fix="f") == {"a": [[1]]}
    with pytest.raises(InputError) as e:
        parse_json('{"a":\n[[[1]]]}', "f.json", fix="f")
    assert e.value.line == 2 and "f.json:2: nested more than 3 levels deep" in str(e.value)


def test_max_number_chars_decides_what_number_is_refused(monkeypatch):
    """thresholds.MAX_NUMBER_CHARS, in YAML as in JSON: 6 characters are read by default; lowered to 5, 5 still
    are and 6 are refused with the line."""
    six = "a: 123456\nb: -1.255\n"
    assert yaml_tree(six)[0] == {"a": 123456, "b": -1.255}
    assert parse_json("[1,\n123456]", "f.json", fix="f") == [1, 123456]
    monkeypatch.setattr(thresholds, "MAX_NUMBER_CHARS", 5)
    assert yaml_tree("a: 12345\nb: -1.25\n")[0] == {"a": 12345, "b": -1.25}
    assert parse_json("[12345,\n-1.25]", "f.json", fix="f") == [12345, -1.25]
    refused = "a number of 6 characters: no number is that long; quote it to make it text"
    assert yaml_tree(six)[2].listed() == [(1, refused), (2, refused)]
    for text in ("[1,\n123456]", "[1,\n-1.255]"):
        with pytest.raises(InputError) as e:
            parse_json(text, "f.json", fix="f")
        assert e.value.line == 2 and "f.json:2: not JSON (a number of 6 characters)" in str(e.value)


def test_json_density_is_checked_past_its_size(monkeypatch):
    """thresholds.JSON_DENSITY_EXEMPT_BYTES and JSON_BYTES_PER_CONTAINER: five lists in 13 characters are read by
    default (a small document); with the exemption lowered to 10 characters, 3 lists in 10 still are, and the 13
    are refused, unless a list may take as little as 2 characters."""
    dense = "[[],[],[],[]]"
    assert parse_json(dense, "d.json", fix="f") == [[], [], [], []]
    monkeypatch.setattr(thresholds, "JSON_DENSITY_EXEMPT_BYTES", 10)
    assert parse_json("[[],[],[]]", "d.json", fix="f") == [[], [], []]
    with pytest.raises(InputError) as e:
        parse_json(dense, "d.json", fix="f")
    assert str(e.value).startswith("d.json: 5 lists and objects in 13 characters: more than one per 16 characters, "
                                   "so reading it would take dozens of times its size in memory")
    assert parse_json('["[[[[[[[[[[[["]', "d.json", fix="f") == ["[" * 12]        # brackets in a string: text
    monkeypatch.setattr(thresholds, "JSON_BYTES_PER_CONTAINER", 2)
    assert parse_json(dense, "d.json", fix="f") == [[], [], [], []]


@pytest.mark.parametrize("max_chars, entries", [(0, 4096), (16, 0), (16, 2), (1 << 30, 1 << 30)])
def test_plain_values_remembered_or_not_are_the_same(monkeypatch, max_chars, entries):
    """thresholds.PLAIN_VALUE_MEMO_MAX_CHARS and PLAIN_VALUE_MEMO_ENTRIES: a plain scalar's value is remembered
    (short texts, up to so many) or valued anew; the values read are the same, and only what the bounds let in is
    remembered."""
    text = ("a: [1, 1, 2.5, 2.5, true, true, null, ~, 2001-12-14, x, x]\n"
            "b: {k: 0x1F, l: 0o17, m: .inf, n: -1_000, o: '1', p: " + "7" * 30 + ", q: " + "y" * 30 + "}\n")
    default = yaml_tree(text)
    assert default[0]["a"] == [1, 1, 2.5, 2.5, True, True, None, None, bounded.BAD, "x", "x"]
    assert default[0]["b"] == {"k": 31, "l": "0o17", "m": float("inf"), "n": -1000, "o": "1", "p": int("7" * 30),
                               "q": "y" * 30}

    def remembered(words):
        scalars = Scalars("config", False, bounded.Problems())
        values = [scalars.plain(w, False, 1) for w in words]
        return values, scalars.remembered

    words = ("1", "2.5", "x", "1", "y" * 30, "yes", "2001-12-14")
    values, memo = remembered(words)
    assert memo == {"1": 1, "2.5": 2.5, "x": "x", "yes": True}           # the default: short texts, each once
    monkeypatch.setattr(thresholds, "PLAIN_VALUE_MEMO_MAX_CHARS", max_chars)
    monkeypatch.setattr(thresholds, "PLAIN_VALUE_MEMO_ENTRIES", entries)
    again = yaml_tree(text)
    assert again[:2] == default[:2] and again[2].listed() == default[2].listed()
    got, memo = remembered(words)
    assert got[:-1] == values[:-1] == [1, 2.5, "x", 1, "y" * 30, True] and got[-1] is values[-1] is bounded.BAD
    kept = [w for w in ("1", "2.5", "x", "y" * 30, "yes") if len(w) <= max_chars][:entries]
    assert list(memo) == kept


def test_max_listed_problems_decides_how_many_are_listed(monkeypatch):
    """thresholds.MAX_LISTED_PROBLEMS: a document's five problems are all listed by default; lowered to 2, the
    first two by line are listed and the other three counted."""
    text = "".join(f"k{i}: {'1' * 500}\n" for i in range(5))
    said = "a number of 500 characters: no number is that long; quote it to make it text"
    problems = yaml_tree(text)[2]
    assert problems.listed() == [(i, said) for i in range(1, 6)] and problems.unlisted == 0
    monkeypatch.setattr(thresholds, "MAX_LISTED_PROBLEMS", 2)
    problems = yaml_tree(text)[2]
    assert problems.listed() == [(1, said), (2, said)] and problems.total == 5
    assert problems.lines_text().splitlines() == [f"  line 1: {said}", f"  line 2: {said}",
                                                  "  ... and 3 more (the first 2 are listed)"]
