"""The pipeline's three stages as functions: ground truth -> qrels, run -> TREC run, evaluation at cutoffs.

The CLI and the staged scripts in ``code/evaluation`` are thin over these.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError
from .io import PathLike, atomic_output


def say(msg: str) -> None:
    print(f"treckit: {msg}", file=sys.stderr)


def run_script(body) -> int:
    """Run a staged script's body: treckit's errors become a message on stderr and their exit code."""
    from .errors import TreckitError
    from .startup import prepare_process

    prepare_process()
    try:
        body()
    except TreckitError as exc:
        print(f"treckit: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


@dataclass
class QrelsStageResult:
    judgments: int
    queries: int
    id_added: Path | None


def qrels_stage(input: PathLike, output: PathLike, *, format: str | None = None, id_base: int = 1,
                id_field: str | None = None, raw_ids: bool = False, duplicates: str = "error",
                id_added: PathLike | None = None, skip_malformed: bool = False) -> QrelsStageResult:
    from .api import read_qrels, write_qrels
    from .formats.detect import detect_qrels
    from .formats.jsonl import read_quest, write_id_added

    fmt = format or detect_qrels(input).format
    written_ids = None
    if fmt == "quest":
        gt = read_quest(input, id_base=id_base, id_field=id_field, duplicates=duplicates)
        qrels = gt.qrels
        if not gt.ids_were_given and str(input) != "-":
            written_ids = Path(id_added) if id_added else default_id_added_path(input, output)
            write_id_added(gt, written_ids)
            say(f"the input had no ids: wrote the id-added JSONL to {written_ids} (qid = line number, base {id_base})")
    else:
        qrels = read_qrels(input, fmt, skip_malformed=skip_malformed)
    write_qrels(qrels, output, escape_ids=not raw_ids)
    n_q = len(set(qrels.table.column("qid").to_pylist()))
    return QrelsStageResult(len(qrels), n_q, written_ids)


def default_id_added_path(input: PathLike, output: PathLike) -> Path:
    src = Path(input)
    stem = src.name[:-3] if src.name.endswith(".gz") else src.name
    stem = stem[:-6] if stem.endswith(".jsonl") else stem
    out_dir = Path(output).parent if str(output) != "-" else src.parent
    return out_dir / f"{stem}_id_added.jsonl"


def gold_query_map(gold: PathLike, id_base: int = 1) -> dict[str, str]:
    """query text -> qid from a QUEST-style gold file (ids from its id field, else line numbers)."""
    from .formats.jsonl import read_quest
    gt = read_quest(gold, id_base=id_base)
    out: dict[str, str] = {}
    for qid, text in gt.queries:
        if text in out and out[text] != qid:
            raise InputError(f"the gold file has the query text {text[:60]!r} twice (ids {out[text]} and {qid})",
                             path=str(gold), fix="query texts must be unique to join predictions by text")
        out[text] = qid
    return out


def run_stage(input: PathLike, output: PathLike, *, run_name: str | None = None, format: str | None = None,
              order: str = "auto", ties: str = "keep", duplicates: str = "error", depth: int | None = None,
              raw_ids: bool = False, gold: PathLike | None = None, id_base: int = 1, layout: str = "auto",
              fields=None, skip_malformed: bool = False, tsv_third: str = "score"):
    from .api import read_run, write_run
    from .convert import convert_run
    from .progress import Steps

    with Steps([f"reading {input}", "ordering", f"writing {output}"]) as steps:
        qmap = gold_query_map(gold, id_base) if gold else None
        run = read_run(input, format, layout=layout, fields=fields, query_to_qid=qmap, id_base=id_base,
                       skip_malformed=skip_malformed, tsv_third=tsv_third,
                       ranks=order == "given" or ties == "break")    # only these read the given ranks
        steps.next()
        out, report = convert_run(run, order=order, ties=ties, duplicates=duplicates, depth=depth,
                                  run_name=run_name, source=str(input))
        del run                      # the input's columns are not needed while writing: free them
        steps.next()
        write_run(out, output, escape_ids=not raw_ids, tag=run_name)
        steps.next()
    for line in report.lines():
        say(line)
    return report


def default_run_output(input: PathLike) -> Path:
    """``preds.jsonl`` -> ``preds_trec`` (the old script's convention)."""
    p = Path(input)
    return p.with_name(p.stem + "_trec")


def cutoff_table(qrels: PathLike, run: PathLike, cutoffs: list[int], *, missing: str = "skip", order: str = "score"):
    """Recall@k and nDCG@k (trec_eval's recall_k and ndcg_cut_k) plus MRR and MAP, averaged over queries."""
    from .api import read_qrels, read_run
    from .evaluation import EvalOptions, evaluate_requests
    from .measures.registry import resolve

    ks = ",".join(str(k) for k in sorted(set(cutoffs)))
    req = resolve([f"recall.{ks}", f"ndcg_cut.{ks}", "recip_rank", "map"])
    res = evaluate_requests(read_qrels(qrels), read_run(run, lean=order != "rank"), req, EvalOptions(missing=missing, order=order),
                            source=str(run), warn=say)
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
                  query_types: PathLike | None = None, prepare=None, digests: bool | None = None):
    """Stage 4: compare runs (or configs naming runs); the first system is the baseline.

    Each run is read, evaluated once and dropped in turn (progress on a terminal); the files'
    digests are computed beside that, on another thread.  Every output is rendered before the first
    one is written.  ``prepare`` (optional) turns each read Run into the Run to evaluate (the old
    rq_eval's tie rule).  ``digests``: compute the files' digests (default: when writing the JSON,
    the only output that holds them).
    """
    from concurrent.futures import ThreadPoolExecutor

    from .api import read_qrels, read_run
    from .compare import report
    from .compare.compare import System, compare
    from .compare.config import file_digest, load_config, read_bytes_check
    from .progress import Steps

    digests = out_json is not None if digests is None else digests
    outputs = {"json": out_json, "csv": out_csv, "markdown": out_markdown, "latex": out_latex, "plot": out_plot}
    to_stdout = [k for k, p in outputs.items() if p is not None and str(p) == "-"]
    if len(to_stdout) > 1 or "plot" in to_stdout:
        raise InputError("only one text output can go to stdout ('-')", fix="name a file for the others")
    plot_fmt = report.plot_format(out_plot) if out_plot else None
    for extra in (corpus, queries):              # read for their digests only: fail before the real work
        if extra is not None and str(extra) != "-":
            read_bytes_check(extra)

    def loader(path, fmt=None):
        def load():
            run = read_run(path, fmt, lean=True)
            return prepare(run) if prepare else run
        return load

    systems = []
    for cfg_path in configs or []:
        cfg = load_config(cfg_path)
        systems.append(System(cfg.name, None, str(cfg.run_path), None, str(cfg.config_path), cfg.config_digest,
                              load=loader(cfg.run_path, cfg.format)))
    for path in runs:
        systems.append(System(None, None, str(path), None, load=loader(path)))
    for s, n in zip(systems, names or []):
        s.name = n or s.name
    steps = [f"reading and scoring {s.run_path}" for s in systems] + ["significance tests", "writing outputs"]
    with ThreadPoolExecutor(max_workers=1) as pool, Steps(steps) as progress:
        # the digests are in the JSON only: computed for it, beside the reading
        pending = {key: pool.submit(file_digest, path) for key, path in
                   [("qrels", qrels), ("corpus", corpus), ("queries", queries)] +
                   [(i, s.run_path) for i, s in enumerate(systems)]
                   if digests and path is not None and str(path) != "-"}
        qrels_data = read_qrels(qrels)
        comp = compare(qrels_data, systems, measures, options, warn=say, advance=progress.next)
        done = {key: f.result() for key, f in pending.items()}
        if digests:
            for i, s in enumerate(systems):
                s.run_digest = done.get(i) if s.run_path != "-" else file_digest("-")
            comp.digests = {k: done.get(k) if p is None or str(p) != "-" else file_digest(p)
                            for k, p in (("corpus", corpus), ("queries", queries), ("qrels", qrels))}
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
        for path, mode, data in rendered:
            with atomic_output(path, mode) as fh:
                fh.write(data)
        progress.next()
    return comp


def read_query_types(path: PathLike) -> dict[str, str]:
    """qid -> type from a TSV (``qid<TAB>type``) or an id-added QUEST JSONL (``metadata.template``)."""
    from .io import read_text
    text = read_text(path)
    out: dict[str, str] = {}
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            obj = json.loads(line)
            meta = obj.get("metadata") or {}
            qid = str(obj.get("id", obj.get("qid", no)))
            out[qid] = str(meta.get("template") or meta.get("type") or obj.get("type") or "(unknown)")
        else:
            f = line.split("\t")
            if len(f) < 2:
                raise InputError("a query-types line is 'qid<TAB>type'", path=str(path), line=no, text=line,
                                 fix="separate qid and type with a tab")
            out[f[0]] = f[1].strip()
    return out
