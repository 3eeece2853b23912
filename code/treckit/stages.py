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


def say(msg: str) -> None:
    print(f"treckit: {msg}", file=sys.stderr)


def run_script(body) -> int:
    """Run a staged script's body: errors, OS errors and Ctrl-C become a message on stderr and their
    exit code (never a traceback), as in the CLI."""
    from .startup import exit_code_of, prepare_process

    prepare_process()
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
    more than 4 fields (README: Reading rules)."""
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


def run_stage(input: PathLike, output: PathLike, *, run_name: str | None = None, reading=None,
              depth: int | None = None, raw_ids: bool = False, **options):
    """Read ``input`` with the reader configuration (:class:`treckit.reading.RunReading`, or its options as
    keywords), convert it and write the TREC run; the conversion's report goes to stderr."""
    from .api import write_run
    from .progress import Steps
    from .reading import RunReading

    reading = reading or RunReading.from_options(**options)
    refuse_overwriting_inputs([input, reading.gold], [output])
    with Steps([f"reading and ordering {input}", f"writing {output}"]) as steps:
        got = reading.read(input, convert=True, depth=depth, run_name=run_name, raw_ids=raw_ids, warn=say)
        steps.next()
        write_run(got.run, output, escape_ids=not raw_ids, tag=run_name)
        steps.next()
    for line in got.report.lines():
        say(line)
    return got.report


def default_run_output(input: PathLike) -> str:
    """``preds.jsonl`` -> ``preds_trec`` (the old script's convention), ``x.trec.gz`` -> ``x_trec``,
    ``-`` (stdin) -> ``-`` (stdout)."""
    return derived_output(input, "_trec")


def cutoff_table(qrels: PathLike, run: PathLike, cutoffs: list[int], *, missing: str = "skip", reading=None,
                 **options):
    """Recall@k and nDCG@k (trec_eval's recall_k and ndcg_cut_k) plus MRR and MAP, averaged over queries.

    The run is read with the reader configuration (``reading``, or its options as keywords, e.g. ``order``)."""
    from .api import read_qrels
    from .evaluation import EvalOptions, evaluate_requests
    from .measures.registry import resolve
    from .reading import RunReading

    reading = reading or RunReading.from_options(**options)
    ks = ",".join(str(k) for k in sorted(set(cutoffs)))
    req = resolve([f"recall.{ks}", f"ndcg_cut.{ks}", "recip_rank", "map"])
    res = evaluate_requests(read_qrels(qrels), reading.read(run, lean=True, warn=say, qrels_source=qrels).run, req, EvalOptions(missing=missing), source=str(run), warn=say)
    s = res.summary
    ks_sorted = sorted(set(cutoffs))
    return {
        "cutoffs": ks_sorted,
        "recall": {str(k): s[f"recall_{k}"] for k in ks_sorted},
        "ndcg": {str(k): s[f"ndcg_cut_{k}"] for k in ks_sorted},
        "mrr": s["recip_rank"],
        "map": s["map"],
        "num_queries": res.view.Q,
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


def compare_stage(qrels: PathLike, runs: list[PathLike], measures: list[str], *, names: list[str] | None = None,
                  configs: list[PathLike] | None = None, options=None, out_json: PathLike | None = None,
                  out_csv: PathLike | None = None, out_markdown: PathLike | None = None,
                  out_latex: PathLike | None = None, out_plot: PathLike | None = None,
                  corpus: PathLike | None = None, queries: PathLike | None = None,
                  query_types: PathLike | None = None, prepare=None, reading=None):
    """Stage 4: compare runs (or configs naming runs); the first system is the baseline.

    ``prepare`` (optional) turns each read Run into the Run to evaluate (the old rq_eval's tie rule).
    ``reading`` (:class:`treckit.reading.RunReading`): how runs are read, as by ``treckit eval``.
    """
    import dataclasses

    from .reading import RunReading
    reading = reading or RunReading()

    def read_run(path, fmt=None):
        return (dataclasses.replace(reading, format=fmt) if fmt else reading).read(path, warn=say, qrels_source=qrels).run

    from .api import read_qrels
    from .compare import report
    from .compare.compare import System, compare
    from .compare.config import content_digest, file_digest, load_config
    from .errors import content_hidden

    cfgs = [load_config(p) for p in configs or []]
    written = [out_json, out_csv, out_markdown, out_latex, out_plot]
    read = [qrels, *runs, *(configs or []), *(c.run_path for c in cfgs), corpus, queries, query_types]
    refuse_overwriting_inputs(read, written)
    systems = []
    for cfg in cfgs:
        with content_hidden(f"the file is named by the config {cfg.config_path}"):
            run = read_run(cfg.run_path, cfg.format)
            digest = file_digest(cfg.run_path)
        systems.append(System(cfg.name, prepare(run) if prepare else run, str(cfg.run_path), digest,
                              str(cfg.config_path), cfg.config_digest))
    for i, path in enumerate(runs):
        run = read_run(path)
        name = (names[i] if names and i < len(names) else None) or run.tag
        systems.append(System(name, prepare(run) if prepare else run, str(path), file_digest(path)))
    if names and configs:
        for s, n in zip(systems, names):
            s.name = n
    if len({s.name for s in systems}) != len(systems):
        for i, s in enumerate(systems):       # run tags often coincide: fall back to file names
            s.name = Path(s.run_path).stem if s.run_path else f"system{i + 1}"
    judged = read_qrels(qrels)
    comp = compare(judged, systems, measures, options, warn=say)
    # irds:<id> qrels and queries are no files: their digests are of the judgments and the queries themselves
    qrels_digest = content_digest(judged.to_dict()) if str(qrels).startswith("irds:") else file_digest(qrels)
    if queries is not None and str(queries).startswith("irds:"):
        from .inputs import irds_queries
        queries_digest = content_digest(irds_queries(str(queries)))
    else:
        queries_digest = file_digest(queries)
    comp.digests = {"corpus": file_digest(corpus), "queries": queries_digest, "qrels": qrels_digest}
    types = read_query_types(query_types) if query_types else None
    with outputs(*written, inputs=read):          # every report or none (an error or Ctrl-C midway)
        if out_json:
            report.write_json(comp, out_json)
        if out_csv:
            report.write_csv(comp, out_csv)
        if out_markdown:
            with atomic_output(out_markdown) as fh:
                fh.write(report.markdown(comp, types))
        if out_latex:
            with atomic_output(out_latex) as fh:
                fh.write(report.latex(comp))
        if out_plot:
            report.plot(comp, out_plot)
    return comp


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
