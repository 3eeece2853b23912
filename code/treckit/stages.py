"""The pipeline's three stages as functions: ground truth -> qrels, run -> TREC run, evaluation at cutoffs.

The CLI and the staged scripts in ``code/evaluation`` are thin over these.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError
from .io import PathLike, atomic_output, derived_output, outputs, refuse_overwriting_inputs


# The pipeline document's reading of TREC files, the staged scripts' default ``--layout``: a qrels line's doc id
# is everything between the second field and the last, a run line's everything between Q0 and the rank, spaces
# included (QUEST's qrels hold raw Wikipedia titles: ``8 0 District 9 1``).  ``treckit`` itself reads ``auto``.
DOCUMENT_LAYOUT = "docid-spaces"
DOCUMENT_LAYOUT_WHY = ("the pipeline document's rule: a doc id is everything between the second field and the last "
                       "(qrels) or between Q0 and the rank (runs), spaces included")
# The run name the staged conversion writes for an input that names no run (JSONL, TSV, 3-column files).
DEFAULT_RUN_NAME = "run"


def say(msg: str) -> None:
    """A warning or a note on stderr, naming options as the command that is running spells them."""
    from .spelling import spell
    print(f"treckit: {spell(msg)}", file=sys.stderr)


def run_script(body) -> int:
    """Run a staged script's body: errors, OS errors and Ctrl-C become a message on stderr and their
    exit code (never a traceback), as in the CLI; messages name the options as the script spells them
    (the script is the caller's file: :data:`treckit.spelling.COMMANDS`)."""
    from . import spelling
    from .startup import exit_code_of, prepare_process

    prepare_process()
    script = Path(sys._getframe(1).f_code.co_filename).name
    with spelling.running(spelling.command_named(script)):
        return exit_code_of(body)


@dataclass
class QrelsStageResult:
    judgments: int
    queries: int
    id_added: Path | None
    repeats_dropped: int = 0


def qrels_stage(input: PathLike, output: PathLike, *, format: str | None = None, id_base: int = 1,
                id_field: str | None = None, raw_ids: bool = False, duplicates: str = "error",
                id_added: PathLike | None = None, skip_malformed: bool = False, layout: str = "auto") -> QrelsStageResult:
    """Ground truth in any qrels format -> TREC qrels.  ``duplicates`` applies to every format (a
    (qid, docid) judged twice); what it dropped is counted and said.  ``layout``: TREC lines with
    more than 4 fields (docs/formats.md: Reading rules)."""
    from .api import read_qrels, write_qrels
    from .formats.common import check_layout, drop_repeated_judgments
    from .formats.detect import detect_qrels
    from .formats.jsonl import check_duplicates_policy, read_quest, write_id_added
    from .formats.trec import read_trec_qrels
    from .io import display_name

    check_duplicates_policy(duplicates)
    check_layout(layout)
    refuse_overwriting_inputs([input], [output, id_added])
    fmt = format or (None if str(input).startswith("irds:") else detect_qrels(input).format)   # irds: read_qrels
    written_ids = None
    dropped = 0
    with outputs(output, id_added, inputs=[input]):     # the qrels and the id-added file: both or neither
        if fmt == "quest":
            gt = read_quest(input, id_base=id_base, id_field=id_field, duplicates=duplicates)
            qrels, dropped = gt.qrels, gt.repeats_dropped
            if not gt.ids_were_given and str(input) != "-":
                written_ids = Path(id_added) if id_added else default_id_added_path(input, output)
                refuse_overwriting_inputs([input], [output, written_ids])
                write_id_added(gt, written_ids)
        elif fmt == "trec":      # the layout is a TREC reading rule
            qrels = read_trec_qrels(input, skip_malformed=skip_malformed, layout=layout)
        else:
            qrels = read_qrels(input, fmt, skip_malformed=skip_malformed)
        qrels, more = drop_repeated_judgments(qrels, duplicates, display_name(input))
        dropped += more
        write_qrels(qrels, output, escape_ids=not raw_ids)
    if written_ids is not None:
        say(f"the input had no ids: wrote the id-added JSONL to {written_ids} (qid = line number, base {id_base})")
    if dropped:
        say(f"{display_name(input)}: dropped {dropped} repeated judgment(s) of the same (query, doc) ({duplicates})")
    n_q = len(set(qrels.table.column("qid").to_pylist()))
    return QrelsStageResult(len(qrels), n_q, written_ids, dropped)


def default_id_added_path(input: PathLike, output: PathLike) -> Path:
    src = Path(input)
    stem = src.name[:-3] if src.name.endswith(".gz") else src.name
    stem = stem[:-6] if stem.endswith(".jsonl") else stem
    out_dir = Path(output).parent if str(output) != "-" else src.parent
    return out_dir / f"{stem}_id_added.jsonl"


def gold_query_map(gold: PathLike, id_base: int = 1) -> dict[str, str]:
    """query text -> qid from a QUEST-style gold file (ids from its id field, else line numbers) or ``irds:<id>``."""
    from .reading import gold_query_map as by_text
    return by_text(gold, id_base)


def run_stage(input: PathLike, output: PathLike | None = None, *, run_name: str | None = None,
              untagged_name: str | None = None, reading=None, depth: int | None = None, raw_ids: bool = False,
              **options):
    """Read ``input`` with the reader configuration (:class:`treckit.reading.RunReading`, or its options as
    keywords), convert it and write the TREC run; the conversion's report goes to stderr.

    ``run_name``: the run tag written on every line.  ``untagged_name``: the tag written only when the input
    names no run (JSONL, TSV and 3-column files); a TREC 6-column file keeps its own tags (said when they are
    not that name).  Without ``output`` the run is written beside the input (:func:`default_run_output`) and
    the path is said."""
    from .api import write_run
    from .progress import Steps
    from .reading import RunReading

    reading = reading or RunReading.from_options(**options)
    defaulted = output is None
    output = default_run_output(input) if defaulted else output
    refuse_overwriting_inputs([input, reading.gold], [output])
    with Steps([f"reading and ordering {input}", f"writing {output}"]) as steps:
        got = reading.read(input, convert=True, depth=depth, run_name=run_name, raw_ids=raw_ids, warn=say)
        steps.next()
        tag = run_name
        if tag is None and untagged_name is not None:
            tag = None if got.format == "trec" else untagged_name
        write_run(got.run, output, escape_ids=not raw_ids, tag=tag)
        steps.next()
    for line in got.report.lines():
        say(line)
    if run_name is None and untagged_name is not None and got.format == "trec":
        kept = sorted(set(got.run.table.column("tag").unique().to_pylist()) - {None})
        if kept != [untagged_name]:
            shown = ", ".join(kept[:3]) + (f" and {len(kept) - 3} more" if len(kept) > 3 else "")
            say(f"{input}: kept the TREC run's own tag{'s' if len(kept) > 1 else ''} ({shown}); the run name "
                f"{untagged_name!r} is written only for inputs that name no run")
    if defaulted and str(output) != "-":
        say(f"wrote {output}")
    return got.report


def default_run_output(input: PathLike) -> str:
    """``preds.jsonl`` -> ``preds_trec`` (the old script's convention), ``x.trec.gz`` -> ``x_trec``,
    ``-`` (stdin) -> ``-`` (stdout)."""
    return derived_output(input, "_trec")


def cutoff_table(qrels: PathLike, run: PathLike, cutoffs: list[int], *, missing: str = "skip", reading=None,
                 memory_limit: int | None = -1, cross_check: bool = False, qrels_format: str | None = None,
                 **options):
    """Recall@k and nDCG@k (trec_eval's recall_k and ndcg_cut_k) plus MRR and MAP, averaged over queries.

    The run is read with the reader configuration (``reading``, or its options as keywords, e.g. ``order``), and
    evaluated in bounded memory when larger than ``memory_limit`` (bytes; None: read whole; default 2 GiB).
    The qrels are read as ``qrels_format`` (default: detected); TREC qrels by the same ``layout`` and
    ``skip_malformed`` as the run.  ``cross_check``: every number is recomputed with ir_measures
    (:mod:`treckit.crosscheck`) before it is returned; a difference raises, agreement is said on stderr."""
    from .api import read_qrels
    from .crosscheck import check_options, evaluate_path_checked
    from .evaluation import EvalOptions
    from .measures.registry import resolve
    from .reading import RunReading

    reading = reading or RunReading.from_options(**options)
    opts = EvalOptions(missing=missing)
    if cross_check:
        check_options(opts)                   # before anything is read
    ks = ",".join(str(k) for k in sorted(set(cutoffs)))
    req = resolve([f"recall.{ks}", f"ndcg_cut.{ks}", "recip_rank", "map", "num_q"])
    judged = read_qrels(qrels, qrels_format, layout=reading.layout, skip_malformed=reading.skip_malformed)
    res, checked = evaluate_path_checked(judged, run, req, opts, reading, memory_limit=memory_limit, warn=say,
                                         qrels_source=qrels, check=cross_check)
    if checked is not None:
        say(checked.line())
    s = res.summary
    ks_sorted = sorted(set(cutoffs))
    return {
        "cutoffs": ks_sorted,
        "recall": {str(k): s[f"recall_{k}"] for k in ks_sorted},
        "ndcg": {str(k): s[f"ndcg_cut_{k}"] for k in ks_sorted},
        "mrr": s["recip_rank"],
        "map": s["map"],
        "num_queries": int(s["num_q"]),
    }


def format_cutoff_table(t: dict) -> str:
    lines = [f"{'Cutoff':>6}  {'Recall@k':>8}  {'NDCG@k':>8}"]
    for k in t["cutoffs"]:
        lines.append(f"{k:>6}  {t['recall'][str(k)]:>8.4f}  {t['ndcg'][str(k)]:>8.4f}")
    lines.append(f"MRR {t['mrr']:.4f}   MAP {t['map']:.4f}   queries {t['num_queries']}")
    return "\n".join(lines) + "\n"


def write_json(obj, path: PathLike) -> None:
    with atomic_output(path) as fh:
        fh.write(json.dumps(obj, indent=2) + "\n")


TREC_COMPARE_MEASURES = ("map", "ndcg_cut.10", "recall.100", "recip_rank")    # compare's defaults on qrels


def compare_stage(qrels: PathLike, runs: list[PathLike], measures: list[str], *, names: list[str] | None = None,
                  configs: list[PathLike] | None = None, options=None, out_json: PathLike | None = None,
                  out_csv: PathLike | None = None, out_markdown: PathLike | None = None,
                  out_latex: PathLike | None = None, out_plot: PathLike | None = None,
                  corpus: PathLike | None = None, queries: PathLike | None = None,
                  query_types: PathLike | None = None, prepare=None, digests: bool | None = None, reading=None,
                  test_set: PathLike | None = None, depth: int = 1000, memory_limit: int | None = -1,
                  engine: str = "local", scheduler: str | None = None, queries_are_the_set: bool = False,
                  empty_run_retrieves_nothing: bool = False, ranking: str | None = None, order_option: bool = True):
    """Stage 4: compare runs (or configs naming runs); the first system is the baseline.

    Each run is read (``reading``: a :class:`treckit.reading.RunReading`, as ``treckit eval`` reads
    runs), evaluated once and dropped in turn (progress on a terminal); the files' digests are
    computed beside that, on another thread.  Every output is rendered before the first one is
    written, and all are written or none.  ``prepare`` (optional) turns each read Run into the Run to
    evaluate (the old rq_eval's tie rule).  ``digests``: compute the files' digests (default: when
    writing the JSON, the only output that holds them).  The configs describing retrieval systems
    (``components``) are run first, together (warmed up, then timed in turns: retrieval.system), on the
    queries (of ``test_set``, which also gives the judgments in place of ``qrels``, or of ``queries``;
    a system of run files only is run on the judged queries of ``qrels``), their last stages keeping
    ``depth`` docs and held until scored; their latency is reported.
    ``engine="dask"``: the runs are read and scored on a Dask cluster (``scheduler``, else a local one).
    ``measures`` None: the test set's measures with a test set (its nDCG: gain 2^grade - 1), else
    trec_eval's ``map ndcg_cut.10 recall.100 recip_rank``.  ``ranking``: the ranking rule recorded in
    the definitions (default: the reading's; ``prepare`` may impose another).
    ``queries_are_the_set`` (the old rq_eval's rule): the queries of ``queries`` are the query set, in place
    of the judged ones: a query without judgments scores 0 on every measure, a judged query not among them
    is left out (both said on stderr).  ``empty_run_retrieves_nothing`` (the old rq_eval's rule): a run file
    without run lines is a system that retrieved nothing (every query scores 0), not an error.
    ``order_option``: whether the caller takes ``--order`` (else a warning about how a run is ordered offers a
    conversion with ``treckit run``, as :meth:`treckit.reading.RunReading.read` says).
    """
    import contextlib
    import dataclasses
    from concurrent.futures import ThreadPoolExecutor

    from .api import read_qrels
    from .compare import report
    from .compare.compare import System, compare
    from .compare.config import content_digest, file_digest, load_config, read_bytes_check
    from .errors import content_hidden, warning_without_content
    from .formats.common import head_lines
    from .progress import Steps
    from .reading import RunReading

    reading = reading or RunReading()
    ranking = ranking or reading.ranking
    digests = out_json is not None if digests is None else digests
    targets = {"json": out_json, "csv": out_csv, "markdown": out_markdown, "latex": out_latex, "plot": out_plot}
    to_stdout = [k for k, p in targets.items() if p is not None and str(p) == "-"]
    if len(to_stdout) > 1 or "plot" in to_stdout:
        raise InputError("only one text output can go to stdout ('-')", fix="name a file for the others")
    plot_fmt = report.plot_format(out_plot) if out_plot else None
    for extra in (corpus, queries):              # read for their digests only: fail before the real work
        if extra is not None and str(extra) != "-" and not str(extra).startswith("irds:"):
            read_bytes_check(extra)

    def loader(path, fmt=None, hidden: str | None = None):
        def load():
            how = dataclasses.replace(reading, format=fmt) if fmt else reading
            # a file named by a config is no input: its lines stay unshown
            with content_hidden(hidden) if hidden else contextlib.nullcontext():
                if empty_run_retrieves_nothing and not head_lines(path, 1, "run lines"):
                    from .evaluation import empty_run
                    say(f"{path}: no run lines: the system retrieved nothing, so every query scores 0")
                    run = empty_run()
                else:
                    run = how.read(path, lean=True, warn=warning_without_content(say, hidden) if hidden else say,
                                   qrels_source=qrels, order_option=order_option).run
            return prepare(run) if prepare else run
        return load

    cfgs = [load_config(p) for p in configs or []]          # every config checked before anything else is read
    ts = None
    if test_set is not None or str(qrels).endswith((".yaml", ".yml")):     # a test set in place of the qrels
        from .testsets import load_test_set
        ts = load_test_set(test_set or qrels)
        qrels = test_set or qrels
    if not measures:
        from .measures.readable import AB_MEASURES
        measures = list(AB_MEASURES if ts is not None else TREC_COMPARE_MEASURES)

    judged = None                                 # the qrels, when read here for their queries

    def query_texts(needed: bool) -> dict[str, str | None]:
        nonlocal judged
        if ts is not None:
            return {q.query_id: q.query_text for q in ts.queries}
        if queries is not None:
            from .testsets.topics import read_queries
            return read_queries(queries)
        if not needed:                       # run files (and their fusion) only: the judged queries, no texts
            judged = read_qrels(qrels, layout=reading.layout, skip_malformed=reading.skip_malformed)
            return dict.fromkeys(judged.table.column("qid").unique().to_pylist())
        raise InputError("a config describing a retrieval system is run on queries, and none were given",
                         fix="pass --queries QUERIES.tsv, or a test set (--test-set TS.yaml) in place of QRELS")

    def run_retrieval_systems() -> dict[int, tuple]:
        """The configs describing retrieval systems, run together before anything else runs beside
        them (retrieval.system.run_systems: warmed up, then timed in turns), each to its last stage:
        {config's position: (its Run, its latency summary or None)}."""
        from .retrieval.system import System as Retrieval, latency_summary, run_systems
        from .testsets.runner import run_from_rankings
        found = {i: Retrieval(c.settings, c.config_path.parent, c.name, source=str(c.config_path))
                 for i, c in enumerate(cfgs) if c.run_path is None}
        if not found:
            return {}
        texts = query_texts(any(r.needs_texts for r in found.values()))
        ran = {}
        for (i, retrieval), stages in zip(found.items(), run_systems(list(found.values()), texts, depth)):
            final = stages[retrieval.final_stage()]
            ran[i] = (run_from_rankings(final.rankings, cfgs[i].name),
                      latency_summary(final.latency_ms) if final.latency_ms else None)
        return ran

    written = [out_json, out_csv, out_markdown, out_latex, out_plot]
    read = [qrels, *runs, *(configs or []), *(c.run_path for c in cfgs), corpus, queries, query_types]
    refuse_overwriting_inputs(read, written)
    ran = run_retrieval_systems()
    systems = []
    for i, cfg in enumerate(cfgs):
        if cfg.run_path is None:                          # a retrieval system, run above
            run, latency = ran[i]
            systems.append(System(cfg.name, None, None, None, str(cfg.config_path), cfg.config_digest,
                                  load=lambda run=run: prepare(run) if prepare else run, latency_ms=latency))
            continue
        systems.append(System(cfg.name, None, str(cfg.run_path), None, str(cfg.config_path), cfg.config_digest,
                              load=loader(cfg.run_path, cfg.format, f"the file is named by the config {cfg.config_path}")))
    def streamed(path):                  # a run file larger than ``memory_limit``: evaluated in bounded memory
        def score(q, requests, k):
            from .compare.compare import score_path
            from .engines.stream import memory_limit_of
            limit = memory_limit_of(None) if memory_limit == -1 else memory_limit
            return score_path(q, path, requests, k, reading, limit)
        return None if prepare else score

    for path in runs:
        systems.append(System(None, None, str(path), None, load=loader(path), score=streamed(path)))
    for s, n in zip(systems, names or []):
        s.name = n or s.name

    def digest_of(key, path):
        if key == "qrels" and ts is not None:
            return ts.digest                              # the test set's content
        # irds:<id> qrels and queries are no files: their digests are of the judgments and the queries themselves
        if str(path).startswith("irds:"):
            if key == "qrels":
                return content_digest(read_qrels(path).to_dict())
            from .inputs import irds_queries
            return content_digest(irds_queries(str(path)))
        return file_digest(path)

    steps = [f"reading and scoring {s.run_path or s.config_path}" for s in systems] + ["significance tests", "writing outputs"]
    with ThreadPoolExecutor(max_workers=1) as pool, Steps(steps) as progress:
        # the digests are in the JSON only: computed for it, beside the reading
        # regular files only: a pipe is read once, by the reader, and digested afterwards from what was read
        files = [("qrels", qrels), ("corpus", corpus), ("queries", queries)] + [(i, s.run_path) for i, s in enumerate(systems)]
        pending = {key: pool.submit(digest_of, key, path) for key, path in files
                   if digests and path is not None and (str(path).startswith("irds:") or Path(path).is_file())}
        qrels_data = ts.to_qrels() if ts is not None else judged if judged is not None else read_qrels(
            qrels, layout=reading.layout, skip_malformed=reading.skip_malformed)
        query_ids = _query_set(queries, qrels_data) if queries_are_the_set else None
        with _scorer(engine, scheduler) as scorer:
            comp = compare(qrels_data, systems, measures, options, warn=say, advance=progress.next, scorer=scorer,
                           ranking=ranking, query_ids=query_ids)
        done = {key: f.result() for key, f in pending.items()}
        if digests:
            for key, path in files:
                if key not in done and path is not None:
                    done[key] = digest_of(key, path)
            for i, s in enumerate(systems):
                s.run_digest = done.get(i)
            comp.digests = {k: done.get(k) for k in ("corpus", "queries", "qrels")}
        types = read_query_types(query_types) if query_types else None
        rendered = []
        if out_json:
            rendered.append((out_json, "w", report.json_text(comp)))
        if out_csv:
            rendered.append((out_csv, "w", report.csv_text(comp)))
        if out_markdown:
            rendered.append((out_markdown, "w", report.markdown(comp, types)))
        if out_latex:
            rendered.append((out_latex, "w", report.latex(comp)))
        if out_plot:
            rendered.append((out_plot, "wb", report.plot_bytes(comp, plot_fmt)))
        with outputs(*written, inputs=read):          # every report or none (an error or Ctrl-C midway)
            for path, mode, data in rendered:
                with atomic_output(path, mode) as fh:
                    fh.write(data)
        progress.next()
    return comp


def _query_set(queries: PathLike | None, qrels) -> list[str]:
    """The query ids of ``queries``, saying on stderr which have no judgments (they score 0) and which
    judged queries are not among them (they are left out)."""
    from .errors import listing
    from .testsets.topics import read_queries
    if queries is None:
        raise InputError("the query set is the queries file, and none was given", fix="pass --queries QUERIES.tsv")
    ids = list(read_queries(queries))
    if not ids:
        raise InputError("no queries in it: the queries file is the query set", path=str(queries),
                         fix="give the queries, one 'qid<TAB>text' line each")
    judged = set(qrels.table.column("qid").unique().to_pylist())
    outside = sorted(judged.difference(ids), key=lambda q: q.encode("utf-8", "surrogatepass"))
    unjudged = [q for q in ids if q not in judged]
    if unjudged:
        say(f"{len(unjudged)} of the {len(ids)} queries of {queries} {'has' if len(unjudged) == 1 else 'have'} "
            f"no judgments: {'it scores' if len(unjudged) == 1 else 'they score'} 0 ({listing(unjudged)})")
    if outside:
        one = len(outside) == 1
        say(f"{len(outside)} judged {'query is' if one else 'queries are'} not in {queries} and "
            f"{'is' if one else 'are'} left out ({listing(outside)})")
    return ids


def _scorer(engine: str, scheduler: str | None):
    """Where compare scores the systems: here, in turn (None), or on a Dask cluster."""
    import contextlib
    if engine == "local" and scheduler is None:
        return contextlib.nullcontext()
    from .engines.dask import check_engine, compare_scorer
    check_engine(engine, scheduler)
    return compare_scorer(scheduler)


def read_query_types(path: PathLike) -> dict[str, str]:
    """qid -> type from a TSV (``qid<TAB>type``) or an id-added QUEST JSONL (``metadata.template``)."""
    from .io import loads_json, read_text
    text = read_text(path)
    out: dict[str, str] = {}
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            try:
                obj = loads_json(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON ({exc.msg})", path=str(path), line=no, text=line,
                                 fix="each line must be one complete JSON object") from None
            if not isinstance(obj, dict):
                raise InputError("a JSON line must be an object", path=str(path), line=no, text=line,
                                 fix="write one {...} object per line")
            meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
            qid = str(obj.get("id", obj.get("qid", no)))
            out[qid] = str(meta.get("template") or meta.get("type") or obj.get("type") or "(unknown)")
        else:
            f = line.split("\t")
            if len(f) < 2:
                raise InputError("a query-types line is 'qid<TAB>type'", path=str(path), line=no, text=line,
                                 fix="separate qid and type with a tab")
            out[f[0]] = f[1].strip()
    return out
