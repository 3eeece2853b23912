"""The ranked-and-judged view every kernel reads.

The run is ranked once per query the trec_eval way (score descending, then docno
descending; the rank column ignored) and joined with the qrels once.  Only the
retrieved documents that appear in the qrels are kept, as flat arrays sorted by
(query, rank): every other retrieved document is "not in the pool", and all a
measure needs of those is how many there are (``num_ret``).  That keeps the view
small however deep the run, and turns every measure into segmented reductions.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..dependencies import deferred
from .. import thresholds
from ..fast.arrow import call
from ..console.errors import InputError, shown
from ..console.spelling import offered, pass_options
from ..model import Qrels, Run
from ..fast.groups import expand_ranges, id_runs, spread
from ..fast.repeats import first_repeat, suspects
from ..fast.strings import hash64, take
from .order import AscendingDocTexts, DocTexts, ranks_of, sort_key

np = deferred("numpy")
pa = deferred("pyarrow")

NONPOOL = -1      # retrieved, not in the qrels
UNJUDGED = -2     # in the qrels with a negative grade: pooled but not judged


def query_selection(keep: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kept queries' indices, each kept entry's query renumbered among them, and which entries are kept,
    for ``keep`` (a (Q,) bool mask) over entries whose query index is ``q``."""
    sel = np.flatnonzero(keep)
    remap = np.full(keep.size, -1)
    remap[sel] = np.arange(sel.size)
    kept = keep[q]
    return sel, remap[q[kept]], kept


@dataclass
class RankedJudged:
    qids: list[str]               # evaluated queries, in trec_eval's order (byte order of qid)
    num_ret: np.ndarray           # (Q,) retrieved docs after -M / -J
    rel_levels: np.ndarray        # (Q, D) count of judged docs per grade, for the D grades in ``grades``
    num_rel: np.ndarray           # (Q,) judged docs with grade >= level
    q: np.ndarray                 # (E,) query index of each judged retrieved doc
    pos: np.ndarray               # (E,) 0-based rank
    rel: np.ndarray               # (E,) grade, or UNJUDGED
    level: int                    # relevance level (-l)
    missing: np.ndarray           # (Q,) bool: no run lines (scored with -c's placeholder)
    runid: str
    num_docs_in_coll: int = 0
    row: np.ndarray | None = None  # (E,) the run row of each entry (compare names the relevant docs it ranks)
    grades: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))   # (D,) distinct grades >= 0, ascending
    # (E,) 0-based rank when score ties keep the run's line order instead (ir_measures' stable sort, as its cwl_eval
    # provider ranks); computed only when a measure asks for it
    listed_pos: np.ndarray | None = None
    # (E,) 0-based rank when score ties go to the lesser doc id (pyndeval's order, for the diversity measures)
    ascending_pos: np.ndarray | None = None

    @property
    def Q(self) -> int:
        return len(self.qids)

    def at_level(self, level: int) -> "RankedJudged":
        """The same ranking with another relevance level (only what counts as relevant changes)."""
        if level == self.level:
            return self
        return replace(self, level=level, num_rel=self.rel_levels[:, self.grades >= level].sum(axis=1))

    def select(self, keep: np.ndarray) -> "RankedJudged":
        """The view of the queries where ``keep`` (a (Q,) bool mask) holds, in the same order."""
        if keep.all():
            return self
        sel, q, ek = query_selection(keep, self.q)
        return replace(self, qids=[self.qids[i] for i in sel], num_ret=self.num_ret[sel],
                       rel_levels=self.rel_levels[sel], num_rel=self.num_rel[sel], missing=self.missing[sel],
                       q=q, pos=self.pos[ek], rel=self.rel[ek],
                       row=None if self.row is None else self.row[ek],
                       listed_pos=None if self.listed_pos is None else self.listed_pos[ek],
                       ascending_pos=None if self.ascending_pos is None else self.ascending_pos[ek])

    def judged_only(self) -> "RankedJudged":
        """trec_eval's -J: docs outside the qrels or judged with a negative grade are dropped and the
        rest move up; a query missing from the run (-c's placeholder doc is not judged) retrieves none."""
        keep = self.rel >= 0
        q = self.q[keep]
        counts = np.bincount(q, minlength=self.Q)
        pos = np.arange(q.size) - np.concatenate(([0], np.cumsum(counts)[:-1]))[q]
        listed = None
        if self.listed_pos is not None:              # the kept entries' order by line-order ties, numbered again
            by_listed = np.lexsort((self.listed_pos[keep], q))
            listed = np.empty(q.size, np.int64)
            listed[by_listed] = pos[np.arange(q.size)]   # q is sorted, so pos numbers each query's entries 0, 1, ...
        return replace(self, q=q, pos=pos, rel=self.rel[keep], num_ret=np.where(self.missing, 0, counts),
                       row=None if self.row is None else self.row[keep], listed_pos=listed, ascending_pos=None)

    def grade_index(self, rel: np.ndarray) -> np.ndarray:
        """Column of ``rel_levels`` of each grade in ``rel`` (grades >= 0 only)."""
        return np.searchsorted(self.grades, rel)

    def dense_levels(self, qi: int) -> np.ndarray:
        """Docs per grade 0..max of query ``qi`` as one array indexed by grade (for small grades, in tests)."""
        row = self.rel_levels[qi]
        out = np.zeros(int(self.grades[-1]) + 1 if self.grades.size else 1, np.int64)
        out[self.grades] = row
        return out

    @property
    def isrel(self) -> np.ndarray:
        return self.rel >= self.level

    def rel_so_far(self, mask: np.ndarray | None = None) -> np.ndarray:
        """For each entry, how many entries of its query up to and including it satisfy ``mask``."""
        m = self.isrel if mask is None else mask
        c = np.cumsum(m, dtype=np.int64)
        first = np.searchsorted(self.q, self.q, side="left")
        return c - np.concatenate(([0], c))[first]

    def count_before(self, mask: np.ndarray, cutoff: int | np.ndarray) -> np.ndarray:
        """(Q,) number of entries with ``mask`` ranked above ``cutoff`` (scalar or per query)."""
        lim = cutoff if np.isscalar(cutoff) else np.asarray(cutoff)[self.q]
        return np.bincount(self.q[mask & (self.pos < lim)], minlength=self.Q)

    def per_query_sum(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """(Q,) sum of ``values`` (one per entry, or one per entry selected by ``mask``), added in rank
        order one by one as trec_eval does, so the doubles come out bit-identical to its loops."""
        return seq_segment_sum(values, self.q if mask is None else self.q[mask], self.Q)


def seq_segment_sum(values: np.ndarray, seg: np.ndarray, nseg: int, cumulative: bool = False):
    """Sequential (left-to-right) sums of ``values`` grouped by sorted ``seg``.

    Scatters into a (segments x longest) matrix and adds column by column: vectorized over
    segments, yet each segment's additions happen in order, unlike pairwise reductions.
    With ``cumulative`` returns the running sum at each input element instead.
    """
    if values.size == 0:
        return np.zeros(values.size if cumulative else nseg)
    counts = np.bincount(seg, minlength=nseg)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    col = np.arange(values.size) - starts[seg]
    width = int(counts.max())
    m = np.zeros((nseg, width))
    m[seg, col] = values
    if cumulative:
        return np.cumsum(m, axis=1)[seg, col]
    acc = m[:, 0].copy()
    for j in range(1, width):
        acc += m[:, j]
    return acc


def seq_sum(values: np.ndarray) -> float:
    """Left-to-right sum, the way trec_eval accumulates over queries."""
    return float(np.cumsum(values)[-1]) if values.size else 0.0


# ---------------------------------------------------------------- building the view
def build_view(qrels: Qrels, run: Run, options, *, level: int | None = None, source: str = "run",
               warn=None) -> RankedJudged:
    """The view for ``options`` (an :class:`treckit.engines.memory.EvalOptions`); ``level`` overrides its -l."""
    full, facts = rank_and_judge(qrels, run, options, level=level, source=source, facts=warn is not None)
    present = ~full.missing
    if warn is not None:
        sanity_warnings(warn, source, qrels, full.qids, present, facts)
    evaluated = evaluated_queries(present, options, [q for q, m in zip(full.qids, full.missing.tolist()) if m], source, warn)
    view = full.select(evaluated)
    return view.judged_only() if options.judged_only else view


def rank_and_judge(qrels: Qrels, run: Run, options, *, level: int | None = None, source: str = "run",
                   facts: bool = False, row_offset: int = 0,
                   listed_ties: bool = False,
                   ascending_ties: bool = False) -> tuple[RankedJudged, "RunFacts | None"]:
    """The view of every judged query (one not in the run marked ``missing``, with -c's placeholder),
    ranked without -J, and (``facts``) what the sanity warnings need to know of the run.  Everything
    here is per query: a run split into sets of whole queries gives the same rows part by part
    (``row_offset``: the run's first row in the whole run, for the facts' examples).  ``listed_ties``: also
    each entry's rank when score ties keep the run's line order (``RankedJudged.listed_pos``); ``ascending_ties``:
    also its rank when score ties go to the lesser doc id (``RankedJudged.ascending_pos``)."""
    level = options.level if level is None else level
    qt = qrels.table
    qrel_qids, grades, rel_levels, qi_arr, qkeys = qrels_side(qrels)
    Qall = len(qrel_qids)
    qindex = {q: i for i, q in enumerate(qrel_qids)}

    rt = run.table
    runid = run.tag
    starts, run_code, run_qids = id_runs(rt.column("qid"))
    lengths = np.diff(np.append(starts, rt.num_rows))
    run_q = np.array([qindex.get(q, -1) for q in run_qids], np.int32)[run_code]
    rq = spread(run_q, starts, rt.num_rows)       # -1: a query without qrels, whose lines are ignored
    key = sort_key(rt, options.rank_by, options.float32)
    docid = rt.column("docid")            # left chunked: only a few strings are ever taken from it
    jrows, jgrade, dupkeys = _match_judged(docid, rq, qt, qi_arr, qkeys)
    n_per_q = np.bincount(run_q[run_q >= 0], weights=lengths[run_q >= 0], minlength=Qall).astype(np.int64)
    listed = starts if run_code.size == len(run_qids) else None     # each query's lines together
    if rt.num_rows:                       # (a part of a run may have no lines)
        _check_duplicates(rq, dupkeys, docid, qrel_qids, source, listed)
    del dupkeys
    present = n_per_q > 0
    found = None
    if facts:
        found = run_facts(qrels, qrel_qids, qi_arr, run_qids, starts, run_code, present, rt,
                          key if options.rank_by != "rank" else None, rq, jrows, jgrade, row_offset)
    jpos = ranks_of(listed, rq, key, DocTexts.of_run(run), jrows, Qall)
    jasc = ranks_of(listed, rq, key, AscendingDocTexts.of_run(run), jrows, Qall) if ascending_ties else None
    listed_all = _ranks_with_line_order_ties(rq, key) if listed_ties else None
    del key
    num_ret = n_per_q.copy()
    if options.max_docs is not None:
        num_ret = np.minimum(num_ret, options.max_docs)
        ok = jpos < options.max_docs
        jrows, jgrade, jpos = jrows[ok], jgrade[ok], jpos[ok]
        jasc = None if jasc is None else jasc[ok]
    jq = rq[jrows]
    o = np.lexsort((jpos, jq))
    jq, jpos, jgrade, jrows = jq[o], jpos[o], jgrade[o], jrows[o]
    jasc = None if jasc is None else jasc[o]
    listed_pos = None if listed_all is None else listed_all[jrows]
    missing_q = ~present
    # trec_eval -c's placeholder for a query missing from the run: one doc outside the pool (none with -M 0)
    num_ret = np.where(missing_q, 1 if options.max_docs is None else min(1, options.max_docs), num_ret)
    view = RankedJudged(qids=qrel_qids, num_ret=num_ret, rel_levels=rel_levels,
                        num_rel=rel_levels[:, grades >= level].sum(axis=1), q=jq.astype(np.int64), pos=jpos,
                        rel=jgrade, level=level, missing=missing_q, runid=runid,
                        num_docs_in_coll=options.num_docs_in_coll, grades=grades, row=jrows, listed_pos=listed_pos,
                        ascending_pos=jasc)
    return view, found


def _ranks_with_line_order_ties(rq: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Each row's 0-based rank within its query (``rq``; -1: not ranked) by ``key`` descending, rows of equal keys
    in the order the run lists them: Python's stable ``sorted(..., key=score, reverse=True)``."""
    rows = np.flatnonzero(rq >= 0)
    by = rows[np.lexsort((rows, -key[rows], rq[rows]))]
    q = rq[by]
    first = np.searchsorted(q, q, side="left")
    out = np.zeros(rq.size, np.int64)
    out[by] = np.arange(by.size) - first
    return out


def qrels_side(qrels: Qrels):
    """Queries in trec_eval's order (byte order of qid), docs per grade per query, each judgment's
    query index and (query, doc) hash; a doc judged twice for a query is an error."""
    qt = qrels.table
    qg = qt.column("grade").to_numpy()
    starts, run_code, ids = id_runs(qt.column("qid"))
    qrel_qids = sorted(ids, key=_bytes_key)
    qindex = {q: i for i, q in enumerate(qrel_qids)}
    qi_arr = spread(np.array([qindex[q] for q in ids], np.int32)[run_code], starts, qt.num_rows)
    qkeys = hash64(qt.column("docid"), qi_arr)
    repeat = first_repeat(suspects(qkeys), qi_arr, qt.column("docid"))
    if repeat is not None:
        _, q, d = repeat
        raise InputError(f"qrels judge doc {d!r} twice for query {qrel_qids[q]!r}", fix="remove the duplicate judgment")
    nonneg = qg >= 0
    grades, column = np.unique(qg[nonneg], return_inverse=True)
    nq = len(qrel_qids)
    if nq * grades.size > thresholds.GRADE_COUNT_MAX_CELLS:
        raise InputError(f"the qrels use {grades.size} distinct grades over {nq} queries: too many to count per query",
                         fix="map the grades to a few levels (e.g. 0-4) before evaluating")
    cells = qi_arr[nonneg].astype(np.int64) * grades.size + column.reshape(-1)
    rel_levels = np.bincount(cells, minlength=nq * grades.size).reshape(nq, grades.size)
    return qrel_qids, grades.astype(np.int64), rel_levels, qi_arr, qkeys


def evaluated_queries(present: np.ndarray, options, missing_names: list[str], source: str, warn) -> np.ndarray:
    """Which judged queries are scored: all with -c or --missing zero; else those the run answers
    (--missing skip, with a warning naming the others) or an error (--missing error)."""
    if options.complete or options.missing == "zero":
        return np.ones(present.size, bool)
    if not missing_names:
        return present
    shown = ", ".join(missing_names[:10]) + (" ..." if len(missing_names) > 10 else "")
    if options.missing == "error":
        raise InputError(f"{len(missing_names)} judged queries have no results in the run: {shown}", path=source,
                         fix="pass --missing skip (evaluate shared queries) or --missing zero (score them 0, like trec_eval -c)")
    if warn is not None:
        warn(f"{len(missing_names)} judged queries have no results in the run and are not evaluated: {shown}"
             + (" (--missing zero scores them 0)" if offered("--missing") else ""))
    return present


# ---------------------------------------------------------------- sanity warnings
# Scores that look like grades: integers within +-GRADE_LIKE_MAX; grades that look like scores:
# more than GRADES_AT_MOST distinct values.  Only a run whose first thresholds.GRADE_LIKE_HEAD scores look like
# grades is scanned further, so an ordinary run costs one look at a few thousand numbers.
GRADE_LIKE_MAX = 10
GRADES_AT_MOST = 10


@dataclass
class RunFacts:
    """What the sanity warnings need to know of a run, gathered part by part when the run is evaluated
    in parts (sets of whole queries) and combined by :meth:`combine`; rows are numbered in the whole run."""

    lines: int                        # run lines
    unjudged_qids: list[str]          # run queries without judgments, in order of first appearance ...
    unjudged_rows: list[int]          # ... at these rows
    shared: int                       # judged queries the run answers
    judged_hit: bool                  # some retrieved doc is judged (grade >= 0)
    example: tuple | None             # without a judged hit: (row, qid, run's doc, a judged doc) of the first
                                      # line of a judged query
    grade_like: bool                  # every score an integer within +-GRADE_LIKE_MAX (False: ranked by rank)
    judged_rows: int = 0              # with grade_like: lines whose doc is in the qrels ...
    lines_are_judgments: bool = False  # ... and every line of a judged query is a judgment scored with its grade
    docid_prefix: str | None = None   # with grade_like: '<word> ' every doc id starts with, if the first has a space

    @classmethod
    def combine(cls, parts: "list[RunFacts]") -> "RunFacts":
        parts = [p for p in parts if p is not None and p.lines]
        grade_like = bool(parts) and all(p.grade_like for p in parts)
        unjudged = _unjudged_in_row_order(parts)
        return cls(lines=sum(p.lines for p in parts), unjudged_qids=[q for _, q in unjudged],
                   unjudged_rows=[r for r, _ in unjudged],
                   shared=sum(p.shared for p in parts), judged_hit=any(p.judged_hit for p in parts),
                   example=_first_example(parts), grade_like=grade_like,
                   judged_rows=sum(p.judged_rows for p in parts),
                   lines_are_judgments=grade_like and all(p.lines_are_judgments for p in parts),
                   docid_prefix=_shared_docid_prefix(parts) if grade_like else None)


def _unjudged_in_row_order(parts: list[RunFacts]) -> list[tuple[int, str]]:
    """(row, qid) of the parts' run queries without judgments, in the whole run's row order."""
    return sorted((r, q) for p in parts for r, q in zip(p.unjudged_rows, p.unjudged_qids))


def _first_example(parts: list[RunFacts]) -> tuple | None:
    """The parts' example line that comes first in the whole run, or None."""
    examples = [p.example for p in parts if p.example is not None]
    return min(examples, key=lambda e: e[0]) if examples else None


def _shared_docid_prefix(parts: list[RunFacts]) -> str | None:
    """The doc id prefix of every part, if they all have the same one."""
    prefixes = {p.docid_prefix for p in parts}
    return prefixes.pop() if len(prefixes) == 1 else None


def run_facts(qrels: Qrels, qrel_qids: list[str], qi_arr: np.ndarray, run_qids: list[str], starts: np.ndarray,
              run_code: np.ndarray, present: np.ndarray, rt,
              score: np.ndarray | None, rq: np.ndarray, jrows: np.ndarray, jgrade: np.ndarray,
              row_offset=0) -> RunFacts:
    """The run's :class:`RunFacts` (``score``: the run's scores; None when ranked by its rank column;
    ``row_offset``: the run's first row in the whole run, or the whole run's row of each of its rows)."""
    judged = set(qrel_qids)
    shared = int(present.sum())
    judged_hit = bool(np.any(jgrade >= 0))
    example = None
    if shared and not judged_hit:
        r = int(np.argmax(rq >= 0))                      # a line of a shared query, and a judgment of it
        q = int(rq[r])
        j = int(np.argmax(qi_arr == q))
        row = row_offset + r if np.isscalar(row_offset) else int(row_offset[r])
        example = (row, qrel_qids[q], rt.column("docid")[r].as_py(), qrels.table.column("docid")[j].as_py())
    unjudged = [i for i, q in enumerate(run_qids) if q not in judged]
    first = starts[np.unique(run_code, return_index=True)[1][unjudged]] if unjudged else np.zeros(0, np.int64)
    first = row_offset + first if np.isscalar(row_offset) else np.asarray(row_offset)[first]
    facts = RunFacts(lines=rt.num_rows, unjudged_qids=[run_qids[i] for i in unjudged],
                     unjudged_rows=first.tolist(), shared=shared,
                     judged_hit=judged_hit, example=example, grade_like=score is not None and scores_look_like_grades(score))
    if facts.grade_like:
        facts.judged_rows = int(jrows.size)
        mine = score[jrows]
        facts.lines_are_judgments = (jrows.size == int(np.count_nonzero(rq >= 0))
                                     and bool(np.all(np.where(jgrade >= 0, mine == jgrade, mine < 0))))
        facts.docid_prefix = _common_prefix(rt.column("docid"))
    return facts


def sanity_warnings(warn, source: str, qrels: Qrels, qrel_qids: list[str], present: np.ndarray,
                    facts: RunFacts) -> None:
    """Warn about inputs that evaluate without error yet are most likely not what was meant: qid
    spellings that differ between the files, a run that retrieves no judged document, a qrels file
    passed as the run, qrels and run swapped.  The numbers are computed all the same.  ``qrel_qids``:
    every judged query in byte order, ``present``: which of them the run answers."""
    shared = int(present.sum())
    _warn_qid_spellings(warn, source, qrel_qids, facts.unjudged_qids, present, shared)
    if shared and not facts.judged_hit and facts.example is not None:
        _, qid, doc, judged_doc = facts.example
        warn(f"{source}: the run retrieves none of the judged documents of the {shared} queries it shares with "
             f"the qrels (query {shown(qid)}: the run lists {shown(doc)}, the qrels judge "
             f"{shown(judged_doc)}); check that both name documents the same way "
             "(id field, prefix, case)")
    if not facts.grade_like:
        return
    grades = np.unique(qrels.table.column("grade").to_numpy())
    if grades.size > GRADES_AT_MOST:
        warn(f"did you swap QRELS and RUN? The run ({source}) scores every document with a small integer, like a "
             f"grade, and the qrels' grades take {grades.size} values from {grades[0]} to {grades[-1]}, like scores "
             "(give the qrels first, then the run)")
        return
    why = _reads_as_qrels(facts)
    if why:
        warn(f"{source}: the run looks like a qrels file ({why}): pass the system's run as RUN")


def _qid_keys(qids: list[str]) -> list[str]:
    """The qids spelled without case, whitespace or leading zeros ('0001' -> '1', ' Q01' -> 'q1'),
    by Arrow's string kernels: a run may have hundreds of thousands of queries."""
    from pyarrow.compute import ReplaceSubstringOptions

    arr = call("utf8_lower", pa.array(qids, pa.string()))
    arr = call("replace_substring_regex", arr, options=ReplaceSubstringOptions(r"\s+", ""))
    arr = call("replace_substring_regex", arr, options=ReplaceSubstringOptions(r"(^|[^0-9])0+([0-9])", r"\1\2"))
    return arr.to_pylist()


def _warn_qid_spellings(warn, source: str, qrel_qids: list[str], unjudged: list[str], present: np.ndarray,
                        shared: int) -> None:
    """Run queries that match judged queries only once respelled, when they outnumber the exact matches."""
    if shared == present.size:
        return
    unanswered = [qrel_qids[i] for i in np.flatnonzero(~present).tolist()]
    by_key: dict[str, str] = {}
    for k, q in zip(_qid_keys(unanswered), unanswered):
        by_key.setdefault(k, q)
    pairs = [(q, by_key[k]) for q, k in zip(unjudged, _qid_keys(unjudged)) if k in by_key]
    if pairs and len(pairs) >= shared:
        shown = ", ".join(f"{r!r} ~ {j!r}" for r, j in pairs[:3]) + (" ..." if len(pairs) > 3 else "")
        warn(f"{source}: query ids are spelled differently in the run and the qrels: {len(pairs)} run queries match "
             f"judged queries only when case, spaces and leading zeros are ignored (run ~ qrels: {shown}), "
             f"{shared} match as written; qids are compared exactly, as trec_eval does: make them agree")


def scores_look_like_grades(key: np.ndarray) -> bool:
    """Whether every score is an integer within +-GRADE_LIKE_MAX (a look at the head first)."""
    for part in (key[:thresholds.GRADE_LIKE_HEAD], key):
        if part.size == 0 or np.abs(part).max() > GRADE_LIKE_MAX or not np.array_equal(part, np.round(part)):
            return False
    return True


def _reads_as_qrels(facts: RunFacts) -> str:
    """Why grade-like scores come from qrels ('' if they seem not to): each line of a judged query
    is a judgment scored with its grade (the qrels, or a copy, read as a run), or every doc id is
    '<iter> <docid>' (TREC qrels read as 'qid docid score')."""
    if facts.judged_rows and facts.lines_are_judgments:
        return "every line is one of the judgments, scored with its grade"
    if facts.docid_prefix:
        return f"every line reads as 'qid {facts.docid_prefix.strip()} docid grade', scored with the grade"
    return ""


def _common_prefix(docid) -> str | None:
    """'<word> ' when the first doc id has a space and every doc id starts with its first word and a space."""
    if len(docid) == 0:
        return None
    first = docid[0].as_py()
    if " " not in first:
        return None
    from pyarrow.compute import MatchSubstringOptions

    prefix = first.split(" ", 1)[0] + " "
    return prefix if call("all", call("starts_with", docid, options=MatchSubstringOptions(prefix))).as_py() else None


def _bytes_key(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def _match_judged(docid, rq: np.ndarray, qt, qi_arr: np.ndarray, qkeys: np.ndarray):
    """Rows of the run whose (qid, docid) is in the qrels, their grades (UNJUDGED for negative
    ones), and a 32-bit key per row for the duplicate check.

    One hashing pass over the run's doc ids (with the query mixed in) does both jobs, piece by
    piece: a bitmap of the judgments' hashes nominates candidates, and each candidate is then
    confirmed on the strings, so a hash collision can never make a doc judged.
    """
    bits = np.zeros(thresholds.REPEAT_BITMAP_MASK + 1, bool)
    bits[(qkeys & np.uint64(thresholds.REPEAT_BITMAP_MASK)).astype(np.intp)] = True
    dupkeys = np.empty(rq.size, np.uint32)
    found: list[tuple[np.ndarray, np.ndarray]] = []

    def scan(first: int, h: np.ndarray) -> None:
        dupkeys[first:first + h.size] = h                  # the low 32 bits
        hit = np.flatnonzero(bits[np.bitwise_and(h, np.uint64(thresholds.REPEAT_BITMAP_MASK)).view(np.int64)])
        if hit.size:
            found.append((first + hit, h[hit]))

    hash64(docid, rq, each=scan)
    if found:
        rows = np.concatenate([f[0] for f in found])
        keys = np.concatenate([f[1] for f in found])
    else:
        rows, keys = np.zeros(0, np.int64), np.zeros(0, np.uint64)
    ok = rq[rows] >= 0
    rows, keys = rows[ok], keys[ok]
    # every judgment with an equal hash is a candidate (several only on a hash collision)
    order = np.argsort(qkeys, kind="stable")
    sq = qkeys[order]
    # searched in key order: each search starts where the one before ended (in random order, a search of
    # millions of keys in millions of judgments misses the cache at every step, some twenty times slower)
    by_key = np.argsort(keys)
    rows, keys = rows[by_key], keys[by_key]
    lo, hi = np.searchsorted(sq, keys, "left"), np.searchsorted(sq, keys, "right")
    rows, qrow = expand_ranges(rows, lo, hi)
    qrow = order[qrow]
    same = rq[rows] == qi_arr[qrow]
    rows, qrow = rows[same], qrow[same]
    if rows.size:
        same = call("equal", take(docid, rows), take(qt.column("docid"), qrow))
        same = same.to_numpy(zero_copy_only=False)
        rows, qrow = rows[same], qrow[same]
    o = np.argsort(rows, kind="stable")                   # the pieces were hashed in any order
    rows, grade = rows[o], qt.column("grade").to_numpy()[qrow[o]]
    return rows, np.where(grade < 0, UNJUDGED, grade), dupkeys


def _check_duplicates(rq, dupkeys, docid, qrel_qids, source: str, listed: np.ndarray | None = None) -> None:
    """trec_eval refuses a run that lists a doc twice for a query; so do we (with the doc named).
    Lines of queries without judgments are not looked at, as trec_eval ignores them."""
    rows = suspects(dupkeys, listed)
    repeat = first_repeat(rows[rq[rows] >= 0], rq, docid)
    if repeat is not None:
        _, q, d = repeat
        raise duplicate_doc(d, qrel_qids[q], source)


def duplicate_doc(doc: str, qid: str, source: str | None) -> InputError:
    """The error for a run listing ``doc`` twice for ``qid`` (trec_eval refuses it)."""
    return InputError(f"the run lists doc {doc!r} more than once for query {qid!r}", path=source,
                      fix=pass_options("run", "--duplicates keep-first|keep-max|keep-last"))
