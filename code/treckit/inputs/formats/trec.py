"""TREC qrels (``qid iter docid grade``) and TREC runs (``qid iter docid rank score tag``).

Reading follows trec_eval: lines end at '\n', fields are split on runs of ASCII whitespace
(C's isspace), ``#`` starts a comment line, blank lines are ignored.  A line with more fields
than its format is read by the rules of ``layout`` (docs/formats.md: "Reading rules"): never a silent
guess, and every doc id read with spaces is counted on stderr.  Escaped ids (:mod:`treckit.ids`)
are decoded.  Large well-formed files take a vectorized path (pyarrow) that reads exactly what
the careful line parser reads; anything it cannot split goes through the line parser.
"""
from __future__ import annotations

import dataclasses
import re
from functools import cache
from typing import Any, Callable, Iterable, Literal

from ...dependencies import deferred
from ...console.spelling import pass_options
from ...ids import keeps_text, keeps_texts, replace_rows, rows_needing_escape, unescape_id
from ..sources import PathLike, Source, display_name
from ...fast.parallel import ordered_map
from ...model import Qrels, Run
from ...fast.arrow import as_string, repeated_column
from ...fast.groups import positions
from ...fast.strings import contains_byte, has_empty, is_utf8, short_whole_numbers, take, view_as_text
from . import LAYOUTS
from .common import FIELD_SEPARATORS, ITERATION_MARKS, LineErrors, check_layout, content_lines, is_blank, is_comment, notice, parse_int, parse_score, score_problem, split_fields
from .rising_ranks import NOTE as RISING_RANKS, RisingRanks

RunLayout = Literal[LAYOUTS]
from ... import thresholds

np = deferred("numpy")
pa = deferred("pyarrow")


# ---------------------------------------------------------------- qrels
def read_trec_qrels(path: PathLike, *, decode_ids: bool = True, skip_malformed: bool = False,
                    layout: RunLayout = "auto") -> Qrels:
    """TREC qrels; ``layout`` says how to read a line with more than 4 fields (docs/formats.md: Reading rules)."""
    check_layout(layout)
    name = display_name(path)
    src = Source(path)
    if src.at_least(thresholds.TREC_QRELS_FAST_MIN_BYTES) and not skip_malformed:
        columns = ["qid", "iter", "docid", "grade"]
        t = _arrow_read(src.admit(thresholds.IN_MEMORY_BYTES_PER_FILE_BYTE), columns, columns)
        if t is not None and t.num_rows:
            t = t.set_column(0, "qid", as_string(t.column("qid")))
            docid, written = _decoded(t.column("docid"), t.column("qid"), decode_ids)
            return Qrels(t.set_column(2, "docid", docid).combine_chunks(), written)
    errors = LineErrors(name, skip_malformed, "qrels")
    readings = _Readings(name, 4)
    qids, iters, docids, grades = [], [], [], []
    written: dict[tuple[str, str], str] = {}          # see Qrels.written
    for no, line in content_lines(src):
        if is_blank(line) or is_comment(line):
            continue
        got = _qrels_reading(line, layout)
        if isinstance(got[0], str) and got[0] == "bad":
            errors.bad(no, line, got[1], got[2])
            continue
        (q, it, d, g), kind = got
        grade = parse_int(g)
        if grade is None:
            errors.bad(no, line, f"grade {g!r} is not an integer", "the last field of a qrels line is an integer grade "
                       "such as 0, 1 or 2" + _extra_columns_hint(line, layout, "qrels"))
            continue
        readings.add(kind, no)
        docid = unescape_id(d) if decode_ids else d
        if ("%" in d or not d.isascii()) and keeps_text(d, docid):
            written[(q, docid)] = d
        qids.append(q), iters.append(it), docids.append(docid), grades.append(grade)
    errors.report()
    readings.report()
    if not qids:
        raise errors.nothing_read("judgments")
    return dataclasses.replace(Qrels.from_columns(qids, docids, grades, iters), written=written)


def judgment_lines(path: PathLike, rows: list[int]) -> list[int]:
    """The line numbers of the judgments ``rows`` (0-based, in the order :func:`read_trec_qrels` gives them, read
    without skipping lines): each judgment is a line that is neither blank nor a comment, in file order."""
    wanted, out = {r: k for k, r in enumerate(rows)}, [0] * len(rows)
    row = -1
    for no, line in content_lines(path, held=False):     # a block at a time: a .gz is never inflated whole
        if is_blank(line) or is_comment(line):
            continue
        row += 1
        if row in wanted:
            out[wanted[row]] = no
    return out


_S = re.escape(FIELD_SEPARATORS)


def _middle(line: str, lead: int, trail: int) -> str:
    """The text of ``line`` between its first ``lead`` and its last ``trail`` fields, as written."""
    field, sep = f"[^{_S}]+", f"[{_S}]+"
    m = re.fullmatch(f"[{_S}]*" + (field + sep) * lead + "(.*?)" + (sep + field) * trail + f"[{_S}]*", line)
    return m.group(1)


def _tab_fields(line: str, n: int, doc: int) -> list[str] | None:
    """The fields of a line of exactly ``n`` non-empty tab-separated fields whose doc id (field
    ``doc``) contains spaces: then the tabs are the separators; else None (the whitespace rules)."""
    if "\t" not in line:
        return None
    f = [x.strip(FIELD_SEPARATORS) for x in line.strip(FIELD_SEPARATORS).split("\t")]
    if len(f) == n and all(f) and any(ch in FIELD_SEPARATORS for ch in f[doc]):
        return f
    return None


def _whitespace_in(fields: dict[str, str]) -> tuple | None:
    for what, value in fields.items():
        if any(ch in FIELD_SEPARATORS for ch in value):
            return ("bad", f"{what} {value!r} contains whitespace",
                    f"a {what} cannot contain spaces (trec_eval would read only {split_fields(value)[0]!r}); rename it")
    return None


def _extra_columns_hint(line: str, layout: RunLayout, role: str, columns: int = 4) -> str:
    """The end of the fix for a line that ``docid-spaces`` cannot read (its last fields are the grade, the score,
    or the rank, score and tag) but whose first ``columns`` fields read as a whole line: the columns after them
    may be extra, which ``--layout extra-columns`` reads ('' for any other line, or another layout)."""
    f = split_fields(line)
    if layout != "docid-spaces" or len(f) <= columns:
        return ""
    if role == "qrels":
        fits, what = parse_int(f[3]) is not None, "field 4 as the grade"
    elif columns == 3:
        fits, what = parse_score(f[2]) is not None, "field 3 as the score"
    else:
        fits, what = parse_int(f[3]) is not None and parse_score(f[4]) is not None, "fields 4 and 5 as the rank and score"
    if not fits:
        return ""
    return f"; to read {what} and ignore the columns after field {columns}, " + pass_options(role, "--layout extra-columns")


def _looks_like_run(f: list[str]) -> bool:
    return len(f) == 6 and parse_int(f[3]) is not None and parse_score(f[4]) is not None


def _run_given_as_qrels() -> tuple[str, str, str]:
    return ("bad", "this looks like a TREC run line (qid Q0 docid rank score tag), not a qrels line",
            "give the qrels file here (lines 'qid 0 docid grade'); if these are judgments whose doc ids contain "
            "spaces, " + pass_options("qrels", "--layout docid-spaces"))


def _qrels_reading(line: str, layout: RunLayout):
    """((qid, iter, docid, grade text), kind) where kind is None, 'spaced' (a doc id with spaces) or
    'extra' (columns after the grade ignored); or ('bad', what, fix)."""
    f = split_fields(line)
    if len(f) == 4:
        return tuple(f), None
    if len(f) < 4:
        return ("bad", f"a qrels line needs 4 fields (qid iter docid grade), found {len(f)}",
                "write each judgment as 'qid 0 docid grade'")
    if layout == "extra-columns":
        return tuple(f[:4]), "extra"
    tabs = _tab_fields(line, 4, 2)
    if tabs is not None:
        return _whitespace_in({"query id": tabs[0], "iteration": tabs[1], "grade": tabs[3]}) or (tuple(tabs), "spaced")
    spaced = (f[0], f[1], _middle(line, 2, 1), f[-1])
    if layout == "docid-spaces":
        return spaced, "spaced"
    # auto: a doc id with spaces only where no other reading fits and the second field is an iteration
    if _looks_like_run(f):
        return _run_given_as_qrels()
    last, fourth = parse_int(f[-1]) is not None, parse_int(f[3]) is not None
    if last and fourth:
        return ("bad", f"ambiguous line of {len(f)} fields: doc id {spaced[2]!r} with grade {f[-1]}, or doc id "
                       f"{f[2]!r} with grade {f[3]} and extra columns (trec_eval: 'Malformed line')",
                "say which: " + pass_options("qrels", "--layout docid-spaces", "--layout extra-columns")
                + "; or write doc ids escaped")
    if fourth:
        return ("bad", f"{len(f)} fields where a qrels line has 4 (trec_eval: 'Malformed line')",
                "remove the columns after the grade, or, to ignore them, " + pass_options("qrels", "--layout extra-columns"))
    if last and f[1] not in ITERATION_MARKS:
        return ("bad", f"{len(f)} fields, and the second field {f[1]!r} is not an iteration (0 or Q0): the query id "
                       "or the doc id may contain spaces",
                "a query id cannot contain spaces; if the doc ids do, " + pass_options("qrels", "--layout docid-spaces"))
    return spaced, "spaced"


class _Readings:
    """Counts of lines read by an explicit rule, reported once on stderr."""

    def __init__(self, name: str, width: int) -> None:
        self.name, self.width = name, width
        self.counts: dict[str, int] = {}
        self.first: dict[str, int] = {}

    def add(self, kinds: str | None, line_no: int) -> None:
        for kind in kinds.split("+") if kinds else ():
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.first.setdefault(kind, line_no)

    def report(self) -> None:
        if "spaced" in self.counts:
            notice(self.name, f"read {self.counts['spaced']} doc id(s) containing whitespace (first on line "
                              f"{self.first['spaced']}); write doc ids escaped (treckit's writers do) so every "
                              f"reader sees one field")
        if "extra" in self.counts:
            notice(self.name, f"ignored the columns after field {self.width} on {self.counts['extra']} line(s) "
                              f"(first on line {self.first['extra']})")


RunReadings = _Readings          # for callers that read a file block by block and report once


# ---------------------------------------------------------------- runs
def read_trec_run(path: PathLike, *, decode_ids: bool = True, skip_malformed: bool = False,
                  layout: RunLayout = "auto", columns: int = 6, lean: bool = False, ranks: bool = True,
                  data: bytes | None = None, first_line: int = 1, readings: "_Readings | None" = None,
                  rising_ranks: bool = False) -> Run:
    """A 6-column TREC run, or with ``columns=3`` the ``qid docid score`` form.

    A large file may skip materialising columns nobody will read: with ``lean`` (evaluation) the
    rank and tag columns, which trec_eval ignores (the run tag is then taken from the last line);
    without ``ranks`` the rank column (a conversion that orders by score).  ``layout`` says how to
    read a line with more fields than the format (docs/formats.md: Reading rules).  ``data``: whole lines of
    ``path`` to read instead of the file, the first being its line ``first_line`` (a streaming engine's block);
    ``readings`` (:class:`RunReadings`): where a block's lines read by an explicit rule are counted, to be
    reported once for the file by the caller (``readings.report()``).  ``rising_ranks`` (6 columns): the
    evidence of queries whose rank column rises with the score (:class:`~.rising_ranks.RisingRanks`, not yet
    settled: a block's queries may go on in the next) goes to ``run.notes[rising_ranks.NOTE]``; the ranks are
    read for it only, whatever ``lean`` and ``ranks`` say.
    """
    check_layout(layout)
    src = Source(path) if data is None else Source.of_bytes(data, path)
    name = display_name(path)
    rising_ranks = rising_ranks and columns == 6
    # the vectorized path takes only files whose every line has exactly the format's fields, which every
    # layout reads alike (a layout decides only about lines with more): any layout may take it
    if src.at_least(thresholds.TREC_RUN_FAST_MIN_BYTES) and not skip_malformed:
        if data is None:
            src.admit(thresholds.IN_MEMORY_BYTES_PER_FILE_BYTE)
        fast = read_run_fast(src, columns, lean, ranks, rising_ranks)
        if fast is not None:
            docid, written = _decoded(fast.table.column("docid"), fast.table.column("qid"), decode_ids)
            return dataclasses.replace(fast, table=fast.table.set_column(1, "docid", docid), written=written)
    # a whole file is held (a block of a streamed one is the engine's to bound)
    run = read_run_lines(content_lines(src, first_line=first_line, held=data is None), name, decode_ids,
                          skip_malformed, layout, columns, readings)
    if rising_ranks:
        t = run.table
        run.notes[RISING_RANKS] = RisingRanks.of_lines(t.column("qid"), t.column("score"), t.column("rank"))
    return run


@cache
def _column_types() -> dict:
    return {"qid": pa.string(),      # plain: cheaper to parse than dictionary-encoded; codes come from runs of equal qids
            "iter": pa.string(), "docid": pa.string(), "rank": pa.int64(), "score": pa.float64(),
            "tag": pa.dictionary(pa.int32(), pa.string()), "grade": pa.int64()}


def _arrow_read(src: Source, names: list[str], kept: list[str], types: dict | None = None,
                look: Callable[[pa.Table], Any] | None = None, seen: list | None = None) -> pa.Table | None:
    """The columns ``kept`` of a file read by pyarrow's CSV reader, when every line of ``src`` splits
    into ``names`` cleanly on single spaces or single tabs; None as soon as anything does not
    (comments, runs of spaces, ids with spaces, bad numbers), and the careful line parser takes over.

    Every column of ``names`` is read and checked (UTF-8, not empty, numbers), kept or not, so that
    a file is refused here wherever the line parser refuses it.  The file is cut into blocks of
    whole lines that are read (:meth:`Source.span`) and parsed side by side, one per core; each
    block's columns that are only checked are dropped as soon as the block passes, so they never
    take the memory of the whole file, and only a few blocks are in flight at a time.  A block is
    checked to be UTF-8 once, as a whole, and its text fields are then taken as they are (a field
    cut out of UTF-8 text at ASCII separators is UTF-8 itself), which costs less than checking
    every field on its own.  ``types`` overrides column types.  ``look``: called on each block read (every
    column of ``names``, the checked ones included), its results appended to ``seen`` in the file's order."""
    import pyarrow.csv as pcsv

    head = src.head
    if head.startswith(b"#") or b"\n#" in head:
        return None
    delimiter = "\t" if b"\t" in head else " "
    parse = pcsv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False, escape_char=False,
                              newlines_in_values=False)
    column_types = {n: (types or {}).get(n, _column_types()[n]) for n in names}
    as_bytes = [n for n in names if column_types[n] == pa.string()]    # parsed as binary, then viewed as text
    # an integer column read only to be checked (a run's rank, for evaluation) is parsed as binary and its
    # digits checked at once: converting it cost up to 0.15 s of CPU on 7M lines (more when the ranks are
    # not in order); a block with any other spelling (a sign, 19 digits) is converted after all, so that
    # Arrow's own integer check decides as before
    checked_ints = [n for n in names if n not in kept and column_types[n] == pa.int64()]

    def options(binary: list[str]) -> pcsv.ConvertOptions:
        return pcsv.ConvertOptions(column_types={**column_types, **{n: pa.binary() for n in binary}},
                                   null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False)
    convert, exact = options(as_bytes + checked_ints), options(as_bytes)
    # The line parser splits fields at every byte of FIELD_SEPARATORS and lines at '\n' only; Arrow
    # splits fields at one delimiter and also ends lines at '\r'.  A block holding any other
    # separator byte sends the file to the line parser, so that both paths read every file alike.
    others = (b"\r", b"\v", b"\f", b" " if delimiter == "\t" else b"\t")

    def block(part) -> pa.Table | None:
        raw = src.part_bytes(part)
        data = pa.py_buffer(raw)
        read = pcsv.ReadOptions(column_names=names, use_threads=False, block_size=len(raw) + 1)
        try:
            t = pcsv.read_csv(data, read_options=read, parse_options=parse, convert_options=convert)
            if not all(short_whole_numbers(t.column(n)) for n in checked_ints):
                t = pcsv.read_csv(data, read_options=read, parse_options=parse, convert_options=exact)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return None
        if not is_utf8(data) or src.holds_any(raw, part, others):
            return None
        for n in as_bytes:
            t = t.set_column(t.schema.get_field_index(n), n, view_as_text(t.column(n)))
        if not _clean(t):
            return None
        return t.select(kept), (look(t) if look is not None else None)

    blocks = []
    for got in ordered_map(block, src.parts(thresholds.ARROW_PARALLEL_BLOCK_BYTES)):
        if got is None:
            return None
        blocks.append(got[0])
        if seen is not None:
            seen.append(got[1])
    if not blocks or not any(t.num_rows for t in blocks):
        return None
    t = pa.concat_tables(blocks)
    # each block has its own dictionary of run tags: one for the whole column
    return t.unify_dictionaries() if any(pa.types.is_dictionary(f.type) for f in t.schema) else t


_TEXT_COLUMNS = ("qid", "iter", "docid", "tag")


def _clean(t: pa.Table | pa.RecordBatch) -> bool:
    """Whether a table or block read by Arrow reads as the line parser reads it.  A comment line
    further down that happened to split into the right number of fields shows up as a qid starting
    with '#' (a '#' anywhere in a qid is rare enough to leave to the line parser); an empty field
    (two delimiters in a row, one at the start or end of a line) is a missing field to the line
    parser: numeric columns refuse it, text columns are checked here; so is a NaN score, which the
    line parser refuses."""
    return not (contains_byte(t.column("qid"), 35)
                or any(has_empty(t.column(n)) for n in _TEXT_COLUMNS if n in t.column_names)
                or ("score" in t.column_names and any(np.isnan(c.to_numpy()).any() for c in t.column("score").chunks)))


def read_run_fast(src: Source, columns: int, lean: bool = False, ranks: bool = True,
                   rising_ranks: bool = False) -> Run | None:
    """The vectorized path for large clean runs; None sends the file to the line parser.  With
    ``rising_ranks``, each block's evidence of ranks rising with the score is gathered while the block's
    rank column is at hand (kept or only checked), and the run's goes to its notes."""
    names = ["qid", "iter", "docid", "rank", "score", "tag"] if columns == 6 else ["qid", "docid", "score"]
    # every field is read and checked (see _arrow_read), but only these are kept; a tag read only to
    # be checked is plain text (cheaper than dictionary-encoding it)
    kept = ["qid", "docid", "score"] + ([] if lean or columns == 3 else (["rank"] if ranks else []) + ["tag"])
    evidence: list[RisingRanks] = []
    look = ((lambda b: RisingRanks.of_lines(b.column("qid"), b.column("score"), b.column("rank")))
            if rising_ranks else None)
    t = _arrow_read(src, names, kept, {"tag": pa.string()} if lean else None, look, evidence)
    if t is None:
        return None
    run = _run_of_table(src, t, columns, lean, ranks)
    if rising_ranks:
        gathered = RisingRanks()
        for e in evidence:
            gathered.add(e)
        run.notes[RISING_RANKS] = gathered
    return run


def _run_of_table(src: Source, t: pa.Table, columns: int, lean: bool, ranks: bool) -> Run:
    score = t.column("score")                   # NaN scores were refused block by block (_clean)
    n = t.num_rows
    if columns == 3:
        return Run(pa.table({"qid": t.column("qid"), "docid": t.column("docid"), "score": score,
                             "rank": positions(t.column("qid")), "tag": repeated_column(n, None)}), notes={"tag": "treckit"})
    if lean:
        last = src.last_line().split()
        return Run(pa.table({"qid": t.column("qid"), "docid": t.column("docid"), "score": score,
                             "rank": repeated_column(n, None, pa.int64()), "tag": repeated_column(n, None)}),
                   notes={"tag": last[5].decode("utf-8", "replace") if len(last) >= 6 else "treckit"})
    rank = t.column("rank") if ranks else repeated_column(n, None, pa.int64())   # checked, not kept
    return Run(pa.table({"qid": t.column("qid"), "docid": t.column("docid"), "score": score, "rank": rank,
                         "tag": t.column("tag")}))


def _decoded(doc, qid, decode_ids: bool) -> tuple[pa.ChunkedArray | pa.Array, dict[tuple[str, str], str]]:
    """A doc id column with escaped ids decoded (``decode_ids``), and the texts to keep as the ids'
    written form (``Run.written``).  Only ids that escaping would change -- the ones with '%' or
    whitespace -- can be either: scans of the column's bytes find them, and only they go through
    Python; a column without any is returned as it is."""
    rows = rows_needing_escape(doc)
    if rows.size == 0:
        return doc, {}
    taken = take(doc, rows)
    texts = taken.to_pylist()
    ids = [unescape_id(t) for t in texts] if decode_ids else texts
    changed = [i for i, (t, d) in enumerate(zip(texts, ids)) if t != d]
    doc = replace_rows(doc, rows[changed], [ids[i] for i in changed])
    kept = np.flatnonzero(keeps_texts(taken, decode_ids))
    qids = take(qid, rows[kept]).to_pylist()
    return doc, {(q, ids[i]): texts[i] for q, i in zip(qids, kept.tolist())}


def read_run_lines(lines: Iterable[tuple[int, str]], name: str, decode_ids: bool, skip: bool, layout: RunLayout,
                    columns: int, counted: "_Readings | None" = None) -> Run:
    """The run of the numbered ``lines`` (:func:`~.common.content_lines`), read by the line parser."""
    errors = LineErrors(name, skip)
    readings = counted or _Readings(name, columns)
    # first pass: which readings of each line are possible; unambiguous lines tell the run tag
    known_tags: dict[str, int] = {}
    parsed: list[tuple[int, str, list[tuple]]] = []
    for no, line in lines:
        if is_blank(line) or is_comment(line):
            continue
        cands = _run_candidates(line, layout, columns)
        if not cands or len(cands[0]) == 3:          # no reading, or ('bad', what, fix)
            errors.bad(no, line, *(cands[0][1:] if cands else _explain_bad_run_line(line, layout, columns)))
            continue
        if len(cands) == 1:
            known_tags[cands[0][5]] = known_tags.get(cands[0][5], 0) + 1
        parsed.append((no, line, cands))
    if not known_tags:
        known_tags = _constant_tag(parsed)
    qids, docids, scores, ranks, tags = [], [], [], [], []
    written: dict[tuple[str, str], str] = {}          # see Run.written
    for no, line, cands in parsed:
        if len(cands) > 1:
            cands = _by_run_tag(cands, known_tags)
            if not cands:
                errors.bad(no, line, *_ambiguous_run_line())
                continue
        q, _it, d, r, s, tag, kind = cands[0]
        readings.add(kind, no)
        docid = unescape_id(d) if decode_ids else d
        if ("%" in d or not d.isascii()) and keeps_text(d, docid):
            written[(q, docid)] = d
        qids.append(q), docids.append(docid), scores.append(s), ranks.append(r), tags.append(tag)
    errors.report()
    if counted is None:
        readings.report()
    return _run_of_lines(name, columns, qids, docids, scores, ranks, tags, written, errors)


def _constant_tag(parsed: list[tuple[int, str, list[tuple]]]) -> dict[str, int]:
    """When every line reads two ways: the run tag of the reading under which it never changes, trusted
    ({tag: 1}); {} when both readings keep one tag, or neither does."""
    by_kind = [{c[5] for _, _, cands in parsed for c in cands[k:k + 1]} for k in (0, 1)]
    constant = [tags for tags in by_kind if len(tags) == 1]
    return dict.fromkeys(constant[0], 1) if len(constant) == 1 else {}


def _by_run_tag(cands: list[tuple], known_tags: dict[str, int]) -> list[tuple]:
    """The one reading of a line that reads two ways whose run tag is the run's, as a list; [] when not one is."""
    matching = [c for c in cands if c[5] in known_tags]
    return matching if len(matching) == 1 else []


def _ambiguous_run_line() -> tuple[str, str]:
    return ("ambiguous line: it reads both as a doc id with spaces and as extra columns after the run tag",
            "separate fields with tabs, or say which: " + pass_options("run", "--layout docid-spaces", "--layout extra-columns"))


def _run_of_lines(name: str, columns: int, qids: list[str], docids: list[str], scores: list[float],
                  ranks: list[int], tags: list[str], written: dict[tuple[str, str], str], errors: LineErrors) -> Run:
    """The run of the lines read (ranks kept for 6 columns), with the lines skipped counted in its notes."""
    if not qids:
        raise errors.nothing_read("run lines")
    run = dataclasses.replace(Run.from_columns(qids, docids, scores, ranks if columns == 6 else None, tags),
                              written=written)
    if errors.skipped.total:
        run.notes["skipped"] = dict(errors.skipped.counts)
    return run


def _run_candidates(line: str, layout: RunLayout, columns: int) -> list[tuple]:
    """Every consistent reading of a run line as (qid, iter, docid, rank, score, tag, kind), kind
    being None, 'spaced' (a doc id with spaces) or 'extra' (columns after the last ignored); or
    [('bad', what, fix)] when the line cannot be read that way."""
    f = split_fields(line)
    if len(f) == columns:           # the usual line: exactly the format's fields, which every layout reads alike
        if columns == 3:
            s = parse_score(f[2])
            return [(f[0], "Q0", f[1], None, s, "treckit", None)] if s is not None else []
        r, s = parse_int(f[3]), parse_score(f[4])
        return [(*f[:3], r, s, f[5], None)] if r is not None and s is not None else []
    if len(f) < columns:
        return []
    return _wide_three_column_candidates(line, f, layout) if columns == 3 else _wide_run_candidates(line, f, layout)


def _wide_three_column_candidates(line: str, f: list[str], layout: RunLayout) -> list[tuple]:
    """The readings (as :func:`_run_candidates`) of a 'qid docid score' line with more than 3 fields."""
    if layout == "extra-columns":
        s = parse_score(f[2])
        return [(f[0], "Q0", f[1], None, s, "treckit", "extra")] if s is not None else []
    tabs = _tab_fields(line, 3, 1) if layout == "auto" else None
    if tabs is not None:
        bad = _whitespace_in({"query id": tabs[0], "score": tabs[2]})
        s = parse_score(tabs[2])
        return [bad] if bad else [(tabs[0], "Q0", tabs[1], None, s, "treckit", "spaced")] if s is not None else []
    if layout == "docid-spaces":
        s = parse_score(f[-1])
        return [(f[0], "Q0", _middle(line, 1, 1), None, s, "treckit", "spaced")] if s is not None else []
    return [("bad", f"{len(f)} fields where a 'qid docid score' line has 3: the query id or the doc id contains "
                    "spaces, or there are extra columns",
             "say which: " + pass_options("run", "--layout docid-spaces", "--layout extra-columns")
             + "; or write doc ids escaped")]


def _wide_run_candidates(line: str, f: list[str], layout: RunLayout) -> list[tuple]:
    """The readings (as :func:`_run_candidates`) of a TREC run line with more than 6 fields."""
    tabs = _tab_fields(line, 6, 2) if layout != "extra-columns" else None
    if tabs is not None:
        r, s = parse_int(tabs[3]), parse_score(tabs[4])
        if r is not None and s is not None:
            bad = _whitespace_in({"query id": tabs[0], "iteration": tabs[1]})
            tag = split_fields(tabs[5])         # trec_eval's tag ends at whitespace; the rest is extra columns
            return [bad] if bad else [(*tabs[:3], r, s, tag[0], "spaced" if len(tag) == 1 else "spaced+extra")]
    out = []
    if layout in ("auto", "extra-columns"):
        r, s = parse_int(f[3]), parse_score(f[4])
        if r is not None and s is not None:
            out.append((*f[:3], r, s, f[5], "extra"))
    if layout == "docid-spaces" or (layout == "auto" and f[1] in ITERATION_MARKS):
        r, s = parse_int(f[-3]), parse_score(f[-2])
        if r is not None and s is not None:
            out.append((f[0], f[1], _middle(line, 2, 3), r, s, f[-1], "spaced"))
    return out


def _explain_bad_run_line(line: str, layout: RunLayout, columns: int) -> tuple[str, str]:
    """(what, fix) for a run line no reading fits."""
    f = split_fields(line)
    if len(f) < columns:
        return (f"a run line needs {columns} fields ({'qid iter docid rank score tag' if columns == 6 else 'qid docid score'}), found {len(f)}",
                "write each retrieved document as 'qid Q0 docid rank score tag'" if columns == 6 else "write 'qid docid score'")
    if columns == 3:
        what, fix = score_problem(f[-1] if layout == "docid-spaces" else f[2])
        return what, fix + _extra_columns_hint(line, layout, "run", 3)
    if len(f) > 6 and layout == "auto" and f[1] not in ITERATION_MARKS and parse_int(f[-3]) is not None \
            and parse_score(f[-2]) is not None:
        return (f"{len(f)} fields where a TREC run line has 6, and the second field {f[1]!r} is not an iteration "
                "(Q0 or 0): the query id or the doc id may contain spaces",
                "a query id cannot contain spaces; if the doc ids do, " + pass_options("run", "--layout docid-spaces")
                + " (or write them escaped)")
    at_end = len(f) > 6 and layout == "docid-spaces"
    rank, score = (f[-3], f[-2]) if at_end else (f[3], f[4])
    if parse_score(score) is None:
        what, fix = score_problem(score)
        return what, fix + _extra_columns_hint(line, layout, "run", 6)
    if parse_int(rank) is None:
        return (f"rank {rank!r} is not an integer",
                "the 4th field of a TREC run line is the integer rank" + _extra_columns_hint(line, layout, "run", 6))
    return (f"{len(f)} fields where a TREC run line has 6",
            "say which: " + pass_options("run", "--layout docid-spaces", "--layout extra-columns"))
